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


@pytest.fixture
def checks() -> Any:
    """The checks shared by the bundled oracles (pytest_backendbench.http.checks): each returns its findings."""
    from pytest_backendbench.http.checks import oracle_checks

    return oracle_checks()
