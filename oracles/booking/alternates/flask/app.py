"""Booking service: resources with weekly opening hours, bookings mirrored to a calendar provider.

Flask, in-memory state. Run with `python app.py` (PORT env, default 8000; CALENDAR_URL env).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import threading
import urllib.error
import urllib.parse
import urllib.request
from datetime import date, datetime, timedelta, timezone

from flask import Flask, Response, request

app = Flask(__name__)

CALENDAR_URL = os.environ.get("CALENDAR_URL", "http://localhost:9100").rstrip("/")
PROVIDER_TIMEOUT = float(os.environ.get("CALENDAR_TIMEOUT", "10"))

USERNAME_RE = re.compile(r"[a-z0-9_]{3,32}")
CALENDAR_RE = re.compile(r"[A-Za-z0-9._+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+")
TIME_OF_DAY_RE = re.compile(r"([01][0-9]|2[0-4]):(00|15|30|45)")
INSTANT_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
INT_QUERY_RE = re.compile(r"[+-]?[0-9]+(\.0*)?")

KINDS = ("room", "practitioner")
STATUSES = ("confirmed", "cancelled")


# --------------------------------------------------------------------------- errors / JSON

class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, fields: list[str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.fields = fields


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


def forbidden(message: str = "you may not do this") -> ApiError:
    return ApiError(403, "forbidden", message)


def validation(fields: list[str], message: str = "validation failed") -> ApiError:
    return ApiError(422, "validation_error", message, fields)


def _reject_constant(value: str):
    raise ValueError(f"invalid JSON constant {value}")


def json_body() -> dict:
    raw = request.get_data(cache=True)
    try:
        body = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise validation([], "body must be a JSON object")
    if not isinstance(body, dict):
        raise validation([], "body must be a JSON object")
    if _depth(body) > 32:
        raise validation([], "body is nested more than 32 levels deep")
    return body


def _depth(value, level=0):
    """Nesting depth, objects and arrays counted together (spec: Limits); stops past 33."""
    if not isinstance(value, (dict, list)):
        return level
    if level > 32:
        return level + 1
    children = value.values() if isinstance(value, dict) else value
    return max([level + 1] + [_depth(child, level + 1) for child in children])


def is_int(value) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and value.is_integer()


def non_blank_text(value, max_len: int = 100) -> bool:
    return isinstance(value, str) and 1 <= len(value) <= max_len and value.strip() != ""


def now_utc() -> datetime:
    return datetime.now(timezone.utc)


def rfc3339(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def fmt_instant(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_instant(value) -> datetime | None:
    """The exact form YYYY-MM-DDTHH:MM:SSZ, a real date and time, or None."""
    if not isinstance(value, str) or not INSTANT_RE.fullmatch(value):
        return None
    try:
        return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def parse_provider_time(value) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc)


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

    limit = one("limit", 20, 1, 100)
    offset = one("offset", 0, 0, None)
    return limit, offset


def page(items: list, limit: int, offset: int) -> dict:
    return {"items": items[offset:offset + limit], "total": len(items), "limit": limit, "offset": offset}


# --------------------------------------------------------------------------- state

class State:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.users: dict[str, dict] = {}
        self.users_by_name: dict[str, str] = {}
        self.tokens: dict[str, str] = {}
        self.resources: dict[str, dict] = {}          # live resources only
        self.calendar_owner: dict[str, str] = {}       # calendar_id -> live resource id
        self.resource_owner: dict[str, str] = {}       # every resource ever: id -> owner id
        self.bookings: dict[str, dict] = {}
        self.resource_locks: dict[str, threading.Lock] = {}
        self.seq = 0

    def next_seq(self) -> int:
        with self.lock:
            self.seq += 1
            return self.seq

    def resource_lock(self, resource_id: str) -> threading.Lock:
        with self.lock:
            lock = self.resource_locks.get(resource_id)
            if lock is None:
                lock = self.resource_locks[resource_id] = threading.Lock()
            return lock


S = State()


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


def hash_password(password: str, salt: str) -> str:
    return hashlib.sha256((salt + "\0" + password).encode("utf-8")).hexdigest()


def public_user(user: dict) -> dict:
    return {"id": user["id"], "username": user["username"], "created_at": user["created_at"]}


def public_resource(res: dict) -> dict:
    return {k: res[k] for k in ("id", "owner_id", "name", "kind", "calendar_id", "created_at")} | {
        "availability": [dict(w) for w in res["availability"]]
    }


def public_booking(b: dict) -> dict:
    return {k: b[k] for k in (
        "id", "resource_id", "user_id", "title", "start", "end", "status", "calendar_event_id",
        "created_at", "cancelled_at", "cancelled_by")}


def current_user() -> dict:
    header = request.headers.get("Authorization", "")
    parts = header.split(None, 1)
    if len(parts) != 2 or parts[0].lower() != "bearer" or not parts[1].strip():
        raise ApiError(401, "unauthorized", "missing or malformed bearer token")
    with S.lock:
        user_id = S.tokens.get(parts[1].strip())
        if user_id is None:
            raise ApiError(401, "unauthorized", "unknown bearer token")
        return S.users[user_id]


# --------------------------------------------------------------------------- calendar provider

class ProviderFailure(Exception):
    pass


def provider(method: str, path: str, query: dict | None = None, body: dict | None = None,
             ok: tuple[int, ...] = (200, 201)) -> tuple[int, dict | None]:
    url = CALENDAR_URL + path
    if query:
        url += "?" + urllib.parse.urlencode(query, safe=":")
    data = None
    headers = {"Accept": "application/json"}
    if body is not None:
        data = json.dumps(body).encode("utf-8")
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=PROVIDER_TIMEOUT) as resp:
            status = resp.status
            raw = resp.read()
    except urllib.error.HTTPError as err:
        status = err.code
        try:
            raw = err.read()
        except Exception:  # noqa: BLE001
            raw = b""
    except Exception as err:  # noqa: BLE001 - unreachable, timeout, reset...
        raise ProviderFailure(str(err)) from err
    if status not in ok:
        raise ProviderFailure(f"provider answered {status}")
    try:
        payload = json.loads(raw) if raw else None
    except ValueError:
        payload = None
    return status, payload


def calendar_path(calendar_id: str, *rest: str) -> str:
    segs = [urllib.parse.quote(calendar_id, safe="@+")] + [urllib.parse.quote(r, safe="") for r in rest]
    return "/calendars/" + "/".join(segs)


def unavailable() -> ApiError:
    return ApiError(502, "calendar_unavailable", "the calendar provider failed or could not be reached")


def provider_busy(calendar_id: str, start: datetime, end: datetime) -> list[tuple[datetime, datetime, str | None]]:
    try:
        _, payload = provider("GET", calendar_path(calendar_id, "busy"),
                              {"from": fmt_instant(start), "to": fmt_instant(end)}, ok=(200,))
    except ProviderFailure:
        raise unavailable()
    if not isinstance(payload, dict) or not isinstance(payload.get("busy"), list):
        raise unavailable()
    blocks = []
    for blk in payload["busy"]:
        if not isinstance(blk, dict):
            raise unavailable()
        s, e = parse_provider_time(blk.get("start")), parse_provider_time(blk.get("end"))
        if s is None or e is None:
            raise unavailable()
        blocks.append((s, e, blk.get("event_id")))
    return blocks


# --------------------------------------------------------------------------- validation helpers

def minutes_of(tod: str) -> int:
    h, m = tod.split(":")
    return int(h) * 60 + int(m)


def validate_availability(value) -> list[dict] | None:
    """Normalized windows or None when invalid."""
    if not isinstance(value, list) or len(value) > 50:
        return None
    out = []
    per_day: dict[int, list[tuple[int, int]]] = {}
    for w in value:
        if not isinstance(w, dict):
            return None
        wd, st, en = w.get("weekday"), w.get("start"), w.get("end")
        if not is_int(wd) or not 0 <= int(wd) <= 6:
            return None
        if not isinstance(st, str) or not isinstance(en, str):
            return None
        if not TIME_OF_DAY_RE.fullmatch(st) or not TIME_OF_DAY_RE.fullmatch(en):
            return None
        s, e = minutes_of(st), minutes_of(en)
        if not (0 <= s <= 23 * 60 + 45) or not (15 <= e <= 24 * 60) or e <= s:
            return None
        wd = int(wd)
        for (os_, oe) in per_day.get(wd, []):
            if s < oe and os_ < e:
                return None
        per_day.setdefault(wd, []).append((s, e))
        out.append({"weekday": wd, "start": st, "end": en})
    return out


def joined_windows(availability: list[dict], weekday: int) -> list[tuple[int, int]]:
    spans = sorted((minutes_of(w["start"]), minutes_of(w["end"])) for w in availability if w["weekday"] == weekday)
    merged: list[list[int]] = []
    for s, e in spans:
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return [(s, e) for s, e in merged]


def validate_times(body: dict, errors: list[str]) -> tuple[datetime | None, datetime | None]:
    start_raw, end_raw = body.get("start"), body.get("end")
    start = parse_instant(start_raw) if "start" in body else None
    end = parse_instant(end_raw) if "end" in body else None
    if start is not None and (start.minute % 15 or start.second):
        start = None
    if end is not None and (end.minute % 15 or end.second):
        end = None
    if start is None:
        errors.append("start")
    if end is None:
        errors.append("end")
    if start is not None and end is not None:
        if not (start < end <= start + timedelta(hours=8)):
            errors.append("end")
        if start <= now_utc():
            errors.append("start")
    return start, end


def within_availability(resource: dict, start: datetime, end: datetime) -> bool:
    day = datetime(start.year, start.month, start.day, tzinfo=timezone.utc)
    for s, e in joined_windows(resource["availability"], start.weekday()):
        if day + timedelta(minutes=s) <= start and end <= day + timedelta(minutes=e):
            return True
    return False


def overlaps_booking(resource_id: str, start: datetime, end: datetime, ignore: str | None = None) -> bool:
    with S.lock:
        for b in S.bookings.values():
            if b["resource_id"] != resource_id or b["status"] != "confirmed" or b["id"] == ignore:
                continue
            if b["_start"] < end and start < b["_end"]:
                return True
    return False


def booking_sort_key(b: dict):
    return (b["_start"], b["_seq"])


# --------------------------------------------------------------------------- routes: system & users

@app.get("/health")
def health():
    return json_response({"status": "ok"})


@app.post("/users")
def register():
    body = json_body()
    errors = []
    username, password = body.get("username"), body.get("password")
    if not isinstance(username, str) or not USERNAME_RE.fullmatch(username):
        errors.append("username")
    if not isinstance(password, str) or not 8 <= len(password) <= 128:
        errors.append("password")
    if errors:
        raise validation(errors)
    with S.lock:
        if username in S.users_by_name:
            raise ApiError(409, "conflict", "username is taken")
        salt = secrets.token_hex(8)
        user = {"id": new_id("usr"), "username": username, "created_at": rfc3339(now_utc()),
                "_salt": salt, "_hash": hash_password(password, salt)}
        S.users[user["id"]] = user
        S.users_by_name[username] = user["id"]
    return json_response(public_user(user), 201)


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
    return json_response({"token": token, "token_type": "bearer", "user": public_user(user)})


@app.get("/me")
def me():
    return json_response(public_user(current_user()))


# --------------------------------------------------------------------------- routes: resources

def get_resource(resource_id: str) -> dict:
    with S.lock:
        res = S.resources.get(resource_id)
    if res is None:
        raise not_found("no such resource")
    return res


@app.post("/resources")
def create_resource():
    user = current_user()
    body = json_body()
    errors = []
    name = body.get("name")
    if not non_blank_text(name):
        errors.append("name")
    if body.get("kind") not in KINDS or not isinstance(body.get("kind"), str):
        errors.append("kind")
    cal = body.get("calendar_id")
    if not isinstance(cal, str) or len(cal) > 200 or not CALENDAR_RE.fullmatch(cal):
        errors.append("calendar_id")
    availability: list[dict] | None = []
    if "availability" in body:
        availability = validate_availability(body["availability"])
        if availability is None:
            errors.append("availability")
    if errors:
        raise validation(errors)
    with S.lock:
        if cal in S.calendar_owner:
            raise ApiError(409, "conflict", "this calendar is used by another resource")
        res = {"id": new_id("res"), "owner_id": user["id"], "name": name, "kind": body["kind"],
               "calendar_id": cal, "availability": availability, "created_at": rfc3339(now_utc()),
               "_seq": S.next_seq()}
        S.resources[res["id"]] = res
        S.calendar_owner[cal] = res["id"]
        S.resource_owner[res["id"]] = user["id"]
    return json_response(public_resource(res), 201)


@app.get("/resources")
def list_resources():
    current_user()
    errors: list[str] = []
    kind = request.args.get("kind")
    if kind is not None and kind not in KINDS:
        errors.append("kind")
    limit, offset = pagination(errors)
    if errors:
        raise validation(errors)
    with S.lock:
        items = sorted(S.resources.values(), key=lambda r: r["_seq"])
        items = [public_resource(r) for r in items if kind is None or r["kind"] == kind]
    return json_response(page(items, limit, offset))


@app.get("/resources/<resource_id>")
def read_resource(resource_id):
    current_user()
    return json_response(public_resource(get_resource(resource_id)))


@app.patch("/resources/<resource_id>")
def update_resource(resource_id):
    user = current_user()
    res = get_resource(resource_id)
    if res["owner_id"] != user["id"]:
        raise forbidden("only the owner may edit this resource")
    body = json_body()
    errors = []
    changes = {}
    if "name" in body:
        if not non_blank_text(body["name"]):
            errors.append("name")
        else:
            changes["name"] = body["name"]
    if "availability" in body:
        availability = validate_availability(body["availability"])
        if availability is None:
            errors.append("availability")
        else:
            changes["availability"] = availability
    if errors:
        raise validation(errors)
    with S.resource_lock(resource_id):
        with S.lock:
            if S.resources.get(resource_id) is None:
                raise not_found("no such resource")
            res.update(changes)
            out = public_resource(res)
    return json_response(out)


@app.delete("/resources/<resource_id>")
def delete_resource(resource_id):
    user = current_user()
    res = get_resource(resource_id)
    if res["owner_id"] != user["id"]:
        raise forbidden("only the owner may delete this resource")
    with S.resource_lock(resource_id):
        with S.lock:
            if S.resources.get(resource_id) is None:
                raise not_found("no such resource")
            confirmed = sorted((b for b in S.bookings.values()
                                if b["resource_id"] == resource_id and b["status"] == "confirmed"),
                               key=booking_sort_key)
        for b in confirmed:
            delete_event(res["calendar_id"], b["calendar_event_id"])
            with S.lock:
                mark_cancelled(b, user["id"])
        with S.lock:
            S.resources.pop(resource_id, None)
            if S.calendar_owner.get(res["calendar_id"]) == resource_id:
                S.calendar_owner.pop(res["calendar_id"], None)
    return Response(status=204)


@app.get("/resources/<resource_id>/availability")
def free_time(resource_id):
    current_user()
    res = get_resource(resource_id)
    raw = request.args.get("date")
    day = None
    if raw is not None and DATE_RE.fullmatch(raw):
        try:
            day = date.fromisoformat(raw)
        except ValueError:
            day = None
    if day is None:
        raise validation(["date"], "date must be a real YYYY-MM-DD date")
    day_start = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
    day_end = day_start + timedelta(days=1)
    windows = [(day_start + timedelta(minutes=s), day_start + timedelta(minutes=e))
               for s, e in joined_windows(res["availability"], day.weekday())]
    busy = provider_busy(res["calendar_id"], day_start, day_end)
    taken = [(max(s, day_start), min(e, day_end)) for s, e, _ in busy]
    with S.lock:
        taken += [(b["_start"], b["_end"]) for b in S.bookings.values()
                  if b["resource_id"] == resource_id and b["status"] == "confirmed"
                  and b["_start"] < day_end and b["_end"] > day_start]
    taken = sorted((s, e) for s, e in taken if s < e)
    free: list[list[datetime]] = []
    for ws, we in windows:
        pieces = [(ws, we)]
        for ts, te in taken:
            nxt = []
            for ps, pe in pieces:
                if te <= ps or ts >= pe:
                    nxt.append((ps, pe))
                    continue
                if ps < ts:
                    nxt.append((ps, ts))
                if te < pe:
                    nxt.append((te, pe))
            pieces = nxt
        for ps, pe in pieces:
            if ps >= pe:
                continue
            if free and free[-1][1] >= ps:
                free[-1][1] = max(free[-1][1], pe)
            else:
                free.append([ps, pe])
    return json_response({"resource_id": resource_id, "date": raw,
                          "free": [{"start": fmt_instant(s), "end": fmt_instant(e)} for s, e in free]})


# --------------------------------------------------------------------------- routes: bookings

def delete_event(calendar_id: str, event_id: str) -> None:
    try:
        provider("DELETE", calendar_path(calendar_id, "events", event_id), ok=(200, 202, 204, 404, 410))
    except ProviderFailure:
        raise unavailable()


def mark_cancelled(b: dict, by_user: str) -> None:
    b["status"] = "cancelled"
    b["cancelled_at"] = rfc3339(now_utc())
    b["cancelled_by"] = by_user


@app.post("/resources/<resource_id>/bookings")
def create_booking(resource_id):
    user = current_user()
    get_resource(resource_id)
    body = json_body()
    errors: list[str] = []
    start, end = validate_times(body, errors)
    title = "Booking"
    if "title" in body:
        if not non_blank_text(body["title"]):
            errors.append("title")
        else:
            title = body["title"]
    if errors:
        raise validation(errors)
    with S.resource_lock(resource_id):
        with S.lock:
            res = S.resources.get(resource_id)
        if res is None:
            raise not_found("no such resource")
        if not within_availability(res, start, end):
            raise ApiError(409, "outside_availability", "the booking is not within the resource's opening hours")
        if overlaps_booking(resource_id, start, end):
            raise ApiError(409, "booking_conflict", "the time overlaps another booking of this resource")
        if provider_busy(res["calendar_id"], start, end):
            raise ApiError(409, "calendar_conflict", "the resource's calendar is busy at that time")
        booking_id = new_id("bkg")
        try:
            _, event = provider("POST", calendar_path(res["calendar_id"], "events"),
                                body={"summary": title, "start": fmt_instant(start), "end": fmt_instant(end),
                                      "reference": booking_id}, ok=(200, 201))
        except ProviderFailure:
            raise unavailable()
        if not isinstance(event, dict) or not isinstance(event.get("id"), str) or not event["id"]:
            raise unavailable()
        b = {"id": booking_id, "resource_id": resource_id, "user_id": user["id"], "title": title,
             "start": fmt_instant(start), "end": fmt_instant(end), "status": "confirmed",
             "calendar_event_id": event["id"], "created_at": rfc3339(now_utc()), "cancelled_at": None,
             "cancelled_by": None, "_start": start, "_end": end, "_seq": S.next_seq()}
        with S.lock:
            S.bookings[booking_id] = b
            out = public_booking(b)
    return json_response(out, 201)


@app.get("/bookings")
def list_my_bookings():
    user = current_user()
    errors: list[str] = []
    status = request.args.get("status")
    if status is not None and status not in STATUSES:
        errors.append("status")
    limit, offset = pagination(errors)
    if errors:
        raise validation(errors)
    with S.lock:
        items = sorted((b for b in S.bookings.values() if b["user_id"] == user["id"]
                        and (status is None or b["status"] == status)), key=booking_sort_key)
        items = [public_booking(b) for b in items]
    return json_response(page(items, limit, offset))


@app.get("/resources/<resource_id>/bookings")
def list_resource_bookings(resource_id):
    user = current_user()
    res = get_resource(resource_id)
    if res["owner_id"] != user["id"]:
        raise forbidden("only the resource's owner may list its bookings")
    errors: list[str] = []
    status = request.args.get("status")
    if status is not None and status not in STATUSES:
        errors.append("status")
    limit, offset = pagination(errors)
    if errors:
        raise validation(errors)
    with S.lock:
        items = sorted((b for b in S.bookings.values() if b["resource_id"] == resource_id
                        and (status is None or b["status"] == status)), key=booking_sort_key)
        items = [public_booking(b) for b in items]
    return json_response(page(items, limit, offset))


def visible_booking(booking_id: str, user: dict) -> tuple[dict, bool, bool]:
    """The booking, whether the caller is its booker, whether the caller owns its (live) resource."""
    with S.lock:
        b = S.bookings.get(booking_id)
        if b is None:
            raise not_found("no such booking")
        res = S.resources.get(b["resource_id"])
        is_booker = b["user_id"] == user["id"]
        is_owner = res is not None and res["owner_id"] == user["id"]
    if not (is_booker or is_owner):
        raise not_found("no such booking")
    return b, is_booker, is_owner


@app.get("/bookings/<booking_id>")
def read_booking(booking_id):
    user = current_user()
    b, _, _ = visible_booking(booking_id, user)
    with S.lock:
        return json_response(public_booking(b))


@app.post("/bookings/<booking_id>/cancel")
def cancel_booking(booking_id):
    user = current_user()
    b, _, _ = visible_booking(booking_id, user)
    with S.resource_lock(b["resource_id"]):
        # re-check after waiting for the lock (the resource may have been deleted meanwhile)
        b, _, _ = visible_booking(booking_id, user)
        if b["status"] != "confirmed":
            raise ApiError(409, "invalid_state", "the booking is already cancelled")
        with S.lock:
            res = S.resources.get(b["resource_id"])
        calendar_id = res["calendar_id"] if res else None
        if calendar_id is None:  # cannot happen: a booking of a deleted resource is cancelled
            raise ApiError(409, "invalid_state", "the booking is already cancelled")
        delete_event(calendar_id, b["calendar_event_id"])
        with S.lock:
            mark_cancelled(b, user["id"])
            out = public_booking(b)
    return json_response(out)


@app.patch("/bookings/<booking_id>")
def reschedule_booking(booking_id):
    user = current_user()
    b, is_booker, _ = visible_booking(booking_id, user)
    if not is_booker:
        raise forbidden("only the booker may change a booking")
    body = json_body()
    errors: list[str] = []
    has_start, has_end = "start" in body, "end" in body
    start = end = None
    if has_start or has_end:
        start, end = validate_times(body, errors)
    title = None
    if "title" in body:
        if not non_blank_text(body["title"]):
            errors.append("title")
        else:
            title = body["title"]
    if errors:
        raise validation(errors)
    with S.resource_lock(b["resource_id"]):
        with S.lock:
            res = S.resources.get(b["resource_id"])
            status = b["status"]
        if status != "confirmed" or res is None:
            raise ApiError(409, "invalid_state", "the booking is cancelled")
        new_title = title if title is not None else b["title"]
        new_start = start if start is not None else b["_start"]
        new_end = end if end is not None else b["_end"]
        if start is not None:
            if not within_availability(res, new_start, new_end):
                raise ApiError(409, "outside_availability", "the booking is not within the resource's opening hours")
            if overlaps_booking(res["id"], new_start, new_end, ignore=b["id"]):
                raise ApiError(409, "booking_conflict", "the time overlaps another booking of this resource")
            busy = provider_busy(res["calendar_id"], new_start, new_end)
            if any(ev != b["calendar_event_id"] for _, _, ev in busy):
                raise ApiError(409, "calendar_conflict", "the resource's calendar is busy at that time")
        try:
            provider("PATCH", calendar_path(res["calendar_id"], "events", b["calendar_event_id"]),
                     body={"summary": new_title, "start": fmt_instant(new_start), "end": fmt_instant(new_end)},
                     ok=(200,))
        except ProviderFailure:
            raise unavailable()
        with S.lock:
            b["title"] = new_title
            b["_start"], b["_end"] = new_start, new_end
            b["start"], b["end"] = fmt_instant(new_start), fmt_instant(new_end)
            out = public_booking(b)
    return json_response(out)


# --------------------------------------------------------------------------- main

def main() -> None:
    port = int(os.environ.get("PORT", "8000"))
    try:
        from waitress import serve
    except ImportError:
        app.run(host="0.0.0.0", port=port, threaded=True)
        return
    serve(app, host="0.0.0.0", port=port, threads=16, ident=None)


if __name__ == "__main__":
    main()
