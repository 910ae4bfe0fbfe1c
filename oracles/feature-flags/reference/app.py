"""Reference implementation of the feature-flags task: a candidate that passes the whole oracle.

Flask with in-memory storage behind one lock. Every handler checks in spec.md's order:
authenticate the API key (401), check the role against the endpoint (403), look up what the
path names (404), validate (422), then conflicts (409). Evaluation follows spec.md exactly:
disabled -> first matching rule -> rollout bucket from SHA-256("<flag_key>/<user_id>").
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import threading
import uuid
from datetime import datetime, timezone
from typing import Any

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

app = Flask(__name__)

LOCK = threading.RLock()
BOOTSTRAP = {"id": "bootstrap", "name": "bootstrap", "role": "admin", "environment": None}
KEYS: dict[str, dict[str, Any]] = {}          # key id -> key (with secret), creation order
SECRETS: dict[str, str] = {}                  # secret -> key id
ENVIRONMENTS: dict[str, dict[str, Any]] = {}  # env key -> environment, creation order
FLAGS: dict[str, dict[str, Any]] = {}         # flag key -> flag (configs per env inside)
SEGMENTS: dict[str, dict[str, Any]] = {}      # segment key -> segment
AUDIT: list[dict[str, Any]] = []              # oldest first

ENV_KEY = re.compile(r"^[a-z][a-z0-9-]{1,31}$")
FLAG_KEY = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
ATTRIBUTE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
INTEGER = re.compile(r"^-?[0-9]+$")
ROLES = ("admin", "editor", "viewer", "sdk")
STRING_OPERATORS = ("in", "not_in", "starts_with", "ends_with")
NUMBER_OPERATORS = ("gt", "lt")
READERS = ("admin", "editor", "viewer")
WRITERS = ("admin", "editor")
ADMINS = ("admin",)
MISSING = object()


class ApiError(Exception):
    """An error answer: status, error code, message (and the invalid fields for 422)."""

    def __init__(self, status: int, code: str, message: str, fields: list[str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.fields = fields


def not_found(what: str) -> ApiError:
    return ApiError(404, "not_found", f"{what} not found")


def conflict(message: str) -> ApiError:
    return ApiError(409, "conflict", message)


def invalid(fields: list[str], message: str = "invalid request") -> ApiError:
    return ApiError(422, "validation_error", message, fields)


def reply(payload: Any, status: int = 200) -> Response:
    return Response(json.dumps(payload), status=status, mimetype="application/json")


def no_content() -> Response:
    return Response(status=204)


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


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


# ---------------------------------------------------------------------------- auth


def caller(*roles: str) -> dict[str, Any]:
    """The authenticated key (401), which must have one of ``roles`` (403)."""
    parts = request.headers.get("Authorization", "").split(None, 1)
    if len(parts) != 2 or parts[0].lower() != "bearer":
        raise ApiError(401, "unauthorized", "send Authorization: Bearer <secret>")
    secret = parts[1].strip()
    admin_secret = os.environ.get("ADMIN_API_KEY", "")
    if admin_secret and secrets.compare_digest(secret, admin_secret):
        key = BOOTSTRAP
    else:
        key_id = SECRETS.get(secret)
        if key_id is None or key_id not in KEYS:
            raise ApiError(401, "unauthorized", "unknown or revoked key")
        key = KEYS[key_id]
    if roles and key["role"] not in roles:
        raise ApiError(403, "forbidden", f"the {key['role']} role may not do this")
    return key


def evaluator(env_key: str) -> dict[str, Any]:
    """A key allowed to evaluate in ``env_key``: any reader, or an sdk key of that environment."""
    key = caller()
    if key["role"] == "sdk" and key["environment"] != env_key:
        raise ApiError(403, "forbidden", "an sdk key evaluates only in its own environment")
    return key


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


class Validator:
    """Collects every invalid field of one body before answering 422."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.bad: list[str] = []

    def fail(self, name: str) -> None:
        if name not in self.bad:
            self.bad.append(name)

    def text(self, name: str, *, required: bool, max_len: int, min_len: int = 1, non_blank: bool = False,
             pattern: re.Pattern[str] | None = None) -> Any:
        value = self.data.get(name, MISSING)
        if value is MISSING:
            if required:
                self.fail(name)
            return MISSING
        if (not isinstance(value, str) or not min_len <= len(value) <= max_len
                or (non_blank and not value.strip()) or (pattern is not None and not pattern.match(value))):
            self.fail(name)
            return MISSING
        return value

    def check(self) -> None:
        if self.bad:
            raise invalid(self.bad, "invalid fields: " + ", ".join(self.bad))


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def valid_conditions(value: Any) -> bool:
    if not isinstance(value, list) or not 1 <= len(value) <= 20:
        return False
    for cond in value:
        if not isinstance(cond, dict):
            return False
        attribute, operator, values = cond.get("attribute"), cond.get("operator"), cond.get("values")
        if not isinstance(attribute, str) or not ATTRIBUTE.match(attribute):
            return False
        if operator in STRING_OPERATORS:
            if not isinstance(values, list) or not 1 <= len(values) <= 50 or not all(isinstance(v, str) for v in values):
                return False
        elif operator in NUMBER_OPERATORS:
            if not isinstance(values, list) or len(values) != 1 or not is_number(values[0]):
                return False
        else:
            return False
    return True


