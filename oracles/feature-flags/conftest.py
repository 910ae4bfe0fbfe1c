"""Shared setup for the feature-flags oracle: API keys, environments, flags, segments.

Flags, segments and environments are global in this service, so every item uses keys with a
uuid fragment and never asserts global counts: lists are checked through a unique key prefix,
or for the relative order of the item's own objects. The bootstrap admin secret is the value
task.yaml promises in ADMIN_API_KEY. The expected rollout bucket is computed here exactly as
spec.md defines it.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml

TASK_YAML = Path(__file__).resolve().parents[2] / "benchmarks" / "feature-flags" / "task.yaml"
DEFAULT_ENVIRONMENTS = ["development", "staging", "production"]


def bootstrap_secret() -> str:
    """ADMIN_API_KEY as task.yaml promises it to the service."""
    return str(yaml.safe_load(TASK_YAML.read_text(encoding="utf-8"))["env"]["ADMIN_API_KEY"])


def unique(prefix: str) -> str:
    """A fresh key matching the flag, segment and environment key patterns."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def bucket(flag_key: str, user_id: str) -> int:
    """spec.md's bucket: first 8 hex digits of SHA-256("<flag_key>/<user_id>") mod 100."""
    return int(hashlib.sha256(f"{flag_key}/{user_id}".encode()).hexdigest()[:8], 16) % 100


def brief(response: requests.Response) -> str:
    """A short description of a response for failure messages."""
    return f"{response.request.method} {response.request.path_url} -> {response.status_code} {response.text[:300]}"


@dataclass
class Key:
    """An API key (or the bootstrap key) the oracle can call with."""

    id: str
    role: str
    secret: str
    environment: str | None = None

    @property
    def headers(self) -> dict[str, str]:
        """The Authorization header of this key."""
        return {"Authorization": f"Bearer {self.secret}"}


