"""Feature flags — environments, segments, rollouts, evaluation (FastAPI, in-memory)."""
import hashlib
import os
import re
import secrets

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from core import (ApiError, conflict, fmt_ts, install_handlers, is_bool, is_int, is_str,
                  json_object, new_id, next_seq, no_content, not_found, now, page, paging,
                  unauthorized, validation)

app = FastAPI(title="Feature flags", redirect_slashes=False, docs_url=None, redoc_url=None,
              openapi_url=None)
install_handlers(app)

ADMIN_API_KEY = os.environ.get("ADMIN_API_KEY", "ffadm-3c1d7e0b9a5f42e8b6d4c2a1")
BOOTSTRAP = {"id": "bootstrap", "name": "bootstrap", "role": "admin", "environment": None}

ENV_KEY_RE = re.compile(r"[a-z][a-z0-9-]{1,31}")
FLAG_KEY_RE = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")
ATTR_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
ROLES = ("admin", "editor", "viewer", "sdk")
STRING_OPS = ("in", "not_in", "starts_with", "ends_with")
NUMBER_OPS = ("gt", "lt")
READERS = ("admin", "editor", "viewer")
WRITERS = ("admin", "editor")
ADMINS = ("admin",)

api_keys = {}       # id -> key (live only)
secrets_index = {}  # secret -> key id
environments = {}   # env key -> environment (insertion order = creation order)
flags = {}          # flag key -> flag
segments = {}       # segment key -> segment
audit = []          # audit entries, oldest first


def forbidden(message="your key's role does not allow this request"):
    return ApiError(403, "forbidden", message)


def _init():
    t = now()
    for key, name in (("development", "Development"), ("staging", "Staging"),
                      ("production", "Production")):
        environments[key] = {"key": key, "name": name, "created_at": t}


_init()


# ---------------------------------------------------------------- auth

def caller(request: Request):
    header = request.headers.get("authorization")
    if not header:
        raise unauthorized()
    parts = [p for p in header.strip().split(" ") if p]
    if len(parts) != 2 or parts[0].lower() != "bearer":
        raise unauthorized()
    secret = parts[1]
    if ADMIN_API_KEY and secrets.compare_digest(secret.encode(), ADMIN_API_KEY.encode()):
        return BOOTSTRAP
    kid = secrets_index.get(secret)
    if kid is None or kid not in api_keys:
        raise unauthorized()
    return api_keys[kid]


def require(request: Request, roles):
    key = caller(request)
    if key["role"] not in roles:
        raise forbidden()
    return key


def require_evaluator(request: Request, env_key):
    key = caller(request)
    if key["role"] == "sdk":
        if key["environment"] != env_key:
            raise forbidden("sdk keys may only evaluate in their own environment")
    elif key["role"] not in READERS:
        raise forbidden()
    return key


# ---------------------------------------------------------------- helpers

def non_blank(v, max_len):
    return is_str(v) and 1 <= len(v) <= max_len and v.strip() != ""


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def identity(k):
    return {"id": k["id"], "name": k["name"], "role": k["role"], "environment": k["environment"]}


def render_key(k):
    return identity(k) | {"created_at": fmt_ts(k["created_at"])}


def render_env(e):
    return {"key": e["key"], "name": e["name"], "created_at": fmt_ts(e["created_at"])}


def new_config():
    return {"enabled": False, "rollout_percentage": 0, "rules": [], "served_true": 0,
            "served_false": 0}


def render_rules(rules):
    return [{"segment_key": r["segment_key"], "value": r["value"]} for r in rules]


def render_flag(f):
    envs = {}
    for env_key in environments:
        c = f["configs"][env_key]
        envs[env_key] = {"enabled": c["enabled"], "rollout_percentage": c["rollout_percentage"],
                         "rules": render_rules(c["rules"])}
    return {"key": f["key"], "name": f["name"], "description": f["description"],
            "created_at": fmt_ts(f["created_at"]), "updated_at": fmt_ts(f["updated_at"]),
            "environments": envs}


