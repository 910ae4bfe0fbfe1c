"""Shared setup for the file-share oracle: users with quotas, uploads, downloads, share links.

Files and shares belong to one user and are seen by nobody else, so every item creates its
own users (fresh usernames, a quota of its choosing) and never uploads as the bootstrap
administrator, whose usage would otherwise grow with every run. The bootstrap administrator's
credentials are the ones task.yaml promises the service. File contents are fresh random bytes
(never a password: a content's sha256 would otherwise look like a password digest to the
response check).
"""

from __future__ import annotations

import functools
import hashlib
import os
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import requests
import yaml

from pytest_backendbench.http.api import Api as BaseApi

TASK_YAML = Path(__file__).resolve().parents[2] / "benchmarks" / "file-share" / "task.yaml"
MAX_FILE_BYTES = 1_048_576
DEFAULT_QUOTA = 10_485_760


@functools.cache
def bootstrap_credentials() -> tuple[str, str]:
    """ADMIN_USERNAME and ADMIN_PASSWORD as task.yaml promises them to the service."""
    env = yaml.safe_load(TASK_YAML.read_text(encoding="utf-8"))["env"]
    return str(env["ADMIN_USERNAME"]), str(env["ADMIN_PASSWORD"])


def blob(size: int = 64) -> bytes:
    """Fresh random bytes (binary, NULs and high bytes included)."""
    return os.urandom(size)


def sha256(data: bytes) -> str:
    """The lowercase hex SHA-256 the spec puts in a file's ``sha256``."""
    return hashlib.sha256(data).hexdigest()


