"""Shared setup for the file-share oracle: users with quotas, uploads, downloads, share links.

Files and shares belong to one user and are seen by nobody else, so every item creates its
own users (fresh usernames, a quota of its choosing) and never uploads as the bootstrap
administrator, whose usage would otherwise grow with every run. The bootstrap administrator's
credentials are the ones task.yaml promises the service. File contents are fresh random bytes
(never a password: a content's sha256 would otherwise look like a password digest to the
response check).
"""

from __future__ import annotations

import hashlib
import os
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import quote

import pytest
import requests

from pytest_backendbench.http.accounts import Account as User
from pytest_backendbench.http.accounts import AccountsApi, admin_fixture, api_fixture, leak_checks_fixture, role_fixture

MAX_FILE_BYTES = 1_048_576
DEFAULT_QUOTA = 10_485_760


def blob(size: int = 64) -> bytes:
    """Fresh random bytes (binary, NULs and high bytes included)."""
    return os.urandom(size)


def sha256(data: bytes) -> str:
    """The lowercase hex SHA-256 the spec puts in a file's ``sha256``."""
    return hashlib.sha256(data).hexdigest()


def future(seconds: float = 3600) -> str:
    """An RFC 3339 UTC timestamp ``seconds`` from now."""
    return (datetime.now(timezone.utc) + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Api(AccountsApi):
    """Setup and inspection helpers on top of the ``http`` fixture."""

    blob = staticmethod(blob)
    sha256 = staticmethod(sha256)
    future = staticmethod(future)

    # ---------------------------------------------------------------- users

    def user(self, quota: int | None = None, role: str = "user") -> User:
        """A new user created by the bootstrap admin (``quota`` bytes, else the default), logged in."""
        return self.staff(role, **({"quota_bytes": quota} if quota is not None else {}))

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


api = api_fixture(Api)
admin = admin_fixture


alice = role_fixture("alice", lambda api: api.user(), "A fresh user with the default quota.")


bob = role_fixture("bob", lambda api: api.user(), "Another fresh user with the default quota.")


http_response_checks = leak_checks_fixture()
