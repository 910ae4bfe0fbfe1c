"""Reference implementation of the url-shortener task: a candidate that passes the whole oracle.

Flask with in-memory storage behind one lock. Checks follow spec.md's precedence:
authenticate (401), find the caller's link (404), validate (422), then uniqueness (409).
A link's status is derived from `disabled` and `expires_at` at the time of each request.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import string
import threading
import uuid
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

app = Flask(__name__)

LOCK = threading.RLock()
USERS: dict[str, dict[str, Any]] = {}      # user id -> user (with salt and password hash)
USER_IDS: dict[str, str] = {}              # username -> user id
TOKENS: dict[str, str] = {}                # token -> user id
LINKS: dict[str, dict[str, Any]] = {}      # link id -> link (insertion = creation order)
SLUGS: dict[str, str] = {}                 # slug -> link id
VISITS: dict[str, list[dict[str, Any]]] = {}  # link id -> visits, oldest first

USERNAME = re.compile(r"^[a-z0-9_]{3,32}$")
SLUG = re.compile(r"^[A-Za-z0-9_-]{3,32}$")
TAG = re.compile(r"^[a-z0-9-]{1,24}$")
URL = re.compile(r"^[hH][tT][tT][pP][sS]?://[^/?#\s]+\S*$")
TIMESTAMP = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$")
INTEGER = re.compile(r"^-?[0-9]+$")
STATUSES = ("active", "disabled", "expired")
ALPHABET = string.ascii_letters + string.digits
MISSING = object()


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


def conflict(message: str) -> ApiError:
    return ApiError(409, "conflict", message)


def invalid(fields: list[str], message: str = "invalid request") -> ApiError:
    return ApiError(422, "validation_error", message, fields)


def reply(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(json.dumps(payload), status=status, mimetype="application/json", headers=headers)


def no_content() -> Response:
    return Response(status=204)


class RedirectResponse(Response):
    """A redirect whose Location is the stored URL byte for byte (Werkzeug would normalise it)."""

    def get_wsgi_headers(self, environ: Any) -> Any:
        headers = super().get_wsgi_headers(environ)
        headers["Location"] = self.headers["Location"]
        return headers


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
    code = "not_found" if err.code == 404 else "validation_error"
    body: dict[str, Any] = {"error": code, "message": err.description or err.name}
    if code == "validation_error":
        body["fields"] = []
    return reply(body, err.code or 500)


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def stamp(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


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


def parse_timestamp(value: Any) -> datetime | None:
    """A timezone-aware instant, or None when the value is not an RFC 3339 date-time with a zone."""
    if not isinstance(value, str) or not TIMESTAMP.match(value):
        return None
    try:
        moment = datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


class Validator:
    """Collects every invalid field of one body before answering 422."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.bad: list[str] = []

    def fail(self, name: str) -> None:
        if name not in self.bad:
            self.bad.append(name)

    def text(self, name: str, *, required: bool, max_len: int, min_len: int = 1,
             pattern: re.Pattern[str] | None = None) -> Any:
        value = self.data.get(name, MISSING)
        if value is MISSING:
            if required:
                self.fail(name)
            return MISSING
        if not isinstance(value, str) or not min_len <= len(value) <= max_len or (pattern is not None and not pattern.match(value)):
            self.fail(name)
            return MISSING
        return value

    def url(self) -> Any:
        value = self.text("url", required=False, max_len=2048)
        if value is not MISSING and not URL.match(value):
            self.fail("url")
            return MISSING
        return value

    def tags(self) -> Any:
        value = self.data.get("tags", MISSING)
        if value is MISSING:
            return MISSING
        if not isinstance(value, list) or len(value) > 10 or not all(isinstance(t, str) and TAG.match(t) for t in value):
            self.fail("tags")
            return MISSING
        return sorted(set(value))

    def expires_at(self, *, future: bool) -> Any:
        value = self.data.get("expires_at", MISSING)
        if value is MISSING or value is None:
            return value
        moment = parse_timestamp(value)
        if moment is None or (future and moment <= utcnow()):
            self.fail("expires_at")
            return MISSING
        return moment

    def boolean(self, name: str) -> Any:
        value = self.data.get(name, MISSING)
        if value is not MISSING and not isinstance(value, bool):
            self.fail(name)
            return MISSING
        return value

    def check(self) -> None:
        if self.bad:
            raise invalid(self.bad, "invalid fields: " + ", ".join(self.bad))


def paging(extra_bad: list[str]) -> tuple[int, int]:
    bad = list(extra_bad)
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
    return values["limit"], values["offset"]


