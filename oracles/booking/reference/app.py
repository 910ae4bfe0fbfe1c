"""Reference implementation of the booking task: a candidate that passes the whole oracle.

Flask with in-memory storage behind one lock. Every handler checks in spec.md's order:
authenticate (401), find what the caller may see (404), permission (403), validate (422),
state rules (409), then talk to the calendar provider (502 when it fails). The lock is held
across the provider calls of a booking so that two requests never book the same time.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import threading
import uuid
from datetime import date, datetime, timedelta, timezone
from typing import Any
from urllib.parse import quote

import requests
from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

app = Flask(__name__)

CALENDAR_URL = os.environ.get("CALENDAR_URL", "http://127.0.0.1:9100").rstrip("/")
CALENDAR = requests.Session()

LOCK = threading.RLock()
USERS: dict[str, dict[str, Any]] = {}          # user id -> user (with password hash)
USER_IDS: dict[str, str] = {}                  # username -> user id
TOKENS: dict[str, str] = {}                    # token -> user id
RESOURCES: dict[str, dict[str, Any]] = {}      # resource id -> resource (insertion = creation order)
BOOKINGS: dict[str, dict[str, Any]] = {}       # booking id -> booking (insertion = creation order)
SEQUENCE = [0]

USERNAME = re.compile(r"^[a-z0-9_]{3,32}$")
CALENDAR_ID = re.compile(r"^[A-Za-z0-9._+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$")
INSTANT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
TIME_OF_DAY = re.compile(r"^(\d{2}):(\d{2})$")
DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
INTEGER = re.compile(r"^-?[0-9]+$")
KINDS = ("room", "practitioner")
STATUSES = ("confirmed", "cancelled")
MAX_DURATION = timedelta(hours=8)
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


def now() -> datetime:
    return datetime.now(timezone.utc)


def stamp() -> str:
    return now().isoformat(timespec="microseconds").replace("+00:00", "Z")


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


def instant(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


# ---------------------------------------------------------------------------- the calendar provider


class CalendarProvider:
    """The few provider calls the service makes; any failure becomes 502 calendar_unavailable."""

    @staticmethod
    def _call(method: str, path: str, *, ok: tuple[int, ...], **kwargs: Any) -> requests.Response:
        try:
            response = CALENDAR.request(method, CALENDAR_URL + path, timeout=5, **kwargs)
        except requests.RequestException as err:
            raise ApiError(502, "calendar_unavailable", f"the calendar provider could not be reached: {err}") from err
        if response.status_code not in ok:
            raise ApiError(502, "calendar_unavailable", f"the calendar provider answered {response.status_code}")
        return response

    @classmethod
    def busy(cls, calendar_id: str, low: datetime, high: datetime) -> list[dict[str, Any]]:
        response = cls._call("GET", f"/calendars/{quote(calendar_id)}/busy", ok=(200,), params={"from": instant(low), "to": instant(high)})
        return list(response.json().get("busy", []))

    @classmethod
    def create_event(cls, calendar_id: str, booking: dict[str, Any]) -> str:
        body = {"summary": booking["title"], "start": booking["start"], "end": booking["end"], "reference": booking["id"]}
        response = cls._call("POST", f"/calendars/{quote(calendar_id)}/events", ok=(200, 201), json=body)
        return str(response.json()["id"])

    @classmethod
    def update_event(cls, calendar_id: str, event_id: str, title: str, start: str, end: str) -> None:
        body = {"summary": title, "start": start, "end": end}
        cls._call("PATCH", f"/calendars/{quote(calendar_id)}/events/{quote(event_id)}", ok=(200,), json=body)

    @classmethod
    def delete_event(cls, calendar_id: str, event_id: str) -> None:
        cls._call("DELETE", f"/calendars/{quote(calendar_id)}/events/{quote(event_id)}", ok=(200, 204, 404, 410))


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

    def text(self, name: str, *, required: bool, max_len: int, non_blank: bool = True,
             pattern: re.Pattern[str] | None = None, choices: tuple[str, ...] | None = None) -> Any:
        value = self.data.get(name, MISSING)
        if value is MISSING:
            if required:
                self.fail(name)
            return MISSING
        if not isinstance(value, str) or not 1 <= len(value) <= max_len or (non_blank and not value.strip()):
            self.fail(name)
            return MISSING
        if (choices is not None and value not in choices) or (pattern is not None and not pattern.match(value)):
            self.fail(name)
            return MISSING
        return value

    def check(self) -> None:
        if self.bad:
            raise invalid(self.bad, "invalid fields: " + ", ".join(self.bad))


def query_params(choices: dict[str, tuple[str, ...]]) -> tuple[dict[str, str], int, int]:
    """Enumerated filters plus limit and offset from the query string (422 naming each invalid one)."""
    bad: list[str] = []
    filters: dict[str, str] = {}
    for name, allowed in choices.items():
        raw = request.args.get(name)
        if raw is None:
            continue
        if raw not in allowed:
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


def minutes_of(text: Any, *, is_end: bool) -> int | None:
    """Minutes after midnight of an HH:MM quarter hour (00:00-23:45, or 00:15-24:00 for an end)."""
    if not isinstance(text, str):
        return None
    match = TIME_OF_DAY.match(text)
    if match is None:
        return None
    hours, minutes = int(match.group(1)), int(match.group(2))
    if minutes not in (0, 15, 30, 45) or hours > 24 or (hours == 24 and minutes != 0):
        return None
    value = hours * 60 + minutes
    if (is_end and value == 0) or (not is_end and value == 24 * 60):
        return None
    return value


def valid_availability(value: Any) -> bool:
    if not isinstance(value, list) or len(value) > 50:
        return False
    by_day: dict[int, list[tuple[int, int]]] = {}
    for window in value:
        if not isinstance(window, dict):
            return False
        weekday = window.get("weekday")
        if not isinstance(weekday, int) or isinstance(weekday, bool) or not 0 <= weekday <= 6:
            return False
        start, end = minutes_of(window.get("start"), is_end=False), minutes_of(window.get("end"), is_end=True)
        if start is None or end is None or end <= start:
            return False
        by_day.setdefault(weekday, []).append((start, end))
    for spans in by_day.values():
        spans.sort()
        if any(b[0] < a[1] for a, b in zip(spans, spans[1:])):
            return False
    return True


def joined_windows(resource: dict[str, Any], weekday: int) -> list[tuple[int, int]]:
    """The weekday's windows in minutes, touching windows joined."""
    spans = sorted(
        (minutes_of(w["start"], is_end=False), minutes_of(w["end"], is_end=True))
        for w in resource["availability"] if w["weekday"] == weekday
    )
    joined: list[list[int]] = []
    for start, end in spans:  # type: ignore[misc]
        if joined and start <= joined[-1][1]:
            joined[-1][1] = max(joined[-1][1], end)
        else:
            joined.append([start, end])
    return [(a, b) for a, b in joined]


