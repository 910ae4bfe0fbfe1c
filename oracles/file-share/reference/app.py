"""Reference implementation of the file-share task: a candidate that passes the whole oracle.

Flask with users, tokens, file and share records in memory behind one lock; file contents on
disk in a fresh directory made inside DATA_DIR at start, each named by the file's id (a name a
user sent never reaches the filesystem). Handlers check in spec.md's order: authenticate
(401), the admin role (403), the path's resource and its owner (404), validation (422), the
file size (413), then the quota or a taken username (409). Passwords of users and shares are
PBKDF2-SHA256 with a random salt; slow hashing runs outside the lock.
"""

from __future__ import annotations

import atexit
import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import signal
import tempfile
import threading
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

app = Flask(__name__)

LOCK = threading.RLock()
USERS: dict[str, dict[str, Any]] = {}        # user id -> user (with salt and hash), creation order
USER_IDS: dict[str, str] = {}                # username -> user id
TOKENS: dict[str, str] = {}                  # bearer token -> user id
FILES: dict[str, dict[str, Any]] = {}        # file id -> file record (with owner_id)
SHARES: dict[str, dict[str, Any]] = {}       # share id -> share record, creation order
SHARE_TOKENS: dict[str, str] = {}            # share token -> share id

USERNAME = re.compile(r"^[a-z0-9_]{3,32}$")
ROLES = ("admin", "user")
MAX_FILE_BYTES = 1_048_576
MAX_BODY_BYTES = 1_048_576
MAX_BODY_DEPTH = 32
MAX_QUOTA = 1_099_511_627_776
DEFAULT_QUOTA = 10_485_760
PBKDF2_ITERATIONS = 100_000
MISSING = object()

DATA_DIR = Path(os.environ.get("DATA_DIR", "data")).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)
STORE = Path(tempfile.mkdtemp(prefix="store-", dir=DATA_DIR))  # this instance's own: others may share DATA_DIR


def _remove_store(*_: Any) -> None:
    """Remove this instance's own directory (never anything else in DATA_DIR) and exit."""
    shutil.rmtree(STORE, ignore_errors=True)
    if _:
        raise SystemExit(0)


atexit.register(_remove_store)
signal.signal(signal.SIGTERM, _remove_store)