def paging() -> tuple[int, int]:
    bad = []
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


# ---------------------------------------------------------------------------- views and lookups


def new_config() -> dict[str, Any]:
    return {"enabled": False, "rollout_percentage": 0, "rules": [], "served_true": 0, "served_false": 0}


def key_view(key: dict[str, Any], with_secret: bool = False) -> dict[str, Any]:
    view = {k: key[k] for k in ("id", "name", "role", "environment", "created_at")}
    if with_secret:
        view["secret"] = key["secret"]
    return view


def config_view(config: dict[str, Any]) -> dict[str, Any]:
    return {"enabled": config["enabled"], "rollout_percentage": config["rollout_percentage"],
            "rules": [dict(r) for r in config["rules"]]}


def flag_view(flag: dict[str, Any]) -> dict[str, Any]:
    return {**{k: flag[k] for k in ("key", "name", "description", "created_at", "updated_at")},
            "environments": {env: config_view(flag["configs"][env]) for env in ENVIRONMENTS}}


def full_config_view(flag: dict[str, Any], env_key: str) -> dict[str, Any]:
    config = flag["configs"][env_key]
    return {"flag_key": flag["key"], "environment": env_key, **config_view(config),
            "served_true": config["served_true"], "served_false": config["served_false"]}


def segment_view(segment: dict[str, Any]) -> dict[str, Any]:
    return {k: segment[k] for k in ("key", "name", "conditions", "created_at", "updated_at")}


def environment(env_key: str) -> dict[str, Any]:
    env = ENVIRONMENTS.get(env_key)
    if env is None:
        raise not_found("environment")
    return env


def flag_named(flag_key: str) -> dict[str, Any]:
    flag = FLAGS.get(flag_key)
    if flag is None:
        raise not_found("flag")
    return flag


def segment_named(segment_key: str) -> dict[str, Any]:
    segment = SEGMENTS.get(segment_key)
    if segment is None:
        raise not_found("segment")
    return segment


def audit(action: str, actor: dict[str, Any], flag_key: str, env_key: str | None) -> None:
    AUDIT.append({"id": f"au_{uuid.uuid4().hex[:16]}", "action": action, "actor": actor["id"], "flag_key": flag_key,
                  "environment": env_key, "created_at": now()})


# ---------------------------------------------------------------------------- evaluation


def condition_holds(cond: dict[str, Any], user_id: str, attributes: dict[str, Any]) -> bool:
    name = cond["attribute"]
    if name == "user_id":
        value: Any = user_id
    elif name in attributes:
        value = attributes[name]
    else:
        return False
    op, values = cond["operator"], cond["values"]
    if op in STRING_OPERATORS:
        if not isinstance(value, str):
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


def bucket_of(flag_key: str, user_id: str) -> int:
    digest = hashlib.sha256(f"{flag_key}/{user_id}".encode("utf-8")).hexdigest()
    return int(digest[:8], 16) % 100


