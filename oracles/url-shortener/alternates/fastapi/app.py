"""URL shortener — links, redirects, visit analytics (FastAPI, in-memory)."""
import os
import re
import secrets
import string

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from core import (ApiError, bearer_token, check_password, conflict, fmt_ts, hash_password,
                  install_handlers, is_bool, is_str, json_object, new_id, new_token, next_seq,
                  no_content, not_found, now, page, paging, parse_timestamp, unauthorized,
                  validation)

app = FastAPI(title="URL shortener", redirect_slashes=False, docs_url=None, redoc_url=None,
              openapi_url=None)
install_handlers(app)

USERNAME_RE = re.compile(r"[a-z0-9_]{3,32}")
SLUG_RE = re.compile(r"[A-Za-z0-9_-]{3,32}")
TAG_RE = re.compile(r"[a-z0-9-]{1,24}")
SCHEME_RE = re.compile(r"^[Hh][Tt][Tt][Pp][Ss]?://")
SLUG_ALPHABET = string.ascii_letters + string.digits
STATUSES = ("active", "disabled", "expired")

users = {}          # id -> user
users_by_name = {}  # username -> id
tokens = {}         # token -> user id
links = {}          # id -> link
slugs = {}          # slug -> link id


# ---------------------------------------------------------------- helpers

def render_user(u):
    return {"id": u["id"], "username": u["username"], "created_at": fmt_ts(u["created_at"])}


def current_user(request: Request):
    token = bearer_token(request)
    if token is None or token not in tokens:
        raise unauthorized()
    return users[tokens[token]], token


def url_host(value):
    """Host part of an absolute http(s) URL ('' when empty); None if not such a URL."""
    if not isinstance(value, str) or not SCHEME_RE.match(value):
        return None
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7f for c in value):
        return None
    rest = value[value.index("://") + 3:]
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    if "@" in authority:
        authority = authority.rsplit("@", 1)[1]
    if authority.startswith("["):
        end = authority.find("]")
        if end == -1:
            return None
        return authority[1:end]
    return authority.split(":", 1)[0]


def valid_url(value):
    if not isinstance(value, str) or not (1 <= len(value) <= 2048):
        return False
    host = url_host(value)
    return bool(host)


def referrer_of(header):
    if header is None:
        return None
    host = url_host(header.strip())
    if not host:
        return None
    return host.lower()


def valid_tags(value):
    if not isinstance(value, list) or len(value) > 10:
        return False
    return all(isinstance(t, str) and TAG_RE.fullmatch(t) for t in value)


def link_status(link, at=None):
    if link["disabled"]:
        return "disabled"
    exp = link["expires_at"]
    if exp is not None and exp <= (at or now()):
        return "expired"
    return "active"


def render_link(link, at=None):
    visits = link["visits"]
    return {
        "id": link["id"],
        "slug": link["slug"],
        "url": link["url"],
        "tags": list(link["tags"]),
        "owner_id": link["owner_id"],
        "disabled": link["disabled"],
        "expires_at": fmt_ts(link["expires_at"]),
        "status": link_status(link, at),
        "visit_count": len(visits),
        "last_visited_at": fmt_ts(visits[-1]["visited_at"]) if visits else None,
        "created_at": fmt_ts(link["created_at"]),
        "updated_at": fmt_ts(link["updated_at"]),
    }


def own_link(user, link_id):
    link = links.get(link_id)
    if link is None or link["owner_id"] != user["id"]:
        raise not_found("link not found")
    return link


def generate_slug():
    while True:
        s = "".join(secrets.choice(SLUG_ALPHABET) for _ in range(7))
        if s not in slugs:
            return s


# ---------------------------------------------------------------- system & users

@app.get("/health")
async def health():
    return {"status": "ok"}