class ApiError(Exception):
    """An error answer: status, error code, message (and the invalid fields for 422)."""

    def __init__(self, status: int, code: str, message: str, fields: list[str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.fields = fields


def unauthorized(message: str = "authentication required") -> ApiError:
    return ApiError(401, "unauthorized", message)


def not_found(what: str) -> ApiError:
    return ApiError(404, "not_found", f"{what} not found")


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
    codes = {404: "not_found", 405: "method_not_allowed", 413: "payload_too_large"}
    code = codes.get(status, "internal_error" if status >= 500 else "validation_error")
    body: dict[str, Any] = {"error": code, "message": err.description or err.name}
    if code == "validation_error":
        body["fields"] = []
    return reply(body, status)


@app.errorhandler(Exception)
def handle_crash(err: Exception) -> Response:
    return reply({"error": "internal_error", "message": type(err).__name__}, 500)


def now() -> datetime:
    return datetime.now(timezone.utc)


def stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


# ---------------------------------------------------------------------------- requests


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


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def read_upload() -> tuple[bytes, bool]:
    """The raw body (at most MAX_FILE_BYTES of it) and whether it was longer; the rest is drained."""
    stream = request.stream
    data = stream.read(MAX_FILE_BYTES + 1)
    too_large = len(data) > MAX_FILE_BYTES
    while too_large and stream.read(65536):
        pass
    return data[:MAX_FILE_BYTES], too_large


def valid_name(name: str | None) -> bool:
    """spec.md, File names: 1-255 characters, no / \\ or control characters, not . or .."""
    if name is None or not 1 <= len(name) <= 255 or name in (".", ".."):
        return False
    return not any(ch in "/\\" or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in name)


def parse_time(value: str) -> datetime | None:
    """An RFC 3339 timestamp with a time zone, or None."""
    text = value.strip()
    if not re.match(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}", text):
        return None
    try:
        moment = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in "Zz" else text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


# ---------------------------------------------------------------------------- secrets


def hash_secret(password: str, salt: bytes | None = None) -> str:
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, PBKDF2_ITERATIONS)
    return f"pbkdf2_sha256${PBKDF2_ITERATIONS}${salt.hex()}${digest.hex()}"


def secret_matches(password: str, stored: str) -> bool:
    _, _, salt, digest = stored.split("$")
    return hmac.compare_digest(hash_secret(password, bytes.fromhex(salt)).split("$")[3], digest)


# ---------------------------------------------------------------------------- users


def used_bytes(user_id: str) -> int:
    return sum(f["size"] for f in FILES.values() if f["owner_id"] == user_id)


def user_view(user: dict[str, Any]) -> dict[str, Any]:
    view = {k: user[k] for k in ("id", "username", "role", "quota_bytes", "created_at")}
    view["used_bytes"] = used_bytes(user["id"])
    return view


def add_user(username: str, password_hash: str, role: str, quota: int) -> dict[str, Any]:
    user = {"id": new_id("u"), "username": username, "role": role, "quota_bytes": quota,
            "created_at": stamp(now()), "password_hash": password_hash}
    USERS[user["id"]] = user
    USER_IDS[username] = user["id"]
    return user


def caller(admin: bool = False) -> dict[str, Any]:
    """The authenticated user (401), an administrator when ``admin`` (403)."""
    parts = request.headers.get("Authorization", "").split(" ")
    if len(parts) != 2 or parts[0].lower() != "bearer" or not parts[1]:
        raise unauthorized("send Authorization: Bearer <token>")
    user = USERS.get(TOKENS.get(parts[1], ""))
    if user is None:
        raise unauthorized("unknown token")
    if admin and user["role"] != "admin":
        raise ApiError(403, "forbidden", "only administrators may do this")
    return user


@app.get("/health")
def health() -> Response:
    return reply({"status": "ok"})


@app.post("/auth/token")
def login() -> Response:
    data = json_body()
    bad = [k for k in ("username", "password") if not isinstance(data.get(k), str)]
    if bad:
        raise invalid(bad, "username and password are required strings")
    with LOCK:
        user = USERS.get(USER_IDS.get(data["username"], ""))
    if user is None or not secret_matches(data["password"], user["password_hash"]):
        raise unauthorized("wrong username or password")
    token = secrets.token_urlsafe(32)
    with LOCK:
        TOKENS[token] = user["id"]
        return reply({"token": token, "token_type": "bearer", "user": user_view(user)})


@app.get("/me")
def me() -> Response:
    with LOCK:
        return reply(user_view(caller()))


@app.get("/users")
def list_users() -> Response:
    with LOCK:
        caller(admin=True)
        return reply({"items": [user_view(u) for u in USERS.values()]})


@app.post("/users")
def create_user() -> Response:
    with LOCK:
        caller(admin=True)
    data = json_body()
    bad = []
    username, password = data.get("username"), data.get("password")
    role, quota = data.get("role", "user"), data.get("quota_bytes", DEFAULT_QUOTA)
    if not isinstance(username, str) or not USERNAME.match(username):
        bad.append("username")
    if not isinstance(password, str) or not 8 <= len(password) <= 128:
        bad.append("password")
    if role not in ROLES:
        bad.append("role")
    if not is_int(quota) or not 0 <= quota <= MAX_QUOTA:
        bad.append("quota_bytes")
    if bad:
        raise invalid(bad, "invalid fields: " + ", ".join(bad))
    password_hash = hash_secret(password)
    with LOCK:
        if username in USER_IDS:
            raise ApiError(409, "conflict", "the username is taken")
        return reply(user_view(add_user(username, password_hash, role, quota)), 201)


@app.patch("/users/<user_id>")
def update_user(user_id: str) -> Response:
    with LOCK:
        caller(admin=True)
        user = USERS.get(user_id)
        if user is None:
            raise not_found("user")
        data = json_body()
        quota = data.get("quota_bytes", MISSING)
        if quota is not MISSING and (not is_int(quota) or not 0 <= quota <= MAX_QUOTA):
            raise invalid(["quota_bytes"], "quota_bytes is an integer from 0 to 1 TiB")
        if quota is not MISSING:
            user["quota_bytes"] = quota
        return reply(user_view(user))


# ---------------------------------------------------------------------------- files


def file_view(record: dict[str, Any]) -> dict[str, Any]:
    return {k: record[k] for k in ("id", "name", "size", "content_type", "sha256", "created_at", "updated_at")}


def own_file(user: dict[str, Any], file_id: str) -> dict[str, Any]:
    """The caller's file; anyone else's is as unknown as a missing one (404)."""
    record = FILES.get(file_id)
    if record is None or record["owner_id"] != user["id"]:
        raise not_found("file")
    return record


def download(record: dict[str, Any]) -> Response:
    data = (STORE / record["id"]).read_bytes()
    return Response(data, status=200, content_type=record["content_type"], headers={
        "Content-Disposition": f"attachment; filename*=UTF-8''{quote(record['name'], safe='')}",
        "X-Content-Type-Options": "nosniff",
        "Content-Length": str(len(data)),
    })


@app.post("/files")
def upload() -> Response:
    data, too_large = read_upload()
    with LOCK:
        user = caller()
        name = request.args.get("name")
        if not valid_name(name):
            raise invalid(["name"], "the file name is missing or not allowed (spec.md, File names)")
        if too_large:
            raise ApiError(413, "file_too_large", f"a file is at most {MAX_FILE_BYTES} bytes")
        existing = next((f for f in FILES.values() if f["owner_id"] == user["id"] and f["name"] == name), None)
        usage = used_bytes(user["id"]) - (existing["size"] if existing else 0) + len(data)
        if usage > user["quota_bytes"]:
            raise ApiError(409, "quota_exceeded", f"the upload would use {usage} of {user['quota_bytes']} bytes")
        record = existing or {"id": new_id("f"), "owner_id": user["id"], "name": name, "created_at": stamp(now())}
        scratch = STORE / f".{record['id']}.{uuid.uuid4().hex}"
        scratch.write_bytes(data)
        os.replace(scratch, STORE / record["id"])
        record.update(size=len(data), content_type=request.headers.get("Content-Type", "application/octet-stream"),
                      sha256=hashlib.sha256(data).hexdigest(), updated_at=stamp(now()))
        FILES[record["id"]] = record
        return reply(file_view(record), 200 if existing else 201)


@app.get("/files")
def list_files() -> Response:
    with LOCK:
        user = caller()
        items = sorted((f for f in FILES.values() if f["owner_id"] == user["id"]), key=lambda f: f["name"])
        return reply({"items": [file_view(f) for f in items], "used_bytes": used_bytes(user["id"]),
                      "quota_bytes": user["quota_bytes"]})


@app.get("/files/<file_id>")
def get_file(file_id: str) -> Response:
    with LOCK:
        return reply(file_view(own_file(caller(), file_id)))


@app.get("/files/<file_id>/content")
def get_content(file_id: str) -> Response:
    with LOCK:
        return download(own_file(caller(), file_id))


@app.delete("/files/<file_id>")
def delete_file(file_id: str) -> Response:
    with LOCK:
        record = own_file(caller(), file_id)
        del FILES[record["id"]]
        for share in [s for s in SHARES.values() if s["file_id"] == record["id"]]:
            del SHARES[share["id"]]
            del SHARE_TOKENS[share["token"]]
        (STORE / record["id"]).unlink(missing_ok=True)
        return Response(status=204)


# ---------------------------------------------------------------------------- shares


def share_view(share: dict[str, Any]) -> dict[str, Any]:
    view = {k: share[k] for k in ("id", "file_id", "token", "max_downloads", "download_count", "created_at")}
    view["password_protected"] = share["password_hash"] is not None
    view["expires_at"] = stamp(share["expires_at"]) if share["expires_at"] else None
    return view


@app.post("/files/<file_id>/shares")
def create_share(file_id: str) -> Response:
    with LOCK:
        own_file(caller(), file_id)
    data = json_body()
    bad = []
    password, expires, limit = data.get("password"), data.get("expires_at"), data.get("max_downloads")
    if password is not None and (not isinstance(password, str) or not 8 <= len(password) <= 128):
        bad.append("password")
    moment = parse_time(expires) if isinstance(expires, str) else None
    if expires is not None and (moment is None or moment <= now()):
        bad.append("expires_at")
    if limit is not None and (not is_int(limit) or not 1 <= limit <= 1_000_000):
        bad.append("max_downloads")
    if bad:
        raise invalid(bad, "invalid fields: " + ", ".join(bad))
    password_hash = hash_secret(password) if password is not None else None
    with LOCK:
        own_file(caller(), file_id)  # it may have been deleted while the password was hashed
        token = secrets.token_urlsafe(32)
        share = {"id": new_id("s"), "file_id": file_id, "token": token, "password_hash": password_hash,
                 "expires_at": moment, "max_downloads": limit, "download_count": 0, "created_at": stamp(now())}
        SHARES[share["id"]] = share
        SHARE_TOKENS[token] = share["id"]
        return reply(share_view(share), 201)


@app.get("/files/<file_id>/shares")
def list_shares(file_id: str) -> Response:
    with LOCK:
        record = own_file(caller(), file_id)
        return reply({"items": [share_view(s) for s in SHARES.values() if s["file_id"] == record["id"]]})


@app.delete("/shares/<share_id>")
def revoke_share(share_id: str) -> Response:
    with LOCK:
        user = caller()
        share = SHARES.get(share_id)
        if share is None or FILES[share["file_id"]]["owner_id"] != user["id"]:
            raise not_found("share")
        del SHARES[share_id]
        del SHARE_TOKENS[share["token"]]
        return Response(status=204)


def live_share(token: str) -> dict[str, Any]:
    """The share of a token (404), still valid (410)."""
    share = SHARES.get(SHARE_TOKENS.get(token, ""))
    if share is None:
        raise not_found("share")
    if (share["expires_at"] is not None and share["expires_at"] <= now()) or (
            share["max_downloads"] is not None and share["download_count"] >= share["max_downloads"]):
        raise ApiError(410, "gone", "the share has expired or used up its downloads")
    return share


@app.get("/s/<token>")
def public_download(token: str) -> Response:
    with LOCK:
        share = live_share(token)
        password_hash = share["password_hash"]
    if password_hash is not None:
        sent = request.headers.get("X-Share-Password")
        if sent is None or not secret_matches(sent, password_hash):
            raise ApiError(401, "password_required", "send the share's password in X-Share-Password")
    with LOCK:
        share = live_share(token)  # revoked, expired or used up while the password was checked
        share["download_count"] += 1
        return download(FILES[share["file_id"]])


def seed() -> None:
    username = os.environ.get("ADMIN_USERNAME", "admin")
    password = os.environ.get("ADMIN_PASSWORD", "change-me-now")
    add_user(username, hash_secret(password), "admin", DEFAULT_QUOTA)


seed()

if __name__ == "__main__":
    app.run(host="0.0.0.0", port=int(os.environ.get("PORT", "8000")), threaded=True)
