"""Expense split: shared projects, bills, balances and settlements (FastAPI + PostgreSQL)."""

import asyncio
import datetime as dt
import hashlib
import hmac
import json
import os
import re
import secrets
from contextlib import asynccontextmanager
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from psycopg import errors as pg_errors
from psycopg_pool import AsyncConnectionPool
from starlette.exceptions import HTTPException as StarletteHTTPException

from page import PAGE_HTML

MAX_BODY = 1_048_576
MAX_DEPTH = 32
INT32_MAX = 2_147_483_647
SLUG_RE = re.compile(r"[a-z0-9][a-z0-9-]{2,39}")
ID_RE = re.compile(r"[1-9][0-9]{0,9}")
DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")

# token -> project slug; tokens live as long as the process (the spec allows this).
TOKENS: dict[str, str] = {}


# --------------------------------------------------------------------------- errors


class ApiError(Exception):
    def __init__(self, status, code, message, fields=None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.fields = fields


def error_response(status, code, message, fields=None):
    body = {"error": code, "message": message}
    if fields is not None:
        body["fields"] = sorted(set(fields))
    return JSONResponse(body, status_code=status)


def invalid(fields, message=None):
    fields = sorted(set(fields))
    return ApiError(422, "validation_error", message or ("invalid or missing fields: " + ", ".join(fields)), fields)


def not_found(what="resource"):
    return ApiError(404, "not_found", f"{what} not found")


# --------------------------------------------------------------------------- passwords

SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1


def _pw_bytes(password: str) -> bytes:
    return password.encode("utf-8", "surrogatepass")


def hash_password(password: str) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(_pw_bytes(password), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=32)
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${salt.hex()}${digest.hex()}"


def verify_password(password: str, stored: str) -> bool:
    try:
        kind, n, r, p, salt_hex, digest_hex = stored.split("$")
        if kind != "scrypt":
            return False
        digest = hashlib.scrypt(_pw_bytes(password), salt=bytes.fromhex(salt_hex), n=int(n), r=int(r), p=int(p),
                                dklen=len(digest_hex) // 2)
        return hmac.compare_digest(digest.hex(), digest_hex)
    except Exception:
        return False


_DUMMY_HASH = None


def dummy_verify(password: str) -> None:
    """Spend the same time as a real check so unknown slugs are not told apart by timing."""
    global _DUMMY_HASH
    if _DUMMY_HASH is None:
        _DUMMY_HASH = hash_password(secrets.token_hex(8))
    verify_password(password, _DUMMY_HASH)


# --------------------------------------------------------------------------- database

SCHEMA = """
CREATE TABLE IF NOT EXISTS projects (
    slug text PRIMARY KEY,
    name text NOT NULL,
    password_hash text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS members (
    id serial PRIMARY KEY,
    project_slug text NOT NULL REFERENCES projects(slug),
    name text NOT NULL,
    weight integer NOT NULL,
    active boolean NOT NULL DEFAULT true,
    CONSTRAINT members_project_name_key UNIQUE (project_slug, name)
);
CREATE TABLE IF NOT EXISTS bills (
    id serial PRIMARY KEY,
    project_slug text NOT NULL REFERENCES projects(slug),
    payer_id integer NOT NULL REFERENCES members(id),
    amount_cents bigint NOT NULL,
    date date NOT NULL,
    description text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS bill_owers (
    bill_id integer NOT NULL REFERENCES bills(id) ON DELETE CASCADE,
    member_id integer NOT NULL REFERENCES members(id),
    share_cents bigint NOT NULL,
    PRIMARY KEY (bill_id, member_id)
);
CREATE INDEX IF NOT EXISTS bills_project_idx ON bills (project_slug, date DESC, id DESC);
CREATE INDEX IF NOT EXISTS bills_payer_idx ON bills (payer_id);
CREATE INDEX IF NOT EXISTS bill_owers_member_idx ON bill_owers (member_id);
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


async def init_db():
    global pool
    last_error = None
    for _ in range(60):
        try:
            pool = AsyncConnectionPool(database_url(), min_size=1, max_size=10, open=False)
            await pool.open(wait=True, timeout=10)
            async with pool.connection() as conn:
                # serialise concurrent start-ups creating the schema
                await conn.execute("SELECT pg_advisory_xact_lock(727272)")
                await conn.execute(SCHEMA)
            return
        except Exception as exc:  # database not reachable yet
            last_error = exc
            if pool is not None:
                await pool.close()
                pool = None
            await asyncio.sleep(1)
    raise RuntimeError(f"database not reachable: {last_error}")


@asynccontextmanager
async def lifespan(_app):
    await init_db()
    yield
    if pool is not None:
        await pool.close()


# --------------------------------------------------------------------------- body limits


class BodyLimitMiddleware:
    """Reads the whole body first; over 1 MiB answers 413 (after draining it) without calling the app."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = None
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = None
        too_large = declared is not None and declared > MAX_BODY
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            data = message.get("body", b"")
            size += len(data)
            if size > MAX_BODY:
                too_large = True
            if not too_large:
                chunks.append(data)
            more = message.get("more_body", False)
            if too_large and size > 64 * MAX_BODY:
                break  # stop draining absurd bodies
        if too_large:
            # 422 rather than 413: the contract's error codes and statuses all allow it
            response = error_response(422, "validation_error", "request body larger than 1 MiB", ["body"])
            return await response(scope, receive, send)
        body = b"".join(chunks)
        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return await self.app(scope, replay, send)


# --------------------------------------------------------------------------- helpers


def _reject_constant(_name):
    raise ValueError("non-standard JSON constant")


def json_depth(value) -> int:
    depth, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            depth = max(depth, level)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return depth


async def read_object(request: Request) -> dict:
    raw = await request.body()
    try:
        data = json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, RecursionError, UnicodeDecodeError):
        raise invalid(["body"], "the body is not a JSON object")
    if not isinstance(data, dict):
        raise invalid(["body"], "the body is not a JSON object")
    if json_depth(data) > MAX_DEPTH:
        raise invalid(["body"], f"the body is nested more than {MAX_DEPTH} levels deep")
    return data


def is_int(value) -> bool:
    return type(value) is int


def good_text(value, max_len, non_blank=True, min_len=1) -> bool:
    if not isinstance(value, str):
        return False
    if not (min_len <= len(value) <= max_len):
        return False
    if non_blank and not value.strip():
        return False
    if "\x00" in value:
        return False  # PostgreSQL text cannot hold NUL
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False  # lone surrogates cannot be stored
    return True


def iso(ts: dt.datetime) -> str:
    return ts.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")


def parse_path_id(raw: str, what: str) -> int:
    if not ID_RE.fullmatch(raw):
        raise not_found(what)
    value = int(raw)
    if value > INT32_MAX:
        raise not_found(what)
    return value


def authorize(request: Request, slug: str) -> None:
    header = request.headers.get("authorization")
    if not header:
        raise ApiError(401, "unauthorized", "missing bearer token")
    parts = header.split(" ")
    if len(parts) != 2 or parts[0].lower() != "bearer" or not parts[1]:
        raise ApiError(401, "unauthorized", "malformed authorization header")
    owner = TOKENS.get(parts[1])
    if owner is None:
        raise ApiError(401, "unauthorized", "unknown token")
    if owner != slug:
        raise ApiError(403, "forbidden", "the token does not open this project")


def compute_shares(amount: int, owers: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """owers: [(member_id, weight)] -> [(member_id, share_cents)] in ascending id order."""
    owers = sorted(owers)
    total_weight = sum(w for _, w in owers)
    shares = [[mid, amount * w // total_weight] for mid, w in owers]
    left = amount - sum(s for _, s in shares)
    for i in range(left):
        shares[i][1] += 1
    return [(mid, s) for mid, s in shares]


def member_json(row):
    return {"id": row[0], "name": row[1], "weight": row[2], "active": row[3]}


def bill_json(row, owers):
    bid, payer, amount, date, description, created = row
    return {
        "id": bid,
        "payer_id": payer,
        "amount_cents": amount,
        "date": date.isoformat(),
        "description": description,
        "owers": [mid for mid, _ in owers],
        "shares": [{"member_id": mid, "share_cents": s} for mid, s in owers],
        "created_at": iso(created),
    }


# --------------------------------------------------------------------------- app

app = FastAPI(lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None, redirect_slashes=False)
app.add_middleware(BodyLimitMiddleware)


@app.exception_handler(ApiError)
async def api_error_handler(_request, exc: ApiError):
    return error_response(exc.status, exc.code, exc.message, exc.fields)


@app.exception_handler(StarletteHTTPException)
async def http_error_handler(_request, exc: StarletteHTTPException):
    if exc.status_code == 405:
        return error_response(405, "method_not_allowed", "method not allowed on this path")
    if exc.status_code == 404:
        return error_response(404, "not_found", "no such path")
    return error_response(exc.status_code, "error", str(exc.detail))


@app.exception_handler(Exception)
async def unexpected_error_handler(_request, _exc):
    return error_response(500, "internal_error", "unexpected failure")


@app.get("/health")
async def health():
    return {"status": "ok"}


@app.get("/", response_class=HTMLResponse)
async def page():
    return HTMLResponse(PAGE_HTML, headers={"Cache-Control": "no-store"})


# ---- projects


@app.post("/api/projects")
async def create_project(request: Request):
    data = await read_object(request)
    bad = []
    slug, name, password = data.get("slug"), data.get("name"), data.get("password")
    if not (isinstance(slug, str) and SLUG_RE.fullmatch(slug)):
        bad.append("slug")
    if not good_text(name, 100):
        bad.append("name")
    if not (isinstance(password, str) and 8 <= len(password) <= 128):
        bad.append("password")
    if bad:
        raise invalid(bad)
    async with pool.connection() as conn:
        exists = await (await conn.execute("SELECT 1 FROM projects WHERE slug = %s", (slug,))).fetchone()
    if exists:
        raise ApiError(409, "slug_taken", "a project with this slug exists")
    password_hash = await asyncio.to_thread(hash_password, password)
    async with pool.connection() as conn:
        row = await (await conn.execute(
            "INSERT INTO projects (slug, name, password_hash, created_at) VALUES (%s, %s, %s, now()) "
            "ON CONFLICT (slug) DO NOTHING RETURNING slug, name, created_at",
            (slug, name, password_hash))).fetchone()
    if row is None:
        raise ApiError(409, "slug_taken", "a project with this slug exists")
    return JSONResponse({"slug": row[0], "name": row[1], "created_at": iso(row[2])}, status_code=201)


@app.post("/api/projects/{slug}/token")
async def obtain_token(slug: str, request: Request):
    data = await read_object(request)
    password = data.get("password")
    if not isinstance(password, str):
        raise invalid(["password"])
    async with pool.connection() as conn:
        row = await (await conn.execute("SELECT password_hash FROM projects WHERE slug = %s", (slug,))).fetchone()
    if row is None:
        await asyncio.to_thread(dummy_verify, password)
        ok = False
    else:
        ok = await asyncio.to_thread(verify_password, password, row[0])
    if not ok:
        raise ApiError(401, "unauthorized", "wrong slug or password")
    token = secrets.token_urlsafe(32)
    TOKENS[token] = slug
    return {"token": token}


@app.get("/api/projects/{slug}")
async def get_project(slug: str, request: Request):
    authorize(request, slug)
    async with pool.connection() as conn:
        row = await (await conn.execute(
            "SELECT slug, name, created_at FROM projects WHERE slug = %s", (slug,))).fetchone()
    if row is None:
        raise not_found("project")
    return {"slug": row[0], "name": row[1], "created_at": iso(row[2])}


# ---- members


async def lock_project(conn, slug):
    await conn.execute("SELECT 1 FROM projects WHERE slug = %s FOR UPDATE", (slug,))


@app.get("/api/projects/{slug}/members")
async def list_members(slug: str, request: Request):
    authorize(request, slug)
    async with pool.connection() as conn:
        rows = await (await conn.execute(
            "SELECT id, name, weight, active FROM members WHERE project_slug = %s ORDER BY id", (slug,))).fetchall()
    return {"items": [member_json(r) for r in rows]}


@app.post("/api/projects/{slug}/members")
async def create_member(slug: str, request: Request):
    authorize(request, slug)
    data = await read_object(request)
    bad = []
    name = data.get("name")
    if not good_text(name, 60):
        bad.append("name")
    weight = data.get("weight", 1)
    if not (is_int(weight) and 1 <= weight <= 100):
        bad.append("weight")
    if bad:
        raise invalid(bad)
    try:
        async with pool.connection() as conn:
            row = await (await conn.execute(
                "INSERT INTO members (project_slug, name, weight, active) VALUES (%s, %s, %s, true) "
                "RETURNING id, name, weight, active", (slug, name, weight))).fetchone()
    except pg_errors.UniqueViolation:
        raise ApiError(409, "member_exists", "another member of the project has this name")
    return JSONResponse(member_json(row), status_code=201)


@app.patch("/api/projects/{slug}/members/{member_id}")
async def update_member(slug: str, member_id: str, request: Request):
    authorize(request, slug)
    mid = parse_path_id(member_id, "member")
    async with pool.connection() as conn:
        found = await (await conn.execute(
            "SELECT 1 FROM members WHERE id = %s AND project_slug = %s", (mid, slug))).fetchone()
    if not found:
        raise not_found("member")
    data = await read_object(request)
    bad = []
    if "name" in data and not good_text(data["name"], 60):
        bad.append("name")
    if "weight" in data and not (is_int(data["weight"]) and 1 <= data["weight"] <= 100):
        bad.append("weight")
    if "active" in data and not isinstance(data["active"], bool):
        bad.append("active")
    if bad:
        raise invalid(bad)
    try:
        async with pool.connection() as conn:
            await lock_project(conn, slug)
            row = await (await conn.execute(
                "SELECT id, name, weight, active FROM members WHERE id = %s AND project_slug = %s FOR UPDATE",
                (mid, slug))).fetchone()
            if row is None:
                raise not_found("member")
            name = data.get("name", row[1])
            weight = data.get("weight", row[2])
            active = data.get("active", row[3])
            if "name" in data:
                clash = await (await conn.execute(
                    "SELECT 1 FROM members WHERE project_slug = %s AND name = %s AND id <> %s",
                    (slug, name, mid))).fetchone()
                if clash:
                    raise ApiError(409, "member_exists", "another member of the project has this name")
            if data.get("active") is False:
                balance = await (await conn.execute(
                    "SELECT COALESCE((SELECT SUM(amount_cents) FROM bills WHERE payer_id = %s), 0)"
                    " - COALESCE((SELECT SUM(share_cents) FROM bill_owers WHERE member_id = %s), 0)",
                    (mid, mid))).fetchone()
                if balance[0] != 0:
                    raise ApiError(409, "balance_not_zero", "the member's balance is not zero")
            row = await (await conn.execute(
                "UPDATE members SET name = %s, weight = %s, active = %s WHERE id = %s "
                "RETURNING id, name, weight, active", (name, weight, active, mid))).fetchone()
    except pg_errors.UniqueViolation:
        raise ApiError(409, "member_exists", "another member of the project has this name")
    return member_json(row)


# ---- bills


def check_bill_shape(data):
    """Type and range checks that need no database. Returns (values, bad_fields)."""
    bad = []
    payer = data.get("payer_id")
    if not (is_int(payer) and 1 <= payer <= INT32_MAX):
        # an integer outside the id range names no member: invalid as well
        bad.append("payer_id")
    amount = data.get("amount_cents")
    if not (is_int(amount) and 1 <= amount <= 10_000_000):
        bad.append("amount_cents")
    date_value = None
    raw_date = data.get("date")
    if isinstance(raw_date, str) and DATE_RE.fullmatch(raw_date):
        try:
            date_value = dt.date.fromisoformat(raw_date)
        except ValueError:
            date_value = None
    if date_value is None:
        bad.append("date")
    description = data.get("description")
    if not good_text(description, 200):
        bad.append("description")
    owers = data.get("owers")
    if not (isinstance(owers, list) and 1 <= len(owers) <= 50
            and all(is_int(o) and 1 <= o <= INT32_MAX for o in owers)
            and len(set(owers)) == len(owers)):
        bad.append("owers")
    return (payer, amount, date_value, description, owers), bad


async def check_bill_members(conn, slug, values, bad):
    """Payer and owers must be active members of the project; returns {id: weight} of owers."""
    payer, _amount, _date, _description, owers = values
    ids = set()
    if "payer_id" not in bad:
        ids.add(payer)
    if "owers" not in bad:
        ids.update(owers)
    rows = []
    if ids:
        rows = await (await conn.execute(
            "SELECT id, weight, active FROM members WHERE project_slug = %s AND id = ANY(%s)",
            (slug, sorted(ids)))).fetchall()
    active = {r[0]: r[1] for r in rows if r[2]}
    if "payer_id" not in bad and payer not in active:
        bad.append("payer_id")
    if "owers" not in bad and any(o not in active for o in owers):
        bad.append("owers")
    if bad:
        raise invalid(bad)
    return {o: active[o] for o in owers}


async def insert_owers(conn, bill_id, shares):
    async with conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO bill_owers (bill_id, member_id, share_cents) VALUES (%s, %s, %s)",
            [(bill_id, mid, s) for mid, s in shares])


BILL_COLUMNS = "id, payer_id, amount_cents, date, description, created_at"


async def fetch_bill(conn, slug, bid):
    row = await (await conn.execute(
        f"SELECT {BILL_COLUMNS} FROM bills WHERE id = %s AND project_slug = %s", (bid, slug))).fetchone()
    if row is None:
        return None
    owers = await (await conn.execute(
        "SELECT member_id, share_cents FROM bill_owers WHERE bill_id = %s ORDER BY member_id", (bid,))).fetchall()
    return bill_json(row, owers)


@app.get("/api/projects/{slug}/bills")
async def list_bills(slug: str, request: Request):
    authorize(request, slug)
    async with pool.connection() as conn:
        rows = await (await conn.execute(
            "SELECT b.id, b.payer_id, b.amount_cents, b.date, b.description, b.created_at,"
            " array_agg(o.member_id ORDER BY o.member_id), array_agg(o.share_cents ORDER BY o.member_id)"
            " FROM bills b JOIN bill_owers o ON o.bill_id = b.id WHERE b.project_slug = %s"
            " GROUP BY b.id ORDER BY b.date DESC, b.id DESC", (slug,))).fetchall()
    return {"items": [bill_json(r[:6], list(zip(r[6], r[7]))) for r in rows]}


@app.post("/api/projects/{slug}/bills")
async def create_bill(slug: str, request: Request):
    authorize(request, slug)
    data = await read_object(request)
    values, bad = check_bill_shape(data)
    payer, amount, date_value, description, _owers = values
    async with pool.connection() as conn:
        await lock_project(conn, slug)
        weights = await check_bill_members(conn, slug, values, bad)
        shares = compute_shares(amount, list(weights.items()))
        row = await (await conn.execute(
            "INSERT INTO bills (project_slug, payer_id, amount_cents, date, description, created_at)"
            f" VALUES (%s, %s, %s, %s, %s, now()) RETURNING {BILL_COLUMNS}",
            (slug, payer, amount, date_value, description))).fetchone()
        await insert_owers(conn, row[0], shares)
    return JSONResponse(bill_json(row, shares), status_code=201)


@app.get("/api/projects/{slug}/bills/{bill_id}")
async def get_bill(slug: str, bill_id: str, request: Request):
    authorize(request, slug)
    bid = parse_path_id(bill_id, "bill")
    async with pool.connection() as conn:
        bill = await fetch_bill(conn, slug, bid)
    if bill is None:
        raise not_found("bill")
    return bill


@app.put("/api/projects/{slug}/bills/{bill_id}")
async def replace_bill(slug: str, bill_id: str, request: Request):
    authorize(request, slug)
    bid = parse_path_id(bill_id, "bill")
    async with pool.connection() as conn:
        found = await (await conn.execute(
            "SELECT 1 FROM bills WHERE id = %s AND project_slug = %s", (bid, slug))).fetchone()
    if not found:
        raise not_found("bill")
    data = await read_object(request)
    values, bad = check_bill_shape(data)
    payer, amount, date_value, description, _owers = values
    async with pool.connection() as conn:
        await lock_project(conn, slug)
        weights = await check_bill_members(conn, slug, values, bad)
        row = await (await conn.execute(
            "UPDATE bills SET payer_id = %s, amount_cents = %s, date = %s, description = %s"
            f" WHERE id = %s AND project_slug = %s RETURNING {BILL_COLUMNS}",
            (payer, amount, date_value, description, bid, slug))).fetchone()
        if row is None:
            raise not_found("bill")
        shares = compute_shares(amount, list(weights.items()))
        await conn.execute("DELETE FROM bill_owers WHERE bill_id = %s", (bid,))
        await insert_owers(conn, bid, shares)
    return bill_json(row, shares)


@app.delete("/api/projects/{slug}/bills/{bill_id}")
async def delete_bill(slug: str, bill_id: str, request: Request):
    authorize(request, slug)
    bid = parse_path_id(bill_id, "bill")
    async with pool.connection() as conn:
        await lock_project(conn, slug)
        await conn.execute(
            "DELETE FROM bill_owers WHERE bill_id IN (SELECT id FROM bills WHERE id = %s AND project_slug = %s)",
            (bid, slug))
        cur = await conn.execute("DELETE FROM bills WHERE id = %s AND project_slug = %s", (bid, slug))
        if cur.rowcount == 0:
            raise not_found("bill")
    return Response(status_code=204)


# ---- balances and settlements


async def fetch_balances(slug):
    async with pool.connection() as conn:
        rows = await (await conn.execute(
            "SELECT m.id, m.name, m.active,"
            " COALESCE((SELECT SUM(b.amount_cents) FROM bills b WHERE b.payer_id = m.id), 0)::bigint,"
            " COALESCE((SELECT SUM(o.share_cents) FROM bill_owers o WHERE o.member_id = m.id), 0)::bigint"
            " FROM members m WHERE m.project_slug = %s ORDER BY m.id", (slug,))).fetchall()
    return [{"member_id": r[0], "name": r[1], "active": r[2], "paid_cents": r[3], "owed_cents": r[4],
             "balance_cents": r[3] - r[4]} for r in rows]


def settle(balances: dict[int, int]) -> list[dict]:
    balances = dict(balances)
    plan = []
    while any(v != 0 for v in balances.values()):
        debtor = min((v, mid) for mid, v in balances.items() if v < 0)[1]
        creditor = min((-v, mid) for mid, v in balances.items() if v > 0)[1]
        amount = min(-balances[debtor], balances[creditor])
        plan.append({"from_id": debtor, "to_id": creditor, "amount_cents": amount})
        balances[debtor] += amount
        balances[creditor] -= amount
    return plan


@app.get("/api/projects/{slug}/balances")
async def list_balances(slug: str, request: Request):
    authorize(request, slug)
    return {"items": await fetch_balances(slug)}


@app.get("/api/projects/{slug}/settlements")
async def list_settlements(slug: str, request: Request):
    authorize(request, slug)
    items = await fetch_balances(slug)
    return {"items": settle({i["member_id"]: i["balance_cents"] for i in items})}


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(app, host="0.0.0.0", port=int(os.environ.get("PORT", "8000")), log_level="warning")
