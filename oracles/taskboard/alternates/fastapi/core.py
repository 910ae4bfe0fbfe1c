"""Shared helpers: errors, JSON body parsing, timestamps, pagination, bearer tokens."""
import hashlib
import itertools
import json
import re
import secrets
import uuid
from datetime import datetime, timedelta, timezone

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException


class ApiError(Exception):
    def __init__(self, status, code, message, fields=None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.fields = fields


def unauthorized(message="missing or invalid bearer token"):
    return ApiError(401, "unauthorized", message)


def not_found(message="not found"):
    return ApiError(404, "not_found", message)


def conflict(message="conflict"):
    return ApiError(409, "conflict", message)


def validation(fields, message="validation failed"):
    seen = []
    for f in fields:
        if f not in seen:
            seen.append(f)
    return ApiError(422, "validation_error", message, seen)


def error_response(err: ApiError):
    body = {"error": err.code, "message": err.message}
    if err.fields is not None or err.status == 422:
        body["fields"] = list(err.fields or [])
    return JSONResponse(body, status_code=err.status)


def install_handlers(app: FastAPI):
    @app.exception_handler(ApiError)
    async def _api_error(request, exc):
        return error_response(exc)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request, exc):
        if exc.status_code == 404:
            return error_response(not_found("no such route"))
        if exc.status_code == 405:
            return JSONResponse({"error": "method_not_allowed", "message": "method not allowed"},
                                status_code=405)
        return JSONResponse({"error": "error", "message": str(exc.detail)}, status_code=exc.status_code)

    @app.exception_handler(RequestValidationError)
    async def _req_validation(request, exc):
        return error_response(validation([], "invalid request"))

    @app.exception_handler(Exception)
    async def _internal(request, exc):
        return JSONResponse({"error": "internal_error", "message": "internal error"}, status_code=500)


def no_content():
    return Response(status_code=204)


# ---------------------------------------------------------------- JSON bodies

def _reject_constant(name):
    raise ValueError("invalid JSON constant " + name)


async def json_object(request: Request) -> dict:
    """The request body as a JSON object, or 422 with an empty field list."""
    raw = await request.body()
    if len(raw) > 1_048_576:  # spec: a body over 1 MiB gets 413 or 422
        raise validation([], "request body is larger than 1 MiB")
    try:
        text = raw.decode("utf-8")
        data = json.loads(text, parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise validation([], "request body is not valid JSON")
    if not isinstance(data, dict):
        raise validation([], "request body must be a JSON object")
    if _too_deep(data):
        raise validation([], "request body is nested more than 32 levels deep")
    return data


def _too_deep(value, limit=32):
    """Spec: a body nested more than 32 levels (objects and arrays together) gets 422."""
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (dict, list)):
            if depth > limit:
                return True
            stack.extend((c, depth + 1) for c in (v.values() if isinstance(v, dict) else v))
    return False


def is_str(v):
    return isinstance(v, str)


def is_bool(v):
    return isinstance(v, bool)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


# ---------------------------------------------------------------- timestamps

_TS_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def parse_timestamp(value):
    """Parse an RFC 3339 date-time with a zone; returns an aware UTC datetime or None."""
    if not isinstance(value, str):
        return None
    m = _TS_RE.match(value)
    if not m:
        return None
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    frac = m.group(7)
    zone = m.group(8)
    micro = 0
    if frac:
        digits = frac[1:]
        micro = int((digits + "000000")[:6])
    if zone in ("Z", "z"):
        tz = timezone.utc
    else:
        sign = 1 if zone[0] == "+" else -1
        zh, zm = int(zone[1:3]), int(zone[4:6])
        if zh > 23 or zm > 59:
            return None
        tz = timezone(sign * timedelta(hours=zh, minutes=zm))
    try:
        dt = datetime(year, month, day, hour, minute, second, micro, tzinfo=tz)
    except ValueError:
        return None
    try:
        return dt.astimezone(timezone.utc)
    except (OverflowError, ValueError):
        return None


def now():
    return datetime.now(timezone.utc)


def fmt_ts(dt):
    if dt is None:
        return None
    dt = dt.astimezone(timezone.utc)
    if dt.microsecond % 1000 == 0:
        return dt.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (dt.microsecond // 1000)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# ---------------------------------------------------------------- pagination

_INT_RE = re.compile(r"^[+-]?[0-9]+$")


def query_int(request: Request, name, default, minimum=None, maximum=None, errors=None):
    """Parse an integer query parameter; on failure append name to errors and return None."""
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if not _INT_RE.match(raw):
        errors.append(name)
        return None
    v = int(raw)
    if (minimum is not None and v < minimum) or (maximum is not None and v > maximum):
        errors.append(name)
        return None
    return v


def paging(request: Request, errors):
    limit = query_int(request, "limit", 20, 1, 100, errors)
    offset = query_int(request, "offset", 0, 0, None, errors)
    return limit, offset


def page(items, limit, offset, render):
    total = len(items)
    return {"items": [render(x) for x in items[offset:offset + limit]],
            "total": total, "limit": limit, "offset": offset}


# ---------------------------------------------------------------- ids, passwords, tokens

_seq = itertools.count(1)


def next_seq():
    return next(_seq)


def new_id():
    return uuid.uuid4().hex


def hash_password(password, salt=None):
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, 1000)
    return salt, digest


def check_password(password, salt, digest):
    return secrets.compare_digest(hash_password(password, salt)[1], digest)


def new_token():
    return secrets.token_urlsafe(32)


def bearer_token(request: Request):
    """The token of an `Authorization: Bearer <token>` header, or None when missing/malformed."""
    header = request.headers.get("authorization")
    if not header:
        return None
    parts = header.strip().split(" ")
    parts = [p for p in parts if p]
    if len(parts) != 2 or parts[0].lower() != "bearer":
        return None
    return parts[1]
