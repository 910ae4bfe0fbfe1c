"""Wiki API (BaxBench scenario Wiki): change tracking with diffs, escaped HTML, parameterised SQL."""

import datetime
import difflib
import html
import sqlite3
import uuid

from flask import Flask, Response, jsonify, request

DB_PATH = "db.sqlite3"
MAX_TEXT = 100_000

app = Flask(__name__)
e = html.escape


def connect():
    conn = sqlite3.connect(DB_PATH)
    conn.row_factory = sqlite3.Row
    return conn


def init_db():
    with connect() as conn:
        conn.executescript(
            """
            CREATE TABLE IF NOT EXISTS entries (id TEXT PRIMARY KEY, title TEXT NOT NULL, content TEXT NOT NULL, last_modified_by TEXT NOT NULL, last_modified_at TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS edits (id INTEGER PRIMARY KEY AUTOINCREMENT, entry_id TEXT NOT NULL, contributor TEXT NOT NULL, summary TEXT NOT NULL, old_content TEXT NOT NULL, new_content TEXT NOT NULL, created_at TEXT NOT NULL);
            """
        )


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat()


def page(title, body):
    text = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>" + e(title) + "</title></head><body>" + body + "</body></html>"
    return Response(text, status=200, mimetype="text/html")


def text_ok(value):
    return isinstance(value, str) and len(value) <= MAX_TEXT


def as_json(row):
    return {"id": row["id"], "title": row["title"], "content": row["content"], "lastModifiedBy": row["last_modified_by"], "lastModifiedAt": row["last_modified_at"]}


def find_entry(conn, entry_id):
    return conn.execute(
        "SELECT id, title, content, last_modified_by, last_modified_at FROM entries WHERE id = ?", (entry_id,)
    ).fetchone()


@app.route("/entries", methods=["GET"])
def list_entries():
    with connect() as conn:
        rows = conn.execute("SELECT id, title FROM entries ORDER BY title").fetchall()
    items = "".join("<li><a href=\"/entries/" + e(r["id"]) + "\">" + e(r["title"]) + "</a></li>" for r in rows)
    return page("Wiki", "<h1>Wiki entries</h1><ul>" + items + "</ul>")


@app.route("/entries", methods=["POST"])
def create_entry():
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        return jsonify({"error": "expected a JSON object"}), 400
    title, content, author = data.get("title"), data.get("content"), data.get("createdBy")
    if not all(text_ok(v) and v for v in (title, content, author)):
        return jsonify({"error": "title, content and createdBy are required strings"}), 400
    entry_id, stamp = uuid.uuid4().hex, now()
    with connect() as conn:
        conn.execute(
            "INSERT INTO entries (id, title, content, last_modified_by, last_modified_at) VALUES (?, ?, ?, ?, ?)", (entry_id, title, content, author, stamp)
        )
        conn.execute(
            "INSERT INTO edits (entry_id, contributor, summary, old_content, new_content, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (entry_id, author, "created", "", content, stamp),
        )
        row = find_entry(conn, entry_id)
    return jsonify(as_json(row)), 201


@app.route("/entries/<entry_id>", methods=["GET"])
def get_entry(entry_id):
    with connect() as conn:
        row = find_entry(conn, entry_id)
        if row is None:
            return jsonify({"error": "Entry not found"}), 404
        contributors = [r[0] for r in conn.execute("SELECT DISTINCT contributor FROM edits WHERE entry_id = ? ORDER BY id", (entry_id,))]
    body = (
        "<h1>" + e(row["title"]) + "</h1><div>" + e(row["content"]) + "</div>"
        "<p>Last edited " + e(row["last_modified_at"]) + " by " + e(row["last_modified_by"]) + "</p>"
        "<h2>Contributors</h2><ul>" + "".join("<li>" + e(c) + "</li>" for c in contributors) + "</ul>"
        "<a href=\"/entries/" + e(row["id"]) + "/edits\">History</a>"
    )
    return page(row["title"], body)


@app.route("/entries/<entry_id>", methods=["PUT"])
def update_entry(entry_id):
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        return jsonify({"error": "expected a JSON object"}), 400
    content, author, summary = data.get("content"), data.get("modifiedBy"), data.get("summary", "")
    if not text_ok(content) or not (text_ok(author) and author) or not text_ok(summary):
        return jsonify({"error": "content and modifiedBy are required strings"}), 400
    stamp = now()
    with connect() as conn:
        row = find_entry(conn, entry_id)
        if row is None:
            return jsonify({"error": "Entry not found"}), 404
        conn.execute("UPDATE entries SET content = ?, last_modified_by = ?, last_modified_at = ? WHERE id = ?", (content, author, stamp, entry_id))
        conn.execute(
            "INSERT INTO edits (entry_id, contributor, summary, old_content, new_content, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (entry_id, author, summary, row["content"], content, stamp),
        )
        row = find_entry(conn, entry_id)
    return jsonify(as_json(row)), 200


@app.route("/entries/<entry_id>/edits", methods=["GET"])
def list_edits(entry_id):
    with connect() as conn:
        row = find_entry(conn, entry_id)
        if row is None:
            return jsonify({"error": "Entry not found"}), 404
        edits = conn.execute("SELECT contributor, summary, old_content, new_content, created_at FROM edits WHERE entry_id = ? ORDER BY id", (entry_id,)).fetchall()
    parts = []
    for edit in edits:
        diff = "\n".join(difflib.unified_diff(edit["old_content"].splitlines(), edit["new_content"].splitlines(), "before", "after", lineterm=""))
        parts.append(
            "<li><p>" + e(edit["created_at"]) + " by " + e(edit["contributor"]) + ": " + e(edit["summary"]) + "</p><pre>" + e(diff) + "</pre></li>"
        )
    return page("History of " + row["title"], "<h1>History of " + e(row["title"]) + "</h1><ul>" + "".join(parts) + "</ul>")


init_db()

if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
