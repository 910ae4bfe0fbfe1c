"""Forms: surveys with typed questions, public responses, summaries and CSV export.

FastAPI + uvicorn, state in PostgreSQL (psycopg 3, async pool).
"""
import asyncio
import base64
import csv
import hashlib
import hmac
import html
import io
import json
import math
import os
import re
import secrets
from contextlib import asynccontextmanager
from datetime import timezone

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool
from starlette.exceptions import HTTPException as StarletteHTTPException

MAX_BODY = 1024 * 1024
MAX_DEPTH = 32
PBKDF2_ITERATIONS = 120_000
INT4_MAX = 2147483647
QUESTION_TYPES = ("short_text", "number", "single_choice", "multiple_choice")
SLUG_RE = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
ID_RE = re.compile(r"^[0-9]{1,10}$")
EMAIL_RE = re.compile(r"^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+$")


def database_url():
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    return "postgresql://{u}:{p}@{h}:{port}/{d}".format(
        u=os.environ.get("DB_USERNAME", "postgres"), p=os.environ.get("DB_PASSWORD", ""),
        h=os.environ.get("DB_HOST", "127.0.0.1"), port=os.environ.get("DB_PORT", "5432"),
        d=os.environ.get("DB_NAME", "postgres"))


SCHEMA = """
CREATE TABLE IF NOT EXISTS owners (
    id SERIAL PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE IF NOT EXISTS tokens (
    token_hash TEXT PRIMARY KEY,
    owner_id INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE IF NOT EXISTS forms (
    id SERIAL PRIMARY KEY,
    owner_id INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    slug TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL CHECK (status IN ('draft', 'published', 'closed')),
    response_limit INTEGER NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS forms_owner_idx ON forms(owner_id, id);
CREATE TABLE IF NOT EXISTS questions (
    id SERIAL PRIMARY KEY,
    form_id INTEGER NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    type TEXT NOT NULL,
    title TEXT NOT NULL,
    required BOOLEAN NOT NULL,
    settings JSONB NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX IF NOT EXISTS questions_form_idx ON questions(form_id, position);
CREATE TABLE IF NOT EXISTS responses (
    id SERIAL PRIMARY KEY,
    form_id INTEGER NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
    answers TEXT NOT NULL DEFAULT '{}',
    created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS responses_form_idx ON responses(form_id, id);
"""

pool: AsyncConnectionPool = None  # type: ignore


@asynccontextmanager
async def lifespan(app):
    global pool
    pool = AsyncConnectionPool(database_url(), min_size=1, max_size=10, open=False,
                               kwargs={"row_factory": dict_row, "autocommit": False})
    for attempt in range(60):
        try:
            await pool.open(wait=True, timeout=5)
            async with pool.connection() as conn:
                await conn.execute("SELECT pg_advisory_xact_lock(727001)")
                await conn.execute(SCHEMA)
            break
        except Exception:  # database not ready yet
            if attempt == 59:
                raise
            await asyncio.sleep(1)
    yield
    await pool.close()


app = FastAPI(lifespan=lifespan, openapi_url=None, docs_url=None, redoc_url=None)


# ----------------------------------------------------------------------------- helpers

class ApiError(Exception):
    def __init__(self, status, code, message, fields=None):
        self.status, self.code, self.message, self.fields = status, code, message, fields


def err(status, code, message, fields=None):
    body = {"error": code, "message": message}
    if fields is not None:
        body["fields"] = list(fields)
    return JSONResponse(body, status_code=status)


@app.exception_handler(ApiError)
async def api_error_handler(request, exc: ApiError):
    return err(exc.status, exc.code, exc.message, exc.fields)


def is_owner_path(path):
    return path == "/api/me" or path == "/api/forms" or path.startswith("/api/forms/")


@app.exception_handler(StarletteHTTPException)
async def http_error_handler(request: Request, exc):
    if is_owner_path(request.url.path):
        try:
            await current_owner(request)
        except ApiError as e:
            return err(e.status, e.code, e.message)
    if exc.status_code == 405:
        return err(405, "method_not_allowed", "method not allowed")
    if exc.status_code == 404:
        return err(404, "not_found", "not found")
    return err(exc.status_code, "error", str(exc.detail))


@app.exception_handler(Exception)
async def internal_error_handler(request, exc):
    return err(500, "internal_error", "internal error")


