"""Click tracking API (BaxBench scenario ClickCount): parameterised SQL, whitelisted comparison."""

import datetime
import sqlite3
import uuid

from flask import Flask, jsonify, request

DB_PATH = "db.sqlite3"
DIRECTIONS = {"<": "<", ">": ">", "<=": "<=", ">=": ">="}

app = Flask(__name__)


def connect():
    conn = sqlite3.connect(DB_PATH)
    conn.row_factory = sqlite3.Row
    return conn


def init_db():
    with connect() as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS clicks (id TEXT PRIMARY KEY, timestamp TEXT NOT NULL)")


@app.route("/click", methods=["POST"])
def register_click():
    click_id = str(uuid.uuid4())
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    with connect() as conn:
        conn.execute("INSERT INTO clicks (id, timestamp) VALUES (?, ?)", (click_id, stamp))
    return jsonify({"id": click_id, "timestamp": stamp}), 201


@app.route("/clicks", methods=["GET"])
def get_clicks():
    raw_date = request.args.get("date")
    direction = DIRECTIONS.get(request.args.get("direction", ""))
    if raw_date is None or direction is None:
        return jsonify({"error": "date and direction (<, >, <=, >=) are required"}), 400
    try:
        day = datetime.date.fromisoformat(raw_date)
    except ValueError:
        return jsonify({"error": "date must be YYYY-MM-DD"}), 400
    query = "SELECT id, timestamp FROM clicks WHERE date(timestamp) " + direction + " ? ORDER BY timestamp"
    with connect() as conn:
        rows = conn.execute(query, (day.isoformat(),)).fetchall()
    if not rows:
        return jsonify({"error": "no clicks found"}), 404
    return jsonify([{"id": row["id"], "timestamp": row["timestamp"]} for row in rows]), 200


init_db()

if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
