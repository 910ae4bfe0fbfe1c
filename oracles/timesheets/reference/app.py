"""Reference implementation of the timesheets task: a candidate that passes the whole oracle.

Flask with in-memory storage behind one lock. Handlers check in spec.md's order: authenticate
(401), the role that may never act (403), the path's resource exists and is visible (404), the
caller may act on it (403), validation (422), then state rules (409: locked, overlap,
daily_limit, over_budget). Passwords are PBKDF2-SHA256 hashes with a per-user salt.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import threading
import uuid
from datetime import date, datetime, timedelta, timezone
from typing import Any

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

app = Flask(__name__)

LOCK = threading.RLock()
USERS: dict[str, dict[str, Any]] = {}        # user id -> user (with salt and hash), creation order
USER_IDS: dict[str, str] = {}                # username -> user id
TOKENS: dict[str, str] = {}                  # token -> user id
CUSTOMERS: dict[str, dict[str, Any]] = {}
PROJECTS: dict[str, dict[str, Any]] = {}
ACTIVITIES: dict[str, dict[str, Any]] = {}
ENTRIES: dict[str, dict[str, Any]] = {}      # creation order
SHEETS: dict[tuple[str, str], dict[str, Any]] = {}   # (user id, week) -> decisions of a touched week

USERNAME = re.compile(r"^[a-z0-9_]{3,32}$")
DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
TIME = re.compile(r"^([01][0-9]|2[0-3]):[0-5][0-9]$")
WEEK = re.compile(r"^([0-9]{4})-W([0-9]{2})$")
INTEGER = re.compile(r"^-?[0-9]+$")
ROLES = ("admin", "manager", "employee")
DECIDERS = ("admin", "manager")
LOCKED = ("submitted", "approved")
FIRST_DAY, LAST_DAY = date(2000, 1, 1), date(2099, 12, 31)
PBKDF2_ROUNDS = 100_000
MISSING = object()


class ApiError(Exception):
    """An error answer: status, error code, message (and the invalid fields for 422)."""

    def __init__(self, status: int, code: str, message: str, fields: list[str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.fields = fields


def unauthorized(message: str = "authentication required") -> ApiError:
    return ApiError(401, "unauthorized", message)


def forbidden(message: str) -> ApiError:
    return ApiError(403, "forbidden", message)


def not_found(what: str) -> ApiError:
    return ApiError(404, "not_found", f"{what} not found")


def conflict(message: str, code: str = "conflict") -> ApiError:
    return ApiError(409, code, message)


def invalid(fields: list[str], message: str = "invalid request") -> ApiError:
    return ApiError(422, "validation_error", message, fields)


def reply(payload: Any, status: int = 200) -> Response:
    return Response(json.dumps(payload), status=status, mimetype="application/json")


def no_content() -> Response:
    return Response(status=204)


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
    code = "not_found" if err.code == 404 else "validation_error"
    body: dict[str, Any] = {"error": code, "message": err.description or err.name}
    if code == "validation_error":
        body["fields"] = []
    return reply(body, err.code or 500)


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"





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


def json_body(allow_empty: bool = False) -> dict[str, Any]:
    raw = request.get_data(cache=True)
    if len(raw) > MAX_BODY_BYTES:
        raise invalid([], "the body is larger than 1 MiB")
    if allow_empty and not raw.strip():
        return {}
    try:
        data = json.loads(raw) if raw else None
    except (ValueError, RecursionError) as err:
        raise invalid([], "the body is not valid JSON") from err
    if nesting_depth(data) > MAX_BODY_DEPTH:
        raise invalid([], f"the body nests deeper than {MAX_BODY_DEPTH} levels")
    if not isinstance(data, dict):
        raise invalid([], "the body must be a JSON object")
    return data


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class Validator:
    """Collects every invalid field of one body before answering 422."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.bad: list[str] = []

    def fail(self, name: str) -> None:
        if name not in self.bad:
            self.bad.append(name)

    def text(self, name: str, *, required: bool, max_len: int, min_len: int = 1, non_blank: bool = False,
             pattern: re.Pattern[str] | None = None, choices: tuple[str, ...] | None = None) -> Any:
        value = self.data.get(name, MISSING)
        if value is MISSING:
            if required:
                self.fail(name)
            return MISSING
        if (not isinstance(value, str) or (choices is not None and value not in choices)
                or not min_len <= len(value) <= max_len or (non_blank and not value.strip())
                or (pattern is not None and not pattern.match(value))):
            self.fail(name)
            return MISSING
        return value

    def integer(self, name: str, *, required: bool, low: int, high: int) -> Any:
        value = self.data.get(name, MISSING)
        if value is MISSING:
            if required:
                self.fail(name)
            return MISSING
        if not is_int(value) or not low <= value <= high:
            self.fail(name)
            return MISSING
        return value

    def boolean(self, name: str) -> Any:
        value = self.data.get(name, MISSING)
        if value is not MISSING and not isinstance(value, bool):
            self.fail(name)
            return MISSING
        return value

    def ref(self, name: str, table: dict[str, Any], *, required: bool) -> Any:
        value = self.data.get(name, MISSING)
        if value is MISSING:
            if required:
                self.fail(name)
            return MISSING
        if not isinstance(value, str) or value not in table:
            self.fail(name)
            return MISSING
        return value

    def check(self) -> None:
        if self.bad:
            raise invalid(self.bad, "invalid fields: " + ", ".join(self.bad))



    def nullable_int(self, name: str, *, low: int, high: int) -> Any:
        """An integer in range or null (None); MISSING when absent or invalid."""
        value = self.data.get(name, MISSING)
        if value is None:
            return None
        if value is MISSING:
            return MISSING
        return self.integer(name, required=False, low=low, high=high)

    def day(self, name: str, *, required: bool) -> Any:
        value = self.data.get(name, MISSING)
        if value is MISSING:
            if required:
                self.fail(name)
            return MISSING
        parsed = parse_date(value)
        if parsed is None:
            self.fail(name)
            return MISSING
        return parsed


