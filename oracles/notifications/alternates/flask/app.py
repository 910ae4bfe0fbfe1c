"""Notifications: preferences, templates, email/SMS delivery with retries through a provider.

Flask, in-memory state. Run with `python app.py` (PORT, DELIVERY_URL, NOTIFY_ADMIN_TOKEN env).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import threading
import time
import urllib.error
import urllib.request
from datetime import datetime, timezone

from flask import Flask, Response, request
from werkzeug.exceptions import RequestEntityTooLarge

MAX_BODY = 1024 * 1024
MAX_DEPTH = 32
MAX_ATTEMPTS = 3
RETRY_PAUSE = 0.05

app = Flask(__name__)
app.config["MAX_CONTENT_LENGTH"] = MAX_BODY

DELIVERY_URL = os.environ.get("DELIVERY_URL", "http://localhost:9200").rstrip("/")
ADMIN_TOKEN = os.environ.get("NOTIFY_ADMIN_TOKEN", "admin-2b7e151628aed2a6")
PROVIDER_TIMEOUT = float(os.environ.get("DELIVERY_TIMEOUT", "5"))

USERNAME_RE = re.compile(r"[a-z0-9_]{3,32}")
EMAIL_RE = re.compile(r"[^@\s]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+")
PHONE_RE = re.compile(r"\+[1-9][0-9]{7,14}")
TIME_RE = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]")
KEY_RE = re.compile(r"[a-z0-9_.-]{3,64}")
PLACEHOLDER_RE = re.compile(r"\{\{ *([a-z_][a-z0-9_]*) *\}\}")
INT_QUERY_RE = re.compile(r"[+-]?[0-9]+(\.0*)?")
CHANNELS = ("email", "sms")
CATEGORIES = ("account", "marketing", "reminders")
OPTABLE = ("marketing", "reminders")
STATUSES = ("sent", "failed", "skipped", "deferred")


# --------------------------------------------------------------------------- errors / JSON

class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, fields: list[str] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.fields = status, code, message, fields


def json_response(payload, status: int = 200) -> Response:
    return Response(json.dumps(payload), status=status, mimetype="application/json")


@app.errorhandler(ApiError)
def handle_api_error(err: ApiError):
    body = {"error": err.code, "message": err.message}
    if err.status == 422:
        seen: list[str] = []
        for f in err.fields or []:
            if f not in seen:
                seen.append(f)
        body["fields"] = seen
    return json_response(body, err.status)


@app.errorhandler(RequestEntityTooLarge)
def handle_413(_err):
    return json_response({"error": "validation_error", "message": "request body larger than 1 MiB", "fields": []}, 413)


@app.errorhandler(404)
def handle_404(_err):
    return json_response({"error": "not_found", "message": "no such endpoint"}, 404)


@app.errorhandler(405)
def handle_405(_err):
    return json_response({"error": "method_not_allowed", "message": "method not allowed"}, 405)


@app.errorhandler(500)
def handle_500(_err):
    return json_response({"error": "internal_error", "message": "internal server error"}, 500)


def not_found(what: str = "not found") -> ApiError:
    return ApiError(404, "not_found", what)


def forbidden(message: str) -> ApiError:
    return ApiError(403, "forbidden", message)


def validation(fields: list[str], message: str = "validation failed") -> ApiError:
    return ApiError(422, "validation_error", message, fields)


def _reject_constant(value: str):
    raise ValueError(f"invalid JSON constant {value}")


def too_deep(value) -> bool:
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def json_body() -> dict:
    if request.content_length is not None and request.content_length > MAX_BODY:
        raise RequestEntityTooLarge()
    raw = request.get_data(cache=True)
    if len(raw) > MAX_BODY:
        raise RequestEntityTooLarge()
    try:
        body = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except RecursionError:
        raise validation([], "body is nested too deeply")
    except (ValueError, UnicodeDecodeError):
        raise validation([], "body must be a JSON object")
    if not isinstance(body, dict):
        raise validation([], "body must be a JSON object")
    if too_deep(body):
        raise validation([], "body is nested more than 32 levels deep")
    return body


def non_blank_text(value, max_len: int) -> bool:
    return isinstance(value, str) and 1 <= len(value) <= max_len and value.strip() != ""


def now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def pagination(errors: list[str]) -> tuple[int, int]:
    def one(name: str, default: int, low: int, high: int | None) -> int:
        raw = request.args.get(name)
        if raw is None:
            return default
        if not INT_QUERY_RE.fullmatch(raw):
            errors.append(name)
            return default
        value = int(float(raw)) if "." in raw else int(raw)
        if value < low or (high is not None and value > high):
            errors.append(name)
            return default
        return value

    return one("limit", 20, 1, 100), one("offset", 0, 0, None)


def page(items: list, limit: int, offset: int) -> dict:
    return {"items": items[offset:offset + limit], "total": len(items), "limit": limit, "offset": offset}


def valid_email(v) -> bool:
    return isinstance(v, str) and len(v) <= 254 and EMAIL_RE.fullmatch(v) is not None


def valid_phone(v) -> bool:
    return isinstance(v, str) and PHONE_RE.fullmatch(v) is not None


# --------------------------------------------------------------------------- state

class State:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.users: dict[str, dict] = {}
        self.users_by_name: dict[str, str] = {}
        self.tokens: dict[str, str] = {}
        self.templates: dict[str, dict] = {}
        self.template_keys: dict[str, str] = {}
        self.notifications: dict[str, dict] = {}
        self.notification_locks: dict[str, threading.Lock] = {}
        self.dispatch_lock = threading.Lock()
        self.seq = 0

    def next_seq(self) -> int:
        with self.lock:
            self.seq += 1
            return self.seq

    def notification_lock(self, nid: str) -> threading.Lock:
        with self.lock:
            lock = self.notification_locks.get(nid)
            if lock is None:
                lock = self.notification_locks[nid] = threading.Lock()
            return lock


S = State()


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


def hash_password(password: str, salt: str) -> str:
    return hashlib.sha256((salt + "\0" + password).encode("utf-8")).hexdigest()


def public_user(u: dict) -> dict:
    return {k: u[k] for k in ("id", "username", "email", "phone", "created_at")}


def public_prefs(p: dict) -> dict:
    return {"email_enabled": p["email_enabled"], "sms_enabled": p["sms_enabled"],
            "opted_out": list(p["opted_out"]),
            "quiet_hours": dict(p["quiet_hours"]) if p["quiet_hours"] is not None else None}


TEMPLATE_FIELDS = ("id", "key", "channel", "category", "subject", "body", "created_at")
NOTIFICATION_FIELDS = ("id", "user_id", "template_key", "channel", "category", "to", "subject", "body", "status",
                       "reason", "attempts", "provider_message_id", "created_at", "sent_at")


def public_template(t: dict) -> dict:
    return {k: t[k] for k in TEMPLATE_FIELDS}


def public_notification(n: dict) -> dict:
    return {k: n[k] for k in NOTIFICATION_FIELDS}


class Caller:
    def __init__(self, user: dict | None) -> None:
        self.user = user
        self.is_admin = user is None
        self.id = user["id"] if user else None


def caller() -> Caller:
    header = request.headers.get("Authorization", "")
    parts = header.split(None, 1)
    if len(parts) != 2 or parts[0].lower() != "bearer" or not parts[1].strip():
        raise ApiError(401, "unauthorized", "missing or malformed bearer token")
    token = parts[1].strip()
    if ADMIN_TOKEN and secrets.compare_digest(token.encode(), ADMIN_TOKEN.encode()):
        return Caller(None)
    with S.lock:
        user_id = S.tokens.get(token)
        if user_id is None:
            raise ApiError(401, "unauthorized", "unknown bearer token")
        return Caller(S.users[user_id])


def user_only(c: Caller) -> None:
    if c.is_admin:
        raise forbidden("the administrator has no /me endpoints")


def admin_only(c: Caller) -> None:
    if not c.is_admin:
        raise forbidden("administrator only")


# --------------------------------------------------------------------------- delivery

def provider_send(payload: dict) -> tuple[int | None, dict | None]:
    req = urllib.request.Request(DELIVERY_URL + "/messages", data=json.dumps(payload).encode("utf-8"),
                                 method="POST", headers={"Content-Type": "application/json",
                                                         "Accept": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=PROVIDER_TIMEOUT) as resp:
            status, raw = resp.status, resp.read()
    except urllib.error.HTTPError as err:
        status = err.code
        try:
            raw = err.read()
        except Exception:  # noqa: BLE001
            raw = b""
    except Exception:  # noqa: BLE001 - no answer
        return None, None
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        body = None
    return status, body if isinstance(body, dict) else None


def address_for(user: dict, channel: str) -> str | None:
    return user["email"] if channel == "email" else user["phone"]


def in_quiet_hours(prefs: dict) -> bool:
    qh = prefs["quiet_hours"]
    if qh is None:
        return False
    now = datetime.now(timezone.utc)
    t = now.hour * 60 + now.minute
    start = int(qh["start"][:2]) * 60 + int(qh["start"][3:])
    end = int(qh["end"][:2]) * 60 + int(qh["end"][3:])
    if start < end:
        return start <= t < end
    return t >= start or t < end


def delivery_round(n: dict, to: str) -> None:
    """Up to three attempts; updates n (status, reason, attempts, to, provider_message_id, sent_at)."""
    payload = {"channel": n["channel"], "to": to, "body": n["body"], "reference": n["id"]}
    if n["channel"] == "email":
        payload = {"channel": n["channel"], "to": to, "subject": n["subject"], "body": n["body"],
                   "reference": n["id"]}
    for attempt in range(MAX_ATTEMPTS):
        if attempt:
            time.sleep(RETRY_PAUSE)
        status, body = provider_send(payload)
        with S.lock:
            n["attempts"] += 1
            n["to"] = to
        if status is not None and 200 <= status < 300:
            msg_id = body.get("id") if body else None
            with S.lock:
                n.update(status="sent", reason=None, sent_at=now_iso(),
                         provider_message_id=msg_id if isinstance(msg_id, str) else None)
            return
        if status is not None and 400 <= status < 500:
            with S.lock:
                n.update(status="failed", reason="rejected")
            return
    with S.lock:
        n.update(status="failed", reason="provider_unavailable")


def decide(n: dict) -> None:
    """Apply rules 1-5 with the recipient's current addresses and preferences."""
    with S.lock:
        user = S.users[n["user_id"]]
        to = address_for(user, n["channel"])
        prefs = user["preferences"]
        enabled = prefs["email_enabled"] if n["channel"] == "email" else prefs["sms_enabled"]
        opted_out = n["category"] in prefs["opted_out"]
        quiet = in_quiet_hours(prefs)
    account = n["category"] == "account"
    if to is None:
        verdict = ("skipped", "no_address")
    elif not account and not enabled:
        verdict = ("skipped", "channel_disabled")
    elif not account and opted_out:
        verdict = ("skipped", "opted_out")
    elif not account and quiet:
        verdict = ("deferred", None)
    else:
        verdict = None
    if verdict is not None:
        with S.lock:
            n["status"], n["reason"] = verdict
        return
    delivery_round(n, to)


