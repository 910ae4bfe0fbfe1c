"""Helpers for the event-registration oracle.

Events and registrations are global in this service, so every item creates its own events
(unique titles), registers unique emails and looks only at those: no item asserts global
counts, and every item passes alone, in any order and twice in a row.
"""

from __future__ import annotations

import uuid
from typing import Any

import requests

from pytest_backendbench.http.accounts import AccountsApi, api_fixture, restart, task_checks_fixture
from pytest_backendbench.http.checks import injection_texts, table_ids
from pytest_backendbench.http.concurrency import parallel_posts
from pytest_backendbench.http.timestamps import instant, utc_problem

EVENT_KEYS = ("id", "title", "starts_at", "capacity", "seats_left", "created_at")
REGISTRATION_KEYS = ("id", "event_id", "name", "email", "created_at")


def unique(prefix: str) -> str:
    """A fresh title or name."""
    return f"{prefix} {uuid.uuid4().hex[:10]}"


def fresh_email(domain: str = "example.org") -> str:
    """A fresh lower-case email address."""
    return f"{uuid.uuid4().hex[:12]}@{domain}"


class Api(AccountsApi):
    """Setup and inspection helpers on top of the ``http`` fixture; a setup step that fails fails the item."""

    errors_carry_message = True
    unique = staticmethod(unique)
    fresh_email = staticmethod(fresh_email)
    instant = staticmethod(instant)
    utc_problem = staticmethod(utc_problem)

    @staticmethod
    def doc(value: Any) -> Any:
        """An event or registration (or a list of them) reduced to its documented keys, timestamps as instants.

        For before/after comparisons: responses may carry extra fields, and one instant may be
        written in more than one way.
        """
        if isinstance(value, list):
            return [Api.doc(v) for v in value]
        if not isinstance(value, dict):
            return value
        keys = EVENT_KEYS if "seats_left" in value or "capacity" in value else REGISTRATION_KEYS
        return {k: (instant(value.get(k)) or value.get(k)) if k in ("starts_at", "created_at") else value.get(k) for k in keys}

    # ---------------------------------------------------------------- events and registrations

    def create_event(self, **fields: Any) -> requests.Response:
        """POST /api/events with a valid body (unique title) overridden by ``fields``; the raw response."""
        body = {"title": unique("Meetup"), "starts_at": "2031-03-01T18:00:00Z", "capacity": 10, **fields}
        return self.http.post("/api/events", json=body)

    def event(self, capacity: int = 10, starts_at: str = "2031-03-01T18:00:00Z", title: str | None = None) -> dict[str, Any]:
        """A new event (must succeed)."""
        body = {"title": title or unique("Meetup"), "starts_at": starts_at, "capacity": capacity}
        return dict(self.ok(self.http.post("/api/events", json=body), 201, "create an event"))

    def post_registration(self, event: dict[str, Any] | int, **body: Any) -> requests.Response:
        """POST /api/events/{id}/registrations with exactly ``body``; the raw response."""
        event_id = event if isinstance(event, int) else event["id"]
        return self.http.post(f"/api/events/{event_id}/registrations", json=body)

    def register(self, event: dict[str, Any], name: str | None = None, email: str | None = None) -> dict[str, Any]:
        """A new registration (must succeed)."""
        body = {"name": name or unique("Ada"), "email": email or fresh_email()}
        return dict(self.ok(self.post_registration(event, **body), 201, f"register {body['email']}"))

    def fill(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """Register until every seat of ``event`` is taken."""
        return [self.register(event) for _ in range(self.seats(event))]

    def get_event(self, event: dict[str, Any]) -> dict[str, Any]:
        """GET /api/events/{id} (must succeed)."""
        return dict(self.ok(self.http.get(f"/api/events/{event['id']}"), 200, "read the event"))

    def seats(self, event: dict[str, Any]) -> int:
        """The event's seats_left as GET /api/events/{id} answers it."""
        return int(self.get_event(event)["seats_left"])

    def events(self) -> list[dict[str, Any]]:
        """GET /api/events items (must succeed)."""
        return list(self.ok(self.http.get("/api/events"), 200, "list events")["items"])

    def listed(self, *events: dict[str, Any]) -> list[dict[str, Any]]:
        """These events as GET /api/events lists them, in its order."""
        ids = {e["id"] for e in events}
        return [e for e in self.events() if e["id"] in ids]

    def attendees(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """GET /api/events/{id}/registrations items (must succeed)."""
        return list(self.ok(self.http.get(f"/api/events/{event['id']}/registrations"), 200, "list the registrations")["items"])

    def cancel(self, registration: dict[str, Any]) -> None:
        """DELETE /api/registrations/{id} (must answer 204)."""
        self.ok(self.http.delete(f"/api/registrations/{registration['id']}"), 204, "cancel a registration")

    def unknown_event_id(self) -> int:
        """An event id no event has: far above every id listed now (a fixed number might be assigned)."""
        return max([int(e["id"]) for e in self.events()] + [0]) + 100_000

    def unknown_registration_id(self) -> int:
        """A registration id no registration has: cancel a fresh one, so its id is known to be free."""
        event = self.event(capacity=1)
        registration = self.register(event)
        self.cancel(registration)
        return int(registration["id"])


api = api_fixture(Api)


# ---------------------------------------------------------------- checks shared by the items


checks = task_checks_fixture(parallel_posts=parallel_posts, restart=restart, injection_texts=injection_texts("events"), task_ids=table_ids("events"))