def evaluate(flag: dict[str, Any], env_key: str, user_id: str, attributes: dict[str, Any]) -> dict[str, Any]:
    config = flag["configs"][env_key]
    result = {"flag_key": flag["key"], "value": False, "reason": "disabled", "bucket": None, "segment_key": None}
    if config["enabled"]:
        for rule in config["rules"]:
            segment = SEGMENTS.get(rule["segment_key"])
            if segment is not None and all(condition_holds(c, user_id, attributes) for c in segment["conditions"]):
                result.update(value=rule["value"], reason="rule", segment_key=rule["segment_key"])
                break
        else:
            bucket = bucket_of(flag["key"], user_id)
            result.update(value=bucket < config["rollout_percentage"], reason="rollout", bucket=bucket)
    config["served_true" if result["value"] else "served_false"] += 1
    return result


def context(v: Validator) -> tuple[Any, Any]:
    user_id = v.text("user_id", required=True, max_len=256)
    attributes = v.data.get("attributes", {})
    if not isinstance(attributes, dict) or not all(isinstance(x, (str, int, float, bool)) for x in attributes.values()):
        v.fail("attributes")
    return user_id, attributes


# ---------------------------------------------------------------------------- system and keys


@app.get("/health")
def health() -> Response:
    return reply({"status": "ok"})


@app.get("/me")
def me() -> Response:
    with LOCK:
        key = caller()
        return reply({k: key[k] for k in ("id", "name", "role", "environment")})


@app.get("/keys")
def list_keys() -> Response:
    with LOCK:
        caller(*ADMINS)
        return reply({"items": [key_view(k) for k in KEYS.values()]})


@app.post("/keys")
def create_key() -> Response:
    with LOCK:
        caller(*ADMINS)
        data = json_body()
        v = Validator(data)
        name = v.text("name", required=True, max_len=60, non_blank=True)
        role = data.get("role", MISSING)
        if role not in ROLES:
            v.fail("role")
        env = data.get("environment", None)
        if env is not None and (not isinstance(env, str) or env not in ENVIRONMENTS):
            v.fail("environment")
        elif role == "sdk" and env is None:
            v.fail("environment")
        elif role in ROLES and role != "sdk" and env is not None:
            v.fail("environment")
        v.check()
        key = {"id": f"key_{uuid.uuid4().hex[:16]}", "name": name, "role": role,
               "environment": env if role == "sdk" else None, "secret": "ffk_" + secrets.token_urlsafe(24),
               "created_at": now()}
        KEYS[key["id"]] = key
        SECRETS[key["secret"]] = key["id"]
        return reply(key_view(key, with_secret=True), 201)


def revoke(key_id: str) -> None:
    key = KEYS.pop(key_id)
    SECRETS.pop(key["secret"], None)


@app.delete("/keys/<key_id>")
def delete_key(key_id: str) -> Response:
    with LOCK:
        caller(*ADMINS)
        if key_id not in KEYS:
            raise not_found("key")
        revoke(key_id)
        return no_content()


# ---------------------------------------------------------------------------- environments


@app.get("/environments")
def list_environments() -> Response:
    with LOCK:
        caller(*READERS)
        return reply({"items": list(ENVIRONMENTS.values())})


@app.post("/environments")
def create_environment() -> Response:
    with LOCK:
        caller(*ADMINS)
        v = Validator(json_body())
        key = v.text("key", required=True, max_len=32, pattern=ENV_KEY)
        name = v.text("name", required=False, max_len=60, non_blank=True)
        v.check()
        if key in ENVIRONMENTS:
            raise conflict("environment key taken")
        env = {"key": key, "name": key if name is MISSING else name, "created_at": now()}
        ENVIRONMENTS[key] = env
        for flag in FLAGS.values():
            flag["configs"][key] = new_config()
        return reply(env, 201)


@app.delete("/environments/<env_key>")
def delete_environment(env_key: str) -> Response:
    with LOCK:
        caller(*ADMINS)
        environment(env_key)
        del ENVIRONMENTS[env_key]
        for flag in FLAGS.values():
            flag["configs"].pop(env_key, None)
        for key_id in [k["id"] for k in KEYS.values() if k["role"] == "sdk" and k["environment"] == env_key]:
            revoke(key_id)
        return no_content()


# ---------------------------------------------------------------------------- flags


@app.get("/flags")
def list_flags() -> Response:
    with LOCK:
        caller(*READERS)
        limit, offset = paging()
        prefix = request.args.get("prefix", "")
        flags = [flag_view(FLAGS[k]) for k in sorted(FLAGS) if k.startswith(prefix)]
        return reply(page(flags, limit, offset))