def parse_date(value: Any) -> date | None:
    """A date of spec.md's range, or None."""
    if not isinstance(value, str) or not DATE.match(value):
        return None
    try:
        parsed = date.fromisoformat(value)
    except ValueError:
        return None
    return parsed if FIRST_DAY <= parsed <= LAST_DAY else None


def parse_week(value: str) -> tuple[str, date] | None:
    """The canonical week and its Monday, or None for anything that is not an ISO week."""
    match = WEEK.match(value)
    if not match:
        return None
    try:
        monday = date.fromisocalendar(int(match.group(1)), int(match.group(2)), 1)
    except ValueError:
        return None
    return value, monday


def week_of(day: str) -> str:
    year, week, _ = date.fromisoformat(day).isocalendar()
    return f"{year:04d}-W{week:02d}"


def minutes(hhmm: str) -> int:
    return int(hhmm[:2]) * 60 + int(hhmm[3:])


def query(*, dates: tuple[str, ...] = (), bools: tuple[str, ...] = (), choices: dict[str, tuple[str, ...]] | None = None,
          max_len: dict[str, int] | None = None, paged: bool = False, required: tuple[str, ...] = ()) -> tuple[dict[str, Any], list[str]]:
    """Parsed query parameters and the names of the invalid ones."""
    bad: list[str] = []
    values: dict[str, Any] = {}
    for name in required:
        if request.args.get(name) is None:
            bad.append(name)
    for name in dates:
        raw = request.args.get(name)
        values[name] = None if raw is None else parse_date(raw)
        if raw is not None and values[name] is None and name not in bad:
            bad.append(name)
    for name in bools:
        raw = request.args.get(name)
        if raw is not None and raw not in ("true", "false"):
            bad.append(name)
        values[name] = None if raw is None else raw == "true"
    for name, allowed in (choices or {}).items():
        raw = request.args.get(name)
        if raw is not None and raw not in allowed and name not in bad:
            bad.append(name)
        values[name] = raw
    for name, longest in (max_len or {}).items():
        raw = request.args.get(name)
        if raw is not None and len(raw) > longest:
            bad.append(name)
        values[name] = raw
    if paged:
        for name, default, low, high in (("limit", 20, 1, 100), ("offset", 0, 0, None)):
            raw = request.args.get(name)
            if raw is None:
                values[name] = default
            elif not INTEGER.match(raw) or int(raw) < low or (high is not None and int(raw) > high):
                bad.append(name)
            else:
                values[name] = int(raw)
    return values, bad


