"""Library loans: circulation service (Flask + PostgreSQL + mail relay).

All state lives in PostgreSQL. Every state-changing transaction takes one advisory lock so that
concurrent requests see each other's effects in order; the mail relay is called after the
transaction that made a hold ready has committed, and before the HTTP answer.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import threading
import urllib.error
import urllib.request
from datetime import date, datetime, timedelta, timezone

import psycopg
from flask import Flask, Response, request
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool
from werkzeug.exceptions import HTTPException
from werkzeug.security import check_password_hash, generate_password_hash

MAX_BODY = 1024 * 1024
MAX_DEPTH = 32
LOCK_KEY = 7342001
INT_MAX = 2147483647

CATEGORY_RULES = {"adult": {"max_loans": 5, "loan_days": 21}, "child": {"max_loans": 2, "loan_days": 14}}
MAX_RENEWALS = 2
FINE_PER_DAY = 10
FINE_CAP = 1000
BLOCK_ABOVE = 500

CARD_RE = re.compile(r"[0-9]{8,14}")
BARCODE_RE = re.compile(r"[A-Z0-9]{4,20}")
USERNAME_RE = re.compile(r"[a-z][a-z0-9_.-]{2,31}")
EMAIL_RE = re.compile(r"[^@\s]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+")
DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")

app = Flask(__name__)
app.config["MAX_CONTENT_LENGTH"] = MAX_BODY
app.json.sort_keys = False


# ---------------------------------------------------------------------------------------------
# Errors


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, fields: list[str] | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.fields = fields


def json_response(payload, status: int = 200) -> Response:
    return Response(json.dumps(payload), status=status, mimetype="application/json")


def error_response(status: int, code: str, message: str, fields: list[str] | None = None) -> Response:
    body = {"error": code, "message": message}
    if fields is not None:
        body["fields"] = fields
    return json_response(body, status)


@app.errorhandler(ApiError)
def _api_error(err: ApiError):
    return error_response(err.status, err.code, err.message, err.fields)


@app.errorhandler(HTTPException)
def _http_error(err: HTTPException):
    if err.code == 404:
        return error_response(404, "not_found", "no such resource")
    if err.code == 405:
        resp = error_response(405, "method_not_allowed", "method not allowed on this path")
        if getattr(err, "valid_methods", None):
            resp.headers["Allow"] = ", ".join(err.valid_methods)
        return resp
    if err.code == 413:
        return error_response(413, "payload_too_large", "the body is larger than 1 MiB")
    if err.code == 400:
        return error_response(422, "validation_error", "the body is not a JSON object", ["body"])
    return error_response(err.code or 500, "error", err.description or "error")


@app.errorhandler(Exception)
def _unexpected(err: Exception):
    app.logger.exception("unexpected failure")
    return error_response(500, "internal_error", "an unexpected error occurred")


def unauthorized() -> ApiError:
    return ApiError(401, "unauthorized", "a valid bearer token is required")


def forbidden(message: str = "staff only") -> ApiError:
    return ApiError(403, "forbidden", message)


def not_found(what: str = "resource") -> ApiError:
    return ApiError(404, "not_found", f"{what} not found")


def conflict(code: str, message: str) -> ApiError:
    return ApiError(409, code, message)


# ---------------------------------------------------------------------------------------------
# Database


def _conninfo() -> str:
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    return psycopg.conninfo.make_conninfo(
        host=os.environ.get("DB_HOST", "127.0.0.1"),
        port=os.environ.get("DB_PORT", "5432"),
        user=os.environ.get("DB_USERNAME", "postgres"),
        password=os.environ.get("DB_PASSWORD", ""),
        dbname=os.environ.get("DB_NAME", "postgres"),
    )


pool: ConnectionPool | None = None

SCHEMA = """
CREATE TABLE IF NOT EXISTS staff (
    id SERIAL PRIMARY KEY,
    username TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS patrons (
    id SERIAL PRIMARY KEY,
    card_number TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    category TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    fines_owed INTEGER NOT NULL DEFAULT 0,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS titles (
    id SERIAL PRIMARY KEY,
    title TEXT NOT NULL,
    author TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS copies (
    id SERIAL PRIMARY KEY,
    title_id INTEGER NOT NULL REFERENCES titles(id),
    barcode TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL DEFAULT 'available'
);
CREATE TABLE IF NOT EXISTS loans (
    id SERIAL PRIMARY KEY,
    patron_id INTEGER NOT NULL REFERENCES patrons(id),
    copy_id INTEGER NOT NULL REFERENCES copies(id),
    checked_out_on DATE NOT NULL,
    due_date DATE NOT NULL,
    returned_on DATE,
    renewals INTEGER NOT NULL DEFAULT 0,
    fine INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS holds (
    id SERIAL PRIMARY KEY,
    title_id INTEGER NOT NULL REFERENCES titles(id),
    patron_id INTEGER NOT NULL REFERENCES patrons(id),
    status TEXT NOT NULL,
    copy_id INTEGER REFERENCES copies(id),
    fulfilled_copy_id INTEGER REFERENCES copies(id),
    notified BOOLEAN NOT NULL DEFAULT false,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS payments (
    id SERIAL PRIMARY KEY,
    patron_id INTEGER NOT NULL REFERENCES patrons(id),
    amount INTEGER NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS tokens (
    token_sha256 TEXT PRIMARY KEY,
    staff_id INTEGER REFERENCES staff(id),
    patron_id INTEGER REFERENCES patrons(id),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS loans_patron_idx ON loans (patron_id, id);
CREATE INDEX IF NOT EXISTS loans_copy_idx ON loans (copy_id) WHERE returned_on IS NULL;
CREATE INDEX IF NOT EXISTS holds_title_idx ON holds (title_id, status, id);
CREATE INDEX IF NOT EXISTS holds_patron_idx ON holds (patron_id, id);
CREATE INDEX IF NOT EXISTS copies_title_idx ON copies (title_id, id);
"""


# scrypt (N=32768, r=8) needs 32 MiB per hash: bound how many run at once to keep memory low.
_hash_slots = threading.BoundedSemaphore(int(os.environ.get("HASH_CONCURRENCY", "3")))


def hash_password(password: str) -> str:
    with _hash_slots:
        return generate_password_hash(password, method="scrypt")


def verify_password(stored: str, password: str) -> bool:
    try:
        with _hash_slots:
            return check_password_hash(stored, password)
    except Exception:  # malformed stored hash, or a password that is not valid Unicode text
        return False


_DUMMY_HASH: str | None = None


def init_db() -> None:
    global pool, _DUMMY_HASH
    pool = ConnectionPool(
        _conninfo(), min_size=1, max_size=int(os.environ.get("DB_POOL_SIZE", "12")),
        kwargs={"row_factory": dict_row}, open=True, timeout=30,
    )
    with pool.connection() as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (LOCK_KEY + 1,))
        try:
            conn.execute(SCHEMA)
            conn.commit()
            username = os.environ.get("LIBRARY_ADMIN_USERNAME")
            password = os.environ.get("LIBRARY_ADMIN_PASSWORD")
            if username and password:
                exists = conn.execute("SELECT 1 FROM staff WHERE username = %s", (username,)).fetchone()
                if not exists:
                    conn.execute(
                        "INSERT INTO staff (username, password_hash) VALUES (%s, %s) ON CONFLICT (username) DO NOTHING",
                        (username, hash_password(password)),
                    )
                conn.commit()
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (LOCK_KEY + 1,))
            conn.commit()
    _DUMMY_HASH = hash_password(secrets.token_hex(16))


class Tx:
    """One transaction; write=True serialises it behind the global advisory lock."""

    def __init__(self, write: bool = False):
        self.write = write

    def __enter__(self):
        self._ctx = pool.connection()
        self.conn = self._ctx.__enter__()
        if self.write:
            self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        return self.conn

    def __exit__(self, exc_type, exc, tb):
        return self._ctx.__exit__(exc_type, exc, tb)


# ---------------------------------------------------------------------------------------------
# Request helpers


def read_body() -> dict:
    raw = request.get_data(cache=True)  # raises 413 above MAX_CONTENT_LENGTH
    if len(raw) > MAX_BODY:
        raise ApiError(413, "payload_too_large", "the body is larger than 1 MiB")
    try:
        text = raw.decode("utf-8")
        data = json.loads(text, parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ApiError(422, "validation_error", "the body must be a JSON object", ["body"])
    if not isinstance(data, dict):
        raise ApiError(422, "validation_error", "the body must be a JSON object", ["body"])
    if _depth(data, 0) > MAX_DEPTH:
        raise ApiError(422, "validation_error", "the body is nested too deeply", ["body"])
    return data


def _reject_constant(name):
    raise ValueError(name)


def _depth(value, level: int) -> int:
    if level > MAX_DEPTH + 1:
        return level
    if isinstance(value, dict):
        return max([_depth(v, level + 1) for v in value.values()] or [level + 1])
    if isinstance(value, list):
        return max([_depth(v, level + 1) for v in value] or [level + 1])
    return level


def _encodable(s: str) -> bool:
    try:
        s.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


class Fields:
    """Collects invalid field names, then raises one 422 naming all of them."""

    def __init__(self, body: dict):
        self.body = body
        self.bad: list[str] = []

    def fail(self, name: str) -> None:
        if name not in self.bad:
            self.bad.append(name)

    def string(self, name: str, *, pattern=None, min_len=None, max_len=None, non_blank=False,
               no_control=False, required=True):
        value = self.body.get(name)
        if value is None:
            if required:
                self.fail(name)
            return None
        if not isinstance(value, str) or not _encodable(value):
            self.fail(name)
            return None
        if pattern is not None and not pattern.fullmatch(value):
            self.fail(name)
            return None
        if min_len is not None and len(value) < min_len:
            self.fail(name)
            return None
        if max_len is not None and len(value) > max_len:
            self.fail(name)
            return None
        if non_blank and not value.strip():
            self.fail(name)
            return None
        if no_control and CONTROL_RE.search(value):
            self.fail(name)
            return None
        return value

    def integer(self, name: str, *, minimum=None, required=True):
        value = self.body.get(name)
        if value is None:
            if required:
                self.fail(name)
            return None
        if not isinstance(value, int) or isinstance(value, bool):
            self.fail(name)
            return None
        if minimum is not None and value < minimum:
            self.fail(name)
            return None
        return value

    def day(self, name: str = "date"):
        value = self.string(name, pattern=DATE_RE)
        if value is None:
            return None
        try:
            return date.fromisoformat(value)
        except ValueError:
            self.fail(name)
            return None

    def check(self) -> None:
        if self.bad:
            raise ApiError(422, "validation_error", "invalid or missing fields: " + ", ".join(self.bad), self.bad)


def path_id(raw: str, what: str) -> int:
    if not raw.isascii() or not raw.isdigit() or len(raw) > 10:
        raise not_found(what)
    value = int(raw)
    if value < 1 or value > INT_MAX:
        raise not_found(what)
    return value


# ---------------------------------------------------------------------------------------------
# Authentication

_token_cache: dict[str, tuple[str, int | None, int | None]] = {}
_token_lock = threading.Lock()


class Caller:
    def __init__(self, role: str, staff_id: int | None, patron_id: int | None):
        self.role = role
        self.staff_id = staff_id
        self.patron_id = patron_id

    @property
    def is_staff(self) -> bool:
        return self.role == "staff"


def authenticate() -> Caller:
    header = request.headers.get("Authorization", "")
    parts = header.split(None, 1)
    if len(parts) != 2 or parts[0].lower() != "bearer" or not parts[1].strip():
        raise unauthorized()
    token = parts[1].strip()
    digest = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
    with _token_lock:
        cached = _token_cache.get(digest)
    if cached is None:
        with Tx() as conn:
            row = conn.execute("SELECT staff_id, patron_id FROM tokens WHERE token_sha256 = %s", (digest,)).fetchone()
        if row is None:
            raise unauthorized()
        cached = ("staff" if row["staff_id"] is not None else "patron", row["staff_id"], row["patron_id"])
        with _token_lock:
            _token_cache[digest] = cached
    return Caller(*cached)


def require_staff(caller: Caller) -> None:
    if not caller.is_staff:
        raise forbidden()


# ---------------------------------------------------------------------------------------------
# Serialisation


def iso_ts(value: datetime) -> str:
    return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def iso_day(value: date | None) -> str | None:
    return value.isoformat() if value is not None else None


def patron_json(row) -> dict:
    return {
        "id": row["id"],
        "card_number": row["card_number"],
        "name": row["name"],
        "email": row["email"],
        "category": row["category"],
        "fines_owed": row["fines_owed"],
        "blocked": row["fines_owed"] > BLOCK_ABOVE,
        "created_at": iso_ts(row["created_at"]),
    }


def copy_json(row) -> dict:
    return {"id": row["id"], "barcode": row["barcode"], "title_id": row["title_id"], "status": row["status"]}


LOAN_SELECT = """
SELECT l.id, l.patron_id, l.copy_id, l.checked_out_on, l.due_date, l.returned_on, l.renewals, l.fine,
       c.barcode, c.title_id
FROM loans l JOIN copies c ON c.id = l.copy_id
"""


def loan_json(row) -> dict:
    return {
        "id": row["id"],
        "patron_id": row["patron_id"],
        "barcode": row["barcode"],
        "title_id": row["title_id"],
        "checked_out_on": iso_day(row["checked_out_on"]),
        "due_date": iso_day(row["due_date"]),
        "renewals": row["renewals"],
        "returned_on": iso_day(row["returned_on"]),
        "fine": row["fine"],
    }


HOLD_SELECT = """
SELECT h.id, h.title_id, h.patron_id, h.status, h.copy_id, h.notified,
       CASE WHEN h.status = 'ready' THEN c.barcode WHEN h.status = 'fulfilled' THEN fc.barcode END AS barcode,
       CASE WHEN h.status = 'waiting' THEN
           (SELECT count(*) FROM holds q WHERE q.title_id = h.title_id AND q.status = 'waiting' AND q.id <= h.id)
       END AS position
FROM holds h
LEFT JOIN copies c ON c.id = h.copy_id
LEFT JOIN copies fc ON fc.id = h.fulfilled_copy_id
"""


def hold_json(row) -> dict:
    return {
        "id": row["id"],
        "title_id": row["title_id"],
        "patron_id": row["patron_id"],
        "status": row["status"],
        "position": int(row["position"]) if row["position"] is not None else None,
        "barcode": row["barcode"],
        "notified": bool(row["notified"]),
    }


def fetch_loan(conn, loan_id: int):
    return conn.execute(LOAN_SELECT + " WHERE l.id = %s", (loan_id,)).fetchone()


def fetch_hold(conn, hold_id: int):
    return conn.execute(HOLD_SELECT + " WHERE h.id = %s", (hold_id,)).fetchone()


def fetch_copy_by_id(conn, copy_id: int):
    return conn.execute("SELECT id, barcode, title_id, status FROM copies WHERE id = %s", (copy_id,)).fetchone()


# ---------------------------------------------------------------------------------------------
# Mailer


def send_hold_ready(conn, notice: dict) -> None:
    """Sends the hold-ready email once; marks the hold notified when the relay answers 202."""
    base = os.environ.get("MAILER_URL", "").rstrip("/")
    if not base:
        return
    payload = {
        "to": notice["email"],
        "subject": f"Hold ready: {notice['title']}",
        "text": (
            f"Hello {notice['name']},\n\nthe title \"{notice['title']}\" you placed a hold on is waiting for you "
            f"on the hold shelf: copy {notice['barcode']}.\n\nYour library"
        ),
    }
    req = urllib.request.Request(
        base + "/messages",
        data=json.dumps(payload).encode("utf-8"),
        headers={"Content-Type": "application/json", "Accept": "application/json"},
        method="POST",
    )
    accepted = False
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            accepted = resp.status == 202
            resp.read()
    except urllib.error.HTTPError as err:
        accepted = err.code == 202
    except Exception:
        accepted = False
    if accepted:
        conn.execute("UPDATE holds SET notified = true WHERE id = %s", (notice["hold_id"],))
        conn.commit()


def shelve_copy(conn, copy_id: int, title_id: int) -> dict | None:
    """Gives a copy that just came free to the oldest waiting hold of its title, or makes it available."""
    hold = conn.execute(
        "SELECT id, patron_id FROM holds WHERE title_id = %s AND status = 'waiting' ORDER BY id LIMIT 1",
        (title_id,),
    ).fetchone()
    if hold is None:
        conn.execute("UPDATE copies SET status = 'available' WHERE id = %s", (copy_id,))
        return None
    conn.execute(
        "UPDATE holds SET status = 'ready', copy_id = %s, notified = false WHERE id = %s", (copy_id, hold["id"])
    )
    conn.execute("UPDATE copies SET status = 'on_hold_shelf' WHERE id = %s", (copy_id,))
    info = conn.execute(
        """SELECT p.email, p.name, t.title, c.barcode FROM patrons p, titles t, copies c
           WHERE p.id = %s AND t.id = %s AND c.id = %s""",
        (hold["patron_id"], title_id, copy_id),
    ).fetchone()
    return {"hold_id": hold["id"], **info}


# ---------------------------------------------------------------------------------------------
# Routes: health and accounts


@app.get("/health")
def health():
    return json_response({"status": "ok"})


@app.post("/auth/token")
def login():
    body = read_body()
    f = Fields(body)
    username = body.get("username")
    password = body.get("password")
    if not isinstance(username, str):
        f.fail("username")
    if not isinstance(password, str):
        f.fail("password")
    f.check()
    staff_id = patron_id = None
    stored = None
    if _encodable(username) and "\x00" not in username:
        with Tx() as conn:
            row = conn.execute("SELECT id, password_hash FROM staff WHERE username = %s", (username,)).fetchone()
            if row is not None:
                staff_id, stored = row["id"], row["password_hash"]
            else:
                row = conn.execute(
                    "SELECT id, password_hash FROM patrons WHERE card_number = %s", (username,)
                ).fetchone()
                if row is not None:
                    patron_id, stored = row["id"], row["password_hash"]
    if stored is None:
        verify_password(_DUMMY_HASH, password)
        raise ApiError(401, "unauthorized", "wrong username or password")
    if not verify_password(stored, password):
        raise ApiError(401, "unauthorized", "wrong username or password")
    token = secrets.token_urlsafe(32)
    digest = hashlib.sha256(token.encode("utf-8")).hexdigest()
    with Tx() as conn:
        conn.execute(
            "INSERT INTO tokens (token_sha256, staff_id, patron_id) VALUES (%s, %s, %s)",
            (digest, staff_id, patron_id),
        )
    role = "staff" if staff_id is not None else "patron"
    with _token_lock:
        _token_cache[digest] = (role, staff_id, patron_id)
    return json_response({"token": token, "role": role, "patron_id": patron_id})


@app.post("/staff")
def create_staff():
    caller = authenticate()
    require_staff(caller)
    f = Fields(read_body())
    username = f.string("username", pattern=USERNAME_RE)
    password = f.string("password", min_len=8, max_len=128)
    f.check()
    password_hash = hash_password(password)
    with Tx(write=True) as conn:
        if conn.execute("SELECT 1 FROM staff WHERE username = %s", (username,)).fetchone():
            raise conflict("username_taken", "this username is taken")
        row = conn.execute(
            "INSERT INTO staff (username, password_hash) VALUES (%s, %s) RETURNING id, username, created_at",
            (username, password_hash),
        ).fetchone()
    return json_response({"id": row["id"], "username": row["username"], "created_at": iso_ts(row["created_at"])}, 201)


# ---------------------------------------------------------------------------------------------
# Patrons


def visible_patron(conn, caller: Caller, raw_id: str):
    patron_id = path_id(raw_id, "patron")
    if not caller.is_staff and caller.patron_id != patron_id:
        raise not_found("patron")
    row = conn.execute("SELECT * FROM patrons WHERE id = %s", (patron_id,)).fetchone()
    if row is None:
        raise not_found("patron")
    return row


@app.post("/patrons")
def create_patron():
    caller = authenticate()
    require_staff(caller)
    f = Fields(read_body())
    card_number = f.string("card_number", pattern=CARD_RE)
    name = f.string("name", max_len=100, non_blank=True, no_control=True)
    email = f.string("email", max_len=254, pattern=EMAIL_RE, no_control=True)
    category = f.string("category")
    if category is not None and category not in CATEGORY_RULES:
        f.fail("category")
    password = f.string("password", min_len=8, max_len=128)
    f.check()
    password_hash = hash_password(password)
    with Tx(write=True) as conn:
        if conn.execute("SELECT 1 FROM patrons WHERE card_number = %s", (card_number,)).fetchone():
            raise conflict("card_number_taken", "this card number is taken")
        row = conn.execute(
            """INSERT INTO patrons (card_number, name, email, category, password_hash, fines_owed)
               VALUES (%s, %s, %s, %s, %s, 0) RETURNING *""",
            (card_number, name, email, category, password_hash),
        ).fetchone()
    return json_response(patron_json(row), 201)


@app.get("/patrons")
def list_patrons():
    caller = authenticate()
    require_staff(caller)
    clauses, params = [], []
    for key in ("card_number", "email"):
        if key in request.args:
            value = request.args.get(key)
            if "\x00" in value or not _encodable(value):
                return json_response({"items": []})
            clauses.append(f"{key} = %s")
            params.append(value)
    sql = "SELECT * FROM patrons"
    if clauses:
        sql += " WHERE " + " AND ".join(clauses)
    sql += " ORDER BY id"
    with Tx() as conn:
        rows = conn.execute(sql, params).fetchall()
    return json_response({"items": [patron_json(r) for r in rows]})


@app.get("/patrons/<raw_id>")
def get_patron(raw_id):
    caller = authenticate()
    with Tx() as conn:
        row = visible_patron(conn, caller, raw_id)
    return json_response(patron_json(row))


@app.get("/patrons/<raw_id>/loans")
def list_patron_loans(raw_id):
    caller = authenticate()
    with Tx() as conn:
        patron = visible_patron(conn, caller, raw_id)
        rows = conn.execute(LOAN_SELECT + " WHERE l.patron_id = %s ORDER BY l.id", (patron["id"],)).fetchall()
    return json_response({"items": [loan_json(r) for r in rows]})


@app.get("/patrons/<raw_id>/holds")
def list_patron_holds(raw_id):
    caller = authenticate()
    with Tx() as conn:
        patron = visible_patron(conn, caller, raw_id)
        rows = conn.execute(HOLD_SELECT + " WHERE h.patron_id = %s ORDER BY h.id", (patron["id"],)).fetchall()
    return json_response({"items": [hold_json(r) for r in rows]})


@app.post("/patrons/<raw_id>/payments")
def pay_fines(raw_id):
    caller = authenticate()
    require_staff(caller)
    patron_id = path_id(raw_id, "patron")
    with Tx() as conn:
        if conn.execute("SELECT 1 FROM patrons WHERE id = %s", (patron_id,)).fetchone() is None:
            raise not_found("patron")
    f = Fields(read_body())
    amount = f.integer("amount", minimum=1)
    f.check()
    with Tx(write=True) as conn:
        row = conn.execute("SELECT fines_owed FROM patrons WHERE id = %s", (patron_id,)).fetchone()
        if amount > row["fines_owed"]:
            raise conflict("overpayment", f"the patron owes only {row['fines_owed']} cents")
        owed = conn.execute(
            "UPDATE patrons SET fines_owed = fines_owed - %s WHERE id = %s RETURNING fines_owed",
            (amount, patron_id),
        ).fetchone()["fines_owed"]
        conn.execute("INSERT INTO payments (patron_id, amount) VALUES (%s, %s)", (patron_id, amount))
    return json_response({"patron_id": patron_id, "amount": amount, "fines_owed": owed}, 201)


# ---------------------------------------------------------------------------------------------
# Titles and copies


def title_json(conn, row) -> dict:
    copies = conn.execute(
        "SELECT id, barcode, title_id, status FROM copies WHERE title_id = %s ORDER BY id", (row["id"],)
    ).fetchall()
    return {"id": row["id"], "title": row["title"], "author": row["author"], "copies": [copy_json(c) for c in copies]}


@app.post("/titles")
def create_title():
    caller = authenticate()
    require_staff(caller)
    f = Fields(read_body())
    title = f.string("title", max_len=200, non_blank=True, no_control=True)
    author = f.string("author", max_len=100, non_blank=True, no_control=True)
    f.check()
    with Tx(write=True) as conn:
        row = conn.execute(
            "INSERT INTO titles (title, author) VALUES (%s, %s) RETURNING id, title, author", (title, author)
        ).fetchone()
    return json_response({"id": row["id"], "title": row["title"], "author": row["author"], "copies": []}, 201)


@app.get("/titles/<raw_id>")
def get_title(raw_id):
    authenticate()
    title_id = path_id(raw_id, "title")
    with Tx() as conn:
        row = conn.execute("SELECT id, title, author FROM titles WHERE id = %s", (title_id,)).fetchone()
        if row is None:
            raise not_found("title")
        payload = title_json(conn, row)
    return json_response(payload)


@app.post("/titles/<raw_id>/copies")
def add_copy(raw_id):
    caller = authenticate()
    require_staff(caller)
    title_id = path_id(raw_id, "title")
    with Tx() as conn:
        if conn.execute("SELECT 1 FROM titles WHERE id = %s", (title_id,)).fetchone() is None:
            raise not_found("title")
    f = Fields(read_body())
    barcode = f.string("barcode", pattern=BARCODE_RE)
    f.check()
    with Tx(write=True) as conn:
        if conn.execute("SELECT 1 FROM copies WHERE barcode = %s", (barcode,)).fetchone():
            raise conflict("barcode_taken", "this barcode is taken")
        row = conn.execute(
            "INSERT INTO copies (title_id, barcode, status) VALUES (%s, %s, 'available') RETURNING *",
            (title_id, barcode),
        ).fetchone()
    return json_response(copy_json(row), 201)


@app.get("/titles/<raw_id>/holds")
def list_title_holds(raw_id):
    caller = authenticate()
    require_staff(caller)
    title_id = path_id(raw_id, "title")
    with Tx() as conn:
        if conn.execute("SELECT 1 FROM titles WHERE id = %s", (title_id,)).fetchone() is None:
            raise not_found("title")
        rows = conn.execute(
            HOLD_SELECT + " WHERE h.title_id = %s AND h.status = 'waiting' ORDER BY h.id", (title_id,)
        ).fetchall()
    return json_response({"items": [hold_json(r) for r in rows]})


@app.get("/copies/<barcode>")
def get_copy(barcode):
    authenticate()
    if "\x00" in barcode or not _encodable(barcode):
        raise not_found("copy")
    with Tx() as conn:
        row = conn.execute("SELECT id, barcode, title_id, status FROM copies WHERE barcode = %s", (barcode,)).fetchone()
    if row is None:
        raise not_found("copy")
    return json_response(copy_json(row))


# ---------------------------------------------------------------------------------------------
# Loans


def add_days(day: date, days: int, f: Fields, field: str = "date") -> date:
    try:
        return day + timedelta(days=days)
    except OverflowError:
        raise ApiError(422, "validation_error", "the date is out of range", [field])


@app.post("/checkouts")
def checkout():
    caller = authenticate()
    require_staff(caller)
    f = Fields(read_body())
    card_number = f.string("card_number", pattern=CARD_RE)
    barcode = f.string("barcode", pattern=BARCODE_RE)
    day = f.day("date")
    f.check()
    with Tx(write=True) as conn:
        patron = conn.execute("SELECT * FROM patrons WHERE card_number = %s", (card_number,)).fetchone()
        if patron is None:
            raise not_found("patron")
        copy = conn.execute("SELECT * FROM copies WHERE barcode = %s", (barcode,)).fetchone()
        if copy is None:
            raise not_found("copy")
        rules = CATEGORY_RULES[patron["category"]]
        due = add_days(day, rules["loan_days"], f)
        if patron["fines_owed"] > BLOCK_ABOVE:
            raise conflict("patron_blocked", "the patron owes more than 500 cents in fines")
        if copy["status"] == "on_loan":
            raise conflict("copy_unavailable", "the copy is on loan")
        shelf_hold = None
        if copy["status"] == "on_hold_shelf":
            shelf_hold = conn.execute(
                "SELECT id, patron_id FROM holds WHERE copy_id = %s AND status = 'ready' ORDER BY id LIMIT 1",
                (copy["id"],),
            ).fetchone()
            if shelf_hold is not None and shelf_hold["patron_id"] != patron["id"]:
                raise conflict("copy_on_hold", "the copy is on the hold shelf for another patron")
        current = conn.execute(
            "SELECT count(*) AS n FROM loans WHERE patron_id = %s AND returned_on IS NULL", (patron["id"],)
        ).fetchone()["n"]
        if current >= rules["max_loans"]:
            raise conflict("loan_limit_reached", "the patron has reached the loan limit of the category")
        if shelf_hold is not None:
            conn.execute(
                "UPDATE holds SET status = 'fulfilled', copy_id = NULL, fulfilled_copy_id = %s WHERE id = %s",
                (copy["id"], shelf_hold["id"]),
            )
        else:
            waiting = conn.execute(
                """SELECT id FROM holds WHERE patron_id = %s AND title_id = %s AND status = 'waiting'
                   ORDER BY id LIMIT 1""",
                (patron["id"], copy["title_id"]),
            ).fetchone()
            if waiting is not None:
                conn.execute(
                    "UPDATE holds SET status = 'fulfilled', fulfilled_copy_id = %s WHERE id = %s",
                    (copy["id"], waiting["id"]),
                )
        conn.execute("UPDATE copies SET status = 'on_loan' WHERE id = %s", (copy["id"],))
        loan_id = conn.execute(
            """INSERT INTO loans (patron_id, copy_id, checked_out_on, due_date, returned_on, renewals, fine)
               VALUES (%s, %s, %s, %s, NULL, 0, 0) RETURNING id""",
            (patron["id"], copy["id"], day, due),
        ).fetchone()["id"]
        loan = fetch_loan(conn, loan_id)
    return json_response(loan_json(loan), 201)


def visible_loan(conn, caller: Caller, raw_id: str):
    loan_id = path_id(raw_id, "loan")
    loan = fetch_loan(conn, loan_id)
    if loan is None or (not caller.is_staff and loan["patron_id"] != caller.patron_id):
        raise not_found("loan")
    return loan


@app.get("/loans/<raw_id>")
def get_loan(raw_id):
    caller = authenticate()
    with Tx() as conn:
        loan = visible_loan(conn, caller, raw_id)
    return json_response(loan_json(loan))


@app.post("/loans/<raw_id>/renew")
def renew(raw_id):
    caller = authenticate()
    with Tx() as conn:
        loan_id = visible_loan(conn, caller, raw_id)["id"]
    f = Fields(read_body())
    day = f.day("date")
    f.check()
    with Tx(write=True) as conn:
        loan = fetch_loan(conn, loan_id)
        patron = conn.execute("SELECT * FROM patrons WHERE id = %s", (loan["patron_id"],)).fetchone()
        rules = CATEGORY_RULES[patron["category"]]
        due = add_days(day, rules["loan_days"], f)
        if loan["returned_on"] is not None:
            raise conflict("loan_returned", "the loan is not current")
        if patron["fines_owed"] > BLOCK_ABOVE:
            raise conflict("patron_blocked", "the patron owes more than 500 cents in fines")
        if loan["renewals"] >= MAX_RENEWALS:
            raise conflict("renewal_limit", "the loan was already renewed twice")
        if day > loan["due_date"]:
            raise conflict("loan_overdue", "the loan is overdue")
        waiting = conn.execute(
            "SELECT 1 FROM holds WHERE title_id = %s AND status = 'waiting' AND patron_id <> %s LIMIT 1",
            (loan["title_id"], loan["patron_id"]),
        ).fetchone()
        if waiting is not None:
            raise conflict("on_hold", "another patron is waiting for this title")
        conn.execute(
            "UPDATE loans SET due_date = %s, renewals = renewals + 1 WHERE id = %s", (due, loan_id)
        )
        loan = fetch_loan(conn, loan_id)
    return json_response(loan_json(loan))


@app.post("/returns")
def checkin():
    caller = authenticate()
    require_staff(caller)
    f = Fields(read_body())
    barcode = f.string("barcode", pattern=BARCODE_RE)
    day = f.day("date")
    f.check()
    with Tx(write=True) as conn:
        copy = conn.execute("SELECT * FROM copies WHERE barcode = %s", (barcode,)).fetchone()
        if copy is None:
            raise not_found("copy")
        loan = conn.execute(
            "SELECT * FROM loans WHERE copy_id = %s AND returned_on IS NULL ORDER BY id LIMIT 1", (copy["id"],)
        ).fetchone()
        if loan is None:
            raise conflict("not_on_loan", "the copy has no current loan")
        days_late = (day - loan["due_date"]).days
        fine = min(FINE_PER_DAY * days_late, FINE_CAP) if days_late > 0 else 0
        conn.execute("UPDATE loans SET returned_on = %s, fine = %s WHERE id = %s", (day, fine, loan["id"]))
        if fine:
            conn.execute("UPDATE patrons SET fines_owed = fines_owed + %s WHERE id = %s", (fine, loan["patron_id"]))
        notice = shelve_copy(conn, copy["id"], copy["title_id"])
        conn.commit()
        if notice is not None:
            send_hold_ready(conn, notice)
        loan_row = fetch_loan(conn, loan["id"])
        copy_row = fetch_copy_by_id(conn, copy["id"])
        hold_row = fetch_hold(conn, notice["hold_id"]) if notice is not None else None
    return json_response({
        "loan": loan_json(loan_row),
        "copy": copy_json(copy_row),
        "hold": hold_json(hold_row) if hold_row is not None else None,
    })


# ---------------------------------------------------------------------------------------------
# Holds


@app.post("/holds")
def place_hold():
    caller = authenticate()
    body = read_body()
    f = Fields(body)
    raw_patron = body.get("patron_id")
    if not caller.is_staff and raw_patron is not None:
        if isinstance(raw_patron, int) and not isinstance(raw_patron, bool) and raw_patron != caller.patron_id:
            raise forbidden("a patron may place holds only for themselves")
    title_id = f.integer("title_id")
    patron_id = f.integer("patron_id", required=caller.is_staff)
    f.check()
    if not caller.is_staff:
        patron_id = caller.patron_id
    with Tx(write=True) as conn:
        title = None
        if 1 <= title_id <= INT_MAX:
            title = conn.execute("SELECT id FROM titles WHERE id = %s", (title_id,)).fetchone()
        if title is None:
            raise not_found("title")
        patron = None
        if 1 <= patron_id <= INT_MAX:
            patron = conn.execute("SELECT * FROM patrons WHERE id = %s", (patron_id,)).fetchone()
        if patron is None:
            raise not_found("patron")
        if patron["fines_owed"] > BLOCK_ABOVE:
            raise conflict("patron_blocked", "the patron owes more than 500 cents in fines")
        on_loan = conn.execute(
            """SELECT 1 FROM loans l JOIN copies c ON c.id = l.copy_id
               WHERE l.patron_id = %s AND c.title_id = %s AND l.returned_on IS NULL LIMIT 1""",
            (patron_id, title_id),
        ).fetchone()
        if on_loan is not None:
            raise conflict("already_on_loan", "the patron has this title on loan")
        held = conn.execute(
            "SELECT 1 FROM holds WHERE patron_id = %s AND title_id = %s AND status IN ('waiting', 'ready') LIMIT 1",
            (patron_id, title_id),
        ).fetchone()
        if held is not None:
            raise conflict("already_on_hold", "the patron already holds this title")
        hold_id = conn.execute(
            "INSERT INTO holds (title_id, patron_id, status, notified) VALUES (%s, %s, 'waiting', false) RETURNING id",
            (title_id, patron_id),
        ).fetchone()["id"]
        hold = fetch_hold(conn, hold_id)
    return json_response(hold_json(hold), 201)


def visible_hold(conn, caller: Caller, raw_id: str):
    hold_id = path_id(raw_id, "hold")
    hold = fetch_hold(conn, hold_id)
    if hold is None or (not caller.is_staff and hold["patron_id"] != caller.patron_id):
        raise not_found("hold")
    return hold


@app.get("/holds/<raw_id>")
def get_hold(raw_id):
    caller = authenticate()
    with Tx() as conn:
        hold = visible_hold(conn, caller, raw_id)
    return json_response(hold_json(hold))


@app.delete("/holds/<raw_id>")
def cancel_hold(raw_id):
    caller = authenticate()
    with Tx() as conn:
        hold_id = visible_hold(conn, caller, raw_id)["id"]
    with Tx(write=True) as conn:
        hold = conn.execute("SELECT * FROM holds WHERE id = %s", (hold_id,)).fetchone()
        if hold["status"] not in ("waiting", "ready"):
            raise conflict("hold_closed", "the hold is already fulfilled or cancelled")
        conn.execute("UPDATE holds SET status = 'cancelled', copy_id = NULL WHERE id = %s", (hold_id,))
        notice = None
        if hold["status"] == "ready" and hold["copy_id"] is not None:
            notice = shelve_copy(conn, hold["copy_id"], hold["title_id"])
        conn.commit()
        if notice is not None:
            send_hold_ready(conn, notice)
    return Response(status=204)


# ---------------------------------------------------------------------------------------------


def main() -> None:
    from waitress import serve

    init_db()
    port = int(os.environ.get("PORT", "8000"))
    serve(app, host="0.0.0.0", port=port, threads=int(os.environ.get("THREADS", "12")),
          max_request_body_size=8 * 1024 * 1024, ident="library-loans")


if __name__ == "__main__":
    main()