def parse_instant(value: Any) -> datetime | None:
    """A well-formed quarter-hour instant, or None."""
    if not isinstance(value, str) or not INSTANT.match(value):
        return None
    try:
        parsed = datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return None
    if parsed.minute % 15 or parsed.second:
        return None
    return parsed


def validate_interval(v: Validator, data: dict[str, Any]) -> tuple[datetime, datetime] | None:
    """start and end of a booking body (both present), adding invalid fields to ``v``."""
    start, end = parse_instant(data.get("start")), parse_instant(data.get("end"))
    if start is None:
        v.fail("start")
    if end is None:
        v.fail("end")
    if start is None or end is None:
        return None
    if not start < end <= start + MAX_DURATION:
        v.fail("end")
    if start <= now():
        v.fail("start")
    return start, end


# ---------------------------------------------------------------------------- lookups and views


def current_user() -> dict[str, Any]:
    header = request.headers.get("Authorization", "")
    parts = header.split(None, 1)
    if len(parts) != 2 or parts[0].lower() != "bearer":
        raise ApiError(401, "unauthorized", "send Authorization: Bearer <token>")
    user_id = TOKENS.get(parts[1].strip())
    if user_id is None or user_id not in USERS:
        raise ApiError(401, "unauthorized", "unknown token")
    return USERS[user_id]