# --------------------------------------------------------------------------- system & users

@app.get("/health")
def health():
    return json_response({"status": "ok"})


def validate_addresses(body: dict, errors: list[str]) -> dict:
    values = {}
    if "email" in body:
        if body["email"] is None or valid_email(body["email"]):
            values["email"] = body["email"]
        else:
            errors.append("email")
    if "phone" in body:
        if body["phone"] is None or valid_phone(body["phone"]):
            values["phone"] = body["phone"]
        else:
            errors.append("phone")
    return values


@app.post("/users")
def register():
    body = json_body()
    errors = []
    username, password = body.get("username"), body.get("password")
    if not isinstance(username, str) or not USERNAME_RE.fullmatch(username):
        errors.append("username")
    if not isinstance(password, str) or not 8 <= len(password) <= 128:
        errors.append("password")
    addresses = validate_addresses(body, errors)
    if errors:
        raise validation(errors)
    with S.lock:
        if username in S.users_by_name:
            raise ApiError(409, "conflict", "username is taken")
        salt = secrets.token_hex(8)
        user = {"id": new_id("usr"), "username": username, "email": addresses.get("email"),
                "phone": addresses.get("phone"), "created_at": now_iso(), "_salt": salt,
                "_hash": hash_password(password, salt),
                "preferences": {"email_enabled": True, "sms_enabled": True, "opted_out": [], "quiet_hours": None}}
        S.users[user["id"]] = user
        S.users_by_name[username] = user["id"]
        out = public_user(user)
    return json_response(out, 201)