def page(items: list[Any], limit: int, offset: int) -> dict[str, Any]:
    return {"items": items[offset:offset + limit], "total": len(items), "limit": limit, "offset": offset}


# ---------------------------------------------------------------------------- lookups and views


def bearer_token() -> str:
    parts = request.headers.get("Authorization", "").split(None, 1)
    if len(parts) != 2 or parts[0].lower() != "bearer":
        raise unauthorized("send Authorization: Bearer <token>")
    return parts[1].strip()


def current_user() -> dict[str, Any]:
    user_id = TOKENS.get(bearer_token())
    if user_id is None or user_id not in USERS:
        raise unauthorized("unknown or revoked token")
    return USERS[user_id]


def own_link(user: dict[str, Any], link_id: str) -> dict[str, Any]:
    link = LINKS.get(link_id)
    if link is None or link["owner_id"] != user["id"]:
        raise not_found("link")
    return link


def status_of(link: dict[str, Any]) -> str:
    if link["disabled"]:
        return "disabled"
    if link["expires_at"] is not None and link["expires_at"] <= utcnow():
        return "expired"
    return "active"


def hash_password(password: str, salt: str) -> str:
    return hashlib.sha256((salt + password).encode()).hexdigest()


def user_view(user: dict[str, Any]) -> dict[str, Any]:
    return {k: user[k] for k in ("id", "username", "created_at")}


def link_view(link: dict[str, Any]) -> dict[str, Any]:
    visits = VISITS[link["id"]]
    return {
        "id": link["id"], "slug": link["slug"], "url": link["url"], "tags": list(link["tags"]),
        "owner_id": link["owner_id"], "disabled": link["disabled"],
        "expires_at": None if link["expires_at"] is None else stamp(link["expires_at"]),
        "status": status_of(link), "visit_count": len(visits),
        "last_visited_at": visits[-1]["visited_at"] if visits else None,
        "created_at": link["created_at"], "updated_at": link["updated_at"],
    }


def referrer_host(header: str | None) -> str | None:
    if not header:
        return None
    try:
        parts = urlsplit(header.strip())
        host = parts.hostname
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not host:
        return None
    return host.lower()


# ---------------------------------------------------------------------------- system and users


@app.get("/health")
def health() -> Response:
    return reply({"status": "ok"})


@app.post("/users")
def register() -> Response:
    v = Validator(json_body())
    username = v.text("username", required=True, min_len=3, max_len=32, pattern=USERNAME)
    password = v.text("password", required=True, min_len=8, max_len=128)
    v.check()
    with LOCK:
        if username in USER_IDS:
            raise conflict("username already taken")
        salt = secrets.token_hex(8)
        user = {"id": new_id("u"), "username": username, "created_at": stamp(utcnow()), "salt": salt,
                "password_hash": hash_password(password, salt)}
        USERS[user["id"]] = user
        USER_IDS[username] = user["id"]
        return reply(user_view(user), 201)


@app.post("/auth/token")
def login() -> Response:
    v = Validator(json_body())
    username = v.text("username", required=True, min_len=0, max_len=10_000)
    password = v.text("password", required=True, min_len=0, max_len=10_000)
    v.check()
    with LOCK:
        user = USERS.get(USER_IDS.get(username, ""))
        if user is None or not hmac.compare_digest(hash_password(password, user["salt"]), user["password_hash"]):
            raise unauthorized("wrong username or password")
        token = secrets.token_urlsafe(32)
        TOKENS[token] = user["id"]
        return reply({"token": token, "token_type": "bearer", "user": user_view(user)})


@app.post("/auth/logout")
def logout() -> Response:
    with LOCK:
        current_user()
        TOKENS.pop(bearer_token(), None)
        return no_content()


@app.get("/me")
def me() -> Response:
    with LOCK:
        return reply(user_view(current_user()))


# ---------------------------------------------------------------------------- links


def generate_slug() -> str:
    while True:
        slug = "".join(secrets.choice(ALPHABET) for _ in range(7))
        if slug not in SLUGS:
            return slug


@app.post("/links")
def create_link() -> Response:
    with LOCK:
        user = current_user()
        data = json_body()
        v = Validator(data)
        if "url" not in data:
            v.fail("url")
        url = v.url()
        slug = v.text("slug", required=False, max_len=32, pattern=SLUG)
        tags = v.tags()
        expires_at = v.expires_at(future=True)
        v.check()
        if slug is not MISSING and slug in SLUGS:
            raise conflict("slug already taken")
        created = stamp(utcnow())
        link = {
            "id": new_id("l"), "slug": generate_slug() if slug is MISSING else slug, "url": url,
            "tags": [] if tags is MISSING else tags, "owner_id": user["id"], "disabled": False,
            "expires_at": None if expires_at is MISSING else expires_at,
            "created_at": created, "updated_at": created,
        }
        LINKS[link["id"]] = link
        SLUGS[link["slug"]] = link["id"]
        VISITS[link["id"]] = []
        return reply(link_view(link), 201)


