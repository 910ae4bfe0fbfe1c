"""Helpers for the event-registration oracle: every item creates its own events (unique titles)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import requests


def unique(prefix: str) -> str:
    """A fresh title or name."""
    return f"{prefix} {uuid.uuid4().hex[:10]}"


def brief(response: requests.Response) -> str:
    """A short description of a response for failure messages."""
    return f"{response.request.method} {response.request.path_url} -> {response.status_code} {response.text[:300]}"


class Api:
    """Setup helpers on top of the ``http`` fixture; a setup step that fails fails the item."""

    brief = staticmethod(brief)
    unique = staticmethod(unique)

    def __init__(self, http: requests.Session) -> None:
        self.http = http

    def ok(self, response: requests.Response, status: int, what: str) -> Any:
        __tracebackhide__ = True
        if response.status_code != status:
            pytest.fail(f"setup step '{what}' expected {status}: {brief(response)}", pytrace=False)
        return response.json() if response.content else None

    def event(self, capacity: int = 10, starts_at: str = "2031-03-01T18:00:00Z", title: str | None = None) -> dict[str, Any]:
        body = {"title": title or unique("Meetup"), "starts_at": starts_at, "capacity": capacity}
        return self.ok(self.http.post("/api/events", json=body), 201, "create an event")

    def register(self, event: dict[str, Any], name: str | None = None, email: str | None = None) -> dict[str, Any]:
        body = {"name": name or unique("Ada"), "email": email or f"{uuid.uuid4().hex[:12]}@example.org"}
        return self.ok(self.http.post(f"/api/events/{event['id']}/registrations", json=body), 201, "register")

    def unknown_event_id(self) -> int:
        """An event id no event has: far above every id listed now (a fixed number might be assigned)."""
        events = self.ok(self.http.get("/api/events"), 200, "list events")
        items = events.get("items", events) if isinstance(events, dict) else events
        return max([int(e["id"]) for e in items] + [0]) + 100_000

    def seats(self, event: dict[str, Any]) -> int:
        return int(self.ok(self.http.get(f"/api/events/{event['id']}"), 200, "read the event")["seats_left"])

    def error(self, response: requests.Response, status: int, code: str, what: str) -> dict[str, Any]:
        __tracebackhide__ = True
        assert response.status_code == status, f"{what}: expected {status} {code}, got {brief(response)}"
        body = response.json()
        assert isinstance(body, dict) and body.get("error") == code, f"{what}: expected error {code!r}, got {response.text[:300]}"
        return body


@pytest.fixture
def api(http: requests.Session) -> Api:
    """Setup helpers bound to the service under test."""
    return Api(http)


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


@pytest.fixture
def checks() -> Any:
    """The shared checks (``password_leaks``, ``documented``, ``concurrently``) for items that want them."""
    import types

    return types.SimpleNamespace(password_leaks=password_leaks, documented=documented, concurrently=concurrently)