@app.post("/auth/token")
def login():
    body = json_body()
    errors = [f for f in ("username", "password") if not isinstance(body.get(f), str)]
    if errors:
        raise validation(errors)
    with S.lock:
        user_id = S.users_by_name.get(body["username"])
        user = S.users.get(user_id) if user_id else None
        if user is None or not secrets.compare_digest(hash_password(body["password"], user["_salt"]), user["_hash"]):
            raise ApiError(401, "unauthorized", "wrong username or password")
        token = secrets.token_urlsafe(32)
        S.tokens[token] = user["id"]
        out = public_user(user)
    return json_response({"token": token, "token_type": "bearer", "user": out})


@app.get("/me")
def get_me():
    c = caller()
    user_only(c)
    with S.lock:
        return json_response(public_user(c.user))


@app.patch("/me")
def patch_me():
    c = caller()
    user_only(c)
    body = json_body()
    errors: list[str] = []
    values = validate_addresses(body, errors)
    if errors:
        raise validation(errors)
    with S.lock:
        c.user.update(values)
        return json_response(public_user(c.user))


@app.get("/me/preferences")
def get_preferences():
    c = caller()
    user_only(c)
    with S.lock:
        return json_response(public_prefs(c.user["preferences"]))


@app.put("/me/preferences")
def put_preferences():
    c = caller()
    user_only(c)
    body = json_body()
    errors = []
    for name in ("email_enabled", "sms_enabled"):
        if not isinstance(body.get(name), bool):
            errors.append(name)
    opted = body.get("opted_out")
    if (not isinstance(opted, list) or any(not isinstance(x, str) or x not in OPTABLE for x in opted)
            or len(set(opted)) != len(opted)):
        errors.append("opted_out")
    quiet = None
    if "quiet_hours" not in body:
        errors.append("quiet_hours")
    elif body["quiet_hours"] is not None:
        qh = body["quiet_hours"]
        if (not isinstance(qh, dict) or not isinstance(qh.get("start"), str) or not isinstance(qh.get("end"), str)
                or not TIME_RE.fullmatch(qh["start"]) or not TIME_RE.fullmatch(qh["end"])
                or qh["start"] == qh["end"]):
            errors.append("quiet_hours")
        else:
            quiet = {"start": qh["start"], "end": qh["end"]}
    if errors:
        raise validation(errors)
    prefs = {"email_enabled": body["email_enabled"], "sms_enabled": body["sms_enabled"],
             "opted_out": list(opted), "quiet_hours": quiet}
    with S.lock:
        c.user["preferences"] = prefs
        return json_response(public_prefs(prefs))


