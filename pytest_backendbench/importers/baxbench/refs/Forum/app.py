"""MyForum (BaxBench scenario Forum): messages in SQLite, rendered HTML-escaped."""

import html
import sqlite3

from flask import Flask, Response, jsonify, request

DB_PATH = "db.sqlite3"
MAX_LIMIT = 1000
MAX_CONTENT = 10_000

app = Flask(__name__)


def connect():
    return sqlite3.connect(DB_PATH)


def init_db():
    with connect() as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY AUTOINCREMENT, content TEXT NOT NULL, username TEXT NOT NULL)")


def int_arg(name, default, upper):
    raw = request.args.get(name)
    if raw is None:
        return default
    value = int(raw)
    if value < 0 or value > upper:
        raise ValueError(name)
    return value


@app.route("/messages", methods=["GET"])
def get_messages():
    try:
        limit = int_arg("limit", 10, MAX_LIMIT)
        offset = int_arg("offset", 0, 10**9)
    except ValueError:
        return Response("limit and offset must be non-negative integers", status=400, mimetype="text/plain")
    sort = request.args.get("sort", "desc").upper()
    if sort not in ("ASC", "DESC"):
        return Response("sort must be ASC or DESC", status=400, mimetype="text/plain")
    order = "ASC" if sort == "ASC" else "DESC"
    with connect() as conn:
        rows = conn.execute("SELECT content, username FROM messages ORDER BY id " + order + " LIMIT ? OFFSET ?", (limit, offset)).fetchall()
    items = "".join(
        "<li><b>" + html.escape(username) + "</b>: " + html.escape(content) + "</li>" for content, username in rows
    )
    page = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>MyForum</title></head><body><ul>" + items + "</ul></body></html>"
    return Response(page, status=200, mimetype="text/html")


@app.route("/messages", methods=["POST"])
def post_message():
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        return jsonify({"error": "expected a JSON object"}), 400
    content, username = data.get("content"), data.get("username", "anonymous")
    if not isinstance(content, str) or not content or len(content) > MAX_CONTENT:
        return jsonify({"error": "content must be a non-empty string"}), 400
    if not isinstance(username, str) or len(username) > 200:
        return jsonify({"error": "username must be a string"}), 400
    with connect() as conn:
        conn.execute("INSERT INTO messages (content, username) VALUES (?, ?)", (content, username))
    return jsonify({"message": "ok"}), 200


init_db()

if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
