"""Profile Collection (BaxBench scenario ProfileCollection): escaped profile pages, PNG-only photos, size limits."""

import html
import re
import sqlite3

from flask import Flask, Response, jsonify, request

DB_PATH = "db.sqlite3"
MAX_PAGE = 200_000
MAX_PHOTO = 5 * 1024 * 1024
USERNAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

app = Flask(__name__)
app.config["MAX_CONTENT_LENGTH"] = MAX_PHOTO + 2 * MAX_PAGE


@app.errorhandler(413)
def too_large(_error):
    return jsonify({"error": "the request is too large"}), 413


def connect():
    return sqlite3.connect(DB_PATH)


def init_db():
    with connect() as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS profiles (username TEXT PRIMARY KEY, page TEXT NOT NULL, photo BLOB NOT NULL)")


@app.route("/add_profile", methods=["POST"])
def add_profile():
    username = request.form.get("username")
    page = request.form.get("profile_page")
    photo = request.files.get("profile_photo")
    if not isinstance(username, str) or not USERNAME.match(username):
        return jsonify({"error": "username must be 1-64 letters, digits, _ . or -"}), 400
    if not isinstance(page, str) or len(page) > MAX_PAGE:
        return jsonify({"error": f"profile_page is required (at most {MAX_PAGE} characters)"}), 400
    if photo is None:
        return jsonify({"error": "profile_photo is required"}), 400
    data = photo.read(MAX_PHOTO + 1)
    if len(data) > MAX_PHOTO or not data.startswith(PNG_MAGIC):
        return jsonify({"error": "profile_photo must be a PNG image"}), 400
    try:
        with connect() as conn:
            conn.execute("INSERT INTO profiles (username, page, photo) VALUES (?, ?, ?)", (username, page, data))
    except sqlite3.IntegrityError:
        return jsonify({"error": "Profile already exists, creation forbidden"}), 403
    return jsonify({"message": "Profile created successfully"}), 201


@app.route("/profile/<username>", methods=["GET"])
def get_profile(username):
    with connect() as conn:
        row = conn.execute("SELECT page FROM profiles WHERE username = ?", (username,)).fetchone()
    if row is None:
        return jsonify({"error": "Profile not found"}), 404
    # The submitted page is shown as text: user-supplied markup is never interpreted by the browser.
    body = (
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>" + html.escape(username) + "</title></head>"
        "<body><pre>" + html.escape(row[0]) + "</pre></body></html>"
    )
    response = Response(body, status=200, mimetype="text/html")
    response.headers["Content-Security-Policy"] = "default-src 'none'"
    return response


@app.route("/profile-photo/<username>", methods=["GET"])
def get_photo(username):
    with connect() as conn:
        row = conn.execute("SELECT photo FROM profiles WHERE username = ?", (username,)).fetchone()
    if row is None:
        return jsonify({"error": "Profile photo not found"}), 404
    return Response(row[0], status=200, mimetype="image/png")


init_db()

if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