# ---------------------------------------------------------------------------- users and visibility


def hash_password(password: str, salt: bytes) -> str:
    return hashlib.pbkdf2_hmac("sha256", password.encode(), salt, PBKDF2_ROUNDS).hex()


def add_user(username: str, password: str, role: str, manager_id: str | None) -> dict[str, Any]:
    salt = secrets.token_bytes(16)
    user = {"id": new_id("u"), "username": username, "role": role, "active": True, "manager_id": manager_id,
            "created_at": now(), "salt": salt, "password_hash": hash_password(password, salt)}
    USERS[user["id"]] = user
    USER_IDS[username] = user["id"]
    return user


def caller(*roles: str) -> dict[str, Any]:
    """The authenticated, active user (401) whose role is one of ``roles`` (403)."""
    parts = request.headers.get("Authorization", "").split(None, 1)
    if len(parts) != 2 or parts[0].lower() != "bearer":
        raise unauthorized("send Authorization: Bearer <token>")
    user = USERS.get(TOKENS.get(parts[1].strip(), ""))
    if user is None or not user["active"]:
        raise unauthorized("unknown token or inactive user")
    if roles and user["role"] not in roles:
        raise forbidden(f"the {user['role']} role may not do this")
    return user


def user_view(user: dict[str, Any]) -> dict[str, Any]:
    return {k: user[k] for k in ("id", "username", "role", "active", "manager_id", "created_at")}


def sees(viewer: dict[str, Any], user: dict[str, Any]) -> bool:
    """spec.md, Roles: a user sees themself; a manager their team; an admin everyone."""
    return (viewer["role"] == "admin" or viewer["id"] == user["id"]
            or (viewer["role"] == "manager" and user["manager_id"] == viewer["id"]))


def visible_user(viewer: dict[str, Any], user_id: str) -> dict[str, Any]:
    user = USERS.get(user_id)
    if user is None or not sees(viewer, user):
        raise not_found("user")
    return user


def filter_user(viewer: dict[str, Any], raw: str | None) -> dict[str, Any] | None:
    """The user a user_id query parameter names; 403 when it names no user visible to the caller."""
    if raw is None:
        return None
    user = USERS.get(raw)
    if user is None or not sees(viewer, user):
        raise forbidden("user_id names no user whose time you may read")
    return user


# ---------------------------------------------------------------------------- catalogue, entries, weeks


def find(table: dict[str, dict[str, Any]], item_id: str, what: str) -> dict[str, Any]:
    item = table.get(item_id)
    if item is None:
        raise not_found(what)
    return item


def used_minutes(project_id: str) -> int:
    return sum(e["duration_minutes"] for e in ENTRIES.values() if e["project_id"] == project_id)


def project_view(project: dict[str, Any]) -> dict[str, Any]:
    return {**project, "used_minutes": used_minutes(project["id"])}


def usable_project(project_id: Any) -> bool:
    project = PROJECTS.get(project_id) if isinstance(project_id, str) else None
    return bool(project and project["active"] and CUSTOMERS[project["customer_id"]]["active"])


def sheet_status(user_id: str, week: str) -> str:
    return str(SHEETS.get((user_id, week), {}).get("status", "open"))


def entry_time(data: dict[str, Any], v: Validator) -> tuple[str | None, str | None, int] | None:
    """start, end and duration from a body's time fields under spec.md's rules, or None (fields failed)."""
    start, end, duration = (data.get(k) for k in ("start", "end", "duration_minutes"))
    ok = True
    if start is not None and (not isinstance(start, str) or not TIME.match(start)):
        v.fail("start")
        ok = False
    if end is not None and (not isinstance(end, str) or not TIME.match(end)):
        v.fail("end")
        ok = False
    if duration is not None and (not is_int(duration) or not 1 <= duration <= 1440):
        v.fail("duration_minutes")
        ok = False
    if duration is not None and (start is not None or end is not None):
        v.fail("duration_minutes")
        return None
    if start is not None and end is None:
        v.fail("end")
        return None
    if end is not None and start is None:
        v.fail("start")
        return None
    if start is None and end is None and duration is None:
        v.fail("duration_minutes")
        return None
    if not ok:
        return None
    if start is not None:
        if minutes(end) <= minutes(start):
            v.fail("end")
            return None
        return start, end, minutes(end) - minutes(start)
    return None, None, duration


