"""Wiki service: users with roles, pages with numbered revisions, diffs, moves (FastAPI + PostgreSQL).

All state lives in PostgreSQL (tables users, pages, revisions, plus redirects and tokens).
Request bodies are read and validated by hand so that error codes, the `fields` list and the
precedence of errors follow spec.md exactly.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import os
import re
import secrets
from contextlib import asynccontextmanager
from datetime import timezone
from typing import Any
from urllib.parse import quote

import psycopg
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

MAX_BODY_BYTES = 1_048_576
MAX_DEPTH = 32
MAX_PAGE_BODY_CHARS = 20_000
MAX_PAGE_BODY_LINES = 1_000
INT32_MAX = 2_147_483_647

SLUG_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
USERNAME_RE = re.compile(r"[a-z0-9_]{3,32}")
DIGITS_RE = re.compile(r"[0-9]+")
ROLES = ("reader", "editor", "admin")

# scrypt parameters: n=2**14, r=8, p=1 (16 MiB, the interactive-login recommendation).
SCRYPT_N, SCRYPT_R, SCRYPT_P = 16384, 8, 1


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------


class ApiError(Exception):
    """An error answer: status, error code, message and optional extra body fields."""

    def __init__(self, status: int, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.extra = extra


def unauthorized(message: str = "missing, malformed or unknown bearer token") -> ApiError:
    return ApiError(401, "unauthorized", message)


def forbidden(message: str = "your role does not allow this action") -> ApiError:
    return ApiError(403, "forbidden", message)


def not_found(message: str = "not found") -> ApiError:
    return ApiError(404, "not_found", message)


def invalid(fields: list[str], message: str = "invalid request") -> ApiError:
    unique: list[str] = []
    for f in fields:
        if f not in unique:
            unique.append(f)
    return ApiError(422, "validation_error", message, fields=unique)


def error_response(status: int, code: str, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": code, "message": message, **extra}, status_code=status)


# ---------------------------------------------------------------------------------------------
# Passwords
# ---------------------------------------------------------------------------------------------


def hash_password(password: str) -> str:
    """A salted scrypt hash of the whole password (every character counts)."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(
        password.encode("utf-8"), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=32
    )
    return "scrypt${}${}${}${}${}".format(
        SCRYPT_N, SCRYPT_R, SCRYPT_P, base64.b64encode(salt).decode(), base64.b64encode(digest).decode()
    )


def verify_password(password: str, stored: str) -> bool:
    try:
        scheme, n, r, p, salt_b64, digest_b64 = stored.split("$")
        if scheme != "scrypt":
            return False
        salt = base64.b64decode(salt_b64)
        expected = base64.b64decode(digest_b64)
        digest = hashlib.scrypt(
            password.encode("utf-8"), salt=salt, n=int(n), r=int(r), p=int(p), dklen=len(expected)
        )
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(digest, expected)


_DUMMY_HASH: str | None = None


def burn_time_for_unknown_user(password: str) -> None:
    """Hash once anyway so an unknown username costs as long as a wrong password."""
    global _DUMMY_HASH
    if _DUMMY_HASH is None:
        _DUMMY_HASH = hash_password("dummy-password-for-timing")
    verify_password(password, _DUMMY_HASH)


# ---------------------------------------------------------------------------------------------
# Diff
# ---------------------------------------------------------------------------------------------


def split_lines(body: str) -> list[str]:
    """The lines of a body: split at every line feed; the empty body has none."""
    return body.split("\n") if body else []


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of a longest common subsequence of two line lists (bit-parallel, Hyyro 2004)."""
    n = min(len(a), len(b))
    prefix = 0
    while prefix < n and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < n - prefix and a[len(a) - 1 - suffix] == b[len(b) - 1 - suffix]:
        suffix += 1
    a = a[prefix : len(a) - suffix]
    b = b[prefix : len(b) - suffix]
    common = prefix + suffix
    if not a or not b:
        return common
    masks: dict[str, int] = {}
    for index, line in enumerate(b):
        masks[line] = masks.get(line, 0) | (1 << index)
    full = (1 << len(b)) - 1
    v = full
    for line in a:
        m = masks.get(line)
        if m is None:
            continue
        u = v & m
        v = ((v + u) | (v - u)) & full
    return common + len(b) - bin(v).count("1")


# ---------------------------------------------------------------------------------------------
# Request bodies and validation helpers
# ---------------------------------------------------------------------------------------------

_JSON_TOKEN_RE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)


def nesting_exceeds(text: str, limit: int = MAX_DEPTH) -> bool:
    depth = 0
    for match in _JSON_TOKEN_RE.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > limit:
                return True
        elif token in "]}":
            depth -= 1
    return False


class Body:
    """The outcome of reading a request body: a JSON object, or the error it deserves."""

    def __init__(self, data: dict[str, Any] | None, error: ApiError | None) -> None:
        self.data = data
        self.error = error

    def json(self) -> dict[str, Any]:
        """The object, or raise the body's error (called at the validation step)."""
        if self.error is not None:
            raise self.error
        assert self.data is not None
        return self.data


