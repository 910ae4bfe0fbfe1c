"""Event registration service: Flask + psycopg 3, state in PostgreSQL."""
import json
import os
import re
import sys
import time
from datetime import datetime, timedelta, timezone
from urllib.parse import quote

import psycopg
from flask import Flask, Response, g, request, send_from_directory

HERE = os.path.dirname(os.path.abspath(__file__))
INT4_MAX = 2**31 - 1


# ---------------------------------------------------------------- configuration
def database_url():
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    host = os.environ.get("DB_HOST", "localhost")
    port = os.environ.get("DB_PORT", "5432")
    name = os.environ.get("DB_NAME", "postgres")
    user = os.environ.get("DB_USER") or os.environ.get("DB_USERNAME") or "postgres"
    password = os.environ.get("DB_PASSWORD", "")
    auth = quote(user, safe="")
    if password:
        auth += ":" + quote(password, safe="")
    return f"postgresql://{auth}@{host}:{port}/{quote(name, safe='')}"


DSN = database_url()

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    id         serial PRIMARY KEY,
    title      text NOT NULL,
    starts_at  timestamptz NOT NULL,
    capacity   integer NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS registrations (
    id         serial PRIMARY KEY,
    event_id   integer NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    name       text NOT NULL,
    email      text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT registrations_event_email_key UNIQUE (event_id, email)
);
CREATE INDEX IF NOT EXISTS events_starts_at_idx ON events (starts_at, id);
"""


def connect():
    conn = psycopg.connect(DSN, connect_timeout=10)
    conn.execute("SET TIME ZONE 'UTC'")
    conn.commit()
    return conn


def init_db(deadline_s=120):
    """Wait for the database, then create the schema (idempotent)."""
    start = time.time()
    while True:
        try:
            with connect() as conn:
                with conn.transaction():
                    # serialise concurrent start-ups of several instances
                    conn.execute("SELECT pg_advisory_xact_lock(80224601)")
                    conn.execute(SCHEMA)
            return
        except psycopg.OperationalError as exc:
            if time.time() - start > deadline_s:
                raise
            print(f"waiting for database: {exc}", file=sys.stderr)
            time.sleep(1)


# ---------------------------------------------------------------- helpers
class ApiError(Exception):
    def __init__(self, status, code, message, fields=None):
        super().__init__(message)
        self.status, self.code, self.message, self.fields = status, code, message, fields


def json_response(payload, status=200):
    return Response(json.dumps(payload, ensure_ascii=False), status=status,
                    mimetype="application/json")


def not_found(what):
    return ApiError(404, "not_found", f"{what} not found")


def iso(dt):
    dt = dt.astimezone(timezone.utc)
    text = dt.strftime("%Y-%m-%dT%H:%M:%S")
    if dt.microsecond:
        text += f".{dt.microsecond:06d}"
    return text + "Z"


DT_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?"
    r"(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$"
)


def parse_datetime(value):
    """ISO 8601 date-time -> aware datetime (UTC when no offset), or None."""
    if not isinstance(value, str):
        return None
    m = DT_RE.match(value)
    if not m:
        return None
    y, mo, d, h, mi, s, frac, z, sign, oh, om = m.groups()
    try:
        micro = int((frac or "0")[:6].ljust(6, "0"))
        tz = timezone.utc
        if sign:
            oh_i, om_i = int(oh), int(om or 0)
            if oh_i > 23 or om_i > 59:
                return None
            off = timedelta(hours=oh_i, minutes=om_i)
            tz = timezone(off if sign == "+" else -off)
        dt = datetime(int(y), int(mo), int(d), int(h), int(mi), int(s or 0), micro, tzinfo=tz)
        dt.astimezone(timezone.utc)  # may overflow at the edges of the range
        return dt
    except (ValueError, OverflowError):
        return None


def valid_text(value, max_len):
    return (isinstance(value, str) and value.strip() != "" and len(value) <= max_len
            and "\x00" not in value)


EMAIL_RE = re.compile(r"^[^\s@]+@(?:[^\s@.]+\.)+[^\s@.]+$")


def valid_email(value):
    return (isinstance(value, str) and len(value) <= 254 and "\x00" not in value
            and EMAIL_RE.match(value) is not None)


def nesting_depth(value):
    """How deeply objects and arrays nest (iterative; spec: deeper than 32 levels gets 422)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def json_object_body():
    raw = request.get_data(cache=False)
    try:
        body = json.loads(raw.decode("utf-8")) if raw and len(raw) <= 1_048_576 else None
    except (UnicodeDecodeError, ValueError, RecursionError):
        body = None
    if not isinstance(body, dict) or nesting_depth(body) > 32:
        raise ApiError(422, "validation_error", "the request body must be a JSON object", ["body"])
    return body


def validation_failed(fields):
    raise ApiError(422, "validation_error", "invalid or missing fields: " + ", ".join(fields), fields)


def event_json(row):
    eid, title, starts_at, capacity, created_at, taken = row
    return {"id": eid, "title": title, "starts_at": iso(starts_at), "capacity": capacity,
            "seats_left": capacity - taken, "created_at": iso(created_at)}


def registration_json(row):
    rid, event_id, name, email, created_at = row
    return {"id": rid, "event_id": event_id, "name": name, "email": email,
            "created_at": iso(created_at)}


EVENT_SELECT = """
SELECT e.id, e.title, e.starts_at, e.capacity, e.created_at,
       (SELECT count(*) FROM registrations r WHERE r.event_id = e.id)::int
FROM events e
"""


# ---------------------------------------------------------------- application
app = Flask(__name__, static_folder=None)


def db():
    if "conn" not in g:
        g.conn = connect()
    return g.conn


