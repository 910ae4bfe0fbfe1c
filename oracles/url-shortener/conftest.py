"""Shared setup for the url-shortener oracle: users, links, visits.

Every item registers its own users and creates its own links. Custom slugs always carry a
uuid fragment because slugs are global across the shared service. A setup step that does not
answer as the contract says fails the item with a readable message.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
import requests


def unique(prefix: str) -> str:
    """A fresh name that is also a valid username and slug."""
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def brief(response: requests.Response) -> str:
    """A short description of a response for failure messages."""
    return f"{response.request.method} {response.request.path_url} -> {response.status_code} {response.text[:300]}"


def instant(value: str) -> datetime:
    """Parse an RFC 3339 timestamp from a response (Z or offset) into an aware datetime."""
    return datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))


def rfc3339(moment: datetime) -> str:
    """An RFC 3339 timestamp with a Z suffix."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def in_days(days: float) -> str:
    """A timestamp ``days`` from now (negative: in the past)."""
    return rfc3339(datetime.now(timezone.utc) + timedelta(days=days))


@dataclass
class User:
    """A registered, logged-in user."""

    id: str
    username: str
    password: str
    token: str

    @property
    def headers(self) -> dict[str, str]:
        """The Authorization header of this user's token."""
        return {"Authorization": f"Bearer {self.token}"}


class Api:
    """Setup and inspection helpers on top of the ``http`` fixture."""

    brief = staticmethod(brief)
    instant = staticmethod(instant)
    in_days = staticmethod(in_days)
    rfc3339 = staticmethod(rfc3339)
    unique = staticmethod(unique)

    def __init__(self, http: requests.Session) -> None:
        self.http = http

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

    def newest_first_problem(self, items: list[dict[str, Any]], expected: list[Any], key: str, stamp: str, what: str) -> str | None:
        """Why ``items`` are not ``expected`` (values of ``key``, newest first), or None.

        Entries recorded within one timestamp tick (a millisecond, or a second at second
        resolution) tie: the spec orders by time, so tied entries may come in either order.
        """
        got = [i.get(key) for i in items]
        if sorted(map(str, got)) != sorted(map(str, expected)):
            return f"{what}: expected {expected}, got {got}"
        when = {str(i.get(key)): self.instant(str(i.get(stamp))) for i in items}
        for a_index, a in enumerate(expected):
            for b in expected[a_index + 1:]:
                if when[str(a)] != when[str(b)] and got.index(a) > got.index(b):
                    return f"{what}: {a} is newer than {b} and must come first: {got}"
        return None

    def assert_no_problems(self, problems: list[str | None], headline: str) -> None:
        """Fail with every collected problem at once."""
        __tracebackhide__ = True
        found = [p for p in problems if p]
        assert not found, headline + ":\n" + "\n".join(found)

    # ---------------------------------------------------------------- users

    def user(self, prefix: str = "user") -> User:
        """A registered user with a token."""
        password = "pw-" + uuid.uuid4().hex
        created = self.ok(self.http.post("/users", json={"username": unique(prefix), "password": password}), 201, "register a user")
        return User(created["id"], created["username"], password, self.login(created["username"], password))

    def login(self, username: str, password: str) -> str:
        """A new token."""
        body = self.ok(self.http.post("/auth/token", json={"username": username, "password": password}), 200, "log in")
        return str(body["token"])

    # ---------------------------------------------------------------- links and visits

    def link(self, user: User, url: str | None = None, **fields: Any) -> dict[str, Any]:
        """A new link of ``user``."""
        body = {"url": url or f"https://example.com/{uuid.uuid4().hex}", **fields}
        return self.ok(self.http.post("/links", json=body, headers=user.headers), 201, f"create a link {body}")

    def get_link(self, user: User, link: dict[str, Any]) -> dict[str, Any]:
        """Read a link back (must exist)."""
        return self.ok(self.http.get(f"/links/{link['id']}", headers=user.headers), 200, "read a link")

    def patch(self, user: User, link: dict[str, Any], **fields: Any) -> dict[str, Any]:
        """Update a link; the update must succeed."""
        return self.ok(self.http.patch(f"/links/{link['id']}", json=fields, headers=user.headers), 200, f"update a link with {fields}")

    def follow(self, slug: str, referer: str | None = None, **headers: str) -> requests.Response:
        """GET /r/{slug} without following the redirect."""
        if referer is not None:
            headers["Referer"] = referer
        return self.http.get(f"/r/{slug}", headers=headers, allow_redirects=False)

    def visit(self, link: dict[str, Any], referer: str | None = None) -> None:
        """Follow a link that must redirect."""
        __tracebackhide__ = True
        r = self.follow(link["slug"], referer)
        if r.status_code != 302:
            pytest.fail(f"setup step 'follow /r/{link['slug']}' expected 302: {brief(r)}", pytrace=False)

    def links(self, user: User, **params: Any) -> dict[str, Any]:
        """One page of the caller's links."""
        return dict(self.ok(self.http.get("/links", params=params, headers=user.headers), 200, f"list links with {params}"))

    def link_ids(self, user: User, **params: Any) -> list[str]:
        """Ids of one page of the caller's links."""
        return [x["id"] for x in self.links(user, **params)["items"]]

    def stats(self, user: User, link: dict[str, Any]) -> dict[str, Any]:
        """GET /links/{id}/stats."""
        return dict(self.ok(self.http.get(f"/links/{link['id']}/stats", headers=user.headers), 200, "read link stats"))

    def visits(self, user: User, link: dict[str, Any], **params: Any) -> dict[str, Any]:
        """One page of a link's visits."""
        response = self.http.get(f"/links/{link['id']}/visits", params=params, headers=user.headers)
        return dict(self.ok(response, 200, "list visits"))

    def tags(self, user: User) -> list[tuple[str, int]]:
        """(tag, links) pairs from GET /tags."""
        items = self.ok(self.http.get("/tags", headers=user.headers), 200, "list tags")["items"]
        return [(i.get("tag"), i.get("links")) for i in items]


@pytest.fixture
def api(http: requests.Session) -> Api:
    """Setup and inspection helpers bound to the service under test."""
    return Api(http)


@pytest.fixture
def alice(api: Api) -> User:
    """A fresh user."""
    return api.user("alice")


@pytest.fixture
def bob(api: Api) -> User:
    """Another fresh user, for isolation checks."""
    return api.user("bob")


# ---------------------------------------------------------------- checks shared by the items


@pytest.fixture
def checks() -> Any:
    """The checks shared by the bundled oracles (pytest_backendbench.http.checks): each returns its findings."""
    from pytest_backendbench.http.checks import oracle_checks

    return oracle_checks()
