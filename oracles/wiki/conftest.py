"""Shared setup for the wiki oracle: users of each role, pages, revisions.

Pages and users are global in this service, so every item creates its own (unique slugs,
titles and usernames) and filters lists by them; no item asserts global counts. The bootstrap
administrator's credentials are the ones task.yaml promises the service. Tokens need not
survive a restart (spec.md: Running), so an item that restarts the service logs in again.
"""

from __future__ import annotations

import uuid
from typing import Any

import requests

from pytest_backendbench.http.accounts import Account as User
from pytest_backendbench.http.accounts import (
    AccountsApi,
    admin_fixture,
    api_fixture,
    leak_checks_fixture,
    restart,
    staff_fixtures,
    task_checks_fixture,
)
from pytest_backendbench.http.api import brief
from pytest_backendbench.http.checks import injection_texts
from pytest_backendbench.http.timestamps import is_utc

PAGE_KEYS = ("id", "slug", "title", "body", "protected", "revision", "created_at")
REVISION_KEYS = ("number", "title", "summary", "author", "created_at")

HOSTILE_SLUGS = ("..", "%2e%2e%2f", "%2A", "%25", "1%27%20OR%20%271%27%3D%271", "a%20b", "UPPER", "-a", "a--b", "a_b", "%2e%2e%2fhealth")
"""Path segments that name no page: dot segments, wildcards, SQL, and strings outside the slug pattern."""


def slug(prefix: str = "page") -> str:
    """A fresh valid slug."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def tag() -> str:
    """A fresh word for titles."""
    return uuid.uuid4().hex[:12]


class Api(AccountsApi):
    """Setup and inspection helpers on top of the ``http`` fixture; a setup step that fails fails the item."""

    token_path, account_id, errors_carry_message, staff_name_digits = "/auth/login", staticmethod(int), True, 10
    user = AccountsApi.staff

    slug = staticmethod(slug)
    tag = staticmethod(tag)
    utc = staticmethod(is_utc)

    # ---------------------------------------------------------------- pages

    def create(self, by: User, **fields: Any) -> requests.Response:
        """POST /pages with a valid body (fresh slug and title) overridden by ``fields``; the raw response."""
        body = {"slug": slug(), "title": f"Page {tag()}", "body": "first line\nsecond line", **fields}
        return self.http.post("/pages", json=body, headers=by.headers)

    def page(self, by: User | None = None, **fields: Any) -> dict[str, Any]:
        """A new page (must succeed)."""
        return dict(self.ok(self.create(by or self.admin, **fields), 201, "create a page"))

    def put(self, page: dict[str, Any] | str, by: User, **body: Any) -> requests.Response:
        """PUT /pages/{slug} with exactly ``body``; the raw response."""
        return self.http.put(f"/pages/{self._slug(page)}", json=body, headers=by.headers)

    def edit(self, page: dict[str, Any], by: User | None = None, body: str | None = None, base: int | None = None, **extra: Any) -> dict[str, Any]:
        """An edit based on the current revision (or ``base``) that must succeed; the page after it."""
        current = self.get_page(page["slug"])
        sent = {"body": body if body is not None else f"text {tag()}", "base_revision": base or current["revision"], **extra}
        return dict(self.ok(self.put(page, by or self.admin, **sent), 200, "edit the page"))

    def get_page(self, page: dict[str, Any] | str, by: User | None = None) -> dict[str, Any]:
        """GET /pages/{slug} (must succeed)."""
        return dict(self.ok(self.http.get(f"/pages/{self._slug(page)}", headers=(by or self.admin).headers), 200, "read the page"))

    def call(self, method: str, path: str, by: User | None = None, body: Any = None, **params: Any) -> requests.Response:
        """Any request as ``by`` (the admin by default); the raw response."""
        return self.http.request(method, path, json=body, params=params or None, headers=(by or self.admin).headers)

    def history(self, page: dict[str, Any] | str, by: User | None = None, **params: Any) -> dict[str, Any]:
        """GET /pages/{slug}/revisions (must succeed): the envelope."""
        return dict(self.ok(self.call("GET", f"/pages/{self._slug(page)}/revisions", by, **params), 200, "list the history"))

    def numbers(self, page: dict[str, Any] | str) -> list[int]:
        """The page's revision numbers as the history lists them (first 100)."""
        return [int(r["number"]) for r in self.history(page, limit=100)["items"]]

    def revision(self, page: dict[str, Any] | str, number: int, by: User | None = None) -> dict[str, Any]:
        """GET /pages/{slug}/revisions/{number} (must succeed)."""
        return dict(self.ok(self.call("GET", f"/pages/{self._slug(page)}/revisions/{number}", by), 200, f"read revision {number}"))

    def diff(self, page: dict[str, Any] | str, frm: Any, to: Any, by: User | None = None) -> requests.Response:
        """GET /pages/{slug}/diff?from=&to=; the raw response."""
        return self.call("GET", f"/pages/{self._slug(page)}/diff", by, **{"from": frm, "to": to})

    def revert(self, page: dict[str, Any] | str, by: User | None = None, **body: Any) -> requests.Response:
        """POST /pages/{slug}/revert with exactly ``body``; the raw response."""
        return self.call("POST", f"/pages/{self._slug(page)}/revert", by, body)

    def move(self, page: dict[str, Any] | str, new_slug: Any, by: User | None = None) -> requests.Response:
        """POST /pages/{slug}/move; the raw response."""
        return self.call("POST", f"/pages/{self._slug(page)}/move", by, {"new_slug": new_slug})

    def protect(self, page: dict[str, Any] | str, protected: Any = True, by: User | None = None) -> requests.Response:
        """PUT /pages/{slug}/protection; the raw response."""
        return self.call("PUT", f"/pages/{self._slug(page)}/protection", by, {"protected": protected})

    def delete(self, page: dict[str, Any] | str, by: User | None = None) -> requests.Response:
        """DELETE /pages/{slug}; the raw response."""
        return self.call("DELETE", f"/pages/{self._slug(page)}", by)

    def search(self, by: User | None = None, **params: Any) -> dict[str, Any]:
        """GET /pages (must succeed): the envelope."""
        return dict(self.ok(self.call("GET", "/pages", by, **params), 200, f"list pages {params}"))

    def found(self, q: str, by: User | None = None) -> list[int]:
        """Ids of the pages GET /pages?q= finds (first 100)."""
        return [int(p["id"]) for p in self.search(by, q=q, limit=100)["items"]]

    def unchanged(self, page: dict[str, Any], what: str) -> None:
        """Assert the page still has the title, body, revision, slug and protection it had."""
        __tracebackhide__ = True
        now = self.get_page(page["slug"])
        keys = ("id", "slug", "title", "body", "protected", "revision")
        assert {k: now.get(k) for k in keys} == {k: page.get(k) for k in keys}, f"{what} changed the page: was {page}, now {now}"

    @staticmethod
    def _slug(page: dict[str, Any] | str) -> str:
        return page if isinstance(page, str) else str(page["slug"])


api = api_fixture(Api)
admin = admin_fixture


editor, reader = staff_fixtures("editor", "reader")


http_response_checks = leak_checks_fixture()


checks = task_checks_fixture(restart=restart, injection_texts=injection_texts("pages"), hostile_slugs=HOSTILE_SLUGS)


__all__ = ["Api", "User", "brief"]