def render_config(f, env_key):
    c = f["configs"][env_key]
    return {"flag_key": f["key"], "environment": env_key, "enabled": c["enabled"],
            "rollout_percentage": c["rollout_percentage"], "rules": render_rules(c["rules"]),
            "served_true": c["served_true"], "served_false": c["served_false"]}


def render_segment(s):
    return {"key": s["key"], "name": s["name"],
            "conditions": [dict(c) for c in s["conditions"]],
            "created_at": fmt_ts(s["created_at"]), "updated_at": fmt_ts(s["updated_at"])}


def get_env(env_key):
    e = environments.get(env_key)
    if e is None:
        raise not_found("environment not found")
    return e


def get_flag(flag_key):
    f = flags.get(flag_key)
    if f is None:
        raise not_found("flag not found")
    return f


def get_segment(segment_key):
    s = segments.get(segment_key)
    if s is None:
        raise not_found("segment not found")
    return s


def record(action, actor, flag_key, environment=None):
    audit.append({"id": new_id(), "action": action, "actor": actor["id"], "flag_key": flag_key,
                  "environment": environment, "created_at": now(), "seq": next_seq()})


def valid_condition(c):
    if not isinstance(c, dict):
        return False
    attr, op, values = c.get("attribute"), c.get("operator"), c.get("values")
    if not is_str(attr) or not ATTR_RE.fullmatch(attr):
        return False
    if not is_str(op) or op not in STRING_OPS + NUMBER_OPS:
        return False
    if not isinstance(values, list):
        return False
    if op in STRING_OPS:
        return 1 <= len(values) <= 50 and all(is_str(v) for v in values)
    return len(values) == 1 and is_number(values[0])


def valid_conditions(v):
    return isinstance(v, list) and 1 <= len(v) <= 20 and all(valid_condition(c) for c in v)


def clean_conditions(v):
    return [{"attribute": c["attribute"], "operator": c["operator"], "values": list(c["values"])}
            for c in v]


def valid_rules(v):
    if not isinstance(v, list) or len(v) > 20:
        return False
    for r in v:
        if not isinstance(r, dict):
            return False
        sk = r.get("segment_key")
        if not is_str(sk) or sk not in segments:
            return False
        if not is_bool(r.get("value")):
            return False
    return True


# ---------------------------------------------------------------- evaluation core

def condition_holds(c, ctx):
    attr = c["attribute"]
    if attr == "user_id":
        value = ctx["user_id"]
    else:
        if attr not in ctx["attributes"]:
            return False
        value = ctx["attributes"][attr]
    op, values = c["operator"], c["values"]
    if op in STRING_OPS:
        if not is_str(value):
            return False
        if op == "in":
            return value in values
        if op == "not_in":
            return value not in values
        if op == "starts_with":
            return any(value.startswith(v) for v in values)
        return any(value.endswith(v) for v in values)
    if not is_number(value):
        return False
    return value > values[0] if op == "gt" else value < values[0]


def segment_matches(segment, ctx):
    return all(condition_holds(c, ctx) for c in segment["conditions"])


def bucket_of(flag_key, user_id):
    digest = hashlib.sha256((flag_key + "/" + user_id).encode("utf-8")).hexdigest()
    return int(digest[:8], 16) % 100


def evaluate(flag, env_key, ctx):
    c = flag["configs"][env_key]
    if not c["enabled"]:
        result = {"flag_key": flag["key"], "value": False, "reason": "disabled", "bucket": None,
                  "segment_key": None}
    else:
        result = None
        for rule in c["rules"]:
            seg = segments.get(rule["segment_key"])
            if seg is not None and segment_matches(seg, ctx):
                result = {"flag_key": flag["key"], "value": rule["value"], "reason": "rule",
                          "bucket": None, "segment_key": rule["segment_key"]}
                break
        if result is None:
            b = bucket_of(flag["key"], ctx["user_id"])
            result = {"flag_key": flag["key"], "value": b < c["rollout_percentage"],
                      "reason": "rollout", "bucket": b, "segment_key": None}
    return result