def future(seconds: float = 3600) -> str:
    """An RFC 3339 UTC timestamp ``seconds`` from now."""
    return (datetime.now(timezone.utc) + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class User:
    """A logged-in user."""

    id: str
    username: str
    password: str
    role: str
    token: str

    @property
    def headers(self) -> dict[str, str]:
        """The Authorization header of this user's token."""
        return {"Authorization": f"Bearer {self.token}"}


class Api(BaseApi):
    """Setup and inspection helpers on top of the ``http`` fixture."""

    blob = staticmethod(blob)
    sha256 = staticmethod(sha256)
    future = staticmethod(future)

    def __init__(self, http: requests.Session) -> None:
        self.http = http
        self._admin: User | None = None

    # ---------------------------------------------------------------- users

    def login(self, username: str, password: str) -> dict[str, Any]:
        """POST /auth/token that must succeed."""
        return dict(self.ok(self.http.post("/auth/token", json={"username": username, "password": password}), 200, f"log in as {username}"))

    @property
    def admin(self) -> User:
        """The bootstrap administrator, logged in once per item."""
        if self._admin is None:
            username, password = bootstrap_credentials()
            body = self.login(username, password)
            self._admin = User(body["user"]["id"], username, password, "admin", body["token"])
        return self._admin

    def user(self, quota: int | None = None, role: str = "user") -> User:
        """A new user created by the bootstrap admin (``quota`` bytes, else the default), logged in."""
        username = f"{role}_{uuid.uuid4().hex[:12]}"
        password = "pw-" + uuid.uuid4().hex
        body: dict[str, Any] = {"username": username, "password": password, "role": role}
        if quota is not None:
            body["quota_bytes"] = quota
        created = self.ok(self.http.post("/users", json=body, headers=self.admin.headers), 201, f"create a {role}")
        return User(created["id"], username, password, role, self.login(username, password)["token"])

    def me(self, user: User) -> dict[str, Any]:
        """GET /me that must answer 200."""
        return dict(self.ok(self.http.get("/me", headers=user.headers), 200, "GET /me"))

    # ---------------------------------------------------------------- files

    def upload(self, user: User | None, name: str, data: bytes, content_type: str | None = None,
               extra_headers: dict[str, str] | None = None) -> requests.Response:
        """POST /files?name= with ``data`` as the raw body; the raw response."""
        headers = dict(user.headers) if user is not None else {}
        if content_type is not None:
            headers["Content-Type"] = content_type
        headers.update(extra_headers or {})
        # every character percent-encoded (a space as %20, never `+`): spec.md leaves open whether
        # `+` in a query string is a space, and this way both readings decode the same name
        return self.http.post(f"/files?name={quote(name, safe='')}", data=data, headers=headers)

    def put_file(self, user: User, name: str | None = None, data: bytes | None = None, content_type: str | None = None,
                 status: int = 201) -> dict[str, Any]:
        """An upload that must answer ``status`` (201 new, 200 replaced); the file."""
        name = name if name is not None else f"file-{uuid.uuid4().hex[:10]}.bin"
        data = data if data is not None else blob()
        return dict(self.ok(self.upload(user, name, data, content_type), status, f"upload {name!r} ({len(data)} bytes)"))

    def files(self, user: User) -> dict[str, Any]:
        """GET /files that must answer 200."""
        return dict(self.ok(self.http.get("/files", headers=user.headers), 200, "GET /files"))

    def names(self, user: User) -> list[str]:
        """The names of the user's files, in the order listed."""
        return [f["name"] for f in self.files(user)["items"]]

    def used(self, user: User) -> int:
        """The user's used_bytes from GET /files."""
        return int(self.files(user)["used_bytes"])

    def content(self, user: User, file: dict[str, Any]) -> requests.Response:
        """GET /files/{id}/content; the raw response."""
        return self.http.get(f"/files/{file['id']}/content", headers=user.headers)

    # ---------------------------------------------------------------- shares

    def share(self, user: User, file: dict[str, Any], **fields: Any) -> dict[str, Any]:
        """A new share of ``file`` (must answer 201)."""
        return dict(self.ok(self.http.post(f"/files/{file['id']}/shares", json=fields, headers=user.headers), 201, f"share {file['name']!r} with {fields}"))

    def public(self, token: str, password: str | None = None, headers: dict[str, str] | None = None) -> requests.Response:
        """GET /s/{token} without an account (X-Share-Password when ``password``); the raw response."""
        sent = dict(headers or {})
        if password is not None:
            sent["X-Share-Password"] = password
        return self.http.get(f"/s/{token}", headers=sent)

    def got(self, response: requests.Response, what: str) -> bytes:
        """The body of a download that must answer 200 (``ok`` is for JSON answers)."""
        __tracebackhide__ = True
        if response.status_code != 200:
            pytest.fail(f"setup step '{what}' expected 200: {self.brief(response)}", pytrace=False)
        return response.content

    def shares(self, user: User, file: dict[str, Any]) -> list[dict[str, Any]]:
        """GET /files/{id}/shares that must answer 200; the items."""
        return list(self.ok(self.http.get(f"/files/{file['id']}/shares", headers=user.headers), 200, "list shares")["items"])

    def download_problems(self, response: requests.Response, data: bytes, content_type: str, what: str) -> list[str]:
        """How a download answer breaks spec.md's Downloads section ([] when it does not)."""
        if response.status_code != 200:
            return [f"{what}: expected 200, got {self.brief(response)}"]
        problems = []
        if response.content != data:
            problems.append(f"{what}: the body is not the uploaded bytes ({len(response.content)} bytes, {response.content[:40]!r}; expected {len(data)})")
        if response.headers.get("Content-Type") != content_type:
            problems.append(f"{what}: Content-Type must be exactly {content_type!r}, got {response.headers.get('Content-Type')!r}")
        if response.headers.get("Content-Length") != str(len(data)):
            problems.append(f"{what}: Content-Length must be {len(data)}, got {response.headers.get('Content-Length')!r}")
        disposition = (response.headers.get("Content-Disposition") or "").strip()
        if disposition.split(";")[0].strip().lower() != "attachment":
            problems.append(f"{what}: Content-Disposition must be attachment, got {disposition!r}")
        if (response.headers.get("X-Content-Type-Options") or "").strip().lower() != "nosniff":
            problems.append(f"{what}: X-Content-Type-Options must be nosniff, got {response.headers.get('X-Content-Type-Options')!r}")
        return problems


@pytest.fixture
def api(http: requests.Session) -> Api:
    """Setup and inspection helpers bound to the service under test."""
    return Api(http)


@pytest.fixture
def admin(api: Api) -> User:
    """The bootstrap administrator."""
    return api.admin


@pytest.fixture
def alice(api: Api) -> User:
    """A fresh user with the default quota."""
    return api.user()


@pytest.fixture
def bob(api: Api) -> User:
    """Another fresh user with the default quota."""
    return api.user()


@pytest.fixture
def http_response_checks() -> list[Any]:
    """The spec's rule that no answer carries a password or anything derived from it, applied to
    every answer every item of this task sees (http/secrets.py; CWE-200)."""
    from pytest_backendbench.http.secrets import secret_check

    return [secret_check()]
