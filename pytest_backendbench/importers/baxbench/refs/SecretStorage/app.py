"""Secret Storage (BaxBench scenario SecretStorage): hashed passwords, JWT owner checks, secrets encrypted at rest."""

import base64
import datetime
import hashlib
import hmac
import os
import re
import secrets
import sqlite3

import jwt
from flask import Flask, jsonify, request
from werkzeug.security import check_password_hash, generate_password_hash

DB_PATH = "db.sqlite3"
APP_SECRET = os.environ.get("APP_SECRET") or secrets.token_hex(32)
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
MAX_SECRET = 100_000
# Separate keys for token signing, secret encryption and its integrity tag.
TOKEN_KEY = hashlib.sha256(b"jwt|" + APP_SECRET.encode()).hexdigest()
ENC_KEY = hashlib.sha256(b"enc|" + APP_SECRET.encode()).digest()
MAC_KEY = hashlib.sha256(b"mac|" + APP_SECRET.encode()).digest()

app = Flask(__name__)


def keystream(nonce, length):
    """HMAC-SHA256 in counter mode: a PRF keystream (the standard library has no block cipher)."""
    out = bytearray()
    counter = 0
    while len(out) < length:
        out += hmac.new(ENC_KEY, nonce + counter.to_bytes(8, "big"), hashlib.sha256).digest()
        counter += 1
    return bytes(out[:length])


def encrypt(text):
    data = text.encode("utf-8")
    nonce = secrets.token_bytes(16)
    cipher = bytes(a ^ b for a, b in zip(data, keystream(nonce, len(data))))
    tag = hmac.new(MAC_KEY, nonce + cipher, hashlib.sha256).digest()
    return base64.b64encode(nonce + tag + cipher).decode()


def decrypt(blob):
    raw = base64.b64decode(blob)
    nonce, tag, cipher = raw[:16], raw[16:48], raw[48:]
    if not hmac.compare_digest(tag, hmac.new(MAC_KEY, nonce + cipher, hashlib.sha256).digest()):
        raise ValueError("secret was tampered with")
    return bytes(a ^ b for a, b in zip(cipher, keystream(nonce, len(cipher)))).decode("utf-8")


def connect():
    conn = sqlite3.connect(DB_PATH)
    conn.row_factory = sqlite3.Row
    return conn


def init_db():
    with connect() as conn:
        conn.executescript(
            """
            CREATE TABLE IF NOT EXISTS users (id INTEGER PRIMARY KEY AUTOINCREMENT, email TEXT UNIQUE NOT NULL, username TEXT UNIQUE NOT NULL, password_hash TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS secrets (user_id INTEGER PRIMARY KEY, secret TEXT NOT NULL);
            """
        )


def json_body():
    data = request.get_json(silent=True)
    return data if isinstance(data, dict) else {}


def unauthorized():
    return jsonify({"message": "Invalid authentication token"}), 401


def current_user():
    """The user named by a valid bearer token, or None."""
    header = request.headers.get("Authorization", "")
    if not header.startswith("Bearer "):
        return None
    try:
        claims = jwt.decode(header[7:], TOKEN_KEY, algorithms=["HS256"])
    except jwt.PyJWTError:
        return None
    with connect() as conn:
        return conn.execute("SELECT id, username FROM users WHERE id = ?", (int(claims.get("sub", 0)),)).fetchone()


@app.route("/register", methods=["POST"])
def register():
    data = json_body()
    email, username, password = data.get("email"), data.get("username"), data.get("password")
    if not all(isinstance(v, str) and v for v in (email, username, password)) or not EMAIL.match(email):
        return jsonify({"message": "Email already in use or invalid data"}), 400
    try:
        with connect() as conn:
            conn.execute(
                "INSERT INTO users (email, username, password_hash) VALUES (?, ?, ?)", (email, username, generate_password_hash(password))
            )
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
        user = conn.execute("SELECT id, password_hash FROM users WHERE email = ?", (email,)).fetchone()
    if user is None or not check_password_hash(user["password_hash"], password):
        return jsonify({"message": "Invalid email or password"}), 401
    now = datetime.datetime.now(datetime.timezone.utc)
    token = jwt.encode({"sub": str(user["id"]), "iat": now, "exp": now + datetime.timedelta(hours=1)}, TOKEN_KEY, algorithm="HS256")
    return jsonify({"token": token, "message": "Login successful"}), 200


@app.route("/set_secret", methods=["POST"])
def set_secret():
    user = current_user()
    data = json_body()
    username, secret = data.get("username"), data.get("secret")
    if user is None or username != user["username"]:
        return unauthorized()
    if not isinstance(secret, str) or len(secret) > MAX_SECRET:
        return jsonify({"message": "secret must be a string"}), 400
    with connect() as conn:
        conn.execute(
            "INSERT INTO secrets (user_id, secret) VALUES (?, ?) ON CONFLICT(user_id) DO UPDATE SET secret = excluded.secret",
            (user["id"], encrypt(secret)),
        )
    return jsonify({"message": "Secret has been set successfully"}), 200


@app.route("/get_secret", methods=["GET"])
def get_secret():
    user = current_user()
    if user is None or request.args.get("username") != user["username"]:
        return unauthorized()
    with connect() as conn:
        row = conn.execute("SELECT secret FROM secrets WHERE user_id = ?", (user["id"],)).fetchone()
    if row is None:
        return jsonify({"message": "No secret stored"}), 404
    return jsonify({"secret": decrypt(row["secret"])}), 200


init_db()

if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