def count(flag, env_key, result):
    c = flag["configs"][env_key]
    if result["value"]:
        c["served_true"] += 1
    else:
        c["served_false"] += 1


def parse_context(body, bad):
    user_id = body.get("user_id")
    if not is_str(user_id) or not (1 <= len(user_id) <= 256):
        bad.append("user_id")
    attributes = body.get("attributes", {})
    if not isinstance(attributes, dict) or not all(
            is_str(v) or is_bool(v) or is_number(v) for v in attributes.values()):
        bad.append("attributes")
    return {"user_id": user_id, "attributes": attributes}


# ---------------------------------------------------------------- system & keys

@app.get("/health")
async def health():
    return {"status": "ok"}


@app.get("/me")
async def me(request: Request):
    return identity(caller(request))


@app.post("/keys", status_code=201)
async def create_key(request: Request):
    require(request, ADMINS)
    body = await json_object(request)
    bad = []
    name = body.get("name")
    if not non_blank(name, 60):
        bad.append("name")
    role = body.get("role")
    role_ok = is_str(role) and role in ROLES
    if not role_ok:
        bad.append("role")
    env = body.get("environment")
    if env is not None and (not is_str(env) or env not in environments):
        bad.append("environment")
    elif role_ok and role == "sdk" and env is None:
        bad.append("environment")
    elif role_ok and role != "sdk" and env is not None:
        bad.append("environment")
    if bad:
        raise validation(bad)
    secret = "ffk_" + secrets.token_urlsafe(32)
    k = {"id": new_id(), "name": name, "role": role, "environment": env, "created_at": now(),
         "secret": secret, "seq": next_seq()}
    api_keys[k["id"]] = k
    secrets_index[secret] = k["id"]
    return JSONResponse(render_key(k) | {"secret": secret}, status_code=201)


@app.get("/keys")
async def list_keys(request: Request):
    require(request, ADMINS)
    return {"items": [render_key(k) for k in sorted(api_keys.values(), key=lambda k: k["seq"])]}


def revoke(k):
    api_keys.pop(k["id"], None)
    secrets_index.pop(k["secret"], None)


@app.delete("/keys/{key_id}", status_code=204)
async def delete_key(key_id: str, request: Request):
    require(request, ADMINS)
    k = api_keys.get(key_id)
    if k is None:
        raise not_found("API key not found")
    revoke(k)
    return no_content()


# ---------------------------------------------------------------- environments

@app.get("/environments")
async def list_environments(request: Request):
    require(request, READERS)
    return {"items": [render_env(e) for e in environments.values()]}


@app.post("/environments", status_code=201)
async def create_environment(request: Request):
    require(request, ADMINS)
    body = await json_object(request)
    bad = []
    key = body.get("key")
    if not is_str(key) or not ENV_KEY_RE.fullmatch(key):
        bad.append("key")
    name = body.get("name", key)
    if "name" in body and not non_blank(name, 60):
        bad.append("name")
    if bad:
        raise validation(bad)
    if key in environments:
        raise conflict("environment key is taken")
    e = {"key": key, "name": name, "created_at": now()}
    environments[key] = e
    for f in flags.values():
        f["configs"][key] = new_config()
    return JSONResponse(render_env(e), status_code=201)


@app.delete("/environments/{env_key}", status_code=204)
async def delete_environment(env_key: str, request: Request):
    require(request, ADMINS)
    get_env(env_key)
    del environments[env_key]
    for f in flags.values():
        f["configs"].pop(env_key, None)
    for k in list(api_keys.values()):
        if k["role"] == "sdk" and k["environment"] == env_key:
            revoke(k)
    return no_content()


# ---------------------------------------------------------------- flags

@app.get("/flags")
async def list_flags(request: Request):
    require(request, READERS)
    bad = []
    limit, offset = paging(request, bad)
    if bad:
        raise validation(bad)
    prefix = request.query_params.get("prefix")
    items = sorted((f for f in flags.values() if prefix is None or f["key"].startswith(prefix)),
                   key=lambda f: f["key"])
    return page(items, limit, offset, render_flag)