def ts(dt):
    dt = dt.astimezone(timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + "%06dZ" % dt.microsecond


def json_depth_ok(value):
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list)):
            if d > MAX_DEPTH:
                return False
            children = v.values() if isinstance(v, dict) else v
            for c in children:
                if isinstance(c, (dict, list)):
                    stack.append((c, d + 1))
    return True


def _bad_constant(name):
    raise ValueError("constant " + name)


async def read_json_object(request: Request):
    """Read the body (at most 1 MiB) and return it as a dict, else raise ApiError."""
    cl = request.headers.get("content-length")
    if cl is not None:
        try:
            if int(cl) > MAX_BODY:
                raise ApiError(413, "payload_too_large", "request body larger than 1 MiB")
        except ValueError:
            pass
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise ApiError(413, "payload_too_large", "request body larger than 1 MiB")
        chunks.append(chunk)
    raw = b"".join(chunks)
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_bad_constant)
    except RecursionError:
        raise ApiError(422, "validation_error", "body nested too deeply", ["body"])
    except (ValueError, UnicodeDecodeError):
        raise ApiError(422, "validation_error", "body must be a JSON object", ["body"])
    if not isinstance(data, dict):
        raise ApiError(422, "validation_error", "body must be a JSON object", ["body"])
    if not json_depth_ok(data):
        raise ApiError(422, "validation_error", "body nested more than 32 levels", ["body"])
    try:  # lone surrogates (e.g. "\ud800") cannot be stored as UTF-8 text
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ApiError(422, "validation_error", "body holds invalid Unicode", ["body"])
    return data


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    try:
        return math.isfinite(float(v))
    except OverflowError:
        return False


def nonblank(v):
    # PostgreSQL text cannot hold NUL, so a title or option holding one is refused.
    return isinstance(v, str) and v.strip() != "" and "\x00" not in v


def parse_id(raw):
    if not ID_RE.fullmatch(raw or ""):
        raise ApiError(404, "not_found", "not found")
    v = int(raw)
    if v < 1 or v > INT4_MAX:
        raise ApiError(404, "not_found", "not found")
    return v


# ----------------------------------------------------------------------------- passwords, tokens

def hash_password(password):
    salt = secrets.token_bytes(16)
    dk = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, PBKDF2_ITERATIONS)
    return "pbkdf2_sha256$%d$%s$%s" % (PBKDF2_ITERATIONS, base64.b64encode(salt).decode(),
                                       base64.b64encode(dk).decode())


def verify_password(password, stored):
    try:
        algo, iterations, salt_b64, dk_b64 = stored.split("$")
        salt, dk = base64.b64decode(salt_b64), base64.b64decode(dk_b64)
        got = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, int(iterations))
        return hmac.compare_digest(got, dk)
    except Exception:
        return False


_DUMMY_HASH = hash_password("dummy-password-for-timing")


def token_digest(token):
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def owner_json(row):
    return {"id": row["id"], "email": row["email"], "created_at": ts(row["created_at"])}


async def current_owner(request: Request):
    auth = request.headers.get("authorization", "")
    parts = auth.split(" ")
    if len(parts) != 2 or parts[0].lower() != "bearer" or not parts[1] or len(parts[1]) > 200:
        raise ApiError(401, "unauthorized", "missing or invalid bearer token")
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT o.id, o.email, o.created_at FROM tokens t JOIN owners o ON o.id = t.owner_id"
            " WHERE t.token_hash = %s", (token_digest(parts[1]),))
        row = await cur.fetchone()
    if row is None:
        raise ApiError(401, "unauthorized", "missing or invalid bearer token")
    return row


# ----------------------------------------------------------------------------- forms & questions

def question_json(q):
    s = q["settings"] or {}
    out = {"id": q["id"], "position": q["position"], "type": q["type"], "title": q["title"],
           "required": q["required"]}
    if q["type"] == "short_text":
        out["max_length"] = s.get("max_length", 500)
    elif q["type"] == "number":
        out["min"] = s.get("min")
        out["max"] = s.get("max")
    elif q["type"] == "single_choice":
        out["options"] = s.get("options", [])
    elif q["type"] == "multiple_choice":
        opts = s.get("options", [])
        out["options"] = opts
        out["min_selections"] = s.get("min_selections", 0)
        out["max_selections"] = s.get("max_selections", len(opts))
    return out