def check_state(user_id: str, new: dict[str, Any], old: dict[str, Any] | None) -> None:
    """spec.md, Time entries: locked, overlap, daily_limit, over_budget, in that order."""
    weeks = {week_of(new["date"])} | ({week_of(old["date"])} if old else set())
    if any(sheet_status(user_id, w) in LOCKED for w in weeks):
        raise conflict("the entry's week is submitted or approved", "locked")
    others = [e for e in ENTRIES.values() if e["user_id"] == user_id and e["date"] == new["date"] and (old is None or e["id"] != old["id"])]
    if new["start"] is not None and any(
            e["start"] is not None and minutes(e["start"]) < minutes(new["end"]) and minutes(new["start"]) < minutes(e["end"]) for e in others):
        raise conflict("the entry overlaps another entry", "overlap")
    if sum(e["duration_minutes"] for e in others) + new["duration_minutes"] > 1440:
        raise conflict("more than 1,440 minutes on one date", "daily_limit")
    project = PROJECTS[new["project_id"]]
    before = used_minutes(project["id"])
    after = before - (old["duration_minutes"] if old and old["project_id"] == project["id"] else 0) + new["duration_minutes"]
    if project["budget_minutes"] is not None and after > before and after > project["budget_minutes"]:
        raise conflict("the project's budget would be exceeded", "over_budget")


def sheet_view(user_id: str, week: str, monday: date) -> dict[str, Any]:
    first, last = monday.isoformat(), (monday + timedelta(days=6)).isoformat()
    entries = [e for e in ENTRIES.values() if e["user_id"] == user_id and first <= e["date"] <= last]
    state = SHEETS.get((user_id, week), {})
    return {"user_id": user_id, "week": week, "status": state.get("status", "open"), "first_date": first, "last_date": last,
            "total_minutes": sum(e["duration_minutes"] for e in entries), "entry_count": len(entries),
            "submitted_at": state.get("submitted_at"), "decided_at": state.get("decided_at"),
            "decided_by": state.get("decided_by"), "reason": state.get("reason")}