def find_resource(resource_id: str) -> dict[str, Any]:
    resource = RESOURCES.get(resource_id)
    if resource is None:
        raise ApiError(404, "not_found", "resource not found")
    return resource


def visible_booking(user: dict[str, Any], booking_id: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The booking and its resource (None once deleted); 404 unless the caller is its booker or resource owner."""
    booking = BOOKINGS.get(booking_id)
    if booking is None:
        raise ApiError(404, "not_found", "booking not found")
    resource = RESOURCES.get(booking["resource_id"])
    if booking["user_id"] != user["id"] and (resource is None or resource["owner_id"] != user["id"]):
        raise ApiError(404, "not_found", "booking not found")
    return booking, resource


def user_view(user: dict[str, Any]) -> dict[str, Any]:
    return {k: user[k] for k in ("id", "username", "created_at")}


def booking_view(booking: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in booking.items() if not k.startswith("_")}


def ordered(bookings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(bookings, key=lambda b: (b["start"], b["_seq"]))


def hash_password(password: str, salt: str) -> str:
    return hashlib.sha256((salt + password).encode()).hexdigest()


# ---------------------------------------------------------------------------- rules


def check_slot(resource: dict[str, Any], start: datetime, end: datetime, ignore: dict[str, Any] | None = None) -> None:
    """The 409 rules in spec order, then the provider's busy time (502 when it fails)."""
    day = datetime(start.year, start.month, start.day, tzinfo=timezone.utc)
    offset_start = int((start - day).total_seconds() // 60)
    offset_end = int((end - day).total_seconds() // 60)
    if not any(a <= offset_start and offset_end <= b for a, b in joined_windows(resource, start.weekday())):
        raise ApiError(409, "outside_availability", "the booking is not within the resource's opening hours")
    for other in BOOKINGS.values():
        if other is ignore or other["resource_id"] != resource["id"] or other["status"] != "confirmed":
            continue
        if parse_instant(other["start"]) < end and parse_instant(other["end"]) > start:  # type: ignore[operator]
            raise ApiError(409, "booking_conflict", f"the time overlaps booking {other['id']}")
    own_event = ignore["calendar_event_id"] if ignore else None
    busy = [b for b in CalendarProvider.busy(resource["calendar_id"], start, end) if b.get("event_id") != own_event]
    if busy:
        raise ApiError(409, "calendar_conflict", "the resource's calendar is busy at that time")


def cancel(booking: dict[str, Any], resource: dict[str, Any] | None, by: str) -> None:
    calendar_id = resource["calendar_id"] if resource else booking["_calendar_id"]
    CalendarProvider.delete_event(calendar_id, booking["calendar_event_id"])
    booking.update(status="cancelled", cancelled_at=stamp(), cancelled_by=by)


# ---------------------------------------------------------------------------- routes: users


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
        v.check()
        if username in USER_IDS:
            raise ApiError(409, "conflict", "username already registered")
        salt = secrets.token_hex(8)
        user = {"id": new_id("u"), "username": username, "created_at": stamp(), "_salt": salt, "_hash": hash_password(password, salt)}
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
        return reply(user_view(current_user()))


# ---------------------------------------------------------------------------- routes: resources


@app.post("/resources")
def create_resource() -> Response:
    with LOCK:
        user = current_user()
        data = json_body()
        v = Validator(data)
        name = v.text("name", required=True, max_len=100)
        kind = v.text("kind", required=True, max_len=20, choices=KINDS)
        calendar_id = v.text("calendar_id", required=True, max_len=200, pattern=CALENDAR_ID)
        availability = data.get("availability", [])
        if not valid_availability(availability):
            v.fail("availability")
        v.check()
        if any(r["calendar_id"] == calendar_id for r in RESOURCES.values()):
            raise ApiError(409, "conflict", "another resource uses this calendar")
        resource = {
            "id": new_id("r"), "owner_id": user["id"], "name": name, "kind": kind, "calendar_id": calendar_id,
            "availability": [{"weekday": w["weekday"], "start": w["start"], "end": w["end"]} for w in availability],
            "created_at": stamp(),
        }
        RESOURCES[resource["id"]] = resource
        return reply(resource, 201)


@app.get("/resources")
def list_resources() -> Response:
    with LOCK:
        current_user()
        filters, limit, offset = query_params({"kind": KINDS})
        items = [r for r in RESOURCES.values() if "kind" not in filters or r["kind"] == filters["kind"]]
        return reply(page(items, limit, offset))


@app.get("/resources/<resource_id>")
def get_resource(resource_id: str) -> Response:
    with LOCK:
        current_user()
        return reply(find_resource(resource_id))


@app.patch("/resources/<resource_id>")
def update_resource(resource_id: str) -> Response:
    with LOCK:
        user = current_user()
        resource = find_resource(resource_id)
        if resource["owner_id"] != user["id"]:
            raise ApiError(403, "forbidden", "only the owner may edit the resource")
        data = json_body()
        v = Validator(data)
        name = v.text("name", required=False, max_len=100)
        availability = data.get("availability", MISSING)
        if availability is not MISSING and not valid_availability(availability):
            v.fail("availability")
        v.check()
        if name is not MISSING:
            resource["name"] = name
        if availability is not MISSING:
            resource["availability"] = [{"weekday": w["weekday"], "start": w["start"], "end": w["end"]} for w in availability]
        return reply(resource)


@app.delete("/resources/<resource_id>")
def delete_resource(resource_id: str) -> Response:
    with LOCK:
        user = current_user()
        resource = find_resource(resource_id)
        if resource["owner_id"] != user["id"]:
            raise ApiError(403, "forbidden", "only the owner may delete the resource")
        mine = [b for b in BOOKINGS.values() if b["resource_id"] == resource_id and b["status"] == "confirmed"]
        for booking in ordered(mine):
            cancel(booking, resource, user["id"])
        del RESOURCES[resource_id]
        return Response(status=204)


@app.get("/resources/<resource_id>/availability")
def free_time(resource_id: str) -> Response:
    with LOCK:
        current_user()
        resource = find_resource(resource_id)
        raw = request.args.get("date")
        try:
            if raw is None or not DAY.match(raw):
                raise ValueError(raw)
            day = date.fromisoformat(raw)
        except ValueError as err:
            raise invalid(["date"], "date must be a real YYYY-MM-DD date") from err
        midnight = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
        taken = [
            (parse_instant(b["start"]), parse_instant(b["end"]))
            for b in BOOKINGS.values() if b["resource_id"] == resource_id and b["status"] == "confirmed"
        ]
        for block in CalendarProvider.busy(resource["calendar_id"], midnight, midnight + timedelta(days=1)):
            taken.append((datetime.strptime(block["start"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc),
                          datetime.strptime(block["end"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)))
        free: list[list[datetime]] = []
        for a, b in joined_windows(resource, day.weekday()):
            pieces = [[midnight + timedelta(minutes=a), midnight + timedelta(minutes=b)]]
            for t_start, t_end in taken:
                cut = []
                for p_start, p_end in pieces:
                    if t_end <= p_start or t_start >= p_end:  # type: ignore[operator]
                        cut.append([p_start, p_end])
                        continue
                    if p_start < t_start:  # type: ignore[operator]
                        cut.append([p_start, t_start])
                    if t_end < p_end:  # type: ignore[operator]
                        cut.append([t_end, p_end])
                pieces = cut
            for piece in sorted(pieces):
                if free and free[-1][1] == piece[0]:
                    free[-1][1] = piece[1]
                else:
                    free.append(piece)
        body = {"resource_id": resource_id, "date": raw, "free": [{"start": instant(a), "end": instant(b)} for a, b in free]}
        return reply(body)


# ---------------------------------------------------------------------------- routes: bookings


@app.post("/resources/<resource_id>/bookings")
def create_booking(resource_id: str) -> Response:
    with LOCK:
        user = current_user()
        resource = find_resource(resource_id)
        data = json_body()
        v = Validator(data)
        interval = validate_interval(v, data)
        title = v.text("title", required=False, max_len=100)
        v.check()
        assert interval is not None
        start, end = interval
        check_slot(resource, start, end)
        SEQUENCE[0] += 1
        booking = {
            "id": new_id("b"), "resource_id": resource_id, "user_id": user["id"],
            "title": "Booking" if title is MISSING else title, "start": instant(start), "end": instant(end),
            "status": "confirmed", "calendar_event_id": None, "created_at": stamp(),
            "cancelled_at": None, "cancelled_by": None, "_seq": SEQUENCE[0], "_calendar_id": resource["calendar_id"],
        }
        booking["calendar_event_id"] = CalendarProvider.create_event(resource["calendar_id"], booking)
        BOOKINGS[booking["id"]] = booking
        return reply(booking_view(booking), 201)


@app.get("/bookings")
def list_my_bookings() -> Response:
    with LOCK:
        user = current_user()
        filters, limit, offset = query_params({"status": STATUSES})
        items = [b for b in BOOKINGS.values() if b["user_id"] == user["id"] and filters.get("status", b["status"]) == b["status"]]
        return reply(page([booking_view(b) for b in ordered(items)], limit, offset))


@app.get("/resources/<resource_id>/bookings")
def list_resource_bookings(resource_id: str) -> Response:
    with LOCK:
        user = current_user()
        resource = find_resource(resource_id)
        if resource["owner_id"] != user["id"]:
            raise ApiError(403, "forbidden", "only the resource's owner may list its bookings")
        filters, limit, offset = query_params({"status": STATUSES})
        items = [b for b in BOOKINGS.values() if b["resource_id"] == resource_id and filters.get("status", b["status"]) == b["status"]]
        return reply(page([booking_view(b) for b in ordered(items)], limit, offset))


@app.get("/bookings/<booking_id>")
def get_booking(booking_id: str) -> Response:
    with LOCK:
        booking, _ = visible_booking(current_user(), booking_id)
        return reply(booking_view(booking))


@app.patch("/bookings/<booking_id>")
def reschedule(booking_id: str) -> Response:
    with LOCK:
        user = current_user()
        booking, resource = visible_booking(user, booking_id)
        if booking["user_id"] != user["id"]:
            raise ApiError(403, "forbidden", "only the booker may reschedule a booking")
        data = json_body()
        v = Validator(data)
        interval = None
        if "start" in data or "end" in data:
            for name in ("start", "end"):
                if name not in data:
                    v.fail(name)
            if "start" in data and "end" in data:
                interval = validate_interval(v, data)
            else:
                for name in ("start", "end"):
                    if name in data and parse_instant(data[name]) is None:
                        v.fail(name)
        title = v.text("title", required=False, max_len=100)
        v.check()
        if booking["status"] != "confirmed" or resource is None:
            raise ApiError(409, "invalid_state", "the booking is cancelled")
        if interval is not None:
            check_slot(resource, interval[0], interval[1], ignore=booking)
        new_title = booking["title"] if title is MISSING else title
        new_start = instant(interval[0]) if interval else booking["start"]
        new_end = instant(interval[1]) if interval else booking["end"]
        CalendarProvider.update_event(resource["calendar_id"], booking["calendar_event_id"], new_title, new_start, new_end)
        booking.update(title=new_title, start=new_start, end=new_end)
        return reply(booking_view(booking))


@app.post("/bookings/<booking_id>/cancel")
def cancel_booking(booking_id: str) -> Response:
    with LOCK:
        user = current_user()
        booking, resource = visible_booking(user, booking_id)
        if booking["status"] != "confirmed":
            raise ApiError(409, "invalid_state", "the booking is already cancelled")
        cancel(booking, resource, user["id"])
        return reply(booking_view(booking))


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=int(os.environ.get("PORT", "8000")), threaded=True)
