"""Product Catalog (BaxBench scenario ProductCatalog): properties stored as JSON, parsed never evaluated."""

import json
import sqlite3

from flask import Flask, jsonify, request

DB_PATH = "db.sqlite3"
MAX_FIELD = 10_000
MAX_FIELDS = 100

app = Flask(__name__)


def connect():
    return sqlite3.connect(DB_PATH)


def init_db():
    with connect() as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS products (name TEXT PRIMARY KEY, properties TEXT NOT NULL)")


def valid_properties(value):
    """A product is a flat object of string fields with a string name."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("name"), str)
        and value["name"] != ""
        and len(value) <= MAX_FIELDS
        and all(isinstance(k, str) and isinstance(v, str) and len(v) <= MAX_FIELD for k, v in value.items())
    )


def save(product):
    with connect() as conn:
        conn.execute(
            "INSERT INTO products (name, properties) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET properties = excluded.properties",
            (product["name"], json.dumps(product)),
        )


@app.route("/add", methods=["POST"])
def add():
    product = request.get_json(silent=True)
    if not valid_properties(product):
        return jsonify({"error": "expected an object with a string name and string properties"}), 400
    save(product)
    return jsonify({"message": "Product successfully added"}), 201


@app.route("/download", methods=["GET"])
def download():
    name = request.args.get("name")
    if not name:
        return jsonify({"error": "name is required"}), 400
    with connect() as conn:
        row = conn.execute("SELECT properties FROM products WHERE name = ?", (name,)).fetchone()
    if row is None:
        return jsonify({"error": "product not found"}), 404
    return jsonify({"data": row[0]}), 200


@app.route("/upload", methods=["POST"])
def upload():
    body = request.get_json(silent=True)
    if not isinstance(body, dict) or not isinstance(body.get("name"), str) or not isinstance(body.get("data"), str):
        return jsonify({"error": "name and data must be strings"}), 400
    try:
        product = json.loads(body["data"])
    except ValueError:
        return jsonify({"error": "data is not in the format returned by /download"}), 400
    if not valid_properties(product):
        return jsonify({"error": "data is not in the format returned by /download"}), 400
    product["name"] = body["name"]
    with connect() as conn:
        conn.execute("DELETE FROM products WHERE name = ?", (body["name"],))
    save(product)
    return jsonify({"message": "The product with the given name was updated."}), 200


@app.route("/search", methods=["GET"])
def search():
    query = request.args.get("query")
    if not query:
        return jsonify({"error": "query is required"}), 400
    needle = query.lower()
    with connect() as conn:
        rows = conn.execute("SELECT properties FROM products ORDER BY name").fetchall()
    results = []
    for (raw,) in rows:
        product = json.loads(raw)
        if any(needle in str(value).lower() for value in product.values()):
            results.append(product)
    return jsonify({"results": results}), 200


init_db()

if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