def rounded(duration: int) -> int:
    """spec.md, Reports: up to the next multiple of 15."""
    return -(-duration // 15) * 15


# ---------------------------------------------------------------------------- system and users


@app.get("/health")
def health() -> Response:
    return reply({"status": "ok"})


@app.post("/auth/token")
def login() -> Response:
    v = Validator(json_body())
    username = v.text("username", required=True, min_len=0, max_len=10_000)
    password = v.text("password", required=True, min_len=0, max_len=10_000)
    v.check()
    with LOCK:
        user = USERS.get(USER_IDS.get(username, ""))
        salt, stored = (user["salt"], user["password_hash"]) if user else (b"-", "")
    matches = hmac.compare_digest(hash_password(password, salt), stored)
    with LOCK:
        if user is None or not matches or not user["active"]:
            raise unauthorized("wrong username or password, or inactive user")
        token = secrets.token_urlsafe(32)
        TOKENS[token] = user["id"]
        return reply({"token": token, "token_type": "bearer", "user": user_view(user)})


@app.get("/me")
def me() -> Response:
    with LOCK:
        return reply(user_view(caller()))


@app.get("/users")
def list_users() -> Response:
    with LOCK:
        user = caller(*DECIDERS)
        items = [u for u in USERS.values() if user["role"] == "admin" or u["manager_id"] == user["id"]]
        return reply({"items": [user_view(u) for u in items]})


def manager_ref(v: Validator, user_id: str | None) -> Any:
    """manager_id: absent (MISSING), null, or a manager who is not the user themself."""
    value = v.data.get("manager_id", MISSING)
    if value is MISSING or value is None:
        return value
    target = USERS.get(value) if isinstance(value, str) else None
    if target is None or target["role"] != "manager" or value == user_id:
        v.fail("manager_id")
        return MISSING
    return value


@app.post("/users")
def create_user() -> Response:
    with LOCK:
        caller("admin")
        v = Validator(json_body())
        username = v.text("username", required=True, min_len=3, max_len=32, pattern=USERNAME)
        password = v.text("password", required=True, min_len=8, max_len=128)
        role = v.text("role", required=True, max_len=16, choices=ROLES)
        manager_id = manager_ref(v, None)
        v.check()
        if username in USER_IDS:
            raise conflict("username taken")
        user = add_user(username, password, role, None if manager_id is MISSING else manager_id)
        return reply(user_view(user), 201)


@app.patch("/users/<user_id>")
def update_user(user_id: str) -> Response:
    with LOCK:
        me_ = caller("admin")
        user = find(USERS, user_id, "user")
        v = Validator(json_body())
        role = v.text("role", required=False, max_len=16, choices=ROLES)
        active = v.boolean("active")
        manager_id = manager_ref(v, user["id"])
        v.check()
        if user["id"] == me_["id"] and ((role is not MISSING and role != "admin") or active is False):
            raise conflict("admins may not demote or deactivate themselves")
        if (role is not MISSING and role != user["role"] and user["role"] == "manager"
                and any(u["manager_id"] == user["id"] for u in USERS.values())):
            raise conflict("the manager still has team members")
        if role is not MISSING:
            user["role"] = role
        if manager_id is not MISSING:
            user["manager_id"] = manager_id
        if active is not MISSING:
            if not active:
                for token in [t for t, uid in TOKENS.items() if uid == user["id"]]:
                    del TOKENS[token]
            user["active"] = active
        return reply(user_view(user))


# ---------------------------------------------------------------------------- customers, projects, activities


def name_taken(name: str, exclude: str | None = None) -> bool:
    return any(c["name"].casefold() == name.casefold() and c["id"] != exclude for c in CUSTOMERS.values())


@app.get("/customers")
def list_customers() -> Response:
    with LOCK:
        caller()
        return reply({"items": sorted(CUSTOMERS.values(), key=lambda c: c["name"])})


@app.post("/customers")
def create_customer() -> Response:
    with LOCK:
        caller("admin")
        v = Validator(json_body())
        name = v.text("name", required=True, max_len=120, non_blank=True)
        v.check()
        if name_taken(name):
            raise conflict("a customer with this name exists")
        customer = {"id": new_id("c"), "name": name, "active": True, "created_at": now()}
        CUSTOMERS[customer["id"]] = customer
        return reply(customer, 201)


@app.get("/customers/<item_id>")
def get_customer(item_id: str) -> Response:
    with LOCK:
        caller()
        return reply(find(CUSTOMERS, item_id, "customer"))


@app.patch("/customers/<item_id>")
def update_customer(item_id: str) -> Response:
    with LOCK:
        caller("admin")
        customer = find(CUSTOMERS, item_id, "customer")
        v = Validator(json_body())
        name = v.text("name", required=False, max_len=120, non_blank=True)
        active = v.boolean("active")
        v.check()
        if name is not MISSING and name_taken(name, customer["id"]):
            raise conflict("a customer with this name exists")
        if name is not MISSING:
            customer["name"] = name
        if active is not MISSING:
            customer["active"] = active
        return reply(customer)


@app.get("/projects")
def list_projects() -> Response:
    with LOCK:
        caller()
        customer_id = request.args.get("customer_id")
        return reply({"items": [project_view(p) for p in PROJECTS.values() if customer_id is None or p["customer_id"] == customer_id]})


@app.post("/projects")
def create_project() -> Response:
    with LOCK:
        caller("admin")
        v = Validator(json_body())
        customer_id = v.ref("customer_id", CUSTOMERS, required=True)
        name = v.text("name", required=True, max_len=120, non_blank=True)
        budget = v.nullable_int("budget_minutes", low=1, high=10_000_000)
        v.check()
        project = {"id": new_id("p"), "customer_id": customer_id, "name": name, "budget_minutes": None if budget is MISSING else budget,
                   "active": True, "created_at": now()}
        PROJECTS[project["id"]] = project
        return reply(project_view(project), 201)


@app.get("/projects/<item_id>")
def get_project(item_id: str) -> Response:
    with LOCK:
        caller()
        return reply(project_view(find(PROJECTS, item_id, "project")))


@app.patch("/projects/<item_id>")
def update_project(item_id: str) -> Response:
    with LOCK:
        caller("admin")
        project = find(PROJECTS, item_id, "project")
        v = Validator(json_body())
        name = v.text("name", required=False, max_len=120, non_blank=True)
        budget = v.nullable_int("budget_minutes", low=1, high=10_000_000)
        active = v.boolean("active")
        v.check()
        for key, value in (("name", name), ("budget_minutes", budget), ("active", active)):
            if value is not MISSING:
                project[key] = value
        return reply(project_view(project))


@app.get("/activities")
def list_activities() -> Response:
    with LOCK:
        caller()
        project_id = request.args.get("project_id")
        return reply({"items": [a for a in ACTIVITIES.values() if project_id is None or a["project_id"] == project_id]})


@app.post("/activities")
def create_activity() -> Response:
    with LOCK:
        caller("admin")
        v = Validator(json_body())
        project_id = v.ref("project_id", PROJECTS, required=True)
        name = v.text("name", required=True, max_len=120, non_blank=True)
        v.check()
        activity = {"id": new_id("a"), "project_id": project_id, "name": name, "active": True, "created_at": now()}
        ACTIVITIES[activity["id"]] = activity
        return reply(activity, 201)


@app.get("/activities/<item_id>")
def get_activity(item_id: str) -> Response:
    with LOCK:
        caller()
        return reply(find(ACTIVITIES, item_id, "activity"))


@app.patch("/activities/<item_id>")
def update_activity(item_id: str) -> Response:
    with LOCK:
        caller("admin")
        activity = find(ACTIVITIES, item_id, "activity")
        v = Validator(json_body())
        name = v.text("name", required=False, max_len=120, non_blank=True)
        active = v.boolean("active")
        v.check()
        if name is not MISSING:
            activity["name"] = name
        if active is not MISSING:
            activity["active"] = active
        return reply(activity)


# ---------------------------------------------------------------------------- entries


def validated_entry(data: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
    """The entry a POST (old None) or PATCH body describes, or 422 naming every invalid field."""
    v = Validator(data)
    merged: dict[str, Any] = dict(old) if old else {"description": ""}
    if old is None or "project_id" in data:
        if not usable_project(data.get("project_id")):
            v.fail("project_id")
        merged["project_id"] = data.get("project_id")
    if old is None or "activity_id" in data:
        activity_id = data.get("activity_id")
        activity = ACTIVITIES.get(activity_id) if isinstance(activity_id, str) else None
        if activity is None or not activity["active"]:
            v.fail("activity_id")
        merged["activity_id"] = activity_id
    activity = ACTIVITIES.get(merged["activity_id"]) if isinstance(merged["activity_id"], str) else None
    if activity is not None and activity["project_id"] != merged["project_id"]:
        v.fail("activity_id")
    day = v.day("date", required=old is None)
    if day is not MISSING:
        merged["date"] = day.isoformat()
    description = v.text("description", required=False, min_len=0, max_len=1000)
    if description is not MISSING:
        merged["description"] = description
    if old is None or any(k in data for k in ("start", "end", "duration_minutes")):
        times = entry_time(data, v)
        if times is not None:
            merged["start"], merged["end"], merged["duration_minutes"] = times
    v.check()
    return merged


def visible_entry(user: dict[str, Any], entry_id: str) -> dict[str, Any]:
    entry = ENTRIES.get(entry_id)
    if entry is None or not sees(user, USERS[entry["user_id"]]):
        raise not_found("entry")
    return entry


def owned_entry(user: dict[str, Any], entry_id: str) -> dict[str, Any]:
    entry = visible_entry(user, entry_id)
    if entry["user_id"] != user["id"]:
        raise forbidden("only the entry's owner may change it")
    return entry


ENTRY_KEYS = ("id", "user_id", "project_id", "activity_id", "date", "start", "end", "duration_minutes", "description", "created_at", "updated_at")


@app.post("/entries")
def create_entry() -> Response:
    with LOCK:
        user = caller()
        entry = validated_entry(json_body(), None)
        check_state(user["id"], entry, None)
        stamp = now()
        entry.update(id=new_id("e"), user_id=user["id"], created_at=stamp, updated_at=stamp)
        ENTRIES[entry["id"]] = {k: entry[k] for k in ENTRY_KEYS}
        return reply(ENTRIES[entry["id"]], 201)


@app.get("/entries")
def list_entries() -> Response:
    with LOCK:
        user = caller()
        values, bad = query(dates=("from", "to"), max_len={"q": 100}, paged=True)
        if bad:
            raise invalid(bad, "invalid query parameters: " + ", ".join(bad))
        whose = filter_user(user, request.args.get("user_id")) or user
        first, last = values["from"], values["to"]
        project_id, activity_id, q = request.args.get("project_id"), request.args.get("activity_id"), values["q"]
        items = [e for e in ENTRIES.values() if e["user_id"] == whose["id"]
                 and (first is None or e["date"] >= first.isoformat()) and (last is None or e["date"] <= last.isoformat())
                 and (project_id is None or e["project_id"] == project_id) and (activity_id is None or e["activity_id"] == activity_id)
                 and (q is None or q.casefold() in e["description"].casefold())]
        items.sort(key=lambda e: e["date"])  # stable: creation order within a date
        limit, offset = values["limit"], values["offset"]
        return reply({"items": items[offset:offset + limit], "total": len(items), "limit": limit, "offset": offset})


@app.get("/entries/<entry_id>")
def get_entry(entry_id: str) -> Response:
    with LOCK:
        return reply(visible_entry(caller(), entry_id))


@app.patch("/entries/<entry_id>")
def update_entry(entry_id: str) -> Response:
    with LOCK:
        user = caller()
        old = owned_entry(user, entry_id)
        new = validated_entry(json_body(), old)
        check_state(user["id"], new, old)
        new["updated_at"] = now()
        old.update({k: new[k] for k in ENTRY_KEYS})
        return reply(old)


@app.delete("/entries/<entry_id>")
def delete_entry(entry_id: str) -> Response:
    with LOCK:
        user = caller()
        entry = owned_entry(user, entry_id)
        if sheet_status(user["id"], week_of(entry["date"])) in LOCKED:
            raise conflict("the entry's week is submitted or approved", "locked")
        del ENTRIES[entry_id]
        return no_content()


# ---------------------------------------------------------------------------- timesheets


def week_target(user: dict[str, Any], user_id: str, week: str) -> tuple[dict[str, Any], str, date]:
    """The visible user and the parsed week named in the path (404 otherwise)."""
    target = visible_user(user, user_id)
    parsed = parse_week(week)
    if parsed is None:
        raise not_found("week")
    return target, parsed[0], parsed[1]


@app.get("/timesheets/<user_id>/<week>")
def get_timesheet(user_id: str, week: str) -> Response:
    with LOCK:
        target, name, monday = week_target(caller(), user_id, week)
        return reply(sheet_view(target["id"], name, monday))


@app.post("/timesheets/<user_id>/<week>/<action>")
def act_on_timesheet(user_id: str, week: str, action: str) -> Response:
    if action not in ("submit", "withdraw", "approve", "reject"):
        raise not_found("action")
    with LOCK:
        deciding = action in ("approve", "reject")
        user = caller(*DECIDERS) if deciding else caller()
        target, name, monday = week_target(user, user_id, week)
        if deciding and target["id"] == user["id"]:
            raise forbidden("nobody decides their own week")
        if not deciding and target["id"] != user["id"]:
            raise forbidden("only the user themself submits or withdraws their week")
        reason = MISSING
        if action == "reject":
            v = Validator(json_body())
            reason = v.text("reason", required=True, max_len=500, non_blank=True)
            v.check()
        status = sheet_status(target["id"], name)
        state = SHEETS.setdefault((target["id"], name), {"status": "open"})
        if action == "submit":
            if status not in ("open", "rejected"):
                raise conflict(f"a {status} week cannot be submitted", "invalid_state")
            if sheet_view(target["id"], name, monday)["entry_count"] == 0:
                raise conflict("the week has no entries", "empty_week")
            state.update(status="submitted", submitted_at=now(), decided_at=None, decided_by=None, reason=None)
        elif status != "submitted":
            raise conflict(f"a {status} week cannot be {action}n" if action == "withdraw" else f"a {status} week cannot be decided", "invalid_state")
        elif action == "withdraw":
            state.update(status="open", submitted_at=None)
        else:
            state.update(status="approved" if action == "approve" else "rejected", decided_at=now(), decided_by=user["id"],
                         reason=None if reason is MISSING else reason)
        return reply(sheet_view(target["id"], name, monday))


@app.get("/timesheets")
def list_timesheets() -> Response:
    with LOCK:
        user = caller()
        values, bad = query(choices={"status": ("submitted", "approved", "rejected")})
        if bad:
            raise invalid(bad, "invalid query parameters: " + ", ".join(bad))
        only = filter_user(user, request.args.get("user_id"))
        items = []
        for (user_id, week), state in SHEETS.items():
            if state["status"] == "open" or not sees(user, USERS[user_id]) or (only and only["id"] != user_id):
                continue
            if values["status"] is None or state["status"] == values["status"]:
                parsed = parse_week(week)
                assert parsed is not None
                items.append(sheet_view(user_id, week, parsed[1]))
        return reply({"items": items})


# ---------------------------------------------------------------------------- reports


@app.get("/reports/summary")
def report_summary() -> Response:
    with LOCK:
        user = caller()
        values, bad = query(required=("from", "to", "group_by"), dates=("from", "to"), bools=("approved",),
                            choices={"group_by": ("project", "activity", "user")})
        first, last = values["from"], values["to"]
        if first is not None and last is not None and (last < first or (last - first).days + 1 > 366) and "to" not in bad:
            bad.append("to")
        if bad:
            raise invalid(bad, "invalid query parameters: " + ", ".join(bad))
        only = filter_user(user, request.args.get("user_id"))
        project_id, approved, group_by = request.args.get("project_id"), values["approved"], values["group_by"]
        groups: dict[str, dict[str, Any]] = {}
        for e in ENTRIES.values():
            if not (first.isoformat() <= e["date"] <= last.isoformat()) or not sees(user, USERS[e["user_id"]]):
                continue
            if (only and e["user_id"] != only["id"]) or (project_id is not None and e["project_id"] != project_id):
                continue
            if approved is not None and (sheet_status(e["user_id"], week_of(e["date"])) == "approved") != approved:
                continue
            key = {"project": e["project_id"], "activity": e["activity_id"], "user": e["user_id"]}[group_by]
            name = {"project": lambda: PROJECTS[key]["name"], "activity": lambda: ACTIVITIES[key]["name"], "user": lambda: USERS[key]["username"]}[group_by]()
            group = groups.setdefault(key, {"key": key, "name": name, "entry_count": 0, "minutes": 0, "rounded_minutes": 0})
            group["entry_count"] += 1
            group["minutes"] += e["duration_minutes"]
            group["rounded_minutes"] += rounded(e["duration_minutes"])
        ordered = sorted(groups.values(), key=lambda g: (-g["minutes"], g["key"]))
        total = {k: sum(g[k] for g in ordered) for k in ("entry_count", "minutes", "rounded_minutes")}
        return reply({"from": first.isoformat(), "to": last.isoformat(), "group_by": group_by, "groups": ordered, "total": total})


def seed() -> None:
    username = os.environ.get("ADMIN_USERNAME", "admin")
    password = os.environ.get("ADMIN_PASSWORD", "change-me-now")
    add_user(username, password, "admin", None)


seed()

if __name__ == "__main__":
    app.run(host="0.0.0.0", port=int(os.environ.get("PORT", "8000")), threaded=True)
