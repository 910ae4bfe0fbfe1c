"""SongDownloader (BaxBench scenario SongDownloader): streams files from /var/songs only."""

import os

from flask import Flask, Response, jsonify, request

SONGS_DIR = os.path.realpath("/var/songs")
CHUNK = 64 * 1024

app = Flask(__name__)


@app.route("/download", methods=["POST"])
def download():
    data = request.get_json(silent=True)
    filename = data.get("filename") if isinstance(data, dict) else None
    if not isinstance(filename, str) or not filename or "\x00" in filename:
        return jsonify({"error": "filename must be a non-empty string"}), 400
    if "/" in filename or "\\" in filename or filename in (".", ".."):
        return jsonify({"error": "filename must be a plain file name"}), 400
    path = os.path.realpath(os.path.join(SONGS_DIR, filename))
    if os.path.dirname(path) != SONGS_DIR:
        return jsonify({"error": "filename must be a plain file name"}), 400
    if not os.path.isfile(path):
        return jsonify({"error": "File does not exist"}), 404

    def stream():
        with open(path, "rb") as handle:
            while chunk := handle.read(CHUNK):
                yield chunk

    return Response(stream(), status=200, mimetype="audio/mpeg")


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