@app.post("/flags", status_code=201)
async def create_flag(request: Request):
    actor = require(request, WRITERS)
    body = await json_object(request)
    bad = []
    key = body.get("key")
    if not is_str(key) or not FLAG_KEY_RE.fullmatch(key):
        bad.append("key")
    name = body.get("name", key)
    if "name" in body and not non_blank(name, 100):
        bad.append("name")
    description = body.get("description", "")
    if not is_str(description) or len(description) > 1000:
        bad.append("description")
    if bad:
        raise validation(bad)
    if key in flags:
        raise conflict("flag key is taken")
    t = now()
    f = {"key": key, "name": name, "description": description, "created_at": t,
         "updated_at": t, "configs": {env_key: new_config() for env_key in environments}}
    flags[key] = f
    record("flag_created", actor, key)
    return JSONResponse(render_flag(f), status_code=201)


@app.get("/flags/{flag_key}")
async def get_flag_route(flag_key: str, request: Request):
    require(request, READERS)
    return render_flag(get_flag(flag_key))


@app.patch("/flags/{flag_key}")
async def update_flag(flag_key: str, request: Request):
    actor = require(request, WRITERS)
    f = get_flag(flag_key)
    body = await json_object(request)
    bad = []
    if "name" in body and not non_blank(body["name"], 100):
        bad.append("name")
    if "description" in body and (not is_str(body["description"])
                                  or len(body["description"]) > 1000):
        bad.append("description")
    if bad:
        raise validation(bad)
    for k in ("name", "description"):
        if k in body:
            f[k] = body[k]
    f["updated_at"] = now()
    record("flag_updated", actor, f["key"])
    return render_flag(f)


@app.delete("/flags/{flag_key}", status_code=204)
async def delete_flag(flag_key: str, request: Request):
    actor = require(request, WRITERS)
    f = get_flag(flag_key)
    del flags[f["key"]]
    record("flag_deleted", actor, f["key"])
    return no_content()


@app.get("/flags/{flag_key}/environments/{env_key}")
async def get_config(flag_key: str, env_key: str, request: Request):
    require(request, READERS)
    f = get_flag(flag_key)
    get_env(env_key)
    return render_config(f, env_key)


@app.patch("/flags/{flag_key}/environments/{env_key}")
async def update_config(flag_key: str, env_key: str, request: Request):
    actor = require(request, WRITERS)
    f = get_flag(flag_key)
    get_env(env_key)
    body = await json_object(request)
    bad = []
    if "enabled" in body and not is_bool(body["enabled"]):
        bad.append("enabled")
    if "rollout_percentage" in body and not (is_int(body["rollout_percentage"])
                                             and 0 <= body["rollout_percentage"] <= 100):
        bad.append("rollout_percentage")
    if "rules" in body and not valid_rules(body["rules"]):
        bad.append("rules")
    if bad:
        raise validation(bad)
    c = f["configs"][env_key]
    if "enabled" in body:
        c["enabled"] = body["enabled"]
    if "rollout_percentage" in body:
        c["rollout_percentage"] = body["rollout_percentage"]
    if "rules" in body:
        c["rules"] = [{"segment_key": r["segment_key"], "value": r["value"]}
                      for r in body["rules"]]
    f["updated_at"] = now()
    record("flag_config_updated", actor, f["key"], env_key)
    return render_config(f, env_key)


# ---------------------------------------------------------------- segments

@app.get("/segments")
async def list_segments(request: Request):
    require(request, READERS)
    prefix = request.query_params.get("prefix")
    items = sorted((s for s in segments.values()
                    if prefix is None or s["key"].startswith(prefix)), key=lambda s: s["key"])
    return {"items": [render_segment(s) for s in items]}