@app.post("/flags")
def create_flag() -> Response:
    with LOCK:
        key_obj = caller(*WRITERS)
        v = Validator(json_body())
        key = v.text("key", required=True, max_len=64, pattern=FLAG_KEY)
        name = v.text("name", required=False, max_len=100, non_blank=True)
        description = v.text("description", required=False, min_len=0, max_len=1000)
        v.check()
        if key in FLAGS:
            raise conflict("flag key taken")
        stamp = now()
        flag = {"key": key, "name": key if name is MISSING else name,
                "description": "" if description is MISSING else description, "created_at": stamp,
                "updated_at": stamp, "configs": {env: new_config() for env in ENVIRONMENTS}}
        FLAGS[key] = flag
        audit("flag_created", key_obj, key, None)
        return reply(flag_view(flag), 201)


@app.get("/flags/<flag_key>")
def get_flag(flag_key: str) -> Response:
    with LOCK:
        caller(*READERS)
        return reply(flag_view(flag_named(flag_key)))


@app.patch("/flags/<flag_key>")
def update_flag(flag_key: str) -> Response:
    with LOCK:
        key_obj = caller(*WRITERS)
        flag = flag_named(flag_key)
        v = Validator(json_body())
        name = v.text("name", required=False, max_len=100, non_blank=True)
        description = v.text("description", required=False, min_len=0, max_len=1000)
        v.check()
        if name is not MISSING:
            flag["name"] = name
        if description is not MISSING:
            flag["description"] = description
        flag["updated_at"] = now()
        audit("flag_updated", key_obj, flag_key, None)
        return reply(flag_view(flag))


@app.delete("/flags/<flag_key>")
def delete_flag(flag_key: str) -> Response:
    with LOCK:
        key_obj = caller(*WRITERS)
        flag_named(flag_key)
        del FLAGS[flag_key]
        audit("flag_deleted", key_obj, flag_key, None)
        return no_content()


@app.get("/flags/<flag_key>/environments/<env_key>")
def get_config(flag_key: str, env_key: str) -> Response:
    with LOCK:
        caller(*READERS)
        flag = flag_named(flag_key)
        environment(env_key)
        return reply(full_config_view(flag, env_key))


@app.patch("/flags/<flag_key>/environments/<env_key>")
def update_config(flag_key: str, env_key: str) -> Response:
    with LOCK:
        key_obj = caller(*WRITERS)
        flag = flag_named(flag_key)
        environment(env_key)
        data = json_body()
        v = Validator(data)
        enabled = data.get("enabled", MISSING)
        if enabled is not MISSING and not isinstance(enabled, bool):
            v.fail("enabled")
        rollout = data.get("rollout_percentage", MISSING)
        if rollout is not MISSING and (isinstance(rollout, bool) or not isinstance(rollout, int) or not 0 <= rollout <= 100):
            v.fail("rollout_percentage")
        rules = data.get("rules", MISSING)
        if rules is not MISSING:
            ok = isinstance(rules, list) and len(rules) <= 20 and all(
                isinstance(r, dict) and isinstance(r.get("segment_key"), str) and r["segment_key"] in SEGMENTS
                and isinstance(r.get("value"), bool) for r in rules)
            if not ok:
                v.fail("rules")
        v.check()
        config = flag["configs"][env_key]
        if enabled is not MISSING:
            config["enabled"] = enabled
        if rollout is not MISSING:
            config["rollout_percentage"] = rollout
        if rules is not MISSING:
            config["rules"] = [{"segment_key": r["segment_key"], "value": r["value"]} for r in rules]
        flag["updated_at"] = now()
        audit("flag_config_updated", key_obj, flag_key, env_key)
        return reply(full_config_view(flag, env_key))


# ---------------------------------------------------------------------------- segments


@app.get("/segments")
def list_segments() -> Response:
    with LOCK:
        caller(*READERS)
        prefix = request.args.get("prefix", "")
        return reply({"items": [segment_view(SEGMENTS[k]) for k in sorted(SEGMENTS) if k.startswith(prefix)]})