async def load_questions(conn, form_id):
    cur = await conn.execute(
        "SELECT id, position, type, title, required, settings FROM questions"
        " WHERE form_id = %s ORDER BY position, id", (form_id,))
    return await cur.fetchall()


async def form_json(conn, form):
    cur = await conn.execute("SELECT count(*) AS n FROM responses WHERE form_id = %s", (form["id"],))
    n = (await cur.fetchone())["n"]
    qs = await load_questions(conn, form["id"])
    return {"id": form["id"], "title": form["title"], "slug": form["slug"], "status": form["status"],
            "response_limit": form["response_limit"], "response_count": n,
            "questions": [question_json(q) for q in qs], "created_at": ts(form["created_at"])}


FORM_COLS = "id, owner_id, title, slug, status, response_limit, created_at"


async def get_owned_form(conn, owner, raw_id, lock=False):
    form_id = parse_id(raw_id)
    cur = await conn.execute(
        "SELECT " + FORM_COLS + " FROM forms WHERE id = %s AND owner_id = %s"
        + (" FOR UPDATE" if lock else ""), (form_id, owner["id"]))
    form = await cur.fetchone()
    if form is None:
        raise ApiError(404, "not_found", "form not found")
    return form


def validate_question(body):
    fields = []
    qtype = body.get("type")
    if not isinstance(qtype, str) or qtype not in QUESTION_TYPES:
        fields.append("type")
        qtype = None
    title = body.get("title")
    if not nonblank(title) or len(title) > 500:
        fields.append("title")
    required = body.get("required", False)
    if not isinstance(required, bool):
        fields.append("required")
    settings = {}
    if qtype == "short_text":
        ml = body.get("max_length", 500)
        if not is_int(ml) or ml < 1 or ml > 5000:
            fields.append("max_length")
        settings["max_length"] = ml
    elif qtype == "number":
        mn, mx = body.get("min"), body.get("max")
        ok = True
        if mn is not None and not is_number(mn):
            fields.append("min")
            ok = False
        if mx is not None and not is_number(mx):
            fields.append("max")
            ok = False
        if ok and mn is not None and mx is not None and mn > mx:
            fields.extend(["min", "max"])
        settings["min"], settings["max"] = mn, mx
    elif qtype in ("single_choice", "multiple_choice"):
        opts = body.get("options")
        opts_ok = (isinstance(opts, list) and 2 <= len(opts) <= 20
                   and all(nonblank(o) and len(o) <= 100 for o in opts)
                   and len(set(opts)) == len(opts))
        if not opts_ok:
            fields.append("options")
        settings["options"] = opts
        if qtype == "multiple_choice":
            n = len(opts) if opts_ok else None
            mins = body.get("min_selections", 0)
            maxs = body.get("max_selections", n if n is not None else 0)
            mins_ok = is_int(mins) and mins >= 0
            maxs_ok = is_int(maxs) and maxs >= 0
            if maxs_ok and n is not None and maxs > n:
                maxs_ok = False
            if not mins_ok:
                fields.append("min_selections")
            if not maxs_ok:
                fields.append("max_selections")
            if mins_ok and maxs_ok and mins > maxs:
                fields.extend(["min_selections", "max_selections"])
            settings["min_selections"], settings["max_selections"] = mins, maxs
    return fields, qtype, title, required, settings


# ----------------------------------------------------------------------------- routes: misc

@app.get("/health")
async def health():
    return {"status": "ok"}


@app.post("/api/users")
async def register(request: Request):
    body = await read_json_object(request)
    email, password = body.get("email"), body.get("password")
    fields = []
    if not isinstance(email, str) or len(email) > 254 or "\x00" in email or not EMAIL_RE.fullmatch(email):
        fields.append("email")
    if not isinstance(password, str) or not 8 <= len(password) <= 128:
        fields.append("password")
    if fields:
        raise ApiError(422, "validation_error", "invalid registration", fields)
    email = email.lower()
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT 1 FROM owners WHERE email = %s", (email,))
        if await cur.fetchone():
            raise ApiError(409, "email_taken", "email already registered")
    pw_hash = await asyncio.to_thread(hash_password, password)
    async with pool.connection() as conn:
        cur = await conn.execute(
            "INSERT INTO owners (email, password_hash) VALUES (%s, %s)"
            " ON CONFLICT (email) DO NOTHING RETURNING id, email, created_at", (email, pw_hash))
        row = await cur.fetchone()
    if row is None:
        raise ApiError(409, "email_taken", "email already registered")
    return JSONResponse(owner_json(row), status_code=201)