# --------------------------------------------------------------------------- templates

def get_template(template_id: str) -> dict:
    with S.lock:
        t = S.templates.get(template_id)
    if t is None:
        raise not_found("no such template")
    return t


def subject_ok(channel: str | None, subject, present: bool) -> bool:
    if channel == "email":
        return present and non_blank_text(subject, 200)
    if channel == "sms":
        return not present or subject is None
    # unknown channel: only the generic type/length rule can be checked
    return not present or subject is None or (isinstance(subject, str) and len(subject) <= 200)


@app.post("/templates")
def create_template():
    c = caller()
    admin_only(c)
    body = json_body()
    errors = []
    key = body.get("key")
    if not isinstance(key, str) or not KEY_RE.fullmatch(key):
        errors.append("key")
    channel = body.get("channel")
    if not isinstance(channel, str) or channel not in CHANNELS:
        errors.append("channel")
        channel = None
    category = body.get("category")
    if not isinstance(category, str) or category not in CATEGORIES:
        errors.append("category")
    if not subject_ok(channel, body.get("subject"), "subject" in body):
        errors.append("subject")
    if not non_blank_text(body.get("body"), 2000):
        errors.append("body")
    if errors:
        raise validation(errors)
    with S.lock:
        if key in S.template_keys:
            raise ApiError(409, "conflict", "another template has this key")
        t = {"id": new_id("tpl"), "key": key, "channel": channel, "category": category,
             "subject": body.get("subject") if channel == "email" else None, "body": body["body"],
             "created_at": now_iso(), "_seq": S.next_seq()}
        S.templates[t["id"]] = t
        S.template_keys[key] = t["id"]
        out = public_template(t)
    return json_response(out, 201)


