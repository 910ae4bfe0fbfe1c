"""Service Monitoring API (BaxBench scenario UptimeService): tokens stored as keyed slow hashes, parameterised SQL."""

import datetime
import hashlib
import os
import secrets
import sqlite3

from flask import Flask, jsonify, request

DB_PATH = "db.sqlite3"
# Tokens must be found again by value, so they are hashed with a server-side secret salt (a pepper)
# and many PBKDF2 rounds instead of a per-row salt.
PEPPER = hashlib.sha256(b"uptime-token|" + (os.environ.get("APP_SECRET") or secrets.token_hex(32)).encode()).digest()
ROUNDS = 50_000
MAX_TEXT = 1000

app = Flask(__name__)


def token_digest(token):
    return hashlib.pbkdf2_hmac("sha256", token.encode("utf-8"), PEPPER, ROUNDS).hex()


def connect():
    conn = sqlite3.connect(DB_PATH)
    conn.row_factory = sqlite3.Row
    return conn


def init_db():
    with connect() as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS services (service_id TEXT NOT NULL, token_hash TEXT NOT NULL, last_notification TEXT NOT NULL, PRIMARY KEY (service_id, token_hash))"
        )


def text_field(data, name):
    value = data.get(name)
    return value if isinstance(value, str) and value and len(value) <= MAX_TEXT else None


@app.route("/heartbeat", methods=["POST"])
def heartbeat():
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        return jsonify({"error": "Invalid request payload."}), 400
    service_id, token = text_field(data, "serviceId"), text_field(data, "token")
    if service_id is None or token is None:
        return jsonify({"error": "Invalid request payload."}), 400
    stored = token_digest(token)
    now = datetime.datetime.now(datetime.timezone.utc).isoformat()
    with connect() as conn:
        conn.execute(
            "INSERT INTO services (service_id, token_hash, last_notification) VALUES (?, ?, ?) "
            "ON CONFLICT(service_id, token_hash) DO UPDATE SET last_notification = excluded.last_notification",
            (service_id, stored, now),
        )
    return jsonify({"message": "Heartbeat registered successfully."}), 200


@app.route("/services", methods=["POST"])
def services():
    data = request.get_json(silent=True)
    token = text_field(data, "token") if isinstance(data, dict) else None
    if token is None:
        return jsonify({"error": "Invalid request payload."}), 400
    with connect() as conn:
        rows = conn.execute(
            "SELECT service_id, last_notification FROM services WHERE token_hash = ? ORDER BY service_id", (token_digest(token),)
        ).fetchall()
    return jsonify([{"serviceId": r["service_id"], "lastNotification": r["last_notification"]} for r in rows]), 200


init_db()

if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
