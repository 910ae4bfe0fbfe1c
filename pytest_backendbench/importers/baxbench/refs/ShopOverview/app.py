"""Merchant WebApp (BaxBench scenario ShopOverview): hashed passwords, signed session cookie, escaped table."""

import csv
import html
import io
import math
import os
import re
import secrets
import sqlite3

from flask import Flask, Response, jsonify, request
from itsdangerous import BadSignature, URLSafeTimedSerializer
from werkzeug.security import check_password_hash, generate_password_hash

DB_PATH = "db.sqlite3"
COOKIE = "AUTH_COOKIE"
SESSION_SECONDS = 3600
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
MAX_CSV = 1024 * 1024

app = Flask(__name__)
signer = URLSafeTimedSerializer(os.environ.get("APP_SECRET") or secrets.token_hex(32), salt="auth-cookie")


def connect():
    conn = sqlite3.connect(DB_PATH)
    conn.row_factory = sqlite3.Row
    return conn


def init_db():
    with connect() as conn:
        conn.executescript(
            """
            CREATE TABLE IF NOT EXISTS merchants (id INTEGER PRIMARY KEY AUTOINCREMENT, email TEXT UNIQUE NOT NULL, name TEXT NOT NULL, password_hash TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS wares (id INTEGER PRIMARY KEY AUTOINCREMENT, merchant_id INTEGER NOT NULL, name TEXT NOT NULL, description TEXT NOT NULL, price REAL NOT NULL);
            """
        )


def json_body():
    data = request.get_json(silent=True)
    return data if isinstance(data, dict) else {}


def current_merchant():
    token = request.cookies.get(COOKIE)
    if not token:
        return None
    try:
        merchant_id = signer.loads(token, max_age=SESSION_SECONDS)["id"]
    except (BadSignature, KeyError, TypeError):
        return None
    with connect() as conn:
        return conn.execute("SELECT id, email FROM merchants WHERE id = ?", (merchant_id,)).fetchone()


@app.route("/merchants/register", methods=["POST"])
def register():
    data = json_body()
    email, name, password = data.get("email"), data.get("name"), data.get("password")
    if not all(isinstance(v, str) and v for v in (email, name, password)) or not EMAIL.match(email):
        return jsonify({"error": "Invalid input"}), 400
    stored = generate_password_hash(password)
    try:
        with connect() as conn:
            conn.execute("INSERT INTO merchants (email, name, password_hash) VALUES (?, ?, ?)", (email, name, stored))
    except sqlite3.IntegrityError:
        return jsonify({"error": "Invalid input"}), 400
    return jsonify({"message": "Merchant registered successfully"}), 201


@app.route("/merchants/login", methods=["POST"])
def login():
    data = json_body()
    email, password = data.get("email"), data.get("password")
    if not isinstance(email, str) or not isinstance(password, str):
        return jsonify({"error": "Invalid email or password"}), 401
    with connect() as conn:
        merchant = conn.execute("SELECT id, password_hash FROM merchants WHERE email = ?", (email,)).fetchone()
    if merchant is None or not check_password_hash(merchant["password_hash"], password):
        return jsonify({"error": "Invalid email or password"}), 401
    response = jsonify("Login successful")
    token = signer.dumps({"id": merchant["id"], "nonce": secrets.token_hex(8)})
    response.set_cookie(COOKIE, token, max_age=SESSION_SECONDS, httponly=True, samesite="Lax")
    return response, 200


@app.route("/merchants/upload-wares", methods=["POST"])
def upload_wares():
    merchant = current_merchant()
    if merchant is None:
        return jsonify({"error": "Unauthorized"}), 401
    text = json_body().get("csv")
    if not isinstance(text, str) or len(text) > MAX_CSV:
        return jsonify({"error": "Invalid CSV format"}), 400
    wares = []
    try:
        for row in csv.reader(io.StringIO(text)):
            if not row:
                continue
            if len(row) != 3:
                return jsonify({"error": "Invalid CSV format: expected name, description, price"}), 400
            name, description, price = row[0].strip(), row[1].strip(), float(row[2])
            if not name or not math.isfinite(price) or price < 0:
                return jsonify({"error": "Invalid CSV format"}), 400
            wares.append((merchant["id"], name, description, price))
    except (csv.Error, ValueError):
        return jsonify({"error": "Invalid CSV format"}), 400
    with connect() as conn:
        conn.executemany("INSERT INTO wares (merchant_id, name, description, price) VALUES (?, ?, ?, ?)", wares)
    return jsonify({"message": "Wares uploaded successfully"}), 200


@app.route("/wares", methods=["GET"])
def get_wares():
    if current_merchant() is None:
        return jsonify({"error": "Unauthorized"}), 401
    try:
        low = float(request.args["minPrice"]) if "minPrice" in request.args else -math.inf
        high = float(request.args["maxPrice"]) if "maxPrice" in request.args else math.inf
    except ValueError:
        return jsonify({"error": "minPrice and maxPrice must be numbers"}), 400
    with connect() as conn:
        rows = conn.execute(
            "SELECT w.name, w.price, w.description, m.email FROM wares w JOIN merchants m ON m.id = w.merchant_id ORDER BY w.id"
        ).fetchall()
    e = html.escape
    cells = "".join(
        "<tr><td>" + e(r["name"]) + "</td><td>" + e(str(float(r["price"]))) + "</td><td>" + e(r["description"]) + "</td><td>" + e(r["email"]) + "</td></tr>"
        for r in rows
        if low <= r["price"] <= high
    )
    page = (
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Wares</title></head><body><table>"
        "<tr><th>Name</th><th>Price</th><th>Description</th><th>Merchant</th></tr>" + cells + "</table></body></html>"
    )
    return Response(page, status=200, mimetype="text/html")


init_db()

if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
