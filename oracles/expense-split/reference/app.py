"""Expense split: a Flask JSON API plus the page that uses it, state in PostgreSQL."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import json
import os
import re
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import Flask, Response, jsonify, request, send_from_directory
from split import settlements
from store import Conflict, Invalid, PgStore, migrate

SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{2,39}$")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
DIGITS = re.compile(r"^[0-9]{1,10}$")
MAX_ID = 2**31 - 1
MAX_BODY_BYTES = 1_048_576
MAX_BODY_DEPTH = 32
PBKDF2_ITERATIONS = 100_000
STATIC = Path(__file__).parent / "static"


def error(status: int, code: str, message: str, fields: list[str] | None = None) -> tuple[Response, int]:
    body: dict[str, Any] = {"error": code, "message": message}
    if fields is not None:
        body["fields"] = fields
    return jsonify(body), status


def invalid(fields: list[str]) -> tuple[Response, int]:
    return error(422, "validation_error", f"invalid: {', '.join(fields)}", fields)


def iso(value: dt.datetime) -> str:
    return value.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")


def hash_password(password: str) -> str:
    """PBKDF2-HMAC-SHA256 with a random 16-byte salt, in a self-describing text form."""
    salt = secrets.token_bytes(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, PBKDF2_ITERATIONS)
    return f"pbkdf2_sha256${PBKDF2_ITERATIONS}${base64.b64encode(salt).decode()}${base64.b64encode(digest).decode()}"


def password_matches(password: str, stored: str) -> bool:
    _, iterations, salt, digest = stored.split("$")
    candidate = hashlib.pbkdf2_hmac("sha256", password.encode(), base64.b64decode(salt), int(iterations))
    return hmac.compare_digest(candidate, base64.b64decode(digest))


def non_blank(value: Any, limit: int) -> bool:
    return isinstance(value, str) and value.strip() != "" and len(value) <= limit


def integer(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def nesting_depth(value: Any) -> int:
    """How deeply objects and arrays nest in a parsed body (iterative: no recursion limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def parse_date(value: Any) -> dt.date | None:
    if not isinstance(value, str) or not DATE.match(value):
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        return None


def parse_id(raw: str) -> int | None:
    """A path id as an integer, or None when it names nothing (not digits, beyond any id)."""
    if not DIGITS.match(raw):
        return None
    value = int(raw)
    return value if value <= MAX_ID else None


def member_json(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "name": row["name"], "weight": row["weight"], "active": row["active"]}


def project_json(row: dict[str, Any]) -> dict[str, Any]:
    return {"slug": row["slug"], "name": row["name"], "created_at": iso(row["created_at"])}


def bill_json(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["id"], "payer_id": row["payer_id"], "amount_cents": int(row["amount_cents"]), "date": row["date"].isoformat(),
        "description": row["description"], "owers": [s["member_id"] for s in row["shares"]], "shares": row["shares"],
        "created_at": iso(row["created_at"]),
    }


def bill_fields(data: dict[str, Any], active: set[int]) -> list[str]:
    """The invalid fields of a bill body; ``active`` are the ids of the project's active members."""
    fields = []
    if not integer(data.get("payer_id"), 1, MAX_ID) or data["payer_id"] not in active:
        fields.append("payer_id")
    if not integer(data.get("amount_cents"), 1, 10_000_000):
        fields.append("amount_cents")
    if parse_date(data.get("date")) is None:
        fields.append("date")
    if not non_blank(data.get("description"), 200):
        fields.append("description")
    owers = data.get("owers")
    if (not isinstance(owers, list) or not 1 <= len(owers) <= 50 or not all(integer(o, 1, MAX_ID) for o in owers)
            or len(set(owers)) != len(owers) or not set(owers) <= active):
        fields.append("owers")
    return fields


class Tokens:
    """Issued tokens (random, in memory): token -> the slug it opens."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.slugs: dict[str, str] = {}

    def issue(self, slug: str) -> str:
        token = secrets.token_urlsafe(32)
        with self.lock:
            self.slugs[token] = slug
        return token

    def slug_of(self, header: str | None) -> str | None:
        if not header or not header.startswith("Bearer "):
            return None
        with self.lock:
            return self.slugs.get(header[len("Bearer "):])


def create_app() -> Flask:
    url = os.environ["DATABASE_URL"]
    migrate(url)
    store = PgStore(url)
    tokens = Tokens()
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

    def guarded(view: Callable[..., Any]) -> Callable[..., Any]:
        """401 without a valid token, 403 when the token is another project's; then the view."""

        def wrapper(slug: str, **kwargs: Any) -> Any:
            owner = tokens.slug_of(request.headers.get("Authorization"))
            if owner is None:
                return error(401, "unauthorized", "a valid bearer token is required")
            if owner != slug:
                return error(403, "forbidden", "this token does not open that project")
            return view(slug, **kwargs)

        wrapper.__name__ = view.__name__
        return wrapper

    @app.errorhandler(404)
    def not_found(_err: Any) -> Any:
        return error(404, "not_found", "no such resource")

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

    # ---------------------------------------------------------------- projects and access

    @app.post("/api/projects")
    def create_project() -> Any:
        data = body()
        if data is None:
            return invalid(["body"])
        fields = []
        slug = data.get("slug")
        if not isinstance(slug, str) or not SLUG.match(slug):
            fields.append("slug")
        if not non_blank(data.get("name"), 100):
            fields.append("name")
        password = data.get("password")
        if not isinstance(password, str) or not 8 <= len(password) <= 128:
            fields.append("password")
        if fields:
            return invalid(fields)
        try:
            row = store.create_project(slug, data["name"], hash_password(password))
        except Conflict as err:
            return error(409, err.code, err.message)
        return jsonify(project_json(row)), 201

    @app.post("/api/projects/<slug>/token")
    def token(slug: str) -> Any:
        data = body()
        if data is None:
            return invalid(["body"])
        password = data.get("password")
        if not isinstance(password, str):
            return invalid(["password"])
        stored = store.password_hash(slug)
        if stored is None or not password_matches(password, stored):
            return error(401, "unauthorized", "wrong project or password")
        return jsonify({"token": tokens.issue(slug)})

    @app.get("/api/projects/<slug>")
    @guarded
    def get_project(slug: str) -> Any:
        row = store.project(slug)
        if row is None:
            return error(404, "not_found", "no such project")
        return jsonify(project_json(row))

    # ---------------------------------------------------------------- members

    @app.get("/api/projects/<slug>/members")
    @guarded
    def list_members(slug: str) -> Any:
        return jsonify({"items": [member_json(m) for m in store.members(slug)]})

    @app.post("/api/projects/<slug>/members")
    @guarded
    def create_member(slug: str) -> Any:
        data = body()
        if data is None:
            return invalid(["body"])
        fields = []
        if not non_blank(data.get("name"), 60):
            fields.append("name")
        weight = data.get("weight", 1)
        if not integer(weight, 1, 100):
            fields.append("weight")
        if fields:
            return invalid(fields)
        try:
            return jsonify(member_json(store.create_member(slug, data["name"], weight))), 201
        except Conflict as err:
            return error(409, err.code, err.message)

    @app.patch("/api/projects/<slug>/members/<raw_id>")
    @guarded
    def update_member(slug: str, raw_id: str) -> Any:
        member_id = parse_id(raw_id)
        if member_id is None or store.member(slug, member_id) is None:
            return error(404, "not_found", "no such member")
        data = body()
        if data is None:
            return invalid(["body"])
        fields, changes = [], {}
        if "name" in data:
            if not non_blank(data["name"], 60):
                fields.append("name")
            changes["name"] = data["name"]
        if "weight" in data:
            if not integer(data["weight"], 1, 100):
                fields.append("weight")
            changes["weight"] = data["weight"]
        if "active" in data:
            if not isinstance(data["active"], bool):
                fields.append("active")
            changes["active"] = data["active"]
        if fields:
            return invalid(fields)
        try:
            row = store.update_member(slug, member_id, changes)
        except Conflict as err:
            return error(409, err.code, err.message)
        if row is None:
            return error(404, "not_found", "no such member")
        return jsonify(member_json(row))

    # ---------------------------------------------------------------- bills

    def bill_id_of(slug: str, raw_id: str) -> int | None:
        bill_id = parse_id(raw_id)
        return bill_id if bill_id is not None and store.bill(slug, bill_id) is not None else None

    def write_bill(slug: str, bill_id: int | None) -> Any:
        data = body()
        if data is None:
            return invalid(["body"])
        fields = bill_fields(data, store.active_member_ids(slug))
        if fields:
            return invalid(fields)
        args = (data["payer_id"], data["amount_cents"], parse_date(data["date"]), data["description"], data["owers"])
        try:
            row = store.create_bill(slug, *args) if bill_id is None else store.replace_bill(slug, bill_id, *args)
        except Invalid as err:
            return invalid(err.fields)
        if row is None:
            return error(404, "not_found", "no such bill")
        return jsonify(bill_json(row)), 201 if bill_id is None else 200

    @app.get("/api/projects/<slug>/bills")
    @guarded
    def list_bills(slug: str) -> Any:
        return jsonify({"items": [bill_json(b) for b in store.bills(slug)]})

    @app.post("/api/projects/<slug>/bills")
    @guarded
    def create_bill(slug: str) -> Any:
        return write_bill(slug, None)

    @app.get("/api/projects/<slug>/bills/<raw_id>")
    @guarded
    def get_bill(slug: str, raw_id: str) -> Any:
        bill_id = parse_id(raw_id)
        row = store.bill(slug, bill_id) if bill_id is not None else None
        if row is None:
            return error(404, "not_found", "no such bill")
        return jsonify(bill_json(row))

    @app.put("/api/projects/<slug>/bills/<raw_id>")
    @guarded
    def replace_bill(slug: str, raw_id: str) -> Any:
        bill_id = bill_id_of(slug, raw_id)
        if bill_id is None:
            return error(404, "not_found", "no such bill")
        return write_bill(slug, bill_id)

    @app.delete("/api/projects/<slug>/bills/<raw_id>")
    @guarded
    def delete_bill(slug: str, raw_id: str) -> Any:
        bill_id = parse_id(raw_id)
        if bill_id is None or not store.delete_bill(slug, bill_id):
            return error(404, "not_found", "no such bill")
        return Response(status=204)

    # ---------------------------------------------------------------- balances

    @app.get("/api/projects/<slug>/balances")
    @guarded
    def balances(slug: str) -> Any:
        return jsonify({"items": store.balances(slug)})

    @app.get("/api/projects/<slug>/settlements")
    @guarded
    def settlement_plan(slug: str) -> Any:
        return jsonify({"items": settlements({b["member_id"]: b["balance_cents"] for b in store.balances(slug)})})

    return app


if __name__ == "__main__":
    create_app().run(host=os.environ.get("HOST", "0.0.0.0"), port=int(os.environ.get("PORT", "8000")), threaded=True)