@app.get("/links")
def list_links() -> Response:
    with LOCK:
        user = current_user()
        status = request.args.get("status")
        limit, offset = paging(["status"] if status is not None and status not in STATUSES else [])
        tag = request.args.get("tag")
        mine = [link for link in reversed(list(LINKS.values())) if link["owner_id"] == user["id"]]
        if tag is not None:
            mine = [link for link in mine if tag in link["tags"]]
        if status is not None:
            mine = [link for link in mine if status_of(link) == status]
        return reply(page([link_view(link) for link in mine], limit, offset))


@app.get("/links/<link_id>")
def get_link(link_id: str) -> Response:
    with LOCK:
        user = current_user()
        return reply(link_view(own_link(user, link_id)))


@app.patch("/links/<link_id>")
def update_link(link_id: str) -> Response:
    with LOCK:
        user = current_user()
        link = own_link(user, link_id)
        v = Validator(json_body())
        url = v.url()
        tags = v.tags()
        expires_at = v.expires_at(future=False)
        disabled = v.boolean("disabled")
        v.check()
        if url is not MISSING:
            link["url"] = url
        if tags is not MISSING:
            link["tags"] = tags
        if expires_at is not MISSING:
            link["expires_at"] = expires_at
        if disabled is not MISSING:
            link["disabled"] = disabled
        link["updated_at"] = stamp(utcnow())
        return reply(link_view(link))


@app.delete("/links/<link_id>")
def delete_link(link_id: str) -> Response:
    with LOCK:
        user = current_user()
        link = own_link(user, link_id)
        del LINKS[link_id]
        del SLUGS[link["slug"]]
        del VISITS[link_id]
        return no_content()


# ---------------------------------------------------------------------------- analytics


@app.get("/links/<link_id>/visits")
def list_visits(link_id: str) -> Response:
    with LOCK:
        user = current_user()
        own_link(user, link_id)
        limit, offset = paging([])
        visits = [{"visited_at": v["visited_at"], "referrer": v["referrer"]} for v in reversed(VISITS[link_id])]
        return reply(page(visits, limit, offset))


@app.delete("/links/<link_id>/visits")
def reset_visits(link_id: str) -> Response:
    with LOCK:
        user = current_user()
        own_link(user, link_id)
        VISITS[link_id] = []
        return no_content()


@app.get("/links/<link_id>/stats")
def link_stats(link_id: str) -> Response:
    with LOCK:
        user = current_user()
        own_link(user, link_id)
        days: dict[str, int] = {}
        referrers: dict[str | None, int] = {}
        for visit in VISITS[link_id]:
            days[visit["visited_at"][:10]] = days.get(visit["visited_at"][:10], 0) + 1
            referrers[visit["referrer"]] = referrers.get(visit["referrer"], 0) + 1
        by_referrer = sorted(referrers.items(), key=lambda kv: (-kv[1], kv[0] is None, kv[0] or ""))
        return reply({
            "link_id": link_id,
            "total_visits": len(VISITS[link_id]),
            "by_day": [{"date": d, "visits": n} for d, n in sorted(days.items())],
            "by_referrer": [{"referrer": r, "visits": n} for r, n in by_referrer],
        })


@app.get("/tags")
def list_tags() -> Response:
    with LOCK:
        user = current_user()
        counts: dict[str, int] = {}
        for link in LINKS.values():
            if link["owner_id"] == user["id"]:
                for tag in link["tags"]:
                    counts[tag] = counts.get(tag, 0) + 1
        return reply({"items": [{"tag": t, "links": n} for t, n in sorted(counts.items())]})


# ---------------------------------------------------------------------------- redirect


@app.get("/r/<slug>")
def follow(slug: str) -> Response:
    with LOCK:
        link_id = SLUGS.get(slug)
        if link_id is None:
            raise not_found("short link")
        link = LINKS[link_id]
        status = status_of(link)
        if status == "disabled":
            raise ApiError(410, "link_disabled", "this link is disabled")
        if status == "expired":
            raise ApiError(410, "link_expired", "this link has expired")
        VISITS[link_id].append({"visited_at": stamp(utcnow()), "referrer": referrer_host(request.headers.get("Referer"))})
        return RedirectResponse(json.dumps({"url": link["url"]}), status=302, mimetype="application/json",
                                headers={"Location": link["url"]})


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=int(os.environ.get("PORT", "8000")), threaded=True)
