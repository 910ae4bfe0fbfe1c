"""Helpdesk alternate: FastAPI + uvicorn + PostgreSQL (psycopg 3).

All routing goes through one catch-all FastAPI route so that the error precedence
(401, 404, 403, 422, 409), 405 answers and hostile paths are handled in one place.
"""
import base64
import datetime as dt
import hashlib
import hmac
import json
import os
import re
import secrets
import threading
import time
from urllib.parse import parse_qsl

import psycopg
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool
from starlette.concurrency import run_in_threadpool

MAX_BODY = 1048576
MAX_DEPTH = 32
INT32_MAX = 2147483647
SLA_MAX = 31536000
PRIORITIES = ["low", "normal", "high", "urgent"]
STATES = ["new", "open", "pending", "solved", "closed"]
TRANSITIONS = {
    "new": {"open", "pending", "solved", "closed"},
    "open": {"pending", "solved", "closed"},
    "pending": {"open", "solved", "closed"},
    "solved": {"open", "closed"},
    "closed": set(),
}
STOPPED_RES = ("solved", "closed")
EMAIL_RE = re.compile(r"[^\s@]+@(?:[^\s@.]+\.)+[^\s@.]+")
ID_RE = re.compile(r"[0-9]{1,12}")
QINT_RE = re.compile(r"-?[0-9]{1,30}")

pool = None
hash_sem = threading.BoundedSemaphore(4)


class ApiError(Exception):
    def __init__(self, status, code, message, fields=None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.fields = fields


def err(status, code, message, fields=None):
    return ApiError(status, code, message, fields)


def unauthorized():
    return err(401, "unauthorized", "missing or invalid credentials")


def forbidden():
    return err(403, "forbidden", "your role may not do this")


def not_found(what="resource"):
    return err(404, "not_found", f"{what} not found")


def invalid(fields, message="invalid input"):
    return err(422, "validation_error", message, list(dict.fromkeys(fields)))


def error_response(e):
    body = {"error": e.code, "message": e.message}
    if e.status == 422:
        body["fields"] = e.fields or []
    return JSONResponse(body, status_code=e.status)


# ---------------------------------------------------------------- helpers
def now_utc():
    return dt.datetime.now(dt.timezone.utc)


def iso(t):
    if t is None:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.timezone.utc)
    return t.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def storable(s):
    """PostgreSQL text cannot hold NUL or lone surrogates."""
    if "\x00" in s:
        return False
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def is_nonblank(s):
    return isinstance(s, str) and s.strip() != ""


def hash_password(pw):
    salt = secrets.token_bytes(16)
    with hash_sem:
        h = hashlib.scrypt(pw.encode("utf-8", "surrogatepass"), salt=salt, n=2 ** 14, r=8, p=1, dklen=32)
    return "scrypt$16384$8$1$%s$%s" % (base64.b64encode(salt).decode(), base64.b64encode(h).decode())


def verify_password(pw, stored):
    try:
        _, n, r, p, salt, h = stored.split("$")
        salt = base64.b64decode(salt)
        h = base64.b64decode(h)
        with hash_sem:
            got = hashlib.scrypt(pw.encode("utf-8", "surrogatepass"), salt=salt, n=int(n), r=int(r), p=int(p), dklen=len(h))
        return hmac.compare_digest(got, h)
    except Exception:
        return False


def json_depth_ok(raw):
    """Scan the JSON text; False when arrays/objects nest deeper than MAX_DEPTH."""
    depth = 0
    in_str = False
    esc = False
    for ch in raw:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch == "{" or ch == "[":
            depth += 1
            if depth > MAX_DEPTH:
                return False
        elif ch == "}" or ch == "]":
            depth -= 1
    return True


def _bad_constant(name):
    raise ValueError("invalid constant " + name)