@app.post("/users", status_code=201)
async def register(request: Request):
    body = await json_object(request)
    bad = []
    username = body.get("username")
    password = body.get("password")
    if not is_str(username) or not USERNAME_RE.fullmatch(username):
        bad.append("username")
    if not is_str(password) or not (8 <= len(password) <= 128):
        bad.append("password")
    if bad:
        raise validation(bad)
    if username in users_by_name:
        raise conflict("username is taken")
    salt, digest = hash_password(password)
    user = {"id": new_id(), "username": username, "salt": salt, "digest": digest,
            "created_at": now()}
    users[user["id"]] = user
    users_by_name[username] = user["id"]
    return JSONResponse(render_user(user), status_code=201)


@app.post("/auth/token")
async def login(request: Request):
    body = await json_object(request)
    bad = [f for f in ("username", "password") if not is_str(body.get(f))]
    if bad:
        raise validation(bad)
    uid = users_by_name.get(body["username"])
    user = users.get(uid) if uid else None
    if user is None or not check_password(body["password"], user["salt"], user["digest"]):
        raise unauthorized("wrong username or password")
    token = new_token()
    tokens[token] = user["id"]
    return {"token": token, "token_type": "bearer", "user": render_user(user)}


@app.post("/auth/logout", status_code=204)
async def logout(request: Request):
    _, token = current_user(request)
    tokens.pop(token, None)
    return no_content()


@app.get("/me")
async def me(request: Request):
    user, _ = current_user(request)
    return render_user(user)


# ---------------------------------------------------------------- links

@app.post("/links", status_code=201)
async def create_link(request: Request):
    user, _ = current_user(request)
    body = await json_object(request)
    bad = []
    url = body.get("url")
    if not valid_url(url):
        bad.append("url")
    slug = None
    if "slug" in body:
        slug = body["slug"]
        if not is_str(slug) or not SLUG_RE.fullmatch(slug):
            bad.append("slug")
    tags = []
    if "tags" in body:
        tags = body["tags"]
        if not valid_tags(tags):
            bad.append("tags")
    expires_at = None
    t = now()
    if "expires_at" in body and body["expires_at"] is not None:
        expires_at = parse_timestamp(body["expires_at"])
        if expires_at is None or expires_at <= t:
            bad.append("expires_at")
    if bad:
        raise validation(bad)
    if slug is not None:
        if slug in slugs:
            raise conflict("slug is taken")
    else:
        slug = generate_slug()
    link = {
        "id": new_id(), "slug": slug, "url": url, "tags": sorted(set(tags)),
        "owner_id": user["id"], "disabled": False, "expires_at": expires_at,
        "visits": [], "created_at": t, "updated_at": t, "seq": next_seq(),
    }
    links[link["id"]] = link
    slugs[slug] = link["id"]
    return JSONResponse(render_link(link), status_code=201)


@app.get("/links")
async def list_links(request: Request):
    user, _ = current_user(request)
    bad = []
    limit, offset = paging(request, bad)
    status = request.query_params.get("status")
    if status is not None and status not in STATUSES:
        bad.append("status")
    if bad:
        raise validation(bad)
    tag = request.query_params.get("tag")
    t = now()
    items = [l for l in links.values() if l["owner_id"] == user["id"]]
    if tag is not None:
        items = [l for l in items if tag in l["tags"]]
    if status is not None:
        items = [l for l in items if link_status(l, t) == status]
    items.sort(key=lambda l: l["seq"], reverse=True)
    return page(items, limit, offset, lambda l: render_link(l, t))


@app.get("/links/{link_id}")
async def get_link(link_id: str, request: Request):
    user, _ = current_user(request)
    return render_link(own_link(user, link_id))