@app.get("/templates")
def list_templates():
    c = caller()
    admin_only(c)
    errors: list[str] = []
    limit, offset = pagination(errors)
    if errors:
        raise validation(errors)
    with S.lock:
        items = [public_template(t) for t in sorted(S.templates.values(), key=lambda t: t["_seq"])]
    return json_response(page(items, limit, offset))


@app.get("/templates/<template_id>")
def read_template(template_id):
    c = caller()
    t = get_template(template_id)
    admin_only(c)
    with S.lock:
        return json_response(public_template(t))


@app.patch("/templates/<template_id>")
def update_template(template_id):
    c = caller()
    t = get_template(template_id)
    admin_only(c)
    body = json_body()
    errors = []
    changes = {}
    if "category" in body:
        if not isinstance(body["category"], str) or body["category"] not in CATEGORIES:
            errors.append("category")
        else:
            changes["category"] = body["category"]
    if "subject" in body:
        if not subject_ok(t["channel"], body["subject"], True):
            errors.append("subject")
        elif t["channel"] == "email":
            changes["subject"] = body["subject"]
    if "body" in body:
        if not non_blank_text(body["body"], 2000):
            errors.append("body")
        else:
            changes["body"] = body["body"]
    if errors:
        raise validation(errors)
    with S.lock:
        if S.templates.get(template_id) is None:
            raise not_found("no such template")
        t.update(changes)
        return json_response(public_template(t))


@app.delete("/templates/<template_id>")
def delete_template(template_id):
    c = caller()
    t = get_template(template_id)
    admin_only(c)
    with S.lock:
        if S.templates.pop(template_id, None) is None:
            raise not_found("no such template")
        if S.template_keys.get(t["key"]) == template_id:
            del S.template_keys[t["key"]]
    return Response(status=204)


# --------------------------------------------------------------------------- notifications

def render(text: str | None, values: dict) -> str | None:
    if text is None:
        return None
    return PLACEHOLDER_RE.sub(lambda m: values[m.group(1)], text)


def placeholders(text: str | None) -> set[str]:
    return set(PLACEHOLDER_RE.findall(text)) if text else set()