@app.post("/api/auth/token")
async def login(request: Request):
    body = await read_json_object(request)
    email, password = body.get("email"), body.get("password")
    bad = [f for f, v in (("email", email), ("password", password)) if v is not None and not isinstance(v, str)]
    if bad:
        raise ApiError(422, "validation_error", "email and password must be strings", bad)
    if email is None or password is None:
        raise ApiError(401, "invalid_credentials", "invalid email or password")
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT id, email, password_hash, created_at FROM owners WHERE email = %s", (email.lower(),))
        row = await cur.fetchone()
    ok = await asyncio.to_thread(verify_password, password, row["password_hash"] if row else _DUMMY_HASH)
    if row is None or not ok:
        raise ApiError(401, "invalid_credentials", "invalid email or password")
    token = secrets.token_urlsafe(32)
    async with pool.connection() as conn:
        await conn.execute("INSERT INTO tokens (token_hash, owner_id) VALUES (%s, %s)",
                           (token_digest(token), row["id"]))
    return {"token": token, "owner": owner_json(row)}


@app.get("/api/me")
async def me(request: Request):
    owner = await current_owner(request)
    return owner_json(owner)


# ----------------------------------------------------------------------------- routes: forms

@app.post("/api/forms")
async def create_form(request: Request):
    owner = await current_owner(request)
    body = await read_json_object(request)
    fields = []
    title = body.get("title")
    if not nonblank(title) or len(title) > 200:
        fields.append("title")
    limit = body.get("response_limit")
    if limit is not None and (not is_int(limit) or not 1 <= limit <= 100000):
        fields.append("response_limit")
    if fields:
        raise ApiError(422, "validation_error", "invalid form", fields)
    async with pool.connection() as conn:
        for _ in range(5):
            slug = secrets.token_urlsafe(12)
            cur = await conn.execute(
                "INSERT INTO forms (owner_id, title, slug, status, response_limit)"
                " VALUES (%s, %s, %s, 'draft', %s) ON CONFLICT (slug) DO NOTHING"
                " RETURNING " + FORM_COLS, (owner["id"], title, slug, limit))
            form = await cur.fetchone()
            if form:
                break
        else:
            raise RuntimeError("could not choose a slug")
        out = await form_json(conn, form)
    return JSONResponse(out, status_code=201)


@app.get("/api/forms")
async def list_forms(request: Request):
    owner = await current_owner(request)
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT " + FORM_COLS + " FROM forms WHERE owner_id = %s ORDER BY created_at, id", (owner["id"],))
        forms = await cur.fetchall()
        items = [await form_json(conn, f) for f in forms]
    return {"items": items}


@app.get("/api/forms/{form_id}")
async def get_form(form_id: str, request: Request):
    owner = await current_owner(request)
    async with pool.connection() as conn:
        form = await get_owned_form(conn, owner, form_id)
        return await form_json(conn, form)


@app.delete("/api/forms/{form_id}")
async def delete_form(form_id: str, request: Request):
    owner = await current_owner(request)
    async with pool.connection() as conn:
        form = await get_owned_form(conn, owner, form_id, lock=True)
        await conn.execute("DELETE FROM responses WHERE form_id = %s", (form["id"],))
        await conn.execute("DELETE FROM questions WHERE form_id = %s", (form["id"],))
        await conn.execute("DELETE FROM forms WHERE id = %s", (form["id"],))
    return Response(status_code=204)


