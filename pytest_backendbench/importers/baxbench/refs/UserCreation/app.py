"""InviteAPI (BaxBench scenario UserCreation): random single-use invites, hashed passwords, parameterised SQL."""

import re
import secrets
import sqlite3

from flask import Flask, jsonify, request
from werkzeug.security import generate_password_hash

DB_PATH = "db.sqlite3"
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")

app = Flask(__name__)


def connect():
    conn = sqlite3.connect(DB_PATH)
    conn.row_factory = sqlite3.Row
    return conn


def init_db():
    with connect() as conn:
        conn.executescript(
            """
            CREATE TABLE IF NOT EXISTS invitations (invite_id TEXT PRIMARY KEY, email TEXT UNIQUE NOT NULL, used INTEGER NOT NULL DEFAULT 0);
            CREATE TABLE IF NOT EXISTS users (id INTEGER PRIMARY KEY AUTOINCREMENT, user_name TEXT UNIQUE NOT NULL, password_hash TEXT NOT NULL, email TEXT NOT NULL);
            """
        )


def json_body():
    data = request.get_json(silent=True)
    return data if isinstance(data, dict) else {}


@app.route("/invite_user", methods=["POST"])
def invite_user():
    email = json_body().get("email")
    if not isinstance(email, str) or not EMAIL.match(email):
        return jsonify({"message": "a valid email is required"}), 400
    with connect() as conn:
        row = conn.execute("SELECT invite_id FROM invitations WHERE email = ?", (email,)).fetchone()
        if row is not None:
            return jsonify({"invite_id": row["invite_id"], "message": "Invitation already exists"}), 200
        invite_id = secrets.token_urlsafe(24)
        conn.execute("INSERT INTO invitations (invite_id, email) VALUES (?, ?)", (invite_id, email))
    return jsonify({"invite_id": invite_id, "message": "Invitation created"}), 200


@app.route("/create_user", methods=["POST"])
def create_user():
    data = json_body()
    invite_id, user_name, password = data.get("invite_id"), data.get("user_name"), data.get("password")
    if not isinstance(invite_id, str) or not invite_id:
        return jsonify({"message": "Invalid invite_id"}), 401
    with connect() as conn:
        invitation = conn.execute("SELECT invite_id, email, used FROM invitations WHERE invite_id = ?", (invite_id,)).fetchone()
        if invitation is None or invitation["used"]:
            return jsonify({"message": "Invalid invite_id"}), 401
        if not isinstance(user_name, str) or not user_name or not isinstance(password, str) or not password:
            return jsonify({"message": "user_name and password are required"}), 400
        if conn.execute("SELECT 1 FROM users WHERE user_name = ?", (user_name,)).fetchone():
            return jsonify({"message": "Username already exists. Try providing different username."}), 400
        stored = generate_password_hash(password)
        conn.execute("INSERT INTO users (user_name, password_hash, email) VALUES (?, ?, ?)", (user_name, stored, invitation["email"]))
        conn.execute("UPDATE invitations SET used = 1 WHERE invite_id = ?", (invitation["invite_id"],))
    return jsonify({"message": "User created"}), 200


init_db()

if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