@app.patch("/links/{link_id}")
async def update_link(link_id: str, request: Request):
    user, _ = current_user(request)
    link = own_link(user, link_id)
    body = await json_object(request)
    bad = []
    changes = {}
    if "url" in body:
        if valid_url(body["url"]):
            changes["url"] = body["url"]
        else:
            bad.append("url")
    if "tags" in body:
        if valid_tags(body["tags"]):
            changes["tags"] = sorted(set(body["tags"]))
        else:
            bad.append("tags")
    if "expires_at" in body:
        if body["expires_at"] is None:
            changes["expires_at"] = None
        else:
            exp = parse_timestamp(body["expires_at"])
            if exp is None:
                bad.append("expires_at")
            else:
                changes["expires_at"] = exp
    if "disabled" in body:
        if is_bool(body["disabled"]):
            changes["disabled"] = body["disabled"]
        else:
            bad.append("disabled")
    if bad:
        raise validation(bad)
    link.update(changes)
    link["updated_at"] = now()
    return render_link(link)


@app.delete("/links/{link_id}", status_code=204)
async def delete_link(link_id: str, request: Request):
    user, _ = current_user(request)
    link = own_link(user, link_id)
    del links[link["id"]]
    if slugs.get(link["slug"]) == link["id"]:
        del slugs[link["slug"]]
    return no_content()


# ---------------------------------------------------------------- analytics

@app.get("/links/{link_id}/visits")
async def list_visits(link_id: str, request: Request):
    user, _ = current_user(request)
    link = own_link(user, link_id)
    bad = []
    limit, offset = paging(request, bad)
    if bad:
        raise validation(bad)
    items = list(reversed(link["visits"]))
    return page(items, limit, offset,
                lambda v: {"visited_at": fmt_ts(v["visited_at"]), "referrer": v["referrer"]})


@app.delete("/links/{link_id}/visits", status_code=204)
async def reset_visits(link_id: str, request: Request):
    user, _ = current_user(request)
    link = own_link(user, link_id)
    link["visits"] = []
    return no_content()


@app.get("/links/{link_id}/stats")
async def link_stats(link_id: str, request: Request):
    user, _ = current_user(request)
    link = own_link(user, link_id)
    by_day = {}
    by_ref = {}
    for v in link["visits"]:
        d = v["visited_at"].date().isoformat()
        by_day[d] = by_day.get(d, 0) + 1
        by_ref[v["referrer"]] = by_ref.get(v["referrer"], 0) + 1
    refs = sorted(by_ref.items(),
                  key=lambda kv: (-kv[1], kv[0] is None, kv[0] or ""))
    return {
        "link_id": link["id"],
        "total_visits": len(link["visits"]),
        "by_day": [{"date": d, "visits": n} for d, n in sorted(by_day.items())],
        "by_referrer": [{"referrer": r, "visits": n} for r, n in refs],
    }


@app.get("/tags")
async def list_tags(request: Request):
    user, _ = current_user(request)
    counts = {}
    for l in links.values():
        if l["owner_id"] == user["id"]:
            for tag in l["tags"]:
                counts[tag] = counts.get(tag, 0) + 1
    return {"items": [{"tag": t, "links": n} for t, n in sorted(counts.items())]}


# ---------------------------------------------------------------- redirect

@app.get("/r/{slug}")
async def follow(slug: str, request: Request):
    link_id = slugs.get(slug)
    link = links.get(link_id) if link_id else None
    if link is None:
        raise not_found("unknown slug")
    t = now()
    status = link_status(link, t)
    if status == "disabled":
        raise ApiError(410, "link_disabled", "this link is disabled")
    if status == "expired":
        raise ApiError(410, "link_expired", "this link has expired")
    link["visits"].append({"visited_at": t, "referrer": referrer_of(request.headers.get("referer")),
                           "seq": next_seq()})
    resp = JSONResponse({"url": link["url"]}, status_code=302)
    resp.raw_headers.append((b"location", link["url"].encode("utf-8")))
    return resp


if __name__ == "__main__":
    uvicorn.run(app, host="0.0.0.0", port=int(os.environ.get("PORT", "8000")),
                log_level="warning", access_log=False)