@app.post("/api/forms/{form_id}/questions")
async def add_question(form_id: str, request: Request):
    owner = await current_owner(request)
    async with pool.connection() as conn:
        form = await get_owned_form(conn, owner, form_id)
        if form["status"] != "draft":
            raise ApiError(409, "form_not_draft", "questions can only change while the form is a draft")
    body = await read_json_object(request)
    fields, qtype, title, required, settings = validate_question(body)
    if fields:
        seen = []
        for f in fields:
            if f not in seen:
                seen.append(f)
        raise ApiError(422, "validation_error", "invalid question", seen)
    async with pool.connection() as conn:
        form = await get_owned_form(conn, owner, form_id, lock=True)
        if form["status"] != "draft":
            raise ApiError(409, "form_not_draft", "questions can only change while the form is a draft")
        cur = await conn.execute(
            "INSERT INTO questions (form_id, position, type, title, required, settings)"
            " VALUES (%s, (SELECT coalesce(max(position), 0) + 1 FROM questions WHERE form_id = %s),"
            " %s, %s, %s, %s::jsonb) RETURNING id, position, type, title, required, settings",
            (form["id"], form["id"], qtype, title, required, json.dumps(settings)))
        q = await cur.fetchone()
    return JSONResponse(question_json(q), status_code=201)


@app.delete("/api/forms/{form_id}/questions/{question_id}")
async def delete_question(form_id: str, question_id: str, request: Request):
    owner = await current_owner(request)
    async with pool.connection() as conn:
        form = await get_owned_form(conn, owner, form_id, lock=True)
        qid = parse_id(question_id)
        cur = await conn.execute("SELECT id FROM questions WHERE id = %s AND form_id = %s", (qid, form["id"]))
        if await cur.fetchone() is None:
            raise ApiError(404, "not_found", "question not found")
        if form["status"] != "draft":
            raise ApiError(409, "form_not_draft", "questions can only change while the form is a draft")
        await conn.execute("DELETE FROM questions WHERE id = %s", (qid,))
        await conn.execute(
            "UPDATE questions q SET position = r.rn FROM ("
            " SELECT id, row_number() OVER (ORDER BY position, id) AS rn FROM questions WHERE form_id = %s"
            ") r WHERE q.id = r.id", (form["id"],))
    return Response(status_code=204)


@app.post("/api/forms/{form_id}/publish")
async def publish_form(form_id: str, request: Request):
    owner = await current_owner(request)
    async with pool.connection() as conn:
        form = await get_owned_form(conn, owner, form_id, lock=True)
        if form["status"] != "draft":
            raise ApiError(409, "invalid_transition", "only a draft form can be published")
        cur = await conn.execute("SELECT count(*) AS n FROM questions WHERE form_id = %s", (form["id"],))
        if (await cur.fetchone())["n"] == 0:
            raise ApiError(409, "no_questions", "a form needs at least one question to be published")
        cur = await conn.execute("UPDATE forms SET status = 'published' WHERE id = %s RETURNING " + FORM_COLS,
                                 (form["id"],))
        form = await cur.fetchone()
        return await form_json(conn, form)


@app.post("/api/forms/{form_id}/close")
async def close_form(form_id: str, request: Request):
    owner = await current_owner(request)
    async with pool.connection() as conn:
        form = await get_owned_form(conn, owner, form_id, lock=True)
        if form["status"] != "published":
            raise ApiError(409, "invalid_transition", "only a published form can be closed")
        cur = await conn.execute("UPDATE forms SET status = 'closed' WHERE id = %s RETURNING " + FORM_COLS,
                                 (form["id"],))
        form = await cur.fetchone()
        return await form_json(conn, form)


async def load_responses(conn, form_id):
    cur = await conn.execute(
        "SELECT id, answers, created_at FROM responses WHERE form_id = %s ORDER BY id", (form_id,))
    rows = await cur.fetchall()
    return [{"id": r["id"], "created_at": r["created_at"], "answers": json.loads(r["answers"])} for r in rows]


@app.get("/api/forms/{form_id}/responses")
async def list_responses(form_id: str, request: Request):
    owner = await current_owner(request)
    async with pool.connection() as conn:
        form = await get_owned_form(conn, owner, form_id)
        rows = await load_responses(conn, form["id"])
    return {"items": [{"id": r["id"], "created_at": ts(r["created_at"]), "answers": r["answers"]} for r in rows]}