async def read_body(request: Request) -> Body:
    """Read the whole body (draining anything past the limit) and parse it as a JSON object."""
    chunks: list[bytes] = []
    size = 0
    too_large = False
    declared = request.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > MAX_BODY_BYTES:
        too_large = True
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            too_large = True
        if not too_large:
            chunks.append(chunk)
    if too_large:
        return Body(None, ApiError(413, "payload_too_large", "the request body is larger than 1 MiB"))
    raw = b"".join(chunks)
    bad = invalid(["body"], "the request body must be a JSON object")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return Body(None, bad)
    if nesting_exceeds(text):
        return Body(None, invalid(["body"], "the request body is nested more than 32 levels deep"))
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return Body(None, bad)
    if not isinstance(data, dict):
        return Body(None, bad)
    return Body(data, None)


def storable(s: str) -> bool:
    """PostgreSQL text holds any Unicode except NUL; lone surrogates cannot be encoded."""
    if "\x00" in s:
        return False
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def valid_slug(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= 100 and SLUG_RE.fullmatch(value) is not None


def valid_title(value: Any) -> bool:
    return (
        isinstance(value, str)
        and len(value) <= 200
        and value.strip() != ""
        and storable(value)
    )


def valid_page_body(value: Any) -> bool:
    return (
        isinstance(value, str)
        and len(value) <= MAX_PAGE_BODY_CHARS
        and len(split_lines(value)) <= MAX_PAGE_BODY_LINES
        and storable(value)
    )


def valid_summary(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= 500 and storable(value)


def parse_path_number(text: str) -> int | None:
    """A revision number from a path or query: digits only, at least 1; None otherwise."""
    if DIGITS_RE.fullmatch(text) is None:
        return None
    if len(text) > 30:
        return None
    value = int(text)
    return value if value >= 1 else None


def pagination(request: Request) -> tuple[int, int, list[str]]:
    """limit (1..100, default 20) and offset (>= 0, default 0), and the invalid names."""
    bad: list[str] = []
    limit, offset = 20, 0
    params = request.query_params
    if "limit" in params:
        raw = params["limit"]
        if DIGITS_RE.fullmatch(raw) and len(raw) <= 30 and 1 <= int(raw) <= 100:
            limit = int(raw)
        else:
            bad.append("limit")
    if "offset" in params:
        raw = params["offset"]
        if DIGITS_RE.fullmatch(raw) and len(raw) <= 30:
            offset = int(raw)
        else:
            bad.append("offset")
    return limit, offset, bad


def iso(dt: Any) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# ---------------------------------------------------------------------------------------------
# Database
# ---------------------------------------------------------------------------------------------

SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    id            SERIAL PRIMARY KEY,
    username      TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    role          TEXT NOT NULL CHECK (role IN ('reader', 'editor', 'admin')),
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS pages (
    id          SERIAL PRIMARY KEY,
    slug        TEXT NOT NULL UNIQUE,
    title       TEXT NOT NULL,
    title_lower TEXT NOT NULL,
    protected   BOOLEAN NOT NULL DEFAULT false,
    revision    INTEGER NOT NULL DEFAULT 1,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS revisions (
    id         SERIAL PRIMARY KEY,
    page_id    INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
    number     INTEGER NOT NULL,
    title      TEXT NOT NULL,
    body       TEXT NOT NULL,
    summary    TEXT NOT NULL,
    author_id  INTEGER NOT NULL REFERENCES users(id),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (page_id, number)
);
CREATE TABLE IF NOT EXISTS redirects (
    slug       TEXT PRIMARY KEY,
    page_id    INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS redirects_page_id ON redirects(page_id);
CREATE TABLE IF NOT EXISTS tokens (
    token      TEXT PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
"""


def database_url() -> str:
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    user = quote(os.environ.get("DB_USERNAME", "postgres"), safe="")
    password = quote(os.environ.get("DB_PASSWORD", ""), safe="")
    host = os.environ.get("DB_HOST", "127.0.0.1")
    port = os.environ.get("DB_PORT", "5432")
    name = os.environ.get("DB_NAME", "postgres")
    return f"postgresql://{user}:{password}@{host}:{port}/{name}"


pool: AsyncConnectionPool | None = None


def db() -> AsyncConnectionPool:
    assert pool is not None
    return pool


async def init_database() -> None:
    async with db().connection() as conn:
        # An advisory lock keeps two starting instances from racing on CREATE TABLE.
        await conn.execute("SELECT pg_advisory_xact_lock(727274)")
        await conn.execute(SCHEMA)
    username = os.environ.get("ADMIN_USERNAME", "admin")
    password = os.environ.get("ADMIN_PASSWORD", "admin-password")
    async with db().connection() as conn:
        cur = await conn.execute("SELECT 1 FROM users WHERE username = %s", (username,))
        if await cur.fetchone() is None:
            hashed = await run_in_threadpool(hash_password, password)
            await conn.execute(
                "INSERT INTO users (username, password_hash, role) VALUES (%s, %s, 'admin') "
                "ON CONFLICT (username) DO NOTHING",
                (username, hashed),
            )


@asynccontextmanager
async def lifespan(_app: FastAPI):
    global pool
    pool = AsyncConnectionPool(
        database_url(), min_size=2, max_size=10, open=False, kwargs={"row_factory": dict_row}
    )
    deadline = asyncio.get_running_loop().time() + 60
    while True:
        try:
            await pool.open(wait=True, timeout=10)
            await init_database()
            break
        except Exception:  # the database may still be starting
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(1)
    try:
        yield
    finally:
        await pool.close()


# ---------------------------------------------------------------------------------------------
# Representations and lookups
# ---------------------------------------------------------------------------------------------


def user_json(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "username": row["username"], "role": row["role"], "created_at": iso(row["created_at"])}


def page_json(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["id"],
        "slug": row["slug"],
        "title": row["title"],
        "body": row["body"],
        "protected": row["protected"],
        "revision": row["revision"],
        "created_at": iso(row["created_at"]),
    }


PAGE_SELECT = (
    "SELECT p.id, p.slug, p.title, p.protected, p.revision, p.created_at, r.body "
    "FROM pages p JOIN revisions r ON r.page_id = p.id AND r.number = p.revision "
)

BEARER_RE = re.compile(r"[Bb][Ee][Aa][Rr][Ee][Rr] +([^\s]+) *")


async def authenticate(request: Request) -> dict[str, Any]:
    header = request.headers.get("authorization")
    if header is None:
        raise unauthorized("missing bearer token")
    match = BEARER_RE.fullmatch(header)
    if match is None:
        raise unauthorized("malformed Authorization header")
    token = match.group(1)
    if not storable(token) or len(token) > 200:
        raise unauthorized("unknown token")
    async with db().connection() as conn:
        cur = await conn.execute(
            "SELECT u.id, u.username, u.role, u.created_at FROM tokens t JOIN users u ON u.id = t.user_id "
            "WHERE t.token = %s",
            (token,),
        )
        user = await cur.fetchone()
    if user is None:
        raise unauthorized("unknown token")
    return user


def require_role(user: dict[str, Any], *roles: str) -> None:
    if user["role"] not in roles:
        raise forbidden()


async def load_page(conn: psycopg.AsyncConnection, slug: str, lock: bool = False) -> dict[str, Any]:
    """The page whose current slug is `slug` (redirects not followed), else 404."""
    if not valid_slug(slug):
        raise not_found("no page has this slug")
    if lock:
        # Lock the page row alone first: a locking join would be re-checked against the stale
        # revision row after a concurrent edit and lose the page.
        cur = await conn.execute("SELECT id FROM pages WHERE slug = %s FOR UPDATE", (slug,))
        if await cur.fetchone() is None:
            raise not_found("no page has this slug")
    cur = await conn.execute(PAGE_SELECT + "WHERE p.slug = %s", (slug,))
    page = await cur.fetchone()
    if page is None:
        raise not_found("no page has this slug")
    return page


def check_protection(user: dict[str, Any], page: dict[str, Any]) -> None:
    if page["protected"] and user["role"] != "admin":
        raise forbidden("the page is protected: only administrators may change it")


async def add_revision(
    conn: psycopg.AsyncConnection, page: dict[str, Any], title: str, body: str, summary: str, author_id: int
) -> None:
    number = page["revision"] + 1
    await conn.execute(
        "INSERT INTO revisions (page_id, number, title, body, summary, author_id, created_at) "
        "VALUES (%s, %s, %s, %s, %s, %s, clock_timestamp())",
        (page["id"], number, title, body, summary, author_id),
    )
    await conn.execute(
        "UPDATE pages SET title = %s, title_lower = %s, revision = %s WHERE id = %s",
        (title, title.lower(), number, page["id"]),
    )
    page.update(title=title, body=body, revision=number)


# ---------------------------------------------------------------------------------------------
# Application
# ---------------------------------------------------------------------------------------------

app = FastAPI(lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None, redirect_slashes=False)

PROTECTED_PREFIXES = ("/pages", "/users", "/me")


@app.exception_handler(ApiError)
async def api_error_handler(_request: Request, exc: ApiError) -> JSONResponse:
    return error_response(exc.status, exc.code, exc.message, **exc.extra)


@app.exception_handler(StarletteHTTPException)
async def http_error_handler(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    # Authentication comes first on every protected path, also for unknown paths and methods.
    if request.url.path.startswith(PROTECTED_PREFIXES) and exc.status_code in (404, 405):
        try:
            await authenticate(request)
        except ApiError as err:
            return error_response(err.status, err.code, err.message)
    if exc.status_code == 404:
        return error_response(404, "not_found", "no such resource")
    if exc.status_code == 405:
        response = error_response(405, "method_not_allowed", "this path does not support the method")
        allow = (exc.headers or {}).get("Allow")
        if allow:
            response.headers["Allow"] = allow
        return response
    return error_response(exc.status_code, "internal_error", str(exc.detail))


@app.exception_handler(Exception)
async def unexpected_error_handler(_request: Request, _exc: Exception) -> JSONResponse:
    return error_response(500, "internal_error", "an unexpected error occurred")


@app.get("/health")
async def health() -> dict[str, str]:
    return {"status": "ok"}


# --- users -------------------------------------------------------------------------------------


@app.post("/auth/login")
async def login(request: Request) -> JSONResponse:
    data = (await read_body(request)).json()
    username, password = data.get("username"), data.get("password")
    bad = [name for name, value in (("username", username), ("password", password)) if not isinstance(value, str)]
    if bad:
        raise invalid(bad, "username and password must be strings")
    user = None
    if storable(username):
        async with db().connection() as conn:
            cur = await conn.execute(
                "SELECT id, username, role, created_at, password_hash FROM users WHERE username = %s", (username,)
            )
            user = await cur.fetchone()
    if user is None:
        await run_in_threadpool(burn_time_for_unknown_user, password)
        raise unauthorized("wrong username or password")
    if not await run_in_threadpool(verify_password, password, user["password_hash"]):
        raise unauthorized("wrong username or password")
    token = secrets.token_urlsafe(32)
    async with db().connection() as conn:
        await conn.execute("INSERT INTO tokens (token, user_id) VALUES (%s, %s)", (token, user["id"]))
    return JSONResponse({"token": token, "token_type": "bearer", "user": user_json(user)})


@app.get("/me")
async def me(request: Request) -> JSONResponse:
    user = await authenticate(request)
    return JSONResponse(user_json(user))


@app.get("/users")
async def list_users(request: Request) -> JSONResponse:
    user = await authenticate(request)
    require_role(user, "admin")
    async with db().connection() as conn:
        cur = await conn.execute("SELECT id, username, role, created_at FROM users ORDER BY id")
        rows = await cur.fetchall()
    return JSONResponse({"items": [user_json(r) for r in rows]})


@app.post("/users")
async def create_user(request: Request) -> JSONResponse:
    body = await read_body(request)
    user = await authenticate(request)
    require_role(user, "admin")
    data = body.json()
    username, password, role = data.get("username"), data.get("password"), data.get("role")
    bad = []
    if not (isinstance(username, str) and USERNAME_RE.fullmatch(username)):
        bad.append("username")
    if not (isinstance(password, str) and 8 <= len(password) <= 128 and storable(password)):
        bad.append("password")
    if not (isinstance(role, str) and role in ROLES):
        bad.append("role")
    if bad:
        raise invalid(bad, "invalid user")
    async with db().connection() as conn:
        cur = await conn.execute("SELECT 1 FROM users WHERE username = %s", (username,))
        if await cur.fetchone() is not None:
            raise ApiError(409, "username_taken", "this username is taken")
    hashed = await run_in_threadpool(hash_password, password)
    async with db().connection() as conn:
        cur = await conn.execute(
            "INSERT INTO users (username, password_hash, role) VALUES (%s, %s, %s) "
            "ON CONFLICT (username) DO NOTHING RETURNING id, username, role, created_at",
            (username, hashed, role),
        )
        row = await cur.fetchone()
    if row is None:
        raise ApiError(409, "username_taken", "this username is taken")
    return JSONResponse(user_json(row), status_code=201)


# --- pages -------------------------------------------------------------------------------------


@app.get("/pages")
async def list_pages(request: Request) -> JSONResponse:
    await authenticate(request)
    limit, offset, bad = pagination(request)
    q = request.query_params.get("q", "")
    if len(q) > 100:
        bad.append("q")
    if bad:
        raise invalid(bad, "invalid query parameters")
    needle = q.lower()
    if not storable(needle):
        return JSONResponse({"items": [], "total": 0, "limit": limit, "offset": offset})
    async with db().connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM pages WHERE strpos(title_lower, %s) > 0", (needle,))
        total = (await cur.fetchone())["n"]
        items: list[dict[str, Any]] = []
        if offset < total:
            cur = await conn.execute(
                "SELECT id, slug, title, protected, revision FROM pages WHERE strpos(title_lower, %s) > 0 "
                "ORDER BY created_at, id LIMIT %s OFFSET %s",
                (needle, limit, offset),
            )
            items = [dict(r) for r in await cur.fetchall()]
    return JSONResponse({"items": items, "total": total, "limit": limit, "offset": offset})


@app.post("/pages")
async def create_page(request: Request) -> JSONResponse:
    body = await read_body(request)
    user = await authenticate(request)
    require_role(user, "editor", "admin")
    data = body.json()
    bad = []
    if not valid_slug(data.get("slug")):
        bad.append("slug")
    if not valid_title(data.get("title")):
        bad.append("title")
    if not valid_page_body(data.get("body")):
        bad.append("body")
    if "summary" in data and not valid_summary(data["summary"]):
        bad.append("summary")
    if bad:
        raise invalid(bad, "invalid page")
    slug, title, text = data["slug"], data["title"], data["body"]
    summary = data.get("summary", "")
    async with db().connection() as conn:
        cur = await conn.execute(
            "INSERT INTO pages (slug, title, title_lower, protected, revision, created_at) "
            "VALUES (%s, %s, %s, false, 1, clock_timestamp()) ON CONFLICT (slug) DO NOTHING RETURNING id",
            (slug, title, title.lower()),
        )
        row = await cur.fetchone()
        if row is None:
            raise ApiError(409, "slug_taken", "a page has this slug")
        await conn.execute("DELETE FROM redirects WHERE slug = %s", (slug,))
        await conn.execute(
            "INSERT INTO revisions (page_id, number, title, body, summary, author_id, created_at) "
            "VALUES (%s, 1, %s, %s, %s, %s, clock_timestamp())",
            (row["id"], title, text, summary, user["id"]),
        )
        page = await load_page(conn, slug)
    return JSONResponse(page_json(page), status_code=201)


@app.get("/pages/{slug}")
async def get_page(request: Request, slug: str) -> JSONResponse:
    await authenticate(request)
    if not valid_slug(slug):
        raise not_found("no page has this slug")
    async with db().connection() as conn:
        cur = await conn.execute(PAGE_SELECT + "WHERE p.slug = %s", (slug,))
        page = await cur.fetchone()
        if page is not None:
            result = page_json(page)
            result["redirected_from"] = None
            return JSONResponse(result)
        cur = await conn.execute(
            PAGE_SELECT + "JOIN redirects d ON d.page_id = p.id WHERE d.slug = %s", (slug,)
        )
        page = await cur.fetchone()
    if page is None:
        raise not_found("no page has this slug")
    result = page_json(page)
    result["redirected_from"] = slug
    return JSONResponse(result)


@app.put("/pages/{slug}")
async def edit_page(request: Request, slug: str) -> JSONResponse:
    body = await read_body(request)
    user = await authenticate(request)
    require_role(user, "editor", "admin")
    async with db().connection() as conn:
        page = await load_page(conn, slug, lock=True)
        check_protection(user, page)
        data = body.json()
        bad = []
        if not valid_page_body(data.get("body")):
            bad.append("body")
        base = data.get("base_revision")
        if not (is_int(base) and base >= 1):
            bad.append("base_revision")
        if "title" in data and not valid_title(data["title"]):
            bad.append("title")
        if "summary" in data and not valid_summary(data["summary"]):
            bad.append("summary")
        if bad:
            raise invalid(bad, "invalid edit")
        if base != page["revision"]:
            raise ApiError(
                409,
                "edit_conflict",
                "the page changed since revision {}".format(base),
                current_revision=page["revision"],
            )
        title = data.get("title", page["title"])
        text = data["body"]
        if title != page["title"] or text != page["body"]:
            await add_revision(conn, page, title, text, data.get("summary", ""), user["id"])
    return JSONResponse(page_json(page))


@app.delete("/pages/{slug}")
async def delete_page(request: Request, slug: str) -> Response:
    user = await authenticate(request)
    require_role(user, "admin")
    async with db().connection() as conn:
        page = await load_page(conn, slug, lock=True)
        await conn.execute("DELETE FROM redirects WHERE page_id = %s", (page["id"],))
        await conn.execute("DELETE FROM revisions WHERE page_id = %s", (page["id"],))
        await conn.execute("DELETE FROM pages WHERE id = %s", (page["id"],))
    return Response(status_code=204)


@app.put("/pages/{slug}/protection")
async def set_protection(request: Request, slug: str) -> JSONResponse:
    body = await read_body(request)
    user = await authenticate(request)
    require_role(user, "admin")
    async with db().connection() as conn:
        page = await load_page(conn, slug, lock=True)
        data = body.json()
        value = data.get("protected")
        if not isinstance(value, bool):
            raise invalid(["protected"], "protected must be a boolean")
        await conn.execute("UPDATE pages SET protected = %s WHERE id = %s", (value, page["id"]))
        page["protected"] = value
    return JSONResponse(page_json(page))


@app.post("/pages/{slug}/move")
async def move_page(request: Request, slug: str) -> JSONResponse:
    body = await read_body(request)
    user = await authenticate(request)
    require_role(user, "editor", "admin")
    try:
        async with db().connection() as conn:
            page = await load_page(conn, slug, lock=True)
            check_protection(user, page)
            data = body.json()
            new_slug = data.get("new_slug")
            if not valid_slug(new_slug):
                raise invalid(["new_slug"], "new_slug must be a valid slug")
            cur = await conn.execute("SELECT 1 FROM pages WHERE slug = %s", (new_slug,))
            if await cur.fetchone() is not None:
                raise ApiError(409, "slug_taken", "a page has this slug")
            await conn.execute("DELETE FROM redirects WHERE slug = %s", (new_slug,))
            await conn.execute("UPDATE pages SET slug = %s WHERE id = %s", (new_slug, page["id"]))
            await conn.execute(
                "INSERT INTO redirects (slug, page_id) VALUES (%s, %s) "
                "ON CONFLICT (slug) DO UPDATE SET page_id = EXCLUDED.page_id",
                (slug, page["id"]),
            )
            page["slug"] = new_slug
    except psycopg.errors.UniqueViolation:
        raise ApiError(409, "slug_taken", "a page has this slug") from None
    return JSONResponse(page_json(page))


# --- revisions ---------------------------------------------------------------------------------


@app.post("/pages/{slug}/revert")
async def revert_page(request: Request, slug: str) -> JSONResponse:
    body = await read_body(request)
    user = await authenticate(request)
    require_role(user, "editor", "admin")
    async with db().connection() as conn:
        page = await load_page(conn, slug, lock=True)
        check_protection(user, page)
        data = body.json()
        bad = []
        number = data.get("revision")
        target = None
        if not (is_int(number) and number >= 1):
            bad.append("revision")
        elif number <= INT32_MAX:
            cur = await conn.execute(
                "SELECT title, body FROM revisions WHERE page_id = %s AND number = %s", (page["id"], number)
            )
            target = await cur.fetchone()
        if "revision" not in bad and target is None:
            bad.append("revision")
        if "summary" in data and not valid_summary(data["summary"]):
            bad.append("summary")
        if bad:
            raise invalid(bad, "invalid revert")
        assert target is not None
        if target["title"] != page["title"] or target["body"] != page["body"]:
            summary = data.get("summary", "Reverted to revision {}".format(number))
            await add_revision(conn, page, target["title"], target["body"], summary, user["id"])
    return JSONResponse(page_json(page))


@app.get("/pages/{slug}/revisions")
async def list_revisions(request: Request, slug: str) -> JSONResponse:
    await authenticate(request)
    async with db().connection() as conn:
        page = await load_page(conn, slug)
        limit, offset, bad = pagination(request)
        if bad:
            raise invalid(bad, "invalid query parameters")
        cur = await conn.execute("SELECT count(*) AS n FROM revisions WHERE page_id = %s", (page["id"],))
        total = (await cur.fetchone())["n"]
        items: list[dict[str, Any]] = []
        if offset < total:
            cur = await conn.execute(
                "SELECT r.number, r.title, r.summary, u.username AS author, r.created_at "
                "FROM revisions r JOIN users u ON u.id = r.author_id WHERE r.page_id = %s "
                "ORDER BY r.number DESC LIMIT %s OFFSET %s",
                (page["id"], limit, offset),
            )
            items = [{**r, "created_at": iso(r["created_at"])} for r in await cur.fetchall()]
    return JSONResponse({"items": items, "total": total, "limit": limit, "offset": offset})


@app.get("/pages/{slug}/revisions/{number}")
async def get_revision(request: Request, slug: str, number: str) -> JSONResponse:
    await authenticate(request)
    async with db().connection() as conn:
        page = await load_page(conn, slug)
        value = parse_path_number(number)
        row = None
        if value is not None and value <= INT32_MAX:
            cur = await conn.execute(
                "SELECT r.number, r.title, r.body, r.summary, u.username AS author, r.created_at "
                "FROM revisions r JOIN users u ON u.id = r.author_id WHERE r.page_id = %s AND r.number = %s",
                (page["id"], value),
            )
            row = await cur.fetchone()
    if row is None:
        raise not_found("the page has no such revision")
    return JSONResponse({**row, "created_at": iso(row["created_at"])})


@app.get("/pages/{slug}/diff")
async def diff(request: Request, slug: str) -> JSONResponse:
    await authenticate(request)
    async with db().connection() as conn:
        page = await load_page(conn, slug)
        numbers: dict[str, int] = {}
        bad = []
        for name in ("from", "to"):
            raw = request.query_params.get(name)
            value = parse_path_number(raw) if raw is not None else None
            if value is None:
                bad.append(name)
            else:
                numbers[name] = value
        if bad:
            raise invalid(bad, "from and to must be positive integers")
        wanted = [n for n in {numbers["from"], numbers["to"]} if n <= INT32_MAX]
        cur = await conn.execute(
            "SELECT number, title, body FROM revisions WHERE page_id = %s AND number = ANY(%s)",
            (page["id"], wanted),
        )
        found = {r["number"]: r for r in await cur.fetchall()}
    if numbers["from"] not in found or numbers["to"] not in found:
        raise not_found("the page has no such revision")
    old, new = found[numbers["from"]], found[numbers["to"]]
    old_lines, new_lines = split_lines(old["body"]), split_lines(new["body"])
    common = await run_in_threadpool(lcs_length, old_lines, new_lines)
    return JSONResponse(
        {
            "from": numbers["from"],
            "to": numbers["to"],
            "removed": len(old_lines) - common,
            "added": len(new_lines) - common,
            "unchanged": common,
            "title_changed": old["title"] != new["title"],
        }
    )


if __name__ == "__main__":
    uvicorn.run(app, host="0.0.0.0", port=int(os.environ.get("PORT", "8000")), log_level="warning")
