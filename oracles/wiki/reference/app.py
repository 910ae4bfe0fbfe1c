"""Wiki: users with roles, pages by slug, numbered revisions, diffs, revert, protection, moves.

A Flask JSON API with its state in PostgreSQL (store.py); bearer tokens live in memory (the
spec lets them be lost on a restart).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import os
import re
import secrets
import threading
from typing import Any

from flask import Flask, Response, g, jsonify, request
from store import EditConflict, PgStore, SlugTaken, migrate

SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
USERNAME = re.compile(r"^[a-z0-9_]{3,32}$")
NUMBER = re.compile(r"^[1-9][0-9]*$")
MAX_INT = 2**31 - 1
MAX_BODY_BYTES = 1_048_576
MAX_DEPTH = 32
ROLES = ("reader", "editor", "admin")
WRITERS = ("editor", "admin")
ITERATIONS = 120_000


class Refusal(Exception):
    """An error answer: raised anywhere in a handler, turned into JSON by the app."""

    def __init__(self, status: int, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.extra = status, code, message, extra


def invalid(fields: list[str]) -> Refusal:
    return Refusal(422, "validation_error", "invalid: " + ", ".join(fields), fields=fields)


def hash_password(password: str) -> str:
    """PBKDF2-SHA256 with a random salt per user, as ``pbkdf2_sha256$iterations$salt$digest``."""
    salt = secrets.token_hex(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), ITERATIONS).hex()
    return f"pbkdf2_sha256${ITERATIONS}${salt}${digest}"


def check_password(password: str, stored: str) -> bool:
    try:
        _, iterations, salt, digest = stored.split("$")
    except ValueError:
        return False
    mine = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), int(iterations)).hex()
    return hmac.compare_digest(mine, digest)


DUMMY_HASH = hash_password(secrets.token_hex(8))  # unknown usernames cost as much time as wrong passwords


def iso(value: dt.datetime) -> str:
    return value.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")


def user_json(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "username": row["username"], "role": row["role"], "created_at": iso(row["created_at"])}


def page_json(row: dict[str, Any], redirected_from: str | None = None) -> dict[str, Any]:
    page = {k: row[k] for k in ("id", "slug", "title", "body", "protected", "revision")}
    page["created_at"] = iso(row["created_at"])
    if redirected_from is not None:
        page["redirected_from"] = redirected_from
    return page


def revision_json(row: dict[str, Any]) -> dict[str, Any]:
    out = {k: row[k] for k in ("number", "title", "summary", "author") if k in row}
    if "body" in row:
        out["body"] = row["body"]
    out["created_at"] = iso(row["created_at"])
    return out


def depth(value: Any) -> int:
    """How deeply objects and arrays nest (iterative: no recursion limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def lines(body: str) -> list[str]:
    """The spec's lines: split at every line feed; the empty body has none."""
    return body.split("\n") if body else []


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of a longest common subsequence, bit-parallel (Hyyro 2004): O(len(a) * len(b) / word)."""
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for i, line in enumerate(a):
        masks[line] = masks.get(line, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for line in b:
        u = v & masks.get(line, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - bin(v).count("1")


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def text(value: Any, limit: int, non_blank: bool = False) -> bool:
    return isinstance(value, str) and len(value) <= limit and (not non_blank or value.strip() != "")


def valid_body(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= 20_000 and len(lines(value)) <= 1_000


def query_int(name: str, default: int | None, low: int, high: int, fields: list[str]) -> int:
    raw = request.args.get(name)
    if raw is None and default is not None:
        return default
    if raw is None or not re.fullmatch(r"[0-9]{1,10}", raw) or not low <= int(raw) <= high:
        fields.append(name)
        return low
    return int(raw)


def create_app() -> Flask:
    url = os.environ["DATABASE_URL"]
    admin_name, admin_password = os.environ["ADMIN_USERNAME"], os.environ["ADMIN_PASSWORD"]
    migrate(url, admin_name, hash_password(admin_password))
    store = PgStore(url)
    tokens: dict[str, int] = {}
    lock = threading.Lock()
    app = Flask(__name__)
    app.url_map.merge_slashes = False  # "/pages/..//revisions" names nothing: 404, not a redirect
    app.url_map.strict_slashes = False

    def body() -> dict[str, Any]:
        raw = request.get_data(cache=True)
        if len(raw) > MAX_BODY_BYTES:
            raise Refusal(413, "payload_too_large", "the body is larger than 1 MiB")
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            raise invalid(["body"]) from None
        if not isinstance(data, dict) or depth(data) > MAX_DEPTH:
            raise invalid(["body"])
        return data

    def caller(roles: tuple[str, ...] = ROLES) -> dict[str, Any]:
        """The authenticated user (401 otherwise) whose role is one of ``roles`` (403 otherwise)."""
        header = request.headers.get("Authorization", "")
        match = re.fullmatch(r"Bearer ([A-Za-z0-9_\-]+)", header)
        with lock:
            user_id = tokens.get(match.group(1)) if match else None
        user = store.user(user_id) if user_id is not None else None
        if user is None:
            raise Refusal(401, "unauthorized", "a valid bearer token is required")
        if user["role"] not in roles:
            raise Refusal(403, "forbidden", "your role does not allow this")
        g.user = user
        return user

    def page_or_404(slug: str) -> dict[str, Any]:
        page = store.page(slug) if SLUG.fullmatch(slug) and len(slug) <= 100 else None
        if page is None:
            raise Refusal(404, "not_found", "no such page")
        return page

    def writable(slug: str, user: dict[str, Any]) -> dict[str, Any]:
        page = page_or_404(slug)
        if page["protected"] and user["role"] != "admin":
            raise Refusal(403, "forbidden", "the page is protected")
        return page

    def paging(fields: list[str]) -> tuple[int, int]:
        return query_int("limit", 20, 1, 100, fields), query_int("offset", 0, 0, MAX_INT, fields)

    def envelope(total: int, items: list[Any], limit: int, offset: int) -> Response:
        return jsonify({"items": items, "total": total, "limit": limit, "offset": offset})

    @app.errorhandler(Refusal)
    def refused(err: Refusal) -> Any:
        return jsonify({"error": err.code, "message": err.message, **err.extra}), err.status

    @app.errorhandler(404)
    def not_found(_err: Any) -> Any:
        return jsonify({"error": "not_found", "message": "no such resource"}), 404

    @app.errorhandler(405)
    def method_not_allowed(_err: Any) -> Any:
        return jsonify({"error": "method_not_allowed", "message": "this path does not take that method"}), 405

    @app.errorhandler(500)
    def internal_error(_err: Any) -> Any:
        return jsonify({"error": "internal_error", "message": "unexpected failure"}), 500

    @app.get("/health")
    def health() -> Any:
        return jsonify({"status": "ok"})

    # ---------------------------------------------------------------- users

    @app.post("/auth/login")
    def login() -> Any:
        data = body()
        fields = [f for f in ("username", "password") if not isinstance(data.get(f), str)]
        if fields:
            raise invalid(fields)
        user = store.user_by_name(data["username"])
        if not check_password(data["password"], user["password_hash"] if user else DUMMY_HASH) or user is None:
            raise Refusal(401, "unauthorized", "wrong username or password")
        token = secrets.token_urlsafe(32)
        with lock:
            tokens[token] = user["id"]
        return jsonify({"token": token, "token_type": "bearer", "user": user_json(user)})

    @app.get("/me")
    def me() -> Any:
        return jsonify(user_json(caller()))

    @app.post("/users")
    def create_user() -> Any:
        caller(("admin",))
        data = body()
        fields = []
        if not isinstance(data.get("username"), str) or not USERNAME.fullmatch(data["username"]):
            fields.append("username")
        if not isinstance(data.get("password"), str) or not 8 <= len(data["password"]) <= 128:
            fields.append("password")
        if data.get("role") not in ROLES or not isinstance(data.get("role"), str):
            fields.append("role")
        if fields:
            raise invalid(fields)
        row = store.create_user(data["username"], hash_password(data["password"]), data["role"])
        if row is None:
            raise Refusal(409, "username_taken", "that username is taken")
        return jsonify(user_json(row)), 201

    @app.get("/users")
    def list_users() -> Any:
        caller(("admin",))
        return jsonify({"items": [user_json(u) for u in store.users()]})

    # ---------------------------------------------------------------- pages

    @app.post("/pages")
    def create_page() -> Any:
        user = caller(WRITERS)
        data = body()
        fields = []
        if not isinstance(data.get("slug"), str) or len(data["slug"]) > 100 or not SLUG.fullmatch(data["slug"]):
            fields.append("slug")
        if not text(data.get("title"), 200, non_blank=True):
            fields.append("title")
        if not valid_body(data.get("body")):
            fields.append("body")
        if "summary" in data and not text(data["summary"], 500):
            fields.append("summary")
        if fields:
            raise invalid(fields)
        try:
            page = store.create_page(data["slug"], data["title"], data["body"], data.get("summary", ""), user["id"])
        except SlugTaken:
            raise Refusal(409, "slug_taken", "a page has that slug") from None
        return jsonify(page_json(page)), 201

    @app.get("/pages")
    def list_pages() -> Any:
        caller()
        fields: list[str] = []
        q = request.args.get("q", "")
        if len(q) > 100:
            fields.append("q")
        limit, offset = paging(fields)
        if fields:
            raise invalid(fields)
        total, rows = store.search(q, limit, offset)
        return envelope(total, rows, limit, offset)

    @app.get("/pages/<slug>")
    def get_page(slug: str) -> Any:
        caller()
        valid = SLUG.fullmatch(slug) is not None and len(slug) <= 100
        page = store.page(slug) if valid else None
        if page is not None:
            return jsonify(page_json(page))
        target = store.redirect_target(slug) if valid else None
        if target is None:
            raise Refusal(404, "not_found", "no such page")
        return jsonify(page_json(target, redirected_from=slug))

    @app.put("/pages/<slug>")
    def edit_page(slug: str) -> Any:
        user = caller(WRITERS)
        page = writable(slug, user)
        data = body()
        fields = []
        if not valid_body(data.get("body")):
            fields.append("body")
        base = data.get("base_revision")
        if not is_int(base) or base < 1:
            fields.append("base_revision")
        if "title" in data and not text(data["title"], 200, non_blank=True):
            fields.append("title")
        if "summary" in data and not text(data["summary"], 500):
            fields.append("summary")
        if fields:
            raise invalid(fields)
        try:
            saved = store.edit(page["id"], base, data.get("title", page["title"]), data["body"], data.get("summary", ""), user["id"])
        except EditConflict as conflict:
            raise Refusal(409, "edit_conflict", "the page changed since your base revision", current_revision=conflict.current) from None
        return jsonify(page_json(saved))

    @app.delete("/pages/<slug>")
    def delete_page(slug: str) -> Any:
        caller(("admin",))
        store.delete(page_or_404(slug)["id"])
        return Response(status=204)

    @app.put("/pages/<slug>/protection")
    def protect(slug: str) -> Any:
        caller(("admin",))
        page = page_or_404(slug)
        data = body()
        if not isinstance(data.get("protected"), bool):
            raise invalid(["protected"])
        return jsonify(page_json(store.protect(page["id"], data["protected"])))

    @app.post("/pages/<slug>/move")
    def move(slug: str) -> Any:
        user = caller(WRITERS)
        page = writable(slug, user)
        data = body()
        new_slug = data.get("new_slug")
        if not isinstance(new_slug, str) or len(new_slug) > 100 or not SLUG.fullmatch(new_slug):
            raise invalid(["new_slug"])
        try:
            return jsonify(page_json(store.move(page["id"], new_slug)))
        except SlugTaken:
            raise Refusal(409, "slug_taken", "a page has that slug") from None

    @app.post("/pages/<slug>/revert")
    def revert(slug: str) -> Any:
        user = caller(WRITERS)
        page = writable(slug, user)
        data = body()
        fields = []
        number = data.get("revision")
        if not is_int(number) or number < 1 or number > MAX_INT or not store.has_revision(page["id"], number):
            fields.append("revision")
        if "summary" in data and not text(data["summary"], 500):
            fields.append("summary")
        if fields:
            raise invalid(fields)
        saved = store.revert(page["id"], number, data.get("summary", f"Reverted to revision {number}"), user["id"])
        if saved is None:  # the page changed under us: cannot happen, revisions are never deleted alone
            raise invalid(["revision"])
        return jsonify(page_json(saved))

    # ---------------------------------------------------------------- revisions and diffs

    def revision_or_404(page: dict[str, Any], raw: str) -> dict[str, Any]:
        row = store.revision(page["id"], int(raw)) if NUMBER.fullmatch(raw) and len(raw) <= 10 and int(raw) <= MAX_INT else None
        if row is None:
            raise Refusal(404, "not_found", "no such revision")
        return row

    @app.get("/pages/<slug>/revisions")
    def history(slug: str) -> Any:
        caller()
        page = page_or_404(slug)
        fields: list[str] = []
        limit, offset = paging(fields)
        if fields:
            raise invalid(fields)
        total, rows = store.revisions(page["id"], limit, offset)
        return envelope(total, [revision_json(r) for r in rows], limit, offset)

    @app.get("/pages/<slug>/revisions/<number>")
    def one_revision(slug: str, number: str) -> Any:
        caller()
        return jsonify(revision_json(revision_or_404(page_or_404(slug), number)))

    @app.get("/pages/<slug>/diff")
    def diff(slug: str) -> Any:
        caller()
        page = page_or_404(slug)
        fields = [name for name in ("from", "to") if not NUMBER.fullmatch(request.args.get(name) or "")]
        if fields:
            raise invalid(fields)
        old, new = revision_or_404(page, request.args["from"]), revision_or_404(page, request.args["to"])
        a, b = lines(old["body"]), lines(new["body"])
        common = lcs_length(a, b)
        return jsonify({
            "from": old["number"], "to": new["number"], "removed": len(a) - common, "added": len(b) - common,
            "unchanged": common, "title_changed": old["title"] != new["title"],
        })

    return app


if __name__ == "__main__":
    create_app().run(host=os.environ.get("HOST", "0.0.0.0"), port=int(os.environ.get("PORT", "8000")), threaded=True)
