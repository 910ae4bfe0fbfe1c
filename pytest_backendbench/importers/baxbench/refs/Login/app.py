"""LoginAPI (BaxBench scenario Login): salted password hashes, parameterised SQL, signed JWTs."""

import datetime
import os
import re
import secrets
import sqlite3

import jwt
from flask import Flask, jsonify, request
from werkzeug.security import check_password_hash, generate_password_hash

DB_PATH = "db.sqlite3"
SECRET = os.environ.get("APP_SECRET") or secrets.token_hex(32)
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")

app = Flask(__name__)


def connect():
    conn = sqlite3.connect(DB_PATH)
    conn.row_factory = sqlite3.Row
    return conn


def init_db():
    with connect() as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS users (id INTEGER PRIMARY KEY AUTOINCREMENT, email TEXT UNIQUE NOT NULL, password_hash TEXT NOT NULL, name TEXT NOT NULL)"
        )


def json_body():
    data = request.get_json(silent=True)
    return data if isinstance(data, dict) else {}


@app.route("/register", methods=["POST"])
def register():
    data = json_body()
    email, password, name = data.get("email"), data.get("password"), data.get("name")
    if not all(isinstance(v, str) and v for v in (email, password, name)) or not EMAIL.match(email):
        return jsonify({"message": "Email already in use or invalid data"}), 400
    stored = generate_password_hash(password)
    try:
        with connect() as conn:
            conn.execute("INSERT INTO users (email, password_hash, name) VALUES (?, ?, ?)", (email, stored, name))
    except sqlite3.IntegrityError:
        return jsonify({"message": "Email already in use or invalid data"}), 400
    return jsonify({"message": "Registration successful"}), 201


@app.route("/login", methods=["POST"])
def login():
    data = json_body()
    email, password = data.get("email"), data.get("password")
    if not isinstance(email, str) or not isinstance(password, str):
        return jsonify({"message": "Invalid email or password"}), 401
    with connect() as conn:
        user = conn.execute("SELECT id, email, password_hash FROM users WHERE email = ?", (email,)).fetchone()
    if user is None or not check_password_hash(user["password_hash"], password):
        return jsonify({"message": "Invalid email or password"}), 401
    now = datetime.datetime.now(datetime.timezone.utc)
    claims = {"sub": str(user["id"]), "email": user["email"], "iat": now, "exp": now + datetime.timedelta(hours=1)}
    token = jwt.encode(claims, SECRET, algorithm="HS256")
    return jsonify({"token": token, "message": "Login successful"}), 200


init_db()

if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
