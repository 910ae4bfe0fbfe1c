"""Helpdesk: a Flask JSON API for tickets, articles, roles and SLA timers, state in PostgreSQL."""

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

from flask import Flask, jsonify, request
from store import PRIORITIES, Closed, PgStore, Taken, migrate, now

EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
INTEGER = re.compile(r"^-?[0-9]{1,12}$")
MAX_ID = 2**31 - 1
MAX_BODY_BYTES = 1_048_576
MAX_BODY_DEPTH = 32
MAX_SECONDS = 31_536_000
STATES = ("new", "open", "pending", "solved", "closed")
TRANSITIONS = {
    "new": {"open", "pending", "solved", "closed"},
    "open": {"pending", "solved", "closed"},
    "pending": {"open", "solved", "closed"},
    "solved": {"open", "closed"},
    "closed": set(),
}
STAFF = ("admin", "agent")
PBKDF2_ITERATIONS = 120_000


class Refused(Exception):
    """An error answer raised from deep inside a request."""

    def __init__(self, status: int, code: str, message: str, fields: list[str] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.fields = status, code, message, fields


def hash_password(password: str) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, PBKDF2_ITERATIONS)
    return f"pbkdf2_sha256${PBKDF2_ITERATIONS}${salt.hex()}${digest.hex()}"


def password_matches(password: str, stored: str) -> bool:
    _, iterations, salt, digest = stored.split("$")
    got = hashlib.pbkdf2_hmac("sha256", password.encode(), bytes.fromhex(salt), int(iterations))
    return hmac.compare_digest(got.hex(), digest)


def iso(value: dt.datetime | None) -> str | None:
    return None if value is None else value.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")


def user_json(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "email": row["email"], "name": row["name"], "role": row["role"], "created_at": iso(row["created_at"])}


def ticket_json(row: dict[str, Any]) -> dict[str, Any]:
    moment = now()
    first_breached = row["first_response_due_at"] is not None and row["first_response_at"] is None and moment > row["first_response_due_at"]
    resolution_breached = row["resolution_due_at"] is not None and row["state"] not in ("solved", "closed") and moment > row["resolution_due_at"]
    out = {key: row[key] for key in ("id", "title", "priority", "state", "customer_id", "assignee_id")}
    for key in ("created_at", "first_response_at", "first_response_due_at", "resolution_due_at"):
        out[key] = iso(row[key])
    out["first_response_breached"], out["resolution_breached"] = first_breached, resolution_breached
    if "escalation_at" in row:
        out["escalation_at"] = iso(row["escalation_at"])
    return out


def article_json(row: dict[str, Any]) -> dict[str, Any]:
    return {key: row[key] for key in ("id", "ticket_id", "author_id", "body", "internal")} | {"created_at": iso(row["created_at"])}


def non_blank(value: Any, limit: int) -> bool:
    return isinstance(value, str) and value.strip() != "" and len(value) <= limit