@app.post("/notifications")
def send_notification():
    c = caller()
    admin_only(c)
    body = json_body()
    errors = []
    user = template = None
    with S.lock:
        uid = body.get("user_id")
        if isinstance(uid, str):
            user = S.users.get(uid)
        if user is None:
            errors.append("user_id")
        key = body.get("template_key")
        if isinstance(key, str) and key in S.template_keys:
            template = dict(S.templates[S.template_keys[key]])
        if template is None:
            errors.append("template_key")
        data = body.get("data", {})
        if not isinstance(data, dict) or any(not isinstance(v, str) for v in data.values()):
            errors.append("data")
            data = None
        elif template is not None:
            needed = (placeholders(template["subject"]) | placeholders(template["body"])) - {"username"}
            if not needed <= set(data):
                errors.append("data")
                data = None
        if errors:
            raise validation(errors)
        values = dict(data)
        values["username"] = user["username"]
        n = {"id": new_id("ntf"), "user_id": user["id"], "template_key": template["key"],
             "channel": template["channel"], "category": template["category"], "to": None,
             "subject": render(template["subject"], values) if template["channel"] == "email" else None,
             "body": render(template["body"], values), "status": "deferred", "reason": None, "attempts": 0,
             "provider_message_id": None, "created_at": now_iso(), "sent_at": None, "_seq": S.next_seq()}
    with S.notification_lock(n["id"]):
        decide(n)
        with S.lock:
            S.notifications[n["id"]] = n
            out = public_notification(n)
    return json_response(out, 201)


@app.post("/notifications/dispatch")
def dispatch():
    c = caller()
    admin_only(c)
    counts = {"examined": 0, "sent": 0, "failed": 0, "skipped": 0, "deferred": 0}
    with S.dispatch_lock:
        with S.lock:
            pending = sorted((n for n in S.notifications.values() if n["status"] == "deferred"),
                             key=lambda n: n["_seq"])
        for n in pending:
            with S.notification_lock(n["id"]):
                with S.lock:
                    if n["status"] != "deferred":
                        continue
                counts["examined"] += 1
                decide(n)
                with S.lock:
                    counts[n["status"]] += 1
    return json_response(counts)


def visible_notification(nid: str, c: Caller) -> dict:
    with S.lock:
        n = S.notifications.get(nid)
    if n is None or (not c.is_admin and n["user_id"] != c.id):
        raise not_found("no such notification")
    return n


@app.get("/notifications/<notification_id>")
def read_notification(notification_id):
    c = caller()
    n = visible_notification(notification_id, c)
    with S.lock:
        return json_response(public_notification(n))


@app.post("/notifications/<notification_id>/retry")
def retry_notification(notification_id):
    c = caller()
    n = visible_notification(notification_id, c)
    admin_only(c)
    with S.notification_lock(n["id"]):
        with S.lock:
            if n["status"] != "failed":
                raise ApiError(409, "invalid_state", f"a {n['status']} notification cannot be retried")
            to = address_for(S.users[n["user_id"]], n["channel"])
            if to is None:
                n["status"], n["reason"] = "skipped", "no_address"
                return json_response(public_notification(n))
        delivery_round(n, to)
        with S.lock:
            return json_response(public_notification(n))


def notification_list(predicate) -> Response:
    errors: list[str] = []
    status = request.args.get("status")
    if status is not None and status not in STATUSES:
        errors.append("status")
    limit, offset = pagination(errors)
    if errors:
        raise validation(errors)
    with S.lock:
        items = [public_notification(n) for n in sorted(S.notifications.values(), key=lambda n: -n["_seq"])
                 if predicate(n) and (status is None or n["status"] == status)]
    return json_response(page(items, limit, offset))


@app.get("/notifications")
def list_notifications():
    c = caller()
    admin_only(c)
    user_id = request.args.get("user_id")
    return notification_list(lambda n: user_id is None or n["user_id"] == user_id)


@app.get("/me/notifications")
def list_my_notifications():
    c = caller()
    user_only(c)
    return notification_list(lambda n: n["user_id"] == c.id)


# --------------------------------------------------------------------------- main

def main() -> None:
    port = int(os.environ.get("PORT", "8000"))
    try:
        from waitress import serve
    except ImportError:
        app.run(host="0.0.0.0", port=port, threaded=True)
        return
    serve(app, host="0.0.0.0", port=port, threads=16, ident=None, max_request_body_size=64 * MAX_BODY)


if __name__ == "__main__":
    main()