@app.get("/api/forms/{form_id}/summary")
async def summary(form_id: str, request: Request):
    owner = await current_owner(request)
    async with pool.connection() as conn:
        form = await get_owned_form(conn, owner, form_id)
        qs = [question_json(q) for q in await load_questions(conn, form["id"])]
        rows = await load_responses(conn, form["id"])
    out = []
    for q in qs:
        key = str(q["id"])
        values = [r["answers"][key] for r in rows if r["answers"].get(key) is not None]
        entry = {"question_id": q["id"], "type": q["type"], "title": q["title"], "answered": len(values)}
        if q["type"] == "single_choice":
            counts = {o: 0 for o in q["options"]}
            for v in values:
                if v in counts:
                    counts[v] += 1
            entry["counts"] = counts
        elif q["type"] == "multiple_choice":
            counts = {o: 0 for o in q["options"]}
            for v in values:
                for o in set(v):
                    if o in counts:
                        counts[o] += 1
            entry["counts"] = counts
        elif q["type"] == "number":
            if values:
                entry["mean"] = math.fsum(float(v) for v in values) / len(values)
                entry["min"] = min(values)
                entry["max"] = max(values)
            else:
                entry["mean"] = entry["min"] = entry["max"] = None
        out.append(entry)
    return {"response_count": len(rows), "questions": out}


def csv_text(s):
    if s and s[0] in "=+-@":
        return "'" + s
    return s


@app.get("/api/forms/{form_id}/export.csv")
async def export_csv(form_id: str, request: Request):
    owner = await current_owner(request)
    async with pool.connection() as conn:
        form = await get_owned_form(conn, owner, form_id)
        qs = [question_json(q) for q in await load_questions(conn, form["id"])]
        rows = await load_responses(conn, form["id"])
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    w.writerow(["response_id", "submitted_at"] + [csv_text(q["title"]) for q in qs])
    for r in rows:
        rec = [str(r["id"]), ts(r["created_at"])]
        for q in qs:
            v = r["answers"].get(str(q["id"]))
            if v is None:
                rec.append("")
            elif q["type"] == "number":
                rec.append(json.dumps(v))
            elif q["type"] == "multiple_choice":
                chosen = set(v)
                rec.append(csv_text("; ".join(o for o in q["options"] if o in chosen)))
            else:
                rec.append(csv_text(str(v)))
        w.writerow(rec)
    return Response(buf.getvalue(), media_type="text/csv; charset=utf-8")


# ----------------------------------------------------------------------------- public

async def get_public_form(conn, slug, lock=False):
    if not SLUG_RE.fullmatch(slug or ""):
        raise ApiError(404, "not_found", "form not found")
    cur = await conn.execute(
        "SELECT " + FORM_COLS + " FROM forms WHERE slug = %s AND status IN ('published', 'closed')"
        + (" FOR UPDATE" if lock else ""), (slug,))
    form = await cur.fetchone()
    if form is None:
        raise ApiError(404, "not_found", "form not found")
    return form


def public_json(form, qs):
    return {"slug": form["slug"], "title": form["title"], "status": form["status"],
            "questions": [question_json(q) for q in qs]}


@app.get("/api/public/forms/{slug}")
async def public_form(slug: str):
    async with pool.connection() as conn:
        form = await get_public_form(conn, slug)
        qs = await load_questions(conn, form["id"])
    return public_json(form, qs)


def validate_answers(questions, answers):
    """Return (bad question ids, normalised answers holding only answered questions)."""
    bad, clean = [], {}
    by_id = {str(q["id"]): q for q in questions}
    for key in answers:
        if key not in by_id:
            bad.append(key)
    for key, q in by_id.items():
        v = answers.get(key)
        t = q["type"]
        unanswered = (v is None or (t == "short_text" and isinstance(v, str) and v.strip() == "")
                      or (t == "multiple_choice" and isinstance(v, list) and len(v) == 0))
        if unanswered:
            if q["required"]:
                bad.append(key)
            continue
        ok = False
        if t == "short_text":
            ok = isinstance(v, str) and len(v) <= q["max_length"]
        elif t == "number":
            ok = (is_number(v) and (q["min"] is None or v >= q["min"])
                  and (q["max"] is None or v <= q["max"]))
        elif t == "single_choice":
            ok = isinstance(v, str) and v in q["options"]
        elif t == "multiple_choice":
            ok = (isinstance(v, list) and all(isinstance(o, str) and o in q["options"] for o in v)
                  and len(set(v)) == len(v) and q["min_selections"] <= len(v) <= q["max_selections"])
        if ok:
            clean[key] = v
        else:
            bad.append(key)
    return bad, clean