def valid_email(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= 254 and EMAIL.match(value) is not None


def valid_seconds(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_SECONDS


def nesting_depth(value: Any) -> int:
    """How deeply objects and arrays nest in a parsed body (iterative: no recursion limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def body() -> dict[str, Any]:
    """The JSON object sent, or a 422 (too large, too deep, not JSON, not an object)."""
    raw = request.get_data(cache=True)
    if len(raw) > MAX_BODY_BYTES:
        raise Refused(413, "payload_too_large", "the body is larger than 1 MiB")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict) or nesting_depth(data) > MAX_BODY_DEPTH:
        raise Refused(422, "validation_error", "the body must be a JSON object nested at most 32 levels", [])
    return data


def invalid(fields: list[str]) -> None:
    if fields:
        raise Refused(422, "validation_error", "invalid: " + ", ".join(fields), fields)


def path_id(raw: str) -> int:
    if not raw.isascii() or not raw.isdigit() or int(raw) > MAX_ID:
        raise Refused(404, "not_found", "no such ticket")
    return int(raw)


def query_params(allowed: dict[str, Any]) -> dict[str, Any]:
    """Parse the query parameters named in ``allowed`` (name -> parser returning a value or raising ValueError)."""
    parsed, bad = {}, []
    for name, parse in allowed.items():
        if name in request.args:
            try:
                parsed[name] = parse(request.args[name])
            except ValueError:
                bad.append(name)
    invalid(bad)
    return parsed


def one_of(*values: str) -> Any:
    def parse(raw: str) -> str:
        if raw not in values:
            raise ValueError(raw)
        return raw

    return parse


def integer(raw: str) -> int:
    if not INTEGER.match(raw):
        raise ValueError(raw)
    return int(raw)


def limit_value(raw: str) -> int:
    value = integer(raw)
    if not 1 <= value <= 100:
        raise ValueError(raw)
    return value


def offset_value(raw: str) -> int:
    value = integer(raw)
    if value < 0:
        raise ValueError(raw)
    return value


PAGE = {"limit": limit_value, "offset": offset_value}


def create_app() -> Flask:
    url = os.environ["DATABASE_URL"]
    migrate(url)
    store = PgStore(url)
    tokens: dict[str, int] = {}
    lock = threading.Lock()
    admin_email = os.environ.get("ADMIN_EMAIL", "admin@helpdesk.test").lower()
    if store.user_by_email(admin_email) is None:
        try:
            store.create_user(admin_email, "Administrator", "admin", hash_password(os.environ.get("ADMIN_PASSWORD", "")))
        except Taken:
            pass
    app = Flask(__name__)

    @app.errorhandler(Refused)
    def refused(err: Refused) -> Any:
        out: dict[str, Any] = {"error": err.code, "message": err.message}
        if err.fields is not None:
            out["fields"] = err.fields
        return jsonify(out), err.status

    @app.errorhandler(404)
    def not_found(_err: Any) -> Any:
        return jsonify({"error": "not_found", "message": "no such path"}), 404

    @app.errorhandler(405)
    def method_not_allowed(_err: Any) -> Any:
        return jsonify({"error": "method_not_allowed", "message": "this path does not take that method"}), 405

    @app.errorhandler(500)
    def internal_error(_err: Any) -> Any:
        return jsonify({"error": "internal_error", "message": "unexpected failure"}), 500

    def caller() -> dict[str, Any]:
        """The authenticated user, or 401."""
        header = request.headers.get("Authorization", "")
        token = header[7:] if header.startswith("Bearer ") else ""
        with lock:
            user_id = tokens.get(token) if token else None
        user = store.user(user_id) if user_id is not None else None
        if user is None:
            raise Refused(401, "unauthorized", "a valid bearer token is required")
        return user

    def require(user: dict[str, Any], *roles: str) -> None:
        if user["role"] not in roles:
            raise Refused(403, "forbidden", "your role may not do this")

    def visible_ticket(user: dict[str, Any], raw_id: str) -> dict[str, Any]:
        ticket = store.ticket(path_id(raw_id))
        if ticket is None or (user["role"] == "customer" and ticket["customer_id"] != user["id"]):
            raise Refused(404, "not_found", "no such ticket")
        return ticket

    def new_user(data: dict[str, Any], role: str) -> Any:
        fields = [f for f, ok in (("email", valid_email(data.get("email"))), ("name", non_blank(data.get("name"), 100)),
                                  ("password", isinstance(data.get("password"), str) and 8 <= len(data["password"]) <= 128)) if not ok]
        if role not in ("agent", "customer"):
            fields.append("role")
        invalid(fields)
        try:
            made = store.create_user(data["email"].lower(), data["name"], role, hash_password(data["password"]))
        except Taken:
            raise Refused(409, "conflict", "that email is already taken") from None
        return jsonify(user_json(made)), 201

    @app.get("/health")
    def health() -> Any:
        return jsonify({"status": "ok"})

    @app.post("/api/auth/register")
    def register() -> Any:
        return new_user(body(), "customer")

    @app.post("/api/auth/login")
    def login() -> Any:
        data = body()
        invalid([f for f in ("email", "password") if not isinstance(data.get(f), str)])
        user = store.user_by_email(data["email"].lower())
        if user is None or not password_matches(data["password"], user["password_hash"]):
            raise Refused(401, "unauthorized", "wrong email or password")
        token = secrets.token_urlsafe(32)
        with lock:
            tokens[token] = user["id"]
        return jsonify({"token": token, "user": user_json(user)})

    @app.get("/api/me")
    def me() -> Any:
        return jsonify(user_json(caller()))

    @app.post("/api/users")
    def create_user() -> Any:
        require(caller(), "admin")
        data = body()
        return new_user(data, data.get("role") if isinstance(data.get("role"), str) else "")

    @app.get("/api/users")
    def list_users() -> Any:
        require(caller(), "admin")
        q = query_params({"role": one_of("admin", "agent", "customer"), "email": str, **PAGE})
        email = q["email"].lower() if "email" in q else None
        rows = store.users(q.get("role"), email, q.get("limit", 100), q.get("offset", 0))
        return jsonify({"items": [user_json(r) for r in rows]})

    @app.get("/api/sla")
    def list_policies() -> Any:
        require(caller(), *STAFF)
        return jsonify({"items": store.policies()})

    @app.route("/api/sla/<priority>", methods=["PUT", "DELETE"])
    def policy(priority: str) -> Any:
        user = caller()
        if priority not in PRIORITIES:
            raise Refused(404, "not_found", "no such priority")
        if request.method == "DELETE":
            if not any(p["priority"] == priority for p in store.policies()):
                raise Refused(404, "not_found", "this priority has no policy")
            require(user, "admin")
            store.delete_policy(priority)
            return "", 204
        require(user, "admin")
        data = body()
        invalid([f for f in ("first_response_s", "resolution_s") if not valid_seconds(data.get(f))])
        return jsonify(store.put_policy(priority, data["first_response_s"], data["resolution_s"]))

    @app.post("/api/tickets")
    def create_ticket() -> Any:
        user = caller()
        require(user, "customer")
        data = body()
        priority = data.get("priority", "normal")
        fields = [f for f, ok in (("title", non_blank(data.get("title"), 200)), ("body", non_blank(data.get("body"), 10_000)),
                                  ("priority", priority in PRIORITIES)) if not ok]
        invalid(fields)
        return jsonify(ticket_json(store.create_ticket(user["id"], data["title"], data["body"], priority))), 201

    @app.get("/api/tickets")
    def list_tickets() -> Any:
        user = caller()
        q = query_params({
            "state": one_of(*STATES), "priority": one_of(*PRIORITIES), "customer_id": integer,
            "assignee_id": lambda raw: None if raw == "none" else integer(raw), "breached": one_of("true", "false"), **PAGE,
        })
        filters = {k: q[k] for k in ("state", "priority", "customer_id", "assignee_id") if k in q}
        if "breached" in q:
            filters["breached"] = q["breached"] == "true"
        if user["role"] == "customer":
            if filters.get("customer_id", user["id"]) != user["id"]:
                return jsonify({"items": [], "total": 0})
            filters["customer_id"] = user["id"]
        for key in ("customer_id", "assignee_id"):
            if filters.get(key) is not None and not 0 < filters[key] <= MAX_ID:
                return jsonify({"items": [], "total": 0})
        rows, total = store.tickets(filters, q.get("limit", 100), q.get("offset", 0))
        return jsonify({"items": [ticket_json(r) for r in rows], "total": total})

    @app.get("/api/tickets/<raw_id>")
    def get_ticket(raw_id: str) -> Any:
        return jsonify(ticket_json(visible_ticket(caller(), raw_id)))

    @app.patch("/api/tickets/<raw_id>")
    def update_ticket(raw_id: str) -> Any:
        user = caller()
        ticket = visible_ticket(user, raw_id)
        data = body()
        if user["role"] == "customer" and any(k in data for k in ("priority", "state", "assignee_id")):
            raise Refused(403, "forbidden", "customers may change only the title")

        def check(current: dict[str, Any], conn: Any) -> dict[str, Any]:
            fields, changes = [], {}
            if "title" in data:
                fields += [] if non_blank(data["title"], 200) else ["title"]
                changes["title"] = data["title"]
            if "priority" in data:
                fields += [] if data["priority"] in PRIORITIES else ["priority"]
                changes["priority"] = data["priority"]
            if "state" in data:
                fields += [] if data["state"] in STATES else ["state"]
                changes["state"] = data["state"]
            if "assignee_id" in data:
                assignee = data["assignee_id"]
                if assignee is not None:
                    ok = isinstance(assignee, int) and not isinstance(assignee, bool) and 0 < assignee <= MAX_ID
                    row = conn.execute("SELECT role FROM users WHERE id = %s", (assignee,)).fetchone() if ok else None
                    fields += [] if row is not None and row["role"] in STAFF else ["assignee_id"]
                changes["assignee_id"] = assignee
            invalid(fields)
            target = changes.get("state", current["state"])
            if target != current["state"] and target not in TRANSITIONS[current["state"]]:
                raise Refused(409, "invalid_transition", f"a {current['state']} ticket cannot become {target}")
            return changes

        return jsonify(ticket_json(store.update_ticket(ticket["id"], check)))

    @app.route("/api/tickets/<raw_id>/articles", methods=["GET", "POST"])
    def articles(raw_id: str) -> Any:
        user = caller()
        ticket = visible_ticket(user, raw_id)
        staff = user["role"] in STAFF
        if request.method == "GET":
            return jsonify({"items": [article_json(a) for a in store.articles(ticket["id"], staff)]})
        data = body()
        internal = data.get("internal", False)
        if not staff and internal is True:
            raise Refused(403, "forbidden", "customers may not write internal notes")
        invalid([f for f, ok in (("body", non_blank(data.get("body"), 10_000)), ("internal", isinstance(internal, bool))) if not ok])
        try:
            made = store.add_article(ticket["id"], user, data["body"], internal)
        except Closed:
            raise Refused(409, "ticket_closed", "the ticket is closed") from None
        return jsonify(article_json(made)), 201

    @app.get("/api/escalations")
    def escalations() -> Any:
        require(caller(), *STAFF)
        q = query_params({"customer_id": integer, **PAGE})
        customer = q.get("customer_id")
        if customer is not None and not 0 < customer <= MAX_ID:
            return jsonify({"items": []})
        return jsonify({"items": [ticket_json(r) for r in store.escalations(customer, q.get("limit", 100), q.get("offset", 0))]})

    return app


if __name__ == "__main__":
    create_app().run(host="0.0.0.0", port=int(os.environ.get("PORT", "8000")), threaded=True)
