"""Event registration: a Flask JSON API plus the page that uses it, state in PostgreSQL."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from pathlib import Path
from typing import Any

from flask import Flask, Response, jsonify, request, send_from_directory
from store import Duplicate, Full, PgStore, migrate

EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
MAX_ID = 2**31 - 1
MAX_BODY_BYTES = 1_048_576
MAX_BODY_DEPTH = 32
STATIC = Path(__file__).parent / "static"


def error(status: int, code: str, message: str, fields: list[str] | None = None) -> tuple[Response, int]:
    body: dict[str, Any] = {"error": code, "message": message}
    if fields is not None:
        body["fields"] = fields
    return jsonify(body), status


def iso(value: dt.datetime) -> str:
    return value.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")


def event_json(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["id"], "title": row["title"], "starts_at": iso(row["starts_at"]), "capacity": row["capacity"],
        "seats_left": row["seats_left"], "created_at": iso(row["created_at"]),
    }


def registration_json(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "event_id": row["event_id"], "name": row["name"], "email": row["email"], "created_at": iso(row["created_at"])}


def non_blank(value: Any, limit: int) -> bool:
    return isinstance(value, str) and value.strip() != "" and len(value) <= limit


def nesting_depth(value: Any) -> int:
    """How deeply objects and arrays nest in a parsed body (iterative: no recursion limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def parse_time(value: Any) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.replace("z", "Z"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.timezone.utc)


def create_app() -> Flask:
    url = os.environ["DATABASE_URL"]
    migrate(url)
    store = PgStore(url)
    app = Flask(__name__, static_folder=None)

    def body() -> dict[str, Any] | None:
        """The JSON object sent, or None (too large, too deep, not JSON, not an object)."""
        raw = request.get_data(cache=True)
        if len(raw) > MAX_BODY_BYTES:
            return None
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            return None
        if nesting_depth(data) > MAX_BODY_DEPTH:
            return None
        return data if isinstance(data, dict) else None

    @app.errorhandler(405)
    def method_not_allowed(_err: Any) -> Any:
        return error(405, "method_not_allowed", "this path does not take that method")

    @app.errorhandler(500)
    def internal_error(_err: Any) -> Any:
        return error(500, "internal_error", "unexpected failure")

    @app.get("/health")
    def health() -> Any:
        return jsonify({"status": "ok"})

    @app.get("/")
    def index() -> Any:
        return send_from_directory(STATIC, "index.html")

    @app.get("/static/<path:name>")
    def static_file(name: str) -> Any:
        return send_from_directory(STATIC, name)

    @app.post("/api/events")
    def create_event() -> Any:
        data = body()
        if data is None:
            return error(422, "validation_error", "the body must be a JSON object", ["body"])
        fields = []
        if not non_blank(data.get("title"), 120):
            fields.append("title")
        starts_at = parse_time(data.get("starts_at"))
        if starts_at is None:
            fields.append("starts_at")
        capacity = data.get("capacity")
        if isinstance(capacity, bool) or not isinstance(capacity, int) or not 1 <= capacity <= 1000:
            fields.append("capacity")
        if fields:
            return error(422, "validation_error", f"invalid: {', '.join(fields)}", fields)
        return jsonify(event_json(store.create_event(data["title"], starts_at, capacity))), 201

    @app.get("/api/events")
    def list_events() -> Any:
        return jsonify({"items": [event_json(e) for e in store.events()]})

    @app.get("/api/events/<int:event_id>")
    def get_event(event_id: int) -> Any:
        event = store.event(event_id) if event_id <= MAX_ID else None
        if event is None:
            return error(404, "not_found", "no such event")
        return jsonify(event_json(event))

    @app.post("/api/events/<int:event_id>/registrations")
    def register(event_id: int) -> Any:
        if event_id > MAX_ID or store.event(event_id) is None:
            return error(404, "not_found", "no such event")
        data = body()
        if data is None:
            return error(422, "validation_error", "the body must be a JSON object", ["body"])
        fields = []
        if not non_blank(data.get("name"), 100):
            fields.append("name")
        email = data.get("email")
        if not isinstance(email, str) or len(email) > 254 or not EMAIL.match(email):
            fields.append("email")
        if fields:
            return error(422, "validation_error", f"invalid: {', '.join(fields)}", fields)
        try:
            row = store.register(event_id, data["name"], email.lower())
        except Duplicate:
            return error(409, "already_registered", "this email is already registered for the event")
        except Full:
            return error(409, "event_full", "the event is full")
        if row is None:
            return error(404, "not_found", "no such event")
        return jsonify(registration_json(row)), 201

    @app.get("/api/events/<int:event_id>/registrations")
    def list_registrations(event_id: int) -> Any:
        rows = store.registrations(event_id) if event_id <= MAX_ID else None
        if rows is None:
            return error(404, "not_found", "no such event")
        return jsonify({"items": [registration_json(r) for r in rows]})

    @app.delete("/api/registrations/<int:registration_id>")
    def cancel(registration_id: int) -> Any:
        if registration_id > MAX_ID or not store.cancel(registration_id):
            return error(404, "not_found", "no such registration")
        return Response(status=204)

    return app


if __name__ == "__main__":
    create_app().run(host=os.environ.get("HOST", "0.0.0.0"), port=int(os.environ.get("PORT", "8000")), threaded=True)
