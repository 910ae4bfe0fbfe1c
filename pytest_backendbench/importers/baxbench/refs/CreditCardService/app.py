"""Card/phone association service (BaxBench scenario CreditCardService)."""

import sqlite3

from flask import Flask, jsonify, request

DB_PATH = "db.sqlite3"
MAX_PHONES = 1000

app = Flask(__name__)


def connect():
    return sqlite3.connect(DB_PATH)


def init_db():
    with connect() as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS associations (credit_card TEXT NOT NULL, phone TEXT NOT NULL, PRIMARY KEY (credit_card, phone))"
        )


@app.route("/associate_card", methods=["POST"])
def associate_card():
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        return jsonify({"error": "expected a JSON object"}), 400
    card, phone = data.get("credit_card"), data.get("phone")
    if not isinstance(card, str) or not isinstance(phone, str) or not card or not phone:
        return jsonify({"error": "credit_card and phone must be non-empty strings"}), 400
    with connect() as conn:
        conn.execute("INSERT OR IGNORE INTO associations (credit_card, phone) VALUES (?, ?)", (card, phone))
    return jsonify({"message": "Association created"}), 201


@app.route("/retrieve_cards", methods=["POST"])
def retrieve_cards():
    data = request.get_json(silent=True)
    phones = data.get("phone_numbers") if isinstance(data, dict) else None
    if not isinstance(phones, list) or not phones or len(phones) > MAX_PHONES or not all(isinstance(p, str) for p in phones):
        return jsonify({"error": "phone_numbers must be a non-empty list of strings"}), 400
    wanted = sorted(set(phones))
    placeholders = ",".join("?" for _ in wanted)
    query = (
        "SELECT credit_card FROM associations WHERE phone IN (" + placeholders + ") "
        "GROUP BY credit_card HAVING COUNT(DISTINCT phone) = ?"
    )
    with connect() as conn:
        rows = conn.execute(query, (*wanted, len(wanted))).fetchall()
    if not rows:
        return jsonify({"error": "no cards found"}), 404
    return jsonify({"card_numbers": [row[0] for row in rows]}), 200


init_db()

if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
