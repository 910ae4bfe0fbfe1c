"""Shared setup for the url-shortener oracle: users, links, visits.

Every item registers its own users and creates its own links. Custom slugs always carry a
uuid fragment because slugs are global across the shared service. A setup step that does not
answer as the contract says fails the item with a readable message.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
import requests

from pytest_backendbench.http.accounts import Account as User
from pytest_backendbench.http.accounts import AccountsApi, api_fixture, leak_checks_fixture, role_fixture
from pytest_backendbench.http.api import brief


def instant(value: str) -> datetime:
    """Parse an RFC 3339 timestamp from a response (Z or offset) into an aware datetime."""
    return datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))


def rfc3339(moment: datetime) -> str:
    """An RFC 3339 timestamp with a Z suffix."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def in_days(days: float) -> str:
    """A timestamp ``days`` from now (negative: in the past)."""
    return rfc3339(datetime.now(timezone.utc) + timedelta(days=days))


class Api(AccountsApi):
    """Setup and inspection helpers on top of the ``http`` fixture."""

    user, login = AccountsApi.register, AccountsApi.token

    instant = staticmethod(instant)
    in_days = staticmethod(in_days)
    rfc3339 = staticmethod(rfc3339)

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


api = api_fixture(Api)


alice = role_fixture("alice", lambda api: api.user("alice"), "A fresh user.")


bob = role_fixture("bob", lambda api: api.user("bob"), "Another fresh user, for isolation checks.")


http_response_checks = leak_checks_fixture()