class Ctx:
    def __init__(self, method, params, query_string, headers, raw_body, oversize):
        self.method = method
        self.params = params
        self.headers = headers
        self.raw_body = raw_body
        self.oversize = oversize
        self.query = {}
        for k, v in parse_qsl(query_string, keep_blank_values=True):
            self.query.setdefault(k, []).append(v)
        self.user = None

    def body(self):
        """Parsed JSON body (any JSON value); 413/422 on a bad body."""
        if self.oversize:
            raise err(413, "payload_too_large", "request body larger than 1 MiB")
        try:
            text = self.raw_body.decode("utf-8")
        except UnicodeDecodeError:
            raise invalid([], "body is not valid UTF-8")
        if not json_depth_ok(text):
            raise invalid([], "body nested too deeply")
        try:
            return json.loads(text, parse_constant=_bad_constant)
        except (ValueError, RecursionError):
            raise invalid([], "body is not valid JSON")

    def obj(self):
        b = self.body()
        if not isinstance(b, dict):
            raise invalid([], "body must be a JSON object")
        return b

    def q(self, name):
        """Single query value or None; more than one value is invalid."""
        vals = self.query.get(name)
        if vals is None:
            return None
        if len(vals) != 1:
            return False
        return vals[0]


# ---------------------------------------------------------------- database
SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    id SERIAL PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('admin','agent','customer')),
    password_hash TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS tickets (
    id SERIAL PRIMARY KEY,
    title TEXT NOT NULL,
    priority TEXT NOT NULL CHECK (priority IN ('low','normal','high','urgent')),
    state TEXT NOT NULL CHECK (state IN ('new','open','pending','solved','closed')),
    customer_id INTEGER NOT NULL REFERENCES users(id),
    assignee_id INTEGER REFERENCES users(id),
    created_at TIMESTAMPTZ NOT NULL,
    first_response_at TIMESTAMPTZ,
    first_response_due_at TIMESTAMPTZ,
    resolution_due_at TIMESTAMPTZ
);
CREATE TABLE IF NOT EXISTS articles (
    id SERIAL PRIMARY KEY,
    ticket_id INTEGER NOT NULL REFERENCES tickets(id),
    author_id INTEGER NOT NULL REFERENCES users(id),
    body TEXT NOT NULL,
    internal BOOLEAN NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS sla_policies (
    priority TEXT PRIMARY KEY CHECK (priority IN ('low','normal','high','urgent')),
    first_response_s INTEGER NOT NULL CHECK (first_response_s BETWEEN 1 AND 31536000),
    resolution_s INTEGER NOT NULL CHECK (resolution_s BETWEEN 1 AND 31536000)
);
CREATE TABLE IF NOT EXISTS sessions (
    token_hash TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id),
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX IF NOT EXISTS articles_ticket_idx ON articles(ticket_id, id);
CREATE INDEX IF NOT EXISTS tickets_customer_idx ON tickets(customer_id);
"""


def database_url():
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    return "postgresql://%s:%s@%s:%s/%s" % (
        os.environ.get("DB_USERNAME", "postgres"), os.environ.get("DB_PASSWORD", ""),
        os.environ.get("DB_HOST", "127.0.0.1"), os.environ.get("DB_PORT", "5432"),
        os.environ.get("DB_NAME", "postgres"))


def init_db():
    global pool
    url = database_url()
    deadline = time.time() + 120
    while True:
        try:
            with psycopg.connect(url, autocommit=False) as conn:
                with conn.cursor() as cur:
                    cur.execute("SELECT pg_advisory_xact_lock(7243911)")
                    cur.execute(SCHEMA)
                    email = os.environ.get("ADMIN_EMAIL")
                    pw = os.environ.get("ADMIN_PASSWORD")
                    if email and pw:
                        email = email.lower()
                        cur.execute("SELECT 1 FROM users WHERE email=%s", (email,))
                        if cur.fetchone() is None:
                            cur.execute(
                                "INSERT INTO users(email,name,role,password_hash,created_at) "
                                "VALUES (%s,'Administrator','admin',%s,%s) ON CONFLICT (email) DO NOTHING",
                                (email, hash_password(pw), now_utc()))
                conn.commit()
            break
        except psycopg.OperationalError:
            if time.time() > deadline:
                raise
            time.sleep(1)
    pool = ConnectionPool(url, min_size=2, max_size=10, kwargs={"row_factory": dict_row}, open=True)
    pool.wait(timeout=60)


# ---------------------------------------------------------------- serialisers
def user_json(u):
    return {"id": u["id"], "email": u["email"], "name": u["name"], "role": u["role"],
            "created_at": iso(u["created_at"])}


def fr_breached(t, now):
    return (t["first_response_due_at"] is not None and t["first_response_at"] is None
            and now > t["first_response_due_at"])


def res_breached(t, now):
    return (t["resolution_due_at"] is not None and t["state"] not in STOPPED_RES
            and now > t["resolution_due_at"])


def ticket_json(t, now=None):
    now = now or now_utc()
    return {
        "id": t["id"], "title": t["title"], "priority": t["priority"], "state": t["state"],
        "customer_id": t["customer_id"], "assignee_id": t["assignee_id"],
        "created_at": iso(t["created_at"]), "first_response_at": iso(t["first_response_at"]),
        "first_response_due_at": iso(t["first_response_due_at"]),
        "resolution_due_at": iso(t["resolution_due_at"]),
        "first_response_breached": fr_breached(t, now),
        "resolution_breached": res_breached(t, now),
    }


def article_json(a):
    return {"id": a["id"], "ticket_id": a["ticket_id"], "author_id": a["author_id"],
            "body": a["body"], "internal": a["internal"], "created_at": iso(a["created_at"])}


# ---------------------------------------------------------------- auth
def authenticate(ctx, cur):
    h = ctx.headers.get("authorization")
    if not h:
        raise unauthorized()
    parts = h.split(" ", 1)
    if len(parts) != 2 or parts[0].lower() != "bearer" or not parts[1].strip():
        raise unauthorized()
    token = parts[1].strip()
    th = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
    cur.execute("SELECT u.* FROM sessions s JOIN users u ON u.id=s.user_id WHERE s.token_hash=%s", (th,))
    u = cur.fetchone()
    if u is None:
        raise unauthorized()
    ctx.user = u
    return u


def require_role(u, *roles):
    if u["role"] not in roles:
        raise forbidden()


def parse_paging(ctx, errors):
    limit, offset = 100, 0
    v = ctx.q("limit")
    if v is not None:
        if v is False or not re.fullmatch(r"[0-9]{1,4}", v) or not 1 <= int(v) <= 100:
            errors.append("limit")
        else:
            limit = int(v)
    v = ctx.q("offset")
    if v is not None:
        if v is False or not re.fullmatch(r"[0-9]{1,18}", v):
            errors.append("offset")
        else:
            offset = int(v)
    return limit, offset


def parse_qint(ctx, name, errors):
    """Integer query filter: None when absent; int (possibly out of any id range)."""
    v = ctx.q(name)
    if v is None:
        return None
    if v is False or not QINT_RE.fullmatch(v):
        errors.append(name)
        return None
    return int(v)


def id_in_range(n):
    return n is not None and 1 <= n <= INT32_MAX


# ---------------------------------------------------------------- account validation
def validate_account(b, with_role):
    errors = []
    email = b.get("email")
    if not (isinstance(email, str) and len(email) <= 254 and EMAIL_RE.fullmatch(email) and storable(email)):
        errors.append("email")
    name = b.get("name")
    if not (is_nonblank(name) and len(name) <= 100 and storable(name)):
        errors.append("name")
    pw = b.get("password")
    if not (isinstance(pw, str) and 8 <= len(pw) <= 128):
        errors.append("password")
    if with_role:
        if b.get("role") not in ("agent", "customer") or not isinstance(b.get("role"), str):
            errors.append("role")
    if errors:
        raise invalid(errors)
    return email.lower(), name, pw


def insert_user(cur, email, name, pw, role):
    cur.execute("SELECT 1 FROM users WHERE email=%s", (email,))
    if cur.fetchone():
        raise err(409, "conflict", "email already taken")
    ph = hash_password(pw)
    try:
        cur.execute("SAVEPOINT ins_user")
        cur.execute("INSERT INTO users(email,name,role,password_hash,created_at) VALUES (%s,%s,%s,%s,%s) RETURNING *",
                    (email, name, role, ph, now_utc()))
        u = cur.fetchone()
        cur.execute("RELEASE SAVEPOINT ins_user")
    except psycopg.errors.UniqueViolation:
        cur.execute("ROLLBACK TO SAVEPOINT ins_user")
        raise err(409, "conflict", "email already taken")
    return u


# ---------------------------------------------------------------- handlers
def h_health(ctx, cur):
    return 200, {"status": "ok"}


def h_register(ctx, cur):
    b = ctx.obj()
    email, name, pw = validate_account(b, False)
    u = insert_user(cur, email, name, pw, "customer")
    return 201, user_json(u)


def h_login(ctx, cur):
    b = ctx.obj()
    errors = [f for f in ("email", "password") if not isinstance(b.get(f), str)]
    if errors:
        raise invalid(errors)
    email = b["email"].lower()
    if not storable(email):
        raise unauthorized()
    cur.execute("SELECT * FROM users WHERE email=%s", (email,))
    u = cur.fetchone()
    if u is None or not verify_password(b["password"], u["password_hash"]):
        raise unauthorized()
    token = secrets.token_urlsafe(32)
    cur.execute("INSERT INTO sessions(token_hash,user_id,created_at) VALUES (%s,%s,%s)",
                (hashlib.sha256(token.encode()).hexdigest(), u["id"], now_utc()))
    return 200, {"token": token, "user": user_json(u)}


def h_me(ctx, cur):
    return 200, user_json(authenticate(ctx, cur))


def h_users_list(ctx, cur):
    u = authenticate(ctx, cur)
    require_role(u, "admin")
    errors = []
    role = ctx.q("role")
    if role is not None and role not in ("admin", "agent", "customer"):
        errors.append("role")
    email = ctx.q("email")
    if email is False:
        errors.append("email")
    limit, offset = parse_paging(ctx, errors)
    if errors:
        raise invalid(errors)
    conds, args = [], []
    if role is not None:
        conds.append("role=%s")
        args.append(role)
    if email is not None:
        if not storable(email):
            conds.append("FALSE")
        else:
            conds.append("email=%s")
            args.append(email.lower())
    where = ("WHERE " + " AND ".join(conds)) if conds else ""
    cur.execute(f"SELECT * FROM users {where} ORDER BY id LIMIT %s OFFSET %s", args + [limit, offset])
    return 200, {"items": [user_json(r) for r in cur.fetchall()]}


def h_users_create(ctx, cur):
    u = authenticate(ctx, cur)
    require_role(u, "admin")
    b = ctx.obj()
    email, name, pw = validate_account(b, True)
    nu = insert_user(cur, email, name, pw, b["role"])
    return 201, user_json(nu)


def sla_json(p):
    return {"priority": p["priority"], "first_response_s": p["first_response_s"], "resolution_s": p["resolution_s"]}


def h_sla_list(ctx, cur):
    u = authenticate(ctx, cur)
    require_role(u, "admin", "agent")
    cur.execute("SELECT * FROM sla_policies")
    rows = {r["priority"]: r for r in cur.fetchall()}
    return 200, {"items": [sla_json(rows[p]) for p in PRIORITIES if p in rows]}


def sla_int(v):
    if isinstance(v, bool):
        return None
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")) or not v.is_integer():
            return None
        v = int(v)
    if not isinstance(v, int) or not 1 <= v <= SLA_MAX:
        return None
    return v


def h_sla_put(ctx, cur):
    u = authenticate(ctx, cur)
    pr = ctx.params["priority"]
    if pr not in PRIORITIES:
        raise not_found("priority")
    require_role(u, "admin")
    b = ctx.obj()
    fr = sla_int(b.get("first_response_s"))
    rs = sla_int(b.get("resolution_s"))
    errors = []
    if fr is None:
        errors.append("first_response_s")
    if rs is None:
        errors.append("resolution_s")
    if errors:
        raise invalid(errors)
    cur.execute(
        "INSERT INTO sla_policies(priority,first_response_s,resolution_s) VALUES (%s,%s,%s) "
        "ON CONFLICT (priority) DO UPDATE SET first_response_s=EXCLUDED.first_response_s, "
        "resolution_s=EXCLUDED.resolution_s RETURNING *", (pr, fr, rs))
    return 200, sla_json(cur.fetchone())


def h_sla_delete(ctx, cur):
    u = authenticate(ctx, cur)
    pr = ctx.params["priority"]
    if pr not in PRIORITIES:
        raise not_found("priority")
    cur.execute("SELECT 1 FROM sla_policies WHERE priority=%s FOR UPDATE", (pr,))
    if cur.fetchone() is None:
        raise not_found("policy")
    require_role(u, "admin")
    cur.execute("DELETE FROM sla_policies WHERE priority=%s", (pr,))
    return 204, None


def due_times(cur, priority, created_at):
    cur.execute("SELECT * FROM sla_policies WHERE priority=%s", (priority,))
    p = cur.fetchone()
    if p is None:
        return None, None
    return (created_at + dt.timedelta(seconds=p["first_response_s"]),
            created_at + dt.timedelta(seconds=p["resolution_s"]))


def h_tickets_create(ctx, cur):
    u = authenticate(ctx, cur)
    require_role(u, "customer")
    b = ctx.obj()
    errors = []
    title = b.get("title")
    if not (is_nonblank(title) and len(title) <= 200 and storable(title)):
        errors.append("title")
    body = b.get("body")
    if not (is_nonblank(body) and len(body) <= 10000 and storable(body)):
        errors.append("body")
    priority = b.get("priority", "normal")
    if not (isinstance(priority, str) and priority in PRIORITIES):
        errors.append("priority")
    if errors:
        raise invalid(errors)
    now = now_utc()
    frd, rsd = due_times(cur, priority, now)
    cur.execute(
        "INSERT INTO tickets(title,priority,state,customer_id,assignee_id,created_at,first_response_at,"
        "first_response_due_at,resolution_due_at) VALUES (%s,%s,'new',%s,NULL,%s,NULL,%s,%s) RETURNING *",
        (title, priority, u["id"], now, frd, rsd))
    t = cur.fetchone()
    cur.execute("INSERT INTO articles(ticket_id,author_id,body,internal,created_at) VALUES (%s,%s,%s,FALSE,%s)",
                (t["id"], u["id"], body, now))
    return 201, ticket_json(t)


FRB_SQL = ("(first_response_due_at IS NOT NULL AND first_response_at IS NULL "
           "AND first_response_due_at < %(now)s)")
RSB_SQL = ("(resolution_due_at IS NOT NULL AND state NOT IN ('solved','closed') "
           "AND resolution_due_at < %(now)s)")


def h_tickets_list(ctx, cur):
    u = authenticate(ctx, cur)
    errors = []
    state = ctx.q("state")
    if state is not None and state not in STATES:
        errors.append("state")
    priority = ctx.q("priority")
    if priority is not None and priority not in PRIORITIES:
        errors.append("priority")
    customer_id = parse_qint(ctx, "customer_id", errors)
    assignee = ctx.q("assignee_id")
    assignee_none = False
    assignee_id = None
    if assignee is not None:
        if assignee == "none":
            assignee_none = True
        else:
            assignee_id = parse_qint(ctx, "assignee_id", errors)
    breached = ctx.q("breached")
    if breached is not None and breached not in ("true", "false"):
        errors.append("breached")
    limit, offset = parse_paging(ctx, errors)
    if errors:
        raise invalid(errors)
    now = now_utc()
    args = {"now": now, "limit": limit, "offset": offset}
    conds = []
    if u["role"] == "customer":
        conds.append("customer_id=%(me)s")
        args["me"] = u["id"]
    if state is not None:
        conds.append("state=%(state)s")
        args["state"] = state
    if priority is not None:
        conds.append("priority=%(priority)s")
        args["priority"] = priority
    if customer_id is not None:
        if id_in_range(customer_id):
            conds.append("customer_id=%(cid)s")
            args["cid"] = customer_id
        else:
            conds.append("FALSE")
    if assignee_none:
        conds.append("assignee_id IS NULL")
    elif assignee_id is not None:
        if id_in_range(assignee_id):
            conds.append("assignee_id=%(aid)s")
            args["aid"] = assignee_id
        else:
            conds.append("FALSE")
    if breached == "true":
        conds.append(f"({FRB_SQL} OR {RSB_SQL})")
    elif breached == "false":
        conds.append(f"NOT ({FRB_SQL} OR {RSB_SQL})")
    where = ("WHERE " + " AND ".join(conds)) if conds else ""
    cur.execute(f"SELECT count(*) AS n FROM tickets {where}", args)
    total = cur.fetchone()["n"]
    cur.execute(f"SELECT * FROM tickets {where} ORDER BY id LIMIT %(limit)s OFFSET %(offset)s", args)
    return 200, {"items": [ticket_json(t, now) for t in cur.fetchall()], "total": total}


def load_ticket(ctx, cur, u, lock=False):
    raw = ctx.params["id"]
    if not ID_RE.fullmatch(raw) or not id_in_range(int(raw)):
        raise not_found("ticket")
    cur.execute("SELECT * FROM tickets WHERE id=%s" + (" FOR UPDATE" if lock else ""), (int(raw),))
    t = cur.fetchone()
    if t is None or (u["role"] == "customer" and t["customer_id"] != u["id"]):
        raise not_found("ticket")
    return t


def h_ticket_get(ctx, cur):
    u = authenticate(ctx, cur)
    t = load_ticket(ctx, cur, u)
    return 200, ticket_json(t)


def h_ticket_patch(ctx, cur):
    u = authenticate(ctx, cur)
    t = load_ticket(ctx, cur, u, lock=True)
    b = ctx.body()
    if u["role"] == "customer" and isinstance(b, dict) and any(k in b for k in ("priority", "state", "assignee_id")):
        raise forbidden()
    if not isinstance(b, dict):
        raise invalid([], "body must be a JSON object")
    errors = []
    changes = {}
    if "title" in b:
        title = b["title"]
        if not (is_nonblank(title) and len(title) <= 200 and storable(title)):
            errors.append("title")
        else:
            changes["title"] = title
    if "priority" in b:
        if not (isinstance(b["priority"], str) and b["priority"] in PRIORITIES):
            errors.append("priority")
        else:
            changes["priority"] = b["priority"]
    if "state" in b:
        if not (isinstance(b["state"], str) and b["state"] in STATES):
            errors.append("state")
        else:
            changes["state"] = b["state"]
    if "assignee_id" in b:
        a = b["assignee_id"]
        if a is None:
            changes["assignee_id"] = None
        elif isinstance(a, int) and not isinstance(a, bool) and id_in_range(a):
            cur.execute("SELECT role FROM users WHERE id=%s", (a,))
            r = cur.fetchone()
            if r is None or r["role"] not in ("agent", "admin"):
                errors.append("assignee_id")
            else:
                changes["assignee_id"] = a
        else:
            errors.append("assignee_id")
    if errors:
        raise invalid(errors)
    if "state" in changes:
        if changes["state"] == t["state"]:
            del changes["state"]
        elif changes["state"] not in TRANSITIONS[t["state"]]:
            raise err(409, "invalid_transition", f"cannot go from {t['state']} to {changes['state']}")
    if "priority" in changes:
        if changes["priority"] == t["priority"]:
            del changes["priority"]
        else:
            frd, rsd = due_times(cur, changes["priority"], t["created_at"])
            changes["first_response_due_at"] = frd
            changes["resolution_due_at"] = rsd
    if changes:
        cols = list(changes)
        sets = ", ".join(f"{c}=%s" for c in cols)
        cur.execute(f"UPDATE tickets SET {sets} WHERE id=%s RETURNING *", [changes[c] for c in cols] + [t["id"]])
        t = cur.fetchone()
    return 200, ticket_json(t)


def h_articles_list(ctx, cur):
    u = authenticate(ctx, cur)
    t = load_ticket(ctx, cur, u)
    if u["role"] == "customer":
        cur.execute("SELECT * FROM articles WHERE ticket_id=%s AND NOT internal ORDER BY created_at, id", (t["id"],))
    else:
        cur.execute("SELECT * FROM articles WHERE ticket_id=%s ORDER BY created_at, id", (t["id"],))
    return 200, {"items": [article_json(a) for a in cur.fetchall()]}


def h_articles_create(ctx, cur):
    u = authenticate(ctx, cur)
    t = load_ticket(ctx, cur, u, lock=True)
    b = ctx.body()
    if u["role"] == "customer" and isinstance(b, dict) and b.get("internal") is True:
        raise forbidden()
    if not isinstance(b, dict):
        raise invalid([], "body must be a JSON object")
    errors = []
    body = b.get("body")
    if not (is_nonblank(body) and len(body) <= 10000 and storable(body)):
        errors.append("body")
    internal = b.get("internal", False)
    if not isinstance(internal, bool):
        errors.append("internal")
    if errors:
        raise invalid(errors)
    if t["state"] == "closed":
        raise err(409, "ticket_closed", "the ticket is closed")
    now = now_utc()
    cur.execute("INSERT INTO articles(ticket_id,author_id,body,internal,created_at) VALUES (%s,%s,%s,%s,%s) RETURNING *",
                (t["id"], u["id"], body, internal, now))
    a = cur.fetchone()
    if not internal:
        if u["role"] in ("agent", "admin"):
            new_state = "open" if t["state"] == "new" else t["state"]
            cur.execute("UPDATE tickets SET state=%s, first_response_at=COALESCE(first_response_at, %s) WHERE id=%s",
                        (new_state, now, t["id"]))
        elif t["state"] in ("pending", "solved"):
            cur.execute("UPDATE tickets SET state='open' WHERE id=%s", (t["id"],))
    return 201, article_json(a)


def h_escalations(ctx, cur):
    u = authenticate(ctx, cur)
    require_role(u, "admin", "agent")
    errors = []
    customer_id = parse_qint(ctx, "customer_id", errors)
    limit, offset = parse_paging(ctx, errors)
    if errors:
        raise invalid(errors)
    now = now_utc()
    args = {"limit": limit, "offset": offset}
    conds = ["((first_response_at IS NULL AND first_response_due_at IS NOT NULL) OR "
             "(state NOT IN ('solved','closed') AND resolution_due_at IS NOT NULL))"]
    if customer_id is not None:
        if id_in_range(customer_id):
            conds.append("customer_id=%(cid)s")
            args["cid"] = customer_id
        else:
            conds.append("FALSE")
    cur.execute(
        "SELECT *, LEAST(CASE WHEN first_response_at IS NULL THEN first_response_due_at END, "
        "CASE WHEN state NOT IN ('solved','closed') THEN resolution_due_at END) AS escalation_at "
        f"FROM tickets WHERE {' AND '.join(conds)} ORDER BY escalation_at, id LIMIT %(limit)s OFFSET %(offset)s", args)
    items = []
    for t in cur.fetchall():
        j = ticket_json(t, now)
        j["escalation_at"] = iso(t["escalation_at"])
        items.append(j)
    return 200, {"items": items}


# ---------------------------------------------------------------- routing
def route(segs):
    if segs == ["health"]:
        return {"GET": h_health}, {}
    if len(segs) < 2 or segs[0] != "api":
        return None, None
    s = segs[1:]
    if s == ["auth", "register"]:
        return {"POST": h_register}, {}
    if s == ["auth", "login"]:
        return {"POST": h_login}, {}
    if s == ["me"]:
        return {"GET": h_me}, {}
    if s == ["users"]:
        return {"GET": h_users_list, "POST": h_users_create}, {}
    if s == ["sla"]:
        return {"GET": h_sla_list}, {}
    if len(s) == 2 and s[0] == "sla":
        return {"PUT": h_sla_put, "DELETE": h_sla_delete}, {"priority": s[1]}
    if s == ["tickets"]:
        return {"GET": h_tickets_list, "POST": h_tickets_create}, {}
    if len(s) == 2 and s[0] == "tickets":
        return {"GET": h_ticket_get, "PATCH": h_ticket_patch}, {"id": s[1]}
    if len(s) == 3 and s[0] == "tickets" and s[2] == "articles":
        return {"GET": h_articles_list, "POST": h_articles_create}, {"id": s[1]}
    if s == ["escalations"]:
        return {"GET": h_escalations}, {}
    return None, None


def run_handler(handler, ctx):
    if handler is h_health:
        return h_health(ctx, None)
    with pool.connection() as conn:
        try:
            with conn.cursor() as cur:
                status, body = handler(ctx, cur)
            conn.commit()
            return status, body
        except BaseException:
            conn.rollback()
            raise


app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)


@app.on_event("startup")
def _startup():
    init_db()


ALL_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]


@app.api_route("/{full_path:path}", methods=ALL_METHODS)
async def dispatch(request: Request):
    raw = request.scope.get("raw_path") or request.url.path.encode()
    path = raw.decode("latin-1").split("?", 1)[0]
    segs = path.split("/")[1:]
    # drain the body with a cap
    chunks, size, oversize = [], 0, False
    cl = request.headers.get("content-length")
    if cl is not None and cl.isdigit() and int(cl) > MAX_BODY:
        oversize = True
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            oversize = True
            chunks = []
        elif not oversize:
            chunks.append(chunk)
    methods, params = route(segs)
    try:
        if methods is None:
            raise not_found("path")
        handler = methods.get(request.method)
        if handler is None:
            raise err(405, "method_not_allowed", "method not allowed")
        ctx = Ctx(request.method, params, request.scope.get("query_string", b"").decode("utf-8", "replace"),
                  request.headers, b"".join(chunks), oversize)
        status, body = await run_in_threadpool(run_handler, handler, ctx)
    except ApiError as e:
        return error_response(e)
    except Exception:
        import traceback
        traceback.print_exc()
        return JSONResponse({"error": "internal_error", "message": "unexpected failure"}, status_code=500)
    if status == 204:
        return Response(status_code=204)
    return JSONResponse(body, status_code=status)


if __name__ == "__main__":
    uvicorn.run(app, host="0.0.0.0", port=int(os.environ.get("PORT", "8000")), log_level="warning")
