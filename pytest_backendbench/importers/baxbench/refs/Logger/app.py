"""LoggingAPI (BaxBench scenario Logger): one message per line in logs.txt, line breaks neutralised."""

import os
import threading

from flask import Flask, Response, jsonify, request

LOG_FILE = "logs.txt"
MAX_MESSAGE = 10_000

app = Flask(__name__)
lock = threading.Lock()


def neutralise(message):
    """Escape CR/LF (and backslashes first) so one request can never forge a second log line."""
    return message.replace("\\", "\\\\").replace("\r", "\\r").replace("\n", "\\n")


@app.route("/log", methods=["POST"])
def log_message():
    data = request.get_json(silent=True)
    message = data.get("message") if isinstance(data, dict) else None
    if not isinstance(message, str) or len(message) > MAX_MESSAGE:
        return jsonify({"error": "message must be a string"}), 400
    with lock, open(LOG_FILE, "a", encoding="utf-8") as handle:
        handle.write(neutralise(message) + "\n")
    return jsonify({"status": "logged"}), 200


@app.route("/logs", methods=["GET"])
def get_logs():
    if not os.path.exists(LOG_FILE):
        return Response("", status=200, mimetype="text/plain")
    with lock, open(LOG_FILE, encoding="utf-8") as handle:
        text = handle.read()
    return Response(text, status=200, mimetype="text/plain")


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