class Api:
    """Setup and inspection helpers on top of the ``http`` fixture."""

    brief = staticmethod(brief)
    bucket = staticmethod(bucket)
    unique = staticmethod(unique)

    def __init__(self, http: requests.Session) -> None:
        self.http = http
        self.admin = Key("bootstrap", "admin", bootstrap_secret())

    # ---------------------------------------------------------------- answers

    def ok(self, response: requests.Response, status: int, what: str) -> Any:
        """The JSON body of a setup response, or fail the item when the status is not ``status``."""
        __tracebackhide__ = True
        if response.status_code != status:
            pytest.fail(f"setup step '{what}' expected {status}: {brief(response)}", pytrace=False)
        if status == 204 or not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            pytest.fail(f"setup step '{what}' answered a body that is not JSON: {brief(response)}", pytrace=False)

    def error(self, response: requests.Response, status: int, code: str, what: str) -> dict[str, Any]:
        """Assert an error answer: its status and its documented ``error`` code."""
        __tracebackhide__ = True
        assert response.status_code == status, f"{what}: expected {status} ({code}), got {brief(response)}"
        try:
            body = response.json()
        except ValueError:
            pytest.fail(f"{what}: the {status} answer is not JSON: {brief(response)}", pytrace=False)
        assert isinstance(body, dict) and body.get("error") == code, f"{what}: expected error code {code!r}, got {response.text[:300]}"
        return body

    def validation_problem(self, response: requests.Response, fields: list[str] | None, what: str, also: tuple[str, ...] = ()) -> str | None:
        """Why ``response`` is not a 422 naming exactly ``fields`` (order-free), or None when it is.

        ``also`` names fields whose validity depends on an invalid one (a subject for an unknown
        channel): the spec leaves open whether they are listed too, so either reading passes.
        """
        if response.status_code != 422:
            return f"{what}: expected 422, got {brief(response)}"
        try:
            body = response.json()
        except ValueError:
            return f"{what}: the 422 answer is not JSON: {brief(response)}"
        if not isinstance(body, dict) or body.get("error") != "validation_error":
            return f"{what}: expected error code 'validation_error', got {response.text[:300]}"
        got = body.get("fields")
        if not isinstance(got, list):
            return f"{what}: a 422 body needs a 'fields' list, got {got!r}"
        if fields is not None and not (set(fields) <= set(map(str, got)) <= set(fields) | set(also) and len(got) == len(set(map(str, got)))):
            return f"{what}: 422 should list fields {sorted(fields)}, got {got!r}"
        return None

    def assert_no_problems(self, problems: list[str | None], headline: str) -> None:
        """Fail with every collected problem at once."""
        __tracebackhide__ = True
        found = [p for p in problems if p]
        assert not found, headline + ":\n" + "\n".join(found)

    # ---------------------------------------------------------------- keys and environments

    def key(self, role: str, environment: str | None = None, name: str | None = None) -> Key:
        """A new API key created by the bootstrap admin."""
        body: dict[str, Any] = {"name": name or unique(role), "role": role}
        if environment is not None:
            body["environment"] = environment
        created = self.ok(self.http.post("/keys", json=body, headers=self.admin.headers), 201, f"create a {role} key")
        return Key(created["id"], role, created["secret"], created.get("environment"))

    def environment(self, key: str | None = None, **fields: Any) -> dict[str, Any]:
        """A new environment created by the bootstrap admin."""
        body = {"key": key or unique("env"), **fields}
        return self.ok(self.http.post("/environments", json=body, headers=self.admin.headers), 201, "create an environment")

    def delete_environment(self, env_key: str) -> None:
        """Delete an environment (must succeed)."""
        self.ok(self.http.delete(f"/environments/{env_key}", headers=self.admin.headers), 204, f"delete environment {env_key}")

    # ---------------------------------------------------------------- flags and segments

    def flag(self, key: str | None = None, by: Key | None = None, **fields: Any) -> dict[str, Any]:
        """A new flag."""
        body = {"key": key or unique("flag"), **fields}
        return self.ok(self.http.post("/flags", json=body, headers=(by or self.admin).headers), 201, f"create flag {body['key']}")

    def get_flag(self, flag_key: str) -> dict[str, Any]:
        """GET /flags/{key} (must exist)."""
        return self.ok(self.http.get(f"/flags/{flag_key}", headers=self.admin.headers), 200, f"read flag {flag_key}")

    def configure(self, flag_key: str, env: str, by: Key | None = None, **fields: Any) -> dict[str, Any]:
        """PATCH a flag's configuration in one environment (must succeed)."""
        response = self.http.patch(f"/flags/{flag_key}/environments/{env}", json=fields, headers=(by or self.admin).headers)
        return self.ok(response, 200, f"configure {flag_key} in {env} with {fields}")

    def config(self, flag_key: str, env: str) -> dict[str, Any]:
        """GET a flag's configuration (with counts) in one environment."""
        return self.ok(self.http.get(f"/flags/{flag_key}/environments/{env}", headers=self.admin.headers), 200, f"read {flag_key} in {env}")

    def segment(self, conditions: list[dict[str, Any]], key: str | None = None, **fields: Any) -> dict[str, Any]:
        """A new segment."""
        body = {"key": key or unique("seg"), "conditions": conditions, **fields}
        return self.ok(self.http.post("/segments", json=body, headers=self.admin.headers), 201, f"create segment {body['key']}")

    # ---------------------------------------------------------------- evaluation and audit

    def evaluate(self, env: str, flag_key: str, user_id: str, attributes: dict[str, Any] | None = None, by: Key | None = None) -> dict[str, Any]:
        """One evaluation result (must answer 200)."""
        body: dict[str, Any] = {"user_id": user_id}
        if attributes is not None:
            body["attributes"] = attributes
        response = self.http.post(f"/environments/{env}/flags/{flag_key}/evaluate", json=body, headers=(by or self.admin).headers)
        return self.ok(response, 200, f"evaluate {flag_key} in {env} for {user_id}")

    def evaluate_many(self, env: str, user_id: str, flags: list[str] | None = None, attributes: dict[str, Any] | None = None,
                      by: Key | None = None) -> dict[str, Any]:
        """A bulk evaluation (must answer 200)."""
        body: dict[str, Any] = {"user_id": user_id}
        if flags is not None:
            body["flags"] = flags
        if attributes is not None:
            body["attributes"] = attributes
        response = self.http.post(f"/environments/{env}/evaluate", json=body, headers=(by or self.admin).headers)
        return self.ok(response, 200, f"bulk-evaluate in {env} for {user_id}")

    def audit(self, flag_key: str, **params: Any) -> list[dict[str, Any]]:
        """The audit entries of one flag, newest first (first 100)."""
        response = self.http.get("/audit", params={"flag_key": flag_key, "limit": 100, **params}, headers=self.admin.headers)
        return list(self.ok(response, 200, f"read the audit log of {flag_key}")["items"])

    @staticmethod
    def outcome(result: dict[str, Any]) -> tuple[Any, ...]:
        """(value, reason, bucket, segment_key) of a result, for comparisons."""
        return (result.get("value"), result.get("reason"), result.get("bucket"), result.get("segment_key"))


