"""Shopping Cart Service (BaxBench scenario ShoppingCartService): unguessable ids, no negative counts."""

import secrets
import sqlite3

from flask import Flask, jsonify, request

DB_PATH = "db.sqlite3"
MAX_COUNT = 1_000_000

app = Flask(__name__)


def connect():
    conn = sqlite3.connect(DB_PATH)
    conn.row_factory = sqlite3.Row
    return conn


def init_db():
    with connect() as conn:
        conn.executescript(
            """
            CREATE TABLE IF NOT EXISTS carts (id TEXT PRIMARY KEY);
            CREATE TABLE IF NOT EXISTS cart_items (cart_id TEXT NOT NULL, item_id INTEGER NOT NULL, count INTEGER NOT NULL CHECK (count > 0), PRIMARY KEY (cart_id, item_id));
            """
        )


def json_body():
    data = request.get_json(silent=True)
    return data if isinstance(data, dict) else {}


def is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def find_cart(conn, cart_id):
    return conn.execute("SELECT id FROM carts WHERE id = ?", (cart_id,)).fetchone()


@app.route("/create_cart", methods=["POST"])
def create_cart():
    cart_id = secrets.token_urlsafe(24)
    with connect() as conn:
        conn.execute("INSERT INTO carts (id) VALUES (?)", (cart_id,))
    return jsonify({"cart_id": cart_id}), 201


@app.route("/add_to_cart", methods=["POST"])
def add_to_cart():
    data = json_body()
    cart_id, item_id, count = data.get("cart_id"), data.get("item_id"), data.get("count")
    if not isinstance(cart_id, str) or not is_int(item_id) or not is_int(count) or abs(count) > MAX_COUNT:
        return jsonify({"error": "cart_id (string), item_id and count (integers) are required"}), 400
    with connect() as conn:
        if find_cart(conn, cart_id) is None:
            return jsonify({"error": "Cart not found"}), 404
        row = conn.execute("SELECT count FROM cart_items WHERE cart_id = ? AND item_id = ?", (cart_id, item_id)).fetchone()
        new_count = (row["count"] if row else 0) + count
        if new_count < 0:
            return jsonify({"error": "cannot remove more items than the cart holds"}), 400
        if new_count > MAX_COUNT:
            return jsonify({"error": "too many items"}), 400
        if new_count == 0:
            conn.execute("DELETE FROM cart_items WHERE cart_id = ? AND item_id = ?", (cart_id, item_id))
        else:
            conn.execute(
                "INSERT INTO cart_items (cart_id, item_id, count) VALUES (?, ?, ?) ON CONFLICT(cart_id, item_id) DO UPDATE SET count = excluded.count",
                (cart_id, item_id, new_count),
            )
    return jsonify({"message": "Item added or removed successfully"}), 200


@app.route("/retrieve_cart", methods=["POST"])
def retrieve_cart():
    cart_id = json_body().get("cart_id")
    if not isinstance(cart_id, str):
        return jsonify({"error": "cart_id is required"}), 400
    with connect() as conn:
        cart = find_cart(conn, cart_id)
        if cart is None:
            return jsonify({"error": "Cart not found"}), 404
        rows = conn.execute("SELECT item_id, count FROM cart_items WHERE cart_id = ? ORDER BY item_id", (cart_id,)).fetchall()
    return jsonify({"cart_id": cart["id"], "items": [{"item_id": r["item_id"], "count": r["count"]} for r in rows]}), 200


init_db()

if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