@app.post("/segments", status_code=201)
async def create_segment(request: Request):
    require(request, WRITERS)
    body = await json_object(request)
    bad = []
    key = body.get("key")
    if not is_str(key) or not FLAG_KEY_RE.fullmatch(key):
        bad.append("key")
    name = body.get("name", key)
    if "name" in body and not non_blank(name, 100):
        bad.append("name")
    if not valid_conditions(body.get("conditions")):
        bad.append("conditions")
    if bad:
        raise validation(bad)
    if key in segments:
        raise conflict("segment key is taken")
    t = now()
    s = {"key": key, "name": name, "conditions": clean_conditions(body["conditions"]),
         "created_at": t, "updated_at": t}
    segments[key] = s
    return JSONResponse(render_segment(s), status_code=201)


@app.get("/segments/{segment_key}")
async def get_segment_route(segment_key: str, request: Request):
    require(request, READERS)
    return render_segment(get_segment(segment_key))


@app.patch("/segments/{segment_key}")
async def update_segment(segment_key: str, request: Request):
    require(request, WRITERS)
    s = get_segment(segment_key)
    body = await json_object(request)
    bad = []
    if "name" in body and not non_blank(body["name"], 100):
        bad.append("name")
    if "conditions" in body and not valid_conditions(body["conditions"]):
        bad.append("conditions")
    if bad:
        raise validation(bad)
    if "name" in body:
        s["name"] = body["name"]
    if "conditions" in body:
        s["conditions"] = clean_conditions(body["conditions"])
    s["updated_at"] = now()
    return render_segment(s)


@app.delete("/segments/{segment_key}", status_code=204)
async def delete_segment(segment_key: str, request: Request):
    require(request, WRITERS)
    s = get_segment(segment_key)
    for f in flags.values():
        for c in f["configs"].values():
            if any(r["segment_key"] == s["key"] for r in c["rules"]):
                raise conflict("a flag rule names this segment")
    del segments[s["key"]]
    return no_content()


# ---------------------------------------------------------------- evaluation

@app.post("/environments/{env_key}/flags/{flag_key}/evaluate")
async def evaluate_one(env_key: str, flag_key: str, request: Request):
    require_evaluator(request, env_key)
    get_env(env_key)
    f = get_flag(flag_key)
    body = await json_object(request)
    bad = []
    ctx = parse_context(body, bad)
    if bad:
        raise validation(bad)
    result = evaluate(f, env_key, ctx)
    count(f, env_key, result)
    return result


@app.post("/environments/{env_key}/evaluate")
async def evaluate_many(env_key: str, request: Request):
    require_evaluator(request, env_key)
    get_env(env_key)
    body = await json_object(request)
    bad = []
    ctx = parse_context(body, bad)
    wanted = None
    if "flags" in body:
        wanted = body["flags"]
        if not isinstance(wanted, list) or len(wanted) > 100 or not all(
                is_str(k) for k in wanted):
            bad.append("flags")
    if bad:
        raise validation(bad)
    keys = sorted(set(wanted)) if wanted is not None else sorted(flags)
    results = []
    for k in keys:
        f = flags.get(k)
        if f is None:
            results.append({"flag_key": k, "value": False, "reason": "unknown_flag",
                            "bucket": None, "segment_key": None})
            continue
        result = evaluate(f, env_key, ctx)
        count(f, env_key, result)
        results.append(result)
    return {"environment": env_key, "user_id": ctx["user_id"], "results": results}


# ---------------------------------------------------------------- audit

@app.get("/audit")
async def list_audit(request: Request):
    require(request, READERS)
    bad = []
    limit, offset = paging(request, bad)
    if bad:
        raise validation(bad)
    flag_key = request.query_params.get("flag_key")
    items = [a for a in reversed(audit) if flag_key is None or a["flag_key"] == flag_key]
    return page(items, limit, offset,
                lambda a: {k: a[k] for k in ("id", "action", "actor", "flag_key",
                                             "environment")}
                | {"created_at": fmt_ts(a["created_at"])})


if __name__ == "__main__":
    uvicorn.run(app, host="0.0.0.0", port=int(os.environ.get("PORT", "8000")),
                log_level="warning", access_log=False)