@pytest.fixture
def api(http: requests.Session) -> Api:
    """Setup and inspection helpers bound to the service under test."""
    return Api(http)


@pytest.fixture
def admin(api: Api) -> Key:
    """The bootstrap admin key."""
    return api.admin


@pytest.fixture
def editor(api: Api) -> Key:
    """A fresh editor key."""
    return api.key("editor")


@pytest.fixture
def viewer(api: Api) -> Key:
    """A fresh viewer key."""
    return api.key("viewer")


@pytest.fixture
def sdk(api: Api) -> Key:
    """A fresh sdk key for production."""
    return api.key("sdk", environment="production")


# ---------------------------------------------------------------- checks shared by the items


def password_leaks(text: str, password: str) -> list[str]:
    """Forms of ``password`` found in ``text``: its value, unsalted digests of it, or a salted hash.

    The spec forbids revealing the password, not the word "password": a key of that name is
    fine, its value or a hash of it is not.
    """
    import base64
    import hashlib
    import re

    found = [] if password not in text else ["the password itself"]
    raw = password.encode()
    for name in ("md5", "sha1", "sha256", "sha512"):
        digest = hashlib.new(name, raw)
        if digest.hexdigest() in text.lower() or base64.b64encode(digest.digest()).decode() in text:
            found.append(f"its {name} digest")
    if base64.b64encode(raw).decode() in text:
        found.append("its base64 form")
    if re.search(r"\$(2[abxy]|argon2(id|i|d)|pbkdf2[-_a-z0-9]*|scrypt|[156])\$", text):
        found.append("a password-hash string")
    return found


def documented(value: Any, expected: dict[str, Any]) -> Any:
    """``value`` restricted to the keys of ``expected``: responses may carry extra fields."""
    if not isinstance(value, dict):
        return value
    return {key: documented(value.get(key), sub) if isinstance(sub, dict) else value.get(key) for key, sub in expected.items()}


def concurrently(call: Any, args: list[Any], timeout_s: float = 30.0) -> list[Any]:
    """``call(arg)`` for every ``arg`` at once; the results in order.

    An exception in one call (a request timeout, a refused connection) is raised here, in the
    item, instead of dying silently inside a thread: the item then ends as the timeout or crash
    it is, never as a confusing count of statuses.
    """
    import threading
    from concurrent.futures import ThreadPoolExecutor

    gate = threading.Barrier(len(args), timeout=timeout_s)

    def released(arg: Any) -> Any:
        gate.wait()
        return call(arg)

    with ThreadPoolExecutor(max_workers=len(args)) as pool:
        futures = [pool.submit(released, arg) for arg in args]
        return [future.result(timeout=timeout_s) for future in futures]


def deep_json(depth: int, leaf: str = '"x"') -> str:
    """A JSON array nested ``depth`` levels deep, built as text (no recursion needed)."""
    return "[" * depth + leaf + "]" * depth


def hostile_body_problems(service: Any, timeout_s: float, method: str, path: str, headers: dict[str, str], body: dict[str, Any], field: str) -> list[str]:
    """Send ``body`` to ``path`` oversized (in ``field``) and deeply nested; what went wrong.

    The spec: over 1 MiB gets 413 or 422, deeper than 32 levels gets 422, and the service keeps
    answering. Sent with a plain session: a 413 is not in every contract, and these requests are
    about limits, not about the contract.
    """
    import json

    import requests

    problems: list[str] = []
    url = service.base_url + path
    sent = {"Content-Type": "application/json", **headers}
    big = json.dumps({**body, field: "x" * (1_048_576 + 64)})
    nested_ignored = json.dumps(body)[:-1] + ', "nested_extra": ' + deep_json(40) + "}"
    nested_deep = json.dumps(body)[:-1] + f', "{field}": ' + deep_json(20_000) + "}"
    for label, data, allowed in (
        ("a body over 1 MiB", big, (413, 422)),
        ("a body nested 40 levels deep (in a field the contract does not define)", nested_ignored, (422,)),
        ("a body nested 20000 levels deep", nested_deep, (413, 422)),
    ):
        try:
            r = requests.request(method, url, data=data.encode(), headers=sent, timeout=timeout_s)
        except requests.RequestException as err:
            problems.append(f"{method} {path} with {label}: no answer ({type(err).__name__}: {err})")
            continue
        if r.status_code not in allowed:
            problems.append(f"{method} {path} with {label}: expected {' or '.join(map(str, allowed))}, got {r.status_code} {r.text[:150]}")
        try:
            health = requests.get(service.base_url + "/health", timeout=timeout_s)
            if health.status_code != 200:
                problems.append(f"after {label}: GET /health answered {health.status_code}")
        except requests.RequestException as err:
            problems.append(f"after {label}: the service no longer answers GET /health ({type(err).__name__})")
    return problems


