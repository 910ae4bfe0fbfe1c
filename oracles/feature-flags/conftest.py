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
from typing import Any

from pytest_backendbench.http.accounts import AccountsApi, admin_fixture, api_fixture, role_fixture

DEFAULT_ENVIRONMENTS = ["development", "staging", "production"]


def unique(prefix: str) -> str:
    """A fresh key matching the flag, segment and environment key patterns."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def bucket(flag_key: str, user_id: str) -> int:
    """spec.md's bucket: first 8 hex digits of SHA-256("<flag_key>/<user_id>") mod 100."""
    return int(hashlib.sha256(f"{flag_key}/{user_id}".encode()).hexdigest()[:8], 16) % 100


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


class Api(AccountsApi):
    """Setup and inspection helpers on top of the ``http`` fixture."""

    bucket = staticmethod(bucket)
    unique = staticmethod(unique)
    credential_keys = ("ADMIN_API_KEY",)

    @property
    def admin(self) -> Key:  # type: ignore[override]
        """The bootstrap admin key task.yaml promises the service (ADMIN_API_KEY)."""
        if self._admin is None:
            self._admin = Key("bootstrap", "admin", *self.bootstrap_credentials())
        return self._admin

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


api = api_fixture(Api)
admin = admin_fixture


editor = role_fixture("editor", lambda api: api.key("editor"), "A fresh editor key.")


viewer = role_fixture("viewer", lambda api: api.key("viewer"), "A fresh viewer key.")


sdk = role_fixture("sdk", lambda api: api.key("sdk", environment="production"), "A fresh sdk key for production.")