@app.post("/segments")
def create_segment() -> Response:
    with LOCK:
        caller(*WRITERS)
        data = json_body()
        v = Validator(data)
        key = v.text("key", required=True, max_len=64, pattern=FLAG_KEY)
        name = v.text("name", required=False, max_len=100, non_blank=True)
        conditions = data.get("conditions", MISSING)
        if not valid_conditions(conditions):
            v.fail("conditions")
        v.check()
        if key in SEGMENTS:
            raise conflict("segment key taken")
        stamp = now()
        segment = {"key": key, "name": key if name is MISSING else name,
                   "conditions": [{"attribute": c["attribute"], "operator": c["operator"], "values": list(c["values"])} for c in conditions],
                   "created_at": stamp, "updated_at": stamp}
        SEGMENTS[key] = segment
        return reply(segment_view(segment), 201)


@app.get("/segments/<segment_key>")
def get_segment(segment_key: str) -> Response:
    with LOCK:
        caller(*READERS)
        return reply(segment_view(segment_named(segment_key)))


@app.patch("/segments/<segment_key>")
def update_segment(segment_key: str) -> Response:
    with LOCK:
        caller(*WRITERS)
        segment = segment_named(segment_key)
        data = json_body()
        v = Validator(data)
        name = v.text("name", required=False, max_len=100, non_blank=True)
        conditions = data.get("conditions", MISSING)
        if conditions is not MISSING and not valid_conditions(conditions):
            v.fail("conditions")
        v.check()
        if name is not MISSING:
            segment["name"] = name
        if conditions is not MISSING:
            segment["conditions"] = [{"attribute": c["attribute"], "operator": c["operator"], "values": list(c["values"])} for c in conditions]
        segment["updated_at"] = now()
        return reply(segment_view(segment))


@app.delete("/segments/<segment_key>")
def delete_segment(segment_key: str) -> Response:
    with LOCK:
        caller(*WRITERS)
        segment_named(segment_key)
        in_use = any(rule["segment_key"] == segment_key for flag in FLAGS.values()
                     for config in flag["configs"].values() for rule in config["rules"])
        if in_use:
            raise conflict("a flag rule uses this segment")
        del SEGMENTS[segment_key]
        return no_content()


# ---------------------------------------------------------------------------- evaluation endpoints


@app.post("/environments/<env_key>/flags/<flag_key>/evaluate")
def evaluate_one(env_key: str, flag_key: str) -> Response:
    with LOCK:
        evaluator(env_key)
        environment(env_key)
        flag = flag_named(flag_key)
        v = Validator(json_body())
        user_id, attributes = context(v)
        v.check()
        return reply(evaluate(flag, env_key, user_id, attributes))


@app.post("/environments/<env_key>/evaluate")
def evaluate_many(env_key: str) -> Response:
    with LOCK:
        evaluator(env_key)
        environment(env_key)
        data = json_body()
        v = Validator(data)
        user_id, attributes = context(v)
        wanted = data.get("flags", MISSING)
        if wanted is not MISSING and (not isinstance(wanted, list) or len(wanted) > 100 or not all(isinstance(k, str) for k in wanted)):
            v.fail("flags")
        v.check()
        keys = sorted(FLAGS) if wanted is MISSING else sorted(set(wanted))
        results = []
        for key in keys:
            if key in FLAGS:
                results.append(evaluate(FLAGS[key], env_key, user_id, attributes))
            else:
                results.append({"flag_key": key, "value": False, "reason": "unknown_flag", "bucket": None, "segment_key": None})
        return reply({"environment": env_key, "user_id": user_id, "results": results})


# ---------------------------------------------------------------------------- audit


@app.get("/audit")
def list_audit() -> Response:
    with LOCK:
        caller(*READERS)
        limit, offset = paging()
        flag_key = request.args.get("flag_key")
        entries = [e for e in reversed(AUDIT) if flag_key is None or e["flag_key"] == flag_key]
        return reply(page(entries, limit, offset))


def seed() -> None:
    for key, name in (("development", "Development"), ("staging", "Staging"), ("production", "Production")):
        ENVIRONMENTS[key] = {"key": key, "name": name, "created_at": now()}


seed()

if __name__ == "__main__":
    app.run(host="0.0.0.0", port=int(os.environ.get("PORT", "8000")), threaded=True)
