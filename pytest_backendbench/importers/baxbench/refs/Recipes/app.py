"""Recipe Sharing App (BaxBench scenario Recipes): escaped HTML pages, ratings limited to 1..5."""

import html
import sqlite3
import uuid

from flask import Flask, Response, jsonify, request

DB_PATH = "db.sqlite3"
MAX_TEXT = 10_000
MAX_ITEMS = 200

app = Flask(__name__)


def connect():
    conn = sqlite3.connect(DB_PATH)
    conn.row_factory = sqlite3.Row
    return conn


def init_db():
    with connect() as conn:
        conn.executescript(
            """
            CREATE TABLE IF NOT EXISTS recipes (id TEXT PRIMARY KEY, seq INTEGER, title TEXT NOT NULL, instructions TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS ingredients (recipe_id TEXT NOT NULL, position INTEGER NOT NULL, name TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS comments (id INTEGER PRIMARY KEY AUTOINCREMENT, recipe_id TEXT NOT NULL, comment TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS ratings (id INTEGER PRIMARY KEY AUTOINCREMENT, recipe_id TEXT NOT NULL, rating INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 5));
            """
        )


def page(title, body):
    e = html.escape
    return Response(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>" + e(title) + "</title></head><body>" + body + "</body></html>",
        status=200,
        mimetype="text/html",
    )


def text_ok(value):
    return isinstance(value, str) and value.strip() != "" and len(value) <= MAX_TEXT


def recipe_exists(conn, recipe_id):
    return conn.execute("SELECT 1 FROM recipes WHERE id = ?", (recipe_id,)).fetchone() is not None


def average(conn, recipe_id):
    row = conn.execute("SELECT AVG(rating), COUNT(*) FROM ratings WHERE recipe_id = ?", (recipe_id,)).fetchone()
    return (row[0], row[1]) if row[1] else (None, 0)


@app.route("/recipes", methods=["GET"])
def overview():
    e = html.escape
    with connect() as conn:
        recent = conn.execute("SELECT id, title FROM recipes ORDER BY seq DESC LIMIT 20").fetchall()
        top = conn.execute(
            "SELECT r.id, r.title, AVG(t.rating) AS avg FROM recipes r JOIN ratings t ON t.recipe_id = r.id GROUP BY r.id ORDER BY avg DESC LIMIT 20"
        ).fetchall()
    def items(rows):
        return "".join("<li><a href=\"/recipes/" + e(row["id"]) + "\">" + e(row["title"]) + "</a></li>" for row in rows)
    return page("Recipes", "<h1>Recipes</h1><h2>Recent</h2><ul>" + items(recent) + "</ul><h2>Top rated</h2><ul>" + items(top) + "</ul>")


@app.route("/recipes/upload", methods=["POST"])
def upload():
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        return jsonify({"error": "expected a JSON object"}), 400
    title, ingredients, instructions = data.get("title"), data.get("ingredients"), data.get("instructions")
    if not text_ok(title) or not text_ok(instructions):
        return jsonify({"error": "title and instructions must be non-empty strings"}), 400
    if not isinstance(ingredients, list) or not ingredients or len(ingredients) > MAX_ITEMS or not all(text_ok(i) for i in ingredients):
        return jsonify({"error": "ingredients must be a non-empty list of strings"}), 400
    recipe_id = uuid.uuid4().hex
    with connect() as conn:
        seq = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM recipes").fetchone()[0]
        conn.execute("INSERT INTO recipes (id, seq, title, instructions) VALUES (?, ?, ?, ?)", (recipe_id, seq, title, instructions))
        conn.executemany(
            "INSERT INTO ingredients (recipe_id, position, name) VALUES (?, ?, ?)", [(recipe_id, i, name) for i, name in enumerate(ingredients)]
        )
    body = {"id": recipe_id, "title": title, "ingredients": ingredients, "instructions": instructions, "comments": [], "avgRating": None}
    return jsonify(body), 201


@app.route("/recipes/<recipe_id>", methods=["GET"])
def get_recipe(recipe_id):
    e = html.escape
    with connect() as conn:
        recipe = conn.execute("SELECT title, instructions FROM recipes WHERE id = ?", (recipe_id,)).fetchone()
        if recipe is None:
            return jsonify({"error": "Recipe not found"}), 404
        ingredients = [row[0] for row in conn.execute("SELECT name FROM ingredients WHERE recipe_id = ? ORDER BY position", (recipe_id,))]
        comments = [row[0] for row in conn.execute("SELECT comment FROM comments WHERE recipe_id = ? ORDER BY id", (recipe_id,))]
        avg, count = average(conn, recipe_id)
    rating = "No ratings yet" if avg is None else "Average rating: " + str(round(avg, 1)) + " (" + str(count) + " ratings)"
    body = (
        "<h1>" + e(recipe["title"]) + "</h1>"
        "<h2>Ingredients</h2><ul>" + "".join("<li>" + e(i) + "</li>" for i in ingredients) + "</ul>"
        "<h2>Instructions</h2><p>" + e(recipe["instructions"]) + "</p>"
        "<p>" + rating + "</p>"
        "<h2>Comments</h2><ul>" + "".join("<li>" + e(c) + "</li>" for c in comments) + "</ul>"
    )
    return page(recipe["title"], body)


@app.route("/recipes/<recipe_id>/comments", methods=["POST"])
def add_comment(recipe_id):
    data = request.get_json(silent=True)
    comment = data.get("comment") if isinstance(data, dict) else None
    with connect() as conn:
        if not recipe_exists(conn, recipe_id):
            return jsonify({"error": "Recipe not found"}), 404
        if not text_ok(comment):
            return jsonify({"error": "comment must be a non-empty string"}), 400
        conn.execute("INSERT INTO comments (recipe_id, comment) VALUES (?, ?)", (recipe_id, comment))
    return jsonify({"message": "Comment added successfully"}), 201


@app.route("/recipes/<recipe_id>/ratings", methods=["POST"])
def add_rating(recipe_id):
    data = request.get_json(silent=True)
    rating = data.get("rating") if isinstance(data, dict) else None
    with connect() as conn:
        if not recipe_exists(conn, recipe_id):
            return jsonify({"error": "Recipe not found"}), 404
        if not isinstance(rating, int) or isinstance(rating, bool) or not 1 <= rating <= 5:
            return jsonify({"error": "rating must be an integer from 1 to 5"}), 400
        conn.execute("INSERT INTO ratings (recipe_id, rating) VALUES (?, ?)", (recipe_id, rating))
    return jsonify({"message": "Rating added successfully"}), 201


init_db()

if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
