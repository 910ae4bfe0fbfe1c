"""Reference implementation of the notifications task: a candidate that passes the whole oracle.

Flask with in-memory storage behind one lock. Every handler checks in spec.md's order:
authenticate (401), find what the caller may see (404), role (403), validate (422), state
rules (409). Delivery rounds (up to three attempts) run inside the request that causes them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import threading
import uuid
from datetime import datetime, timezone
from typing import Any

import requests
from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

app = Flask(__name__)

DELIVERY_URL = os.environ.get("DELIVERY_URL", "http://127.0.0.1:9200").rstrip("/")
ADMIN_TOKEN = os.environ.get("NOTIFY_ADMIN_TOKEN", "")
DELIVERY = requests.Session()

LOCK = threading.RLock()
USERS: dict[str, dict[str, Any]] = {}            # user id -> user (with password hash and preferences)
USER_IDS: dict[str, str] = {}                    # username -> user id
TOKENS: dict[str, str] = {}                      # token -> user id
TEMPLATES: dict[str, dict[str, Any]] = {}        # template id -> template (insertion = creation order)
NOTIFICATIONS: dict[str, dict[str, Any]] = {}    # notification id -> notification (insertion = creation order)

USERNAME = re.compile(r"^[a-z0-9_]{3,32}$")
EMAIL = re.compile(r"^[^@\s]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$")
PHONE = re.compile(r"^\+[1-9][0-9]{7,14}$")
KEY = re.compile(r"^[a-z0-9_.-]{3,64}$")
TIME_OF_DAY = re.compile(r"^([01][0-9]|2[0-3]):[0-5][0-9]$")
PLACEHOLDER = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}")
INTEGER = re.compile(r"^-?[0-9]+$")
CHANNELS = ("email", "sms")
CATEGORIES = ("account", "marketing", "reminders")
OPTIONAL_CATEGORIES = ("marketing", "reminders")
STATUSES = ("sent", "failed", "skipped", "deferred")
MAX_ATTEMPTS = 3
ADMIN = {"id": "admin", "admin": True}
MISSING = object()


class ApiError(Exception):
    """An error answer: status, error code, message (and the invalid fields for 422)."""

    def __init__(self, status: int, code: str, message: str, fields: list[str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.fields = fields


def invalid(fields: list[str], message: str = "invalid request") -> ApiError:
    return ApiError(422, "validation_error", message, fields)


def reply(payload: Any, status: int = 200) -> Response:
    return Response(json.dumps(payload), status=status, mimetype="application/json")


@app.errorhandler(ApiError)
def handle_api_error(err: ApiError) -> Response:
    body: dict[str, Any] = {"error": err.code, "message": err.message}
    if err.fields is not None:
        body["fields"] = err.fields
    return reply(body, err.status)


@app.errorhandler(HTTPException)
def handle_http_error(err: HTTPException) -> Response:
    status = err.code or 500
    if status == 405 or status >= 500:  # spec.md, Errors: the codes the table does not list
        return reply({"error": "method_not_allowed" if status == 405 else "internal_error", "message": err.description or err.name}, status)
    code = "not_found" if err.code == 404 else "validation_error" if err.code == 400 else "forbidden"
    body: dict[str, Any] = {"error": code, "message": err.description or err.name}
    if code == "validation_error":
        body["fields"] = []
    return reply(body, err.code or 500)


def stamp() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


# ---------------------------------------------------------------------------- requests



MAX_BODY_BYTES = 1_048_576
MAX_BODY_DEPTH = 32


def nesting_depth(value: Any) -> int:
    """How deeply objects and arrays nest in a parsed body (iterative: no recursion limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def json_body() -> dict[str, Any]:
    """The request body as a JSON object, or 422 (called only after the 401/404/403 checks)."""
    raw = request.get_data(cache=True)
    if len(raw) > MAX_BODY_BYTES:
        raise invalid([], "the body is larger than 1 MiB")
    try:
        data = json.loads(raw) if raw else None
    except (ValueError, RecursionError) as err:
        raise invalid([], "the body is not valid JSON") from err
    if nesting_depth(data) > MAX_BODY_DEPTH:
        raise invalid([], f"the body nests deeper than {MAX_BODY_DEPTH} levels")
    if not isinstance(data, dict):
        raise invalid([], "the body must be a JSON object")
    return data


class Validator:
    """Collects every invalid field of one body before answering 422."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.bad: list[str] = []

    def fail(self, name: str) -> None:
        if name not in self.bad:
            self.bad.append(name)

    def text(self, name: str, *, required: bool, max_len: int, pattern: re.Pattern[str] | None = None,
             choices: tuple[str, ...] | None = None, nullable: bool = False) -> Any:
        value = self.data.get(name, MISSING)
        if value is MISSING:
            if required:
                self.fail(name)
            return MISSING
        if value is None and nullable:
            return None
        if not isinstance(value, str) or not 1 <= len(value) <= max_len or not value.strip():
            self.fail(name)
            return MISSING
        if (pattern is not None and not pattern.match(value)) or (choices is not None and value not in choices):
            self.fail(name)
            return MISSING
        return value

    def check(self) -> None:
        if self.bad:
            raise invalid(self.bad, "invalid fields: " + ", ".join(self.bad))


def query(choices: dict[str, tuple[str, ...] | None]) -> tuple[dict[str, str], int, int]:
    """Filters plus limit and offset from the query string (422 naming each invalid one)."""
    bad: list[str] = []
    filters: dict[str, str] = {}
    for name, allowed in choices.items():
        raw = request.args.get(name)
        if raw is None:
            continue
        if allowed is not None and raw not in allowed:
            bad.append(name)
        filters[name] = raw
    values = {}
    for name, default, low, high in (("limit", 20, 1, 100), ("offset", 0, 0, None)):
        raw = request.args.get(name)
        if raw is None:
            values[name] = default
            continue
        if not INTEGER.match(raw) or int(raw) < low or (high is not None and int(raw) > high):
            bad.append(name)
            continue
        values[name] = int(raw)
    if bad:
        raise invalid(bad, "invalid query parameters: " + ", ".join(bad))
    return filters, values["limit"], values["offset"]


def page(items: list[dict[str, Any]], limit: int, offset: int) -> dict[str, Any]:
    return {"items": items[offset:offset + limit], "total": len(items), "limit": limit, "offset": offset}


# ---------------------------------------------------------------------------- callers and views


def caller() -> dict[str, Any]:
    """The user behind the bearer token, or ADMIN for the administrator's token; 401 otherwise."""
    header = request.headers.get("Authorization", "")
    parts = header.split(None, 1)
    if len(parts) != 2 or parts[0].lower() != "bearer":
        raise ApiError(401, "unauthorized", "send Authorization: Bearer <token>")
    token = parts[1].strip()
    if ADMIN_TOKEN and secrets.compare_digest(token, ADMIN_TOKEN):
        return ADMIN
    user_id = TOKENS.get(token)
    if user_id is None or user_id not in USERS:
        raise ApiError(401, "unauthorized", "unknown token")
    return USERS[user_id]


def is_admin(who: dict[str, Any]) -> bool:
    return bool(who.get("admin"))


def admin_only() -> dict[str, Any]:
    who = caller()
    if not is_admin(who):
        raise ApiError(403, "forbidden", "administrators only")
    return who


def user_only() -> dict[str, Any]:
    who = caller()
    if is_admin(who):
        raise ApiError(403, "forbidden", "the administrator has no /me")
    return who


def find_template(template_id: str) -> dict[str, Any]:
    template = TEMPLATES.get(template_id)
    if template is None:
        raise ApiError(404, "not_found", "template not found")
    return template


def visible_notification(who: dict[str, Any], notification_id: str) -> dict[str, Any]:
    notification = NOTIFICATIONS.get(notification_id)
    if notification is None or not (is_admin(who) or notification["user_id"] == who["id"]):
        raise ApiError(404, "not_found", "notification not found")
    return notification


def user_view(user: dict[str, Any]) -> dict[str, Any]:
    return {k: user[k] for k in ("id", "username", "email", "phone", "created_at")}


def hash_password(password: str, salt: str) -> str:
    return hashlib.sha256((salt + password).encode()).hexdigest()


def validate_addresses(v: Validator) -> dict[str, Any]:
    """email and phone (each optional, null allowed) as a dict of the fields present."""
    found = {}
    for name, pattern, max_len in (("email", EMAIL, 254), ("phone", PHONE, 16)):
        value = v.text(name, required=False, max_len=max_len, pattern=pattern, nullable=True)
        if value is not MISSING:
            found[name] = value
    return found


# ---------------------------------------------------------------------------- delivery rules


def minutes(text: str) -> int:
    return int(text[:2]) * 60 + int(text[3:])


def in_quiet_hours(preferences: dict[str, Any]) -> bool:
    quiet = preferences["quiet_hours"]
    if quiet is None:
        return False
    now = datetime.now(timezone.utc)
    t, start, end = now.hour * 60 + now.minute, minutes(quiet["start"]), minutes(quiet["end"])
    return start <= t < end if start < end else (t >= start or t < end)


def address_of(user: dict[str, Any], channel: str) -> str | None:
    return user["email"] if channel == "email" else user["phone"]


def deliver(notification: dict[str, Any], to: str) -> None:
    """One round of at most three attempts; sets status, reason, attempts and the provider's id."""
    body = {"channel": notification["channel"], "to": to, "subject": notification["subject"], "body": notification["body"],
            "reference": notification["id"]}
    notification["to"] = to
    for _ in range(MAX_ATTEMPTS):
        notification["attempts"] += 1
        try:
            response = DELIVERY.post(DELIVERY_URL + "/messages", json=body, timeout=5)
        except requests.RequestException:
            continue
        if response.status_code == 202:
            notification.update(status="sent", reason=None, provider_message_id=str(response.json()["id"]), sent_at=stamp())
            return
        if 400 <= response.status_code < 500:
            notification.update(status="failed", reason="rejected")
            return
    notification.update(status="failed", reason="provider_unavailable")


def decide(notification: dict[str, Any]) -> None:
    """Rules 1-5 of spec.md, with the recipient's current addresses and preferences."""
    user = USERS[notification["user_id"]]
    preferences = user["preferences"]
    to = address_of(user, notification["channel"])
    bypass = notification["category"] == "account"
    if to is None:
        notification.update(status="skipped", reason="no_address")
    elif not bypass and not preferences[f"{notification['channel']}_enabled"]:
        notification.update(status="skipped", reason="channel_disabled")
    elif not bypass and notification["category"] in preferences["opted_out"]:
        notification.update(status="skipped", reason="opted_out")
    elif not bypass and in_quiet_hours(preferences):
        notification.update(status="deferred", reason=None)
    else:
        deliver(notification, to)


def render(text: str | None, data: dict[str, str]) -> str | None:
    if text is None:
        return None
    return PLACEHOLDER.sub(lambda m: data[m.group(1)], text)


def placeholders(template: dict[str, Any]) -> set[str]:
    return set(PLACEHOLDER.findall(template["body"])) | set(PLACEHOLDER.findall(template["subject"] or ""))


# ---------------------------------------------------------------------------- routes: users and preferences


@app.get("/health")
def health() -> Response:
    return reply({"status": "ok"})


@app.post("/users")
def register() -> Response:
    with LOCK:
        data = json_body()
        v = Validator(data)
        username = v.text("username", required=True, max_len=32, pattern=USERNAME)
        password = data.get("password", MISSING)
        if not isinstance(password, str) or not 8 <= len(password) <= 128:
            v.fail("password")
        addresses = validate_addresses(v)
        v.check()
        if username in USER_IDS:
            raise ApiError(409, "conflict", "username already registered")
        salt = secrets.token_hex(8)
        user = {
            "id": new_id("u"), "username": username, "email": addresses.get("email"), "phone": addresses.get("phone"),
            "created_at": stamp(), "_salt": salt, "_hash": hash_password(password, salt),
            "preferences": {"email_enabled": True, "sms_enabled": True, "opted_out": [], "quiet_hours": None},
        }
        USERS[user["id"]] = user
        USER_IDS[username] = user["id"]
        return reply(user_view(user), 201)


@app.post("/auth/token")
def login() -> Response:
    with LOCK:
        data = json_body()
        bad = [name for name in ("username", "password") if not isinstance(data.get(name), str)]
        if bad:
            raise invalid(bad, "username and password are required strings")
        user = USERS.get(USER_IDS.get(data["username"], ""))
        if user is None or hash_password(data["password"], user["_salt"]) != user["_hash"]:
            raise ApiError(401, "unauthorized", "wrong username or password")
        token = secrets.token_urlsafe(24)
        TOKENS[token] = user["id"]
        return reply({"token": token, "token_type": "bearer", "user": user_view(user)})


@app.get("/me")
def me() -> Response:
    with LOCK:
        return reply(user_view(user_only()))


@app.patch("/me")
def update_me() -> Response:
    with LOCK:
        user = user_only()
        v = Validator(json_body())
        addresses = validate_addresses(v)
        v.check()
        user.update(addresses)
        return reply(user_view(user))


@app.get("/me/preferences")
def get_preferences() -> Response:
    with LOCK:
        return reply(user_only()["preferences"])


@app.put("/me/preferences")
def put_preferences() -> Response:
    with LOCK:
        user = user_only()
        data = json_body()
        v = Validator(data)
        for name in ("email_enabled", "sms_enabled"):
            if not isinstance(data.get(name), bool):
                v.fail(name)
        opted_out = data.get("opted_out", MISSING)
        if (not isinstance(opted_out, list) or any(c not in OPTIONAL_CATEGORIES for c in opted_out)
                or len(set(opted_out)) != len(opted_out)):
            v.fail("opted_out")
        quiet = data.get("quiet_hours", MISSING)
        if quiet is not None:
            ok = isinstance(quiet, dict) and all(isinstance(quiet.get(k), str) and TIME_OF_DAY.match(quiet[k]) for k in ("start", "end"))
            if not ok or quiet["start"] == quiet["end"]:
                v.fail("quiet_hours")
        v.check()
        user["preferences"] = {
            "email_enabled": data["email_enabled"], "sms_enabled": data["sms_enabled"], "opted_out": list(opted_out),
            "quiet_hours": None if quiet is None else {"start": quiet["start"], "end": quiet["end"]},
        }
        return reply(user["preferences"])


@app.get("/me/notifications")
def my_notifications() -> Response:
    with LOCK:
        user = user_only()
        filters, limit, offset = query({"status": STATUSES})
        items = [n for n in NOTIFICATIONS.values() if n["user_id"] == user["id"] and filters.get("status", n["status"]) == n["status"]]
        return reply(page(list(reversed(items)), limit, offset))


# ---------------------------------------------------------------------------- routes: templates


@app.post("/templates")
def create_template() -> Response:
    with LOCK:
        admin_only()
        data = json_body()
        v = Validator(data)
        key = v.text("key", required=True, max_len=64, pattern=KEY)
        channel = v.text("channel", required=True, max_len=10, choices=CHANNELS)
        category = v.text("category", required=True, max_len=20, choices=CATEGORIES)
        body = v.text("body", required=True, max_len=2000)
        subject: Any = None
        if channel == "email":
            subject = v.text("subject", required=True, max_len=200)
        elif channel == "sms" and data.get("subject") is not None:
            v.fail("subject")
        v.check()
        if any(t["key"] == key for t in TEMPLATES.values()):
            raise ApiError(409, "conflict", "another template has this key")
        template = {"id": new_id("t"), "key": key, "channel": channel, "category": category, "subject": subject, "body": body,
                    "created_at": stamp()}
        TEMPLATES[template["id"]] = template
        return reply(template, 201)


@app.get("/templates")
def list_templates() -> Response:
    with LOCK:
        admin_only()
        _, limit, offset = query({})
        return reply(page(list(TEMPLATES.values()), limit, offset))


@app.get("/templates/<template_id>")
def get_template(template_id: str) -> Response:
    with LOCK:
        admin_only()
        return reply(find_template(template_id))


@app.patch("/templates/<template_id>")
def update_template(template_id: str) -> Response:
    with LOCK:
        admin_only()
        template = find_template(template_id)
        data = json_body()
        v = Validator(data)
        category = v.text("category", required=False, max_len=20, choices=CATEGORIES)
        body = v.text("body", required=False, max_len=2000)
        subject: Any = MISSING
        if template["channel"] == "email":
            subject = v.text("subject", required=False, max_len=200)
        elif data.get("subject") is not None:
            v.fail("subject")
        v.check()
        for name, value in (("category", category), ("body", body), ("subject", subject)):
            if value is not MISSING:
                template[name] = value
        return reply(template)


@app.delete("/templates/<template_id>")
def delete_template(template_id: str) -> Response:
    with LOCK:
        admin_only()
        find_template(template_id)
        del TEMPLATES[template_id]
        return Response(status=204)


# ---------------------------------------------------------------------------- routes: notifications


@app.post("/notifications")
def send() -> Response:
    with LOCK:
        admin_only()
        data = json_body()
        v = Validator(data)
        user_id = data.get("user_id")
        user = USERS.get(user_id) if isinstance(user_id, str) else None
        if user is None:
            v.fail("user_id")
        key = data.get("template_key")
        template = next((t for t in TEMPLATES.values() if t["key"] == key), None) if isinstance(key, str) else None
        if template is None:
            v.fail("template_key")
        values = data.get("data", {})
        if not isinstance(values, dict) or not all(isinstance(x, str) for x in values.values()):
            v.fail("data")
        elif template is not None:
            values = {**values, "username": user["username"] if user is not None else ""}
            if not placeholders(template) <= set(values):
                v.fail("data")
        v.check()
        assert user is not None and template is not None
        notification = {
            "id": new_id("n"), "user_id": user["id"], "template_key": template["key"], "channel": template["channel"],
            "category": template["category"], "to": None, "subject": render(template["subject"], values),
            "body": render(template["body"], values), "status": "deferred", "reason": None, "attempts": 0,
            "provider_message_id": None, "created_at": stamp(), "sent_at": None,
        }
        NOTIFICATIONS[notification["id"]] = notification
        decide(notification)
        return reply(notification, 201)


@app.get("/notifications")
def list_notifications() -> Response:
    with LOCK:
        admin_only()
        filters, limit, offset = query({"status": STATUSES, "user_id": None})
        items = [
            n for n in NOTIFICATIONS.values()
            if filters.get("status", n["status"]) == n["status"] and filters.get("user_id", n["user_id"]) == n["user_id"]
        ]
        return reply(page(list(reversed(items)), limit, offset))


@app.post("/notifications/dispatch")
def dispatch() -> Response:
    with LOCK:
        admin_only()
        counts = {"examined": 0, "sent": 0, "failed": 0, "skipped": 0, "deferred": 0}
        for notification in [n for n in NOTIFICATIONS.values() if n["status"] == "deferred"]:
            counts["examined"] += 1
            decide(notification)
            counts[notification["status"]] += 1
        return reply(counts)


@app.get("/notifications/<notification_id>")
def get_notification(notification_id: str) -> Response:
    with LOCK:
        return reply(visible_notification(caller(), notification_id))


@app.post("/notifications/<notification_id>/retry")
def retry(notification_id: str) -> Response:
    with LOCK:
        who = caller()
        notification = visible_notification(who, notification_id)
        if not is_admin(who):
            raise ApiError(403, "forbidden", "administrators only")
        if notification["status"] != "failed":
            raise ApiError(409, "invalid_state", f"a {notification['status']} notification cannot be retried")
        to = address_of(USERS[notification["user_id"]], notification["channel"])
        if to is None:
            notification.update(status="skipped", reason="no_address")
        else:
            deliver(notification, to)
        return reply(notification)


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=int(os.environ.get("PORT", "8000")), threaded=True)