@app.teardown_appcontext
def close_db(_exc):
    conn = g.pop("conn", None)
    if conn is not None:
        try:
            conn.rollback()
        finally:
            conn.close()


@app.errorhandler(ApiError)
def handle_api_error(err):
    payload = {"error": err.code, "message": err.message}
    if err.fields is not None:
        payload["fields"] = err.fields
    return json_response(payload, err.status)


@app.errorhandler(404)
def handle_404(_err):
    return json_response({"error": "not_found", "message": "no such resource"}, 404)


@app.errorhandler(405)
def handle_405(_err):
    return json_response({"error": "method_not_allowed", "message": "method not allowed"}, 405)


@app.errorhandler(500)
def handle_500(_err):
    return json_response({"error": "internal_error", "message": "internal error"}, 500)


def event_id_or_404(raw):
    if not re.fullmatch(r"[0-9]{1,10}", raw) or int(raw) > INT4_MAX or int(raw) < 1:
        raise not_found("event")
    return int(raw)


@app.get("/health")
def health():
    return json_response({"status": "ok"})


@app.get("/")
def index():
    return send_from_directory(os.path.join(HERE, "static"), "index.html")


@app.get("/static/<path:name>")
def static_file(name):
    return send_from_directory(os.path.join(HERE, "static"), name)


@app.get("/api/events")
def list_events():
    conn = db()
    rows = conn.execute(EVENT_SELECT + " ORDER BY e.starts_at, e.id").fetchall()
    conn.commit()
    return json_response({"items": [event_json(r) for r in rows]})


@app.post("/api/events")
def create_event():
    body = json_object_body()
    bad = []
    title = body.get("title")
    if not valid_text(title, 120):
        bad.append("title")
    starts_at = parse_datetime(body.get("starts_at"))
    if starts_at is None:
        bad.append("starts_at")
    capacity = body.get("capacity")
    if not (type(capacity) is int and 1 <= capacity <= 1000):
        bad.append("capacity")
    if bad:
        validation_failed(bad)
    conn = db()
    with conn.transaction():
        row = conn.execute(
            "INSERT INTO events (title, starts_at, capacity, created_at) "
            "VALUES (%s, %s, %s, now()) RETURNING id, title, starts_at, capacity, created_at, 0",
            (title, starts_at, capacity)).fetchone()
    return json_response(event_json(row), 201)


@app.get("/api/events/<raw_id>")
def get_event(raw_id):
    eid = event_id_or_404(raw_id)
    conn = db()
    row = conn.execute(EVENT_SELECT + " WHERE e.id = %s", (eid,)).fetchone()
    conn.commit()
    if row is None:
        raise not_found("event")
    return json_response(event_json(row))


@app.get("/api/events/<raw_id>/registrations")
def list_registrations(raw_id):
    eid = event_id_or_404(raw_id)
    conn = db()
    with conn.transaction():
        if conn.execute("SELECT 1 FROM events WHERE id = %s", (eid,)).fetchone() is None:
            raise not_found("event")
        rows = conn.execute(
            "SELECT id, event_id, name, email, created_at FROM registrations "
            "WHERE event_id = %s ORDER BY id", (eid,)).fetchall()
    return json_response({"items": [registration_json(r) for r in rows]})


@app.post("/api/events/<raw_id>/registrations")
def register(raw_id):
    # Decision: an unknown event answers 404 before the body is looked at.
    eid = event_id_or_404(raw_id)
    conn = db()
    if conn.execute("SELECT 1 FROM events WHERE id = %s", (eid,)).fetchone() is None:
        conn.commit()
        raise not_found("event")
    conn.commit()
    body = json_object_body()
    bad = []
    name = body.get("name")
    if not valid_text(name, 100):
        bad.append("name")
    email = body.get("email")
    if not valid_email(email):
        bad.append("email")
    if bad:
        validation_failed(bad)
    email = email.lower()
    try:
        with conn.transaction():
            # the row lock serialises registrations of one event, so seats never oversell
            ev = conn.execute("SELECT capacity FROM events WHERE id = %s FOR UPDATE",
                              (eid,)).fetchone()
            if ev is None:
                raise not_found("event")
            if conn.execute("SELECT 1 FROM registrations WHERE event_id = %s AND email = %s",
                            (eid, email)).fetchone():
                raise ApiError(409, "already_registered",
                               "this email is already registered for the event")
            taken = conn.execute("SELECT count(*) FROM registrations WHERE event_id = %s",
                                 (eid,)).fetchone()[0]
            if taken >= ev[0]:
                raise ApiError(409, "event_full", "the event has no seats left")
            row = conn.execute(
                "INSERT INTO registrations (event_id, name, email, created_at) "
                "VALUES (%s, %s, %s, clock_timestamp()) "
                "RETURNING id, event_id, name, email, created_at",
                (eid, name, email)).fetchone()
    except psycopg.errors.UniqueViolation:
        raise ApiError(409, "already_registered", "this email is already registered for the event")
    return json_response(registration_json(row), 201)


@app.delete("/api/registrations/<raw_id>")
def cancel_registration(raw_id):
    if not re.fullmatch(r"[0-9]{1,10}", raw_id) or not 1 <= int(raw_id) <= INT4_MAX:
        raise not_found("registration")
    conn = db()
    with conn.transaction():
        row = conn.execute("DELETE FROM registrations WHERE id = %s RETURNING id",
                           (int(raw_id),)).fetchone()
    if row is None:
        raise not_found("registration")
    return Response(status=204)


if __name__ == "__main__":
    init_db()
    port = int(os.environ.get("PORT", "8000"))
    app.run(host="0.0.0.0", port=port, threaded=True, debug=False, use_reloader=False)