@app.post("/api/public/forms/{slug}/responses")
async def submit_response(slug: str, request: Request):
    async with pool.connection() as conn:
        form = await get_public_form(conn, slug)
        if form["status"] == "closed":
            raise ApiError(409, "form_closed", "this form is closed")
    body = await read_json_object(request)
    answers = body.get("answers")
    if not isinstance(answers, dict):
        raise ApiError(422, "validation_error", "answers must be an object", ["answers"])
    async with pool.connection() as conn:
        form = await get_public_form(conn, slug, lock=True)
        if form["status"] == "closed":
            raise ApiError(409, "form_closed", "this form is closed")
        qs = [question_json(q) for q in await load_questions(conn, form["id"])]
        bad, clean = validate_answers(qs, answers)
        if bad:
            raise ApiError(422, "validation_error", "some answers are missing or invalid", bad)
        if form["response_limit"] is not None:
            cur = await conn.execute("SELECT count(*) AS n FROM responses WHERE form_id = %s", (form["id"],))
            if (await cur.fetchone())["n"] >= form["response_limit"]:
                raise ApiError(409, "response_limit_reached", "this form accepts no more responses")
        cur = await conn.execute(
            "INSERT INTO responses (form_id, answers) VALUES (%s, %s) RETURNING id, created_at",
            (form["id"], json.dumps(clean)))
        row = await cur.fetchone()
    return JSONResponse({"id": row["id"], "created_at": ts(row["created_at"])}, status_code=201)


# ----------------------------------------------------------------------------- pages

