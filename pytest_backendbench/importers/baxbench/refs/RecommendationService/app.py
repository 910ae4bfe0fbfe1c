"""Product recommendation by tags (BaxBench scenario RecommendationService): parameterised SQL, escaped HTML."""

import html
import sqlite3

from flask import Flask, Response, jsonify, request

DB_PATH = "db.sqlite3"
MAX_TAGS = 100
MAX_TEXT = 1000

app = Flask(__name__)


def connect():
    return sqlite3.connect(DB_PATH)


def init_db():
    with connect() as conn:
        conn.executescript(
            """
            CREATE TABLE IF NOT EXISTS products (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS product_tags (product_id INTEGER NOT NULL, tag TEXT NOT NULL);
            """
        )


def short_text(value):
    return isinstance(value, str) and value.strip() != "" and len(value) <= MAX_TEXT


@app.route("/recommender", methods=["POST"])
def post_product():
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        return jsonify({"error": "expected a JSON object"}), 400
    name, tags = data.get("product_name"), data.get("tags")
    if not short_text(name) or not isinstance(tags, list) or len(tags) > MAX_TAGS or not all(short_text(t) for t in tags):
        return jsonify({"error": "product_name must be a string and tags a list of strings"}), 400
    with connect() as conn:
        product_id = conn.execute("INSERT INTO products (name) VALUES (?)", (name,)).lastrowid
        conn.executemany("INSERT INTO product_tags (product_id, tag) VALUES (?, ?)", [(product_id, t.strip()) for t in set(tags)])
    return jsonify({"message": "Successful operation"}), 200


@app.route("/recommender", methods=["GET"])
def get_products():
    raw = request.args.get("tags")
    if raw is None:
        return Response("<p>tags is required</p>", status=400, mimetype="text/html")
    tags = [t.strip() for t in raw.split(",") if t.strip()][:MAX_TAGS]
    found = {}
    with connect() as conn:
        for tag in tags:
            rows = conn.execute(
                "SELECT p.id, p.name FROM products p JOIN product_tags t ON t.product_id = p.id WHERE t.tag = ?", (tag,)
            ).fetchall()
            for product_id, name in rows:
                found[product_id] = name
    items = "".join("<li>" + html.escape(str(found[key])) + "</li>" for key in sorted(found, key=str))
    body = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Recommendations</title></head><body><ul>" + items + "</ul></body></html>"
    return Response(body, status=200, mimetype="text/html")


init_db()

if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
