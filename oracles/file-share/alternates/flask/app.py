"""File share: uploads with per-user quotas and public share links (Flask alternate).

Metadata (users, tokens, files, shares) lives in memory behind one lock; file contents
live on disk in a fresh directory created with mkdtemp inside DATA_DIR.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import tempfile
import threading
import uuid
from datetime import datetime, timezone
from urllib.parse import quote

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

MAX_FILE = 1_048_576
MAX_JSON = 1_048_576
MAX_DEPTH = 32
MAX_QUOTA = 1_099_511_627_776
DEFAULT_QUOTA = 10_485_760
USERNAME_RE = re.compile(r"[a-z0-9_]{3,32}")
BAD_NAME_RE = re.compile(r"[/\\\x00-\x1f\x7f]")
RFC3339_RE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})"
)
STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
BRACKET_RE = re.compile(r"[\[\]{}]")

app = Flask(__name__)
app.json.sort_keys = False

LOCK = threading.RLock()
USERS: dict[str, dict] = {}          # id -> user record (insertion order = creation order)
USER_BY_NAME: dict[str, str] = {}    # username -> id
TOKENS: dict[str, str] = {}          # bearer token -> user id
FILES: dict[str, dict] = {}          # file id -> file record
FILE_BY_NAME: dict[tuple, str] = {}  # (owner id, name) -> file id
USAGE: dict[str, int] = {}           # user id -> bytes used
SHARES: dict[str, dict] = {}         # share id -> share record (insertion order = creation order)
SHARE_BY_TOKEN: dict[str, str] = {}  # token -> share id
STORE_DIR = ""


# ---------------------------------------------------------------- helpers
class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, fields: list | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.fields = status, code, message, fields


def validation(fields: list, message: str = "validation failed") -> ApiError:
    seen: list = []
    for f in fields:
        if f not in seen:
            seen.append(f)
    return ApiError(422, "validation_error", message, seen)


def json_response(payload, status: int = 200) -> Response:
    body = json.dumps(payload, ensure_ascii=False)
    return Response(body.encode("utf-8"), status=status, content_type="application/json")


@app.errorhandler(ApiError)
def _api_error(err: ApiError):
    payload = {"error": err.code, "message": err.message}
    if err.status == 422:
        payload["fields"] = err.fields or []
    return json_response(payload, err.status)


@app.errorhandler(HTTPException)
def _http_error(err: HTTPException):
    mapping = {404: "not_found", 405: "method_not_allowed", 413: "payload_too_large"}
    status = err.code or 500
    code = mapping.get(status)
    if code is None:
        # Anything else the framework raises (malformed request, ...) is reported as a
        # validation problem, never as an HTML page.
        status, code = (422, "validation_error") if status < 500 else (500, "internal_error")
    payload = {"error": code, "message": err.description or code}
    if status == 422:
        payload["fields"] = []
    resp = json_response(payload, status)
    if status == 405 and getattr(err, "valid_methods", None):
        resp.headers["Allow"] = ", ".join(err.valid_methods)
    return resp


@app.errorhandler(Exception)
def _unexpected(err: Exception):
    app.logger.exception("unexpected failure")
    return json_response({"error": "internal_error", "message": "internal error"}, 500)


def now() -> datetime:
    return datetime.now(timezone.utc)


def fmt_ts(dt: datetime) -> str:
    dt = dt.astimezone(timezone.utc)
    if dt.microsecond:
        return dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_ts(value: str) -> datetime | None:
    m = RFC3339_RE.fullmatch(value)
    if not m:
        return None
    year, month, day, hour, minute, second, frac, tz = m.groups()
    try:
        micro = int((frac[1:] + "000000")[:6]) if frac else 0
        if tz in ("Z", "z"):
            tzinfo = timezone.utc
        else:
            sign = 1 if tz[0] == "+" else -1
            oh, om = int(tz[1:3]), int(tz[4:6])
            if oh > 23 or om > 59:
                return None
            from datetime import timedelta
            tzinfo = timezone(sign * timedelta(hours=oh, minutes=om))
        sec = int(second)
        if sec == 60:  # leap second: clamp
            sec = 59
        dt = datetime(int(year), int(month), int(day), int(hour), int(minute), sec, micro, tzinfo)
        dt.astimezone(timezone.utc)  # may overflow at the edges of the calendar
        return dt
    except (ValueError, OverflowError):
        return None


# Slow salted hashes: scrypt (N=2^14, r=8, p=1) with a 16-byte random salt.
def hash_password(password: str) -> bytes:
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode("utf-8", "surrogatepass"), salt=salt,
                            n=2 ** 14, r=8, p=1, maxmem=64 * 1024 * 1024, dklen=32)
    return salt + digest


def verify_password(password: str, stored: bytes) -> bool:
    salt, digest = stored[:16], stored[16:]
    calc = hashlib.scrypt(password.encode("utf-8", "surrogatepass"), salt=salt,
                          n=2 ** 14, r=8, p=1, maxmem=64 * 1024 * 1024, dklen=32)
    return hmac.compare_digest(calc, digest)


_DUMMY_HASH: bytes = b""


def is_int(v) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return True
    return isinstance(v, float) and v.is_integer()


def read_json_object() -> dict:
    """Read the request body as a JSON object under the size and depth limits."""
    cl = request.content_length
    if cl is not None and cl > MAX_JSON:
        raise ApiError(413, "payload_too_large", "JSON body over 1 MiB")
    raw = request.stream.read(MAX_JSON + 1)
    if len(raw) > MAX_JSON:
        raise ApiError(413, "payload_too_large", "JSON body over 1 MiB")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise validation([], "body is not valid UTF-8 JSON")
    if text.startswith("\ufeff"):
        text = text[1:]
    depth = 0
    for m in BRACKET_RE.finditer(STRING_RE.sub("", text)):
        if m.group() in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise validation([], "JSON body nested too deeply")
        else:
            depth -= 1

    def _bad_constant(name):
        raise ValueError(name)

    try:
        data = json.loads(text, parse_constant=_bad_constant)
    except (ValueError, RecursionError):
        raise validation([], "body is not valid JSON")
    if not isinstance(data, dict):
        raise validation([], "body must be a JSON object")
    return data


def current_user() -> dict:
    header = request.headers.get("Authorization", "")
    parts = header.split(None, 1)
    if len(parts) == 2 and parts[0].lower() == "bearer":
        token = parts[1].strip()
        with LOCK:
            uid = TOKENS.get(token)
            if uid is not None and uid in USERS:
                return USERS[uid]
    raise ApiError(401, "unauthorized", "missing or invalid bearer token")


def require_admin() -> dict:
    user = current_user()
    if user["role"] != "admin":
        raise ApiError(403, "forbidden", "administrators only")
    return user


def user_out(u: dict) -> dict:
    return {
        "id": u["id"],
        "username": u["username"],
        "role": u["role"],
        "quota_bytes": u["quota_bytes"],
        "used_bytes": USAGE.get(u["id"], 0),
        "created_at": fmt_ts(u["created_at"]),
    }


def file_out(f: dict) -> dict:
    return {
        "id": f["id"],
        "name": f["name"],
        "size": f["size"],
        "content_type": f["content_type"],
        "sha256": f["sha256"],
        "created_at": fmt_ts(f["created_at"]),
        "updated_at": fmt_ts(f["updated_at"]),
    }


def share_out(s: dict) -> dict:
    return {
        "id": s["id"],
        "file_id": s["file_id"],
        "token": s["token"],
        "password_protected": s["pw_hash"] is not None,
        "expires_at": fmt_ts(s["expires_at"]) if s["expires_at"] is not None else None,
        "max_downloads": s["max_downloads"],
        "download_count": s["download_count"],
        "created_at": fmt_ts(s["created_at"]),
    }


def own_file(user: dict, file_id: str) -> dict:
    f = FILES.get(file_id)
    if f is None or f["owner"] != user["id"]:
        raise ApiError(404, "not_found", "file not found")
    return f


def not_found(what: str = "resource") -> ApiError:
    return ApiError(404, "not_found", f"{what} not found")


def download_response(f: dict, data: bytes) -> Response:
    resp = Response(data, status=200)
    resp.headers["Content-Type"] = f["content_type"]
    resp.headers["Content-Length"] = str(len(data))
    resp.headers["Content-Disposition"] = "attachment; filename*=UTF-8''" + quote(f["name"], safe="")
    resp.headers["X-Content-Type-Options"] = "nosniff"
    resp.headers["Cache-Control"] = "no-store"
    return resp


def read_content(f: dict) -> bytes:
    with open(f["path"], "rb") as fh:
        return fh.read()


def remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


# ---------------------------------------------------------------- system & auth
@app.get("/health")
def health():
    return json_response({"status": "ok"})


@app.post("/auth/token")
def login():
    body = read_json_object()
    bad = [k for k in ("username", "password") if not isinstance(body.get(k), str)]
    if bad:
        raise validation(bad)
    with LOCK:
        uid = USER_BY_NAME.get(body["username"])
        user = USERS.get(uid) if uid else None
        stored = user["pw_hash"] if user else _DUMMY_HASH
    ok = verify_password(body["password"], stored)
    if user is None or not ok:
        raise ApiError(401, "unauthorized", "wrong username or password")
    token = secrets.token_urlsafe(32)
    with LOCK:
        if user["id"] not in USERS:
            raise ApiError(401, "unauthorized", "wrong username or password")
        TOKENS[token] = user["id"]
        out = user_out(user)
    return json_response({"token": token, "token_type": "bearer", "user": out})


@app.get("/me")
def me():
    user = current_user()
    with LOCK:
        return json_response(user_out(user))


# ---------------------------------------------------------------- users (admin)
@app.get("/users")
def list_users():
    require_admin()
    with LOCK:
        return json_response({"items": [user_out(u) for u in USERS.values()]})


@app.post("/users")
def create_user():
    require_admin()
    body = read_json_object()
    bad = []
    username = body.get("username")
    if not isinstance(username, str) or not USERNAME_RE.fullmatch(username):
        bad.append("username")
    password = body.get("password")
    if not isinstance(password, str) or not 8 <= len(password) <= 128:
        bad.append("password")
    role = body.get("role", "user")
    if role not in ("admin", "user") or not isinstance(role, str):
        bad.append("role")
    quota = body.get("quota_bytes", DEFAULT_QUOTA)
    if not is_int(quota) or not 0 <= quota <= MAX_QUOTA:
        bad.append("quota_bytes")
    if bad:
        raise validation(bad)
    with LOCK:
        taken = username in USER_BY_NAME
    if taken:
        raise ApiError(409, "conflict", "username is taken")
    pw_hash = hash_password(password)
    with LOCK:
        if username in USER_BY_NAME:
            raise ApiError(409, "conflict", "username is taken")
        user = {
            "id": str(uuid.uuid4()),
            "username": username,
            "role": role,
            "quota_bytes": int(quota),
            "created_at": now(),
            "pw_hash": pw_hash,
        }
        USERS[user["id"]] = user
        USER_BY_NAME[username] = user["id"]
        USAGE[user["id"]] = 0
        return json_response(user_out(user), 201)


@app.patch("/users/<user_id>")
def update_user(user_id: str):
    require_admin()
    with LOCK:
        if user_id not in USERS:
            raise not_found("user")
    body = read_json_object()
    if "quota_bytes" in body:
        quota = body["quota_bytes"]
        if not is_int(quota) or not 0 <= quota <= MAX_QUOTA:
            raise validation(["quota_bytes"])
    with LOCK:
        user = USERS.get(user_id)
        if user is None:
            raise not_found("user")
        if "quota_bytes" in body:
            user["quota_bytes"] = int(body["quota_bytes"])
        return json_response(user_out(user))


# ---------------------------------------------------------------- files
@app.get("/files")
def list_files():
    user = current_user()
    with LOCK:
        items = sorted((f for f in FILES.values() if f["owner"] == user["id"]),
                       key=lambda f: f["name"])
        return json_response({
            "items": [file_out(f) for f in items],
            "used_bytes": USAGE.get(user["id"], 0),
            "quota_bytes": user["quota_bytes"],
        })


def valid_name(name) -> bool:
    return (isinstance(name, str) and 1 <= len(name) <= 255 and name not in (".", "..")
            and not BAD_NAME_RE.search(name))


@app.post("/files")
def upload_file():
    user = current_user()
    names = request.args.getlist("name")
    name = names[0] if names else None
    if not valid_name(name):
        raise validation(["name"], "invalid or missing file name")
    cl = request.content_length
    if cl is not None and cl > MAX_FILE:
        raise ApiError(413, "file_too_large", "file over 1,048,576 bytes")
    data = request.stream.read(MAX_FILE + 1)
    if len(data) > MAX_FILE:
        raise ApiError(413, "file_too_large", "file over 1,048,576 bytes")
    content_type = request.headers.get("Content-Type")
    if content_type is None or content_type == "":
        content_type = "application/octet-stream"
    size = len(data)
    sha = hashlib.sha256(data).hexdigest()
    # Quick check before touching the disk; repeated under the lock before committing.
    with LOCK:
        existing = FILES.get(FILE_BY_NAME.get((user["id"], name), ""))
        old = existing["size"] if existing else 0
        if USAGE.get(user["id"], 0) - old + size > user["quota_bytes"]:
            raise ApiError(409, "quota_exceeded", "upload would exceed the quota")
    fd, path = tempfile.mkstemp(dir=STORE_DIR, prefix="blob-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
    except BaseException:
        remove_quietly(path)
        raise
    old_path = None
    with LOCK:
        if user["id"] not in USERS:
            remove_quietly(path)
            raise ApiError(401, "unauthorized", "missing or invalid bearer token")
        existing = FILES.get(FILE_BY_NAME.get((user["id"], name), ""))
        old = existing["size"] if existing else 0
        used = USAGE.get(user["id"], 0)
        if used - old + size > user["quota_bytes"]:
            remove_quietly(path)
            raise ApiError(409, "quota_exceeded", "upload would exceed the quota")
        ts = now()
        if existing:
            old_path = existing["path"]
            existing.update(size=size, content_type=content_type, sha256=sha,
                            updated_at=ts, path=path)
            USAGE[user["id"]] = used - old + size
            out, status = file_out(existing), 200
        else:
            f = {
                "id": str(uuid.uuid4()),
                "owner": user["id"],
                "name": name,
                "size": size,
                "content_type": content_type,
                "sha256": sha,
                "created_at": ts,
                "updated_at": ts,
                "path": path,
            }
            FILES[f["id"]] = f
            FILE_BY_NAME[(user["id"], name)] = f["id"]
            USAGE[user["id"]] = used + size
            out, status = file_out(f), 201
        if old_path:
            remove_quietly(old_path)
    return json_response(out, status)


@app.get("/files/<file_id>")
def get_file(file_id: str):
    user = current_user()
    with LOCK:
        return json_response(file_out(own_file(user, file_id)))


@app.get("/files/<file_id>/content")
def download_file(file_id: str):
    user = current_user()
    with LOCK:
        f = own_file(user, file_id)
        data = read_content(f)
        return download_response(f, data)


@app.delete("/files/<file_id>")
def delete_file(file_id: str):
    user = current_user()
    with LOCK:
        f = own_file(user, file_id)
        del FILES[f["id"]]
        FILE_BY_NAME.pop((f["owner"], f["name"]), None)
        USAGE[f["owner"]] = USAGE.get(f["owner"], 0) - f["size"]
        for sid in [sid for sid, s in SHARES.items() if s["file_id"] == f["id"]]:
            SHARE_BY_TOKEN.pop(SHARES[sid]["token"], None)
            del SHARES[sid]
        remove_quietly(f["path"])
    return Response(status=204)


# ---------------------------------------------------------------- shares
@app.get("/files/<file_id>/shares")
def list_shares(file_id: str):
    user = current_user()
    with LOCK:
        f = own_file(user, file_id)
        items = [share_out(s) for s in SHARES.values() if s["file_id"] == f["id"]]
        return json_response({"items": items})


@app.post("/files/<file_id>/shares")
def create_share(file_id: str):
    user = current_user()
    with LOCK:
        own_file(user, file_id)
    body = read_json_object()
    bad = []
    password = body.get("password")
    if password is not None and (not isinstance(password, str) or not 8 <= len(password) <= 128):
        bad.append("password")
    expires_raw = body.get("expires_at")
    expires_at = None
    if expires_raw is not None:
        expires_at = parse_ts(expires_raw) if isinstance(expires_raw, str) else None
        if expires_at is None or expires_at <= now():
            bad.append("expires_at")
    max_dl = body.get("max_downloads")
    if max_dl is not None and (not is_int(max_dl) or not 1 <= max_dl <= 1_000_000):
        bad.append("max_downloads")
    if bad:
        raise validation(bad)
    pw_hash = hash_password(password) if password is not None else None
    with LOCK:
        f = own_file(user, file_id)
        token = secrets.token_urlsafe(32)  # 256 random bits, 43 characters of A-Za-z0-9_-
        while token in SHARE_BY_TOKEN:
            token = secrets.token_urlsafe(32)
        share = {
            "id": str(uuid.uuid4()),
            "file_id": f["id"],
            "token": token,
            "pw_hash": pw_hash,
            "expires_at": expires_at,
            "max_downloads": int(max_dl) if max_dl is not None else None,
            "download_count": 0,
            "created_at": now(),
        }
        SHARES[share["id"]] = share
        SHARE_BY_TOKEN[token] = share["id"]
        return json_response(share_out(share), 201)


@app.delete("/shares/<share_id>")
def revoke_share(share_id: str):
    user = current_user()
    with LOCK:
        s = SHARES.get(share_id)
        f = FILES.get(s["file_id"]) if s else None
        if s is None or f is None or f["owner"] != user["id"]:
            raise not_found("share")
        SHARE_BY_TOKEN.pop(s["token"], None)
        del SHARES[share_id]
    return Response(status=204)


def _live_share(token: str) -> tuple[dict, dict]:
    """The share and file behind a token, or 404/410 (caller holds LOCK)."""
    sid = SHARE_BY_TOKEN.get(token)
    s = SHARES.get(sid) if sid else None
    f = FILES.get(s["file_id"]) if s else None
    if s is None or f is None:
        raise not_found("share")
    if s["expires_at"] is not None and s["expires_at"] <= now():
        raise ApiError(410, "gone", "the share has expired")
    if s["max_downloads"] is not None and s["download_count"] >= s["max_downloads"]:
        raise ApiError(410, "gone", "the share has used up its downloads")
    return s, f


@app.get("/s/<token>")
def public_download(token: str):
    with LOCK:
        s, _ = _live_share(token)
        pw_hash = s["pw_hash"]
    if pw_hash is not None:
        given = request.headers.get("X-Share-Password")
        if given is None or not verify_password(given, pw_hash):
            raise ApiError(401, "password_required", "this share needs its password")
    with LOCK:
        s2, f = _live_share(token)
        if s2 is not s:
            raise not_found("share")
        data = read_content(f)
        if request.method != "HEAD":  # a HEAD request transfers nothing and does not count
            s2["download_count"] += 1
        return download_response(f, data)


# ---------------------------------------------------------------- start-up
def bootstrap() -> None:
    global STORE_DIR, _DUMMY_HASH
    data_dir = os.environ.get("DATA_DIR", "/tmp/backendbench-file-share")
    os.makedirs(data_dir, exist_ok=True)
    STORE_DIR = tempfile.mkdtemp(prefix="fileshare-", dir=data_dir)
    _DUMMY_HASH = hash_password(secrets.token_urlsafe(16))
    username = os.environ.get("ADMIN_USERNAME", "admin")
    password = os.environ.get("ADMIN_PASSWORD", "admin-password")
    admin = {
        "id": str(uuid.uuid4()),
        "username": username,
        "role": "admin",
        "quota_bytes": DEFAULT_QUOTA,
        "created_at": now(),
        "pw_hash": hash_password(password),
    }
    USERS[admin["id"]] = admin
    USER_BY_NAME[username] = admin["id"]
    USAGE[admin["id"]] = 0


def main() -> None:
    bootstrap()
    port = int(os.environ.get("PORT", "8000"))
    try:
        from waitress import serve
    except ImportError:  # pragma: no cover - fallback without waitress
        app.run(host="0.0.0.0", port=port, threaded=True)
        return
    serve(app, host="0.0.0.0", port=port, threads=8,
          max_request_body_size=64 * 1024 * 1024, ident=None)


if __name__ == "__main__":
    main()