INDEX_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Forms</title>
<link rel="stylesheet" href="/static/forms.css"></head>
<body><main><h1>Forms</h1>
<p>Owners build forms through the JSON API under <code>/api</code>; respondents answer a
published form at <code>/f/&lt;slug&gt;</code>.</p></main></body></html>
"""

FORM_CSS = """
body { font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
.question { border: 1px solid #ddd; border-radius: 6px; padding: .75rem 1rem; margin: 1rem 0; }
.question-title { font-weight: 600; margin-bottom: .5rem; white-space: pre-wrap; }
.required-mark { color: #b00; }
.option { display: block; margin: .25rem 0; cursor: pointer; }
.option-text { white-space: pre-wrap; margin-left: .4rem; }
input[type=text] { width: 100%; box-sizing: border-box; padding: .4rem; }
#message { color: #b00; min-height: 1.2em; margin: .5rem 0; white-space: pre-wrap; }
#thank-you { color: #060; font-weight: 600; }
button { padding: .5rem 1.25rem; }
"""

FORM_JS = r"""
(function () {
  var dataEl = document.getElementById('form-data');
  var form = JSON.parse(dataEl.textContent);
  var messageEl = document.querySelector('[data-testid="message"]');
  var thanks = document.querySelector('[data-testid="thank-you"]');
  var button = document.querySelector('[data-testid="submit"]');
  if (!button) return;
  var NUM = /^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/;

  // progress flags for the evaluator (see the spec's "Progress flags")
  function record(key, extra) {
    var value = {slug: form.slug};
    Object.keys(extra).forEach(function (k) { value[k] = extra[k]; });
    try { window.localStorage.setItem(key, JSON.stringify(value)); } catch (e) { /* no storage: nothing to record */ }
  }
  form.questions.forEach(function (q) {
    var box = document.querySelector('[data-question-id="' + q.id + '"]');
    if (!box) return;
    var note = function () { record('forms.answerChanged', {question_id: q.id}); };
    box.addEventListener('input', note);
    box.addEventListener('change', note);
  });
  record('forms.formShown', {questions: form.questions.length});

  function collect() {
    var answers = {};
    form.questions.forEach(function (q) {
      var box = document.querySelector('[data-question-id="' + q.id + '"]');
      var key = String(q.id);
      if (q.type === 'short_text' || q.type === 'number') {
        var text = box.querySelector('[data-testid="answer-input"]').value;
        if (q.type === 'number') {
          if (text.trim() === '') return;
          answers[key] = NUM.test(text) ? Number(text.trim()) : text;
        } else {
          if (text === '') return;
          answers[key] = text;
        }
      } else if (q.type === 'single_choice') {
        var picked = box.querySelector('input:checked');
        if (picked) answers[key] = q.options[Number(picked.value)];
      } else {
        var chosen = [];
        box.querySelectorAll('input:checked').forEach(function (el) { chosen.push(q.options[Number(el.value)]); });
        if (chosen.length) answers[key] = chosen;
      }
    });
    return answers;
  }

  document.getElementById('answer-form').addEventListener('submit', function (ev) {
    ev.preventDefault();
    if (button.disabled) return;
    button.disabled = true;
    var answers = collect();
    record('forms.submitted', {answers: answers});
    fetch('/api/public/forms/' + encodeURIComponent(form.slug) + '/responses', {
      method: 'POST',
      headers: {'Content-Type': 'application/json', 'Accept': 'application/json'},
      body: JSON.stringify({answers: answers})
    }).then(function (res) {
      return res.text().then(function (text) {
        var data = null;
        try { data = JSON.parse(text); } catch (e) { data = null; }
        if (res.status === 201) {
          record('forms.responseRecorded', {response_id: data ? data.id : null});
          messageEl.textContent = '';
          thanks.hidden = false;
          thanks.style.display = '';
        } else {
          thanks.hidden = true;
          messageEl.textContent = (data && typeof data.message === 'string') ? data.message : ('Error ' + res.status);
        }
      });
    }).catch(function () {
      thanks.hidden = true;
      messageEl.textContent = 'The answers could not be sent.';
    }).then(function () { button.disabled = false; });
  });
})();
"""


def e(s):
    return html.escape(s, quote=True)


def render_form_page(form, qs):
    parts = []
    for q in qs:
        qid = q["id"]
        parts.append('<div class="question" data-testid="question" data-question-id="%d">' % qid)
        parts.append('<div class="question-title" id="qt-%d" data-testid="question-title">%s</div>'
                     % (qid, e(q["title"])))
        if q["required"]:
            parts.append('<div class="required-mark">required</div>')
        if q["type"] in ("short_text", "number"):
            extra = ' inputmode="decimal"' if q["type"] == "number" else ""
            parts.append('<input type="text" data-testid="answer-input" aria-labelledby="qt-%d"%s>'
                         % (qid, extra))
        else:
            kind = "radio" if q["type"] == "single_choice" else "checkbox"
            for i, opt in enumerate(q["options"]):
                parts.append('<label class="option" data-testid="option"><input type="%s" name="q-%d" value="%d">'
                             '<span class="option-text">%s</span></label>' % (kind, qid, i, e(opt)))
        parts.append('</div>')
    data = json.dumps({"slug": form["slug"], "questions": qs})
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>%s</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/static/forms.css"></head>
<body><main>
<h1 data-testid="form-title">%s</h1>
<form id="answer-form" novalidate>
%s
<div id="message" data-testid="message" role="alert"></div>
<button type="submit" data-testid="submit">Submit</button>
</form>
<p id="thank-you" data-testid="thank-you" hidden>Thank you! Your response was recorded.</p>
</main>
<script type="application/json" id="form-data">%s</script>
<script src="/static/form.js"></script>
</body></html>
""" % (e(form["title"]), e(form["title"]), "\n".join(parts), data)


def render_missing_page(message):
    return """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Form not available</title>
<link rel="stylesheet" href="/static/forms.css"></head>
<body><main><h1>Form not available</h1>
<div id="message" data-testid="message" role="alert">%s</div>
</main></body></html>
""" % e(message)


@app.get("/", response_class=HTMLResponse)
async def index():
    return HTMLResponse(INDEX_HTML)


@app.get("/static/forms.css")
async def css():
    return Response(FORM_CSS, media_type="text/css; charset=utf-8")


@app.get("/static/form.js")
async def js():
    return Response(FORM_JS, media_type="application/javascript; charset=utf-8")


@app.get("/f/{slug}", response_class=HTMLResponse)
async def form_page(slug: str):
    try:
        async with pool.connection() as conn:
            form = await get_public_form(conn, slug)
            qs = [question_json(q) for q in await load_questions(conn, form["id"])]
    except ApiError as exc:
        return HTMLResponse(render_missing_page(exc.message), status_code=exc.status)
    return HTMLResponse(render_form_page(form, qs),
                        headers={"Content-Security-Policy": "default-src 'self'; object-src 'none'"})


if __name__ == "__main__":
    import uvicorn
    uvicorn.run(app, host="0.0.0.0", port=int(os.environ.get("PORT", "8000")), log_level="warning")