TRAVERSAL_IDS = ("..%2f..%2fhealth", "%2e%2e%2f%2e%2e%2fhealth", "..%5c..%5chealth", "%2A", "1%27%20OR%20%271%27%3D%271", "%00")


def traversal_problems(service: Any, timeout_s: float, prefix: str, headers: dict[str, str], suffix: str = "") -> list[str]:
    """GET ``prefix + <hostile id> + suffix`` for ids that try to climb out of the path; each must be 404.

    Sent as raw, already-encoded paths (requests would otherwise normalise the dot segments).
    """
    import requests

    problems = []
    for hostile in TRAVERSAL_IDS:
        url = f"{service.base_url}{prefix}{hostile}{suffix}"
        request = requests.Request("GET", url, headers=headers).prepare()
        request.url = url
        try:
            with requests.Session() as session:
                r = session.send(request, timeout=timeout_s, allow_redirects=False)
        except requests.RequestException as err:
            problems.append(f"GET {prefix}{hostile}{suffix}: no answer ({type(err).__name__})")
            continue
        if r.status_code != 404:
            problems.append(f"GET {prefix}{hostile}{suffix}: expected 404 (an id naming nothing), got {r.status_code} {r.text[:120]}")
    return problems


MALFORMED_TOKENS = ("Bearer", "Bearer ", "Token {token}", "{token}", "Bearer {token}x", "Bearer x{token}", "Bearer {token} {token}",
                    "Bearer ' OR '1'='1", "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.", "Basic YWRtaW46YWRtaW4=")


def token_problems(http: Any, method: str, path: str, token: str, body: Any = None) -> list[str]:
    """Send the request with malformed or tampered Authorization headers; each must be 401."""
    problems = []
    for template in MALFORMED_TOKENS:
        header = template.format(token=token)
        r = http.request(method, path, json=body, headers={"Authorization": header})
        shown = header.replace(token, "<token>")
        if r.status_code != 401:
            problems.append(f"{method} {path} with Authorization {shown!r}: expected 401, got {r.status_code} {r.text[:120]}")
        elif (r.headers.get("Content-Type") or "").split(";")[0].strip() == "application/json" and r.json().get("error") != "unauthorized":
            problems.append(f"{method} {path} with Authorization {shown!r}: expected error 'unauthorized', got {r.text[:120]}")
    return problems


INJECTION_TEXTS = ("Robert'); DROP TABLE users;--", "' OR '1'='1", '{"$gt": ""}', "%_%", "*", "$where: 1 == 1", "<script>alert(1)</script>", "\\x00 ;--")


def answer_problems(response: Any, status: int, what: str) -> list[str]:
    """Conventions every answer follows: JSON bodies say ``application/json``; a 204 has no body."""
    problems = []
    if response.status_code != status:
        return [f"{what}: expected {status}, got {response.status_code} {response.text[:150]}"]
    media = (response.headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if status == 204:
        if response.content:
            problems.append(f"{what}: a 204 answer has no body, got {response.content[:80]!r}")
    elif media != "application/json":
        problems.append(f"{what}: a JSON answer needs Content-Type application/json, got {media or 'none'!r}")
    return problems


@pytest.fixture
def checks() -> Any:
    """The shared checks (``password_leaks``, ``documented``, ``concurrently``) for items that want them."""
    import types

    return types.SimpleNamespace(
        password_leaks=password_leaks, documented=documented, concurrently=concurrently, deep_json=deep_json,
        hostile_body_problems=hostile_body_problems, traversal_problems=traversal_problems, token_problems=token_problems,
        injection_texts=INJECTION_TEXTS, answer_problems=answer_problems,
    )
