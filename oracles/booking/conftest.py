"""Shared setup for the booking oracle: users, resources with opening hours, bookings, the calendar.

Every item builds its own world (unique usernames, a resource on its own calendar
``<prefix>-<uuid>@calendar.example``), so items never depend on each other or on what the
shared service and the shared calendar mock already hold: what the service sent to the
provider is always filtered by the item's own calendar id. Requests the oracle itself sends
to the provider (external events, reading an event back) carry the header ``X-Oracle: 1`` and
are left out of what "the service sent".

Bookings are placed on future dates: ``monday()`` is a Monday at least three weeks ahead.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any
from urllib.parse import unquote

import pytest
import requests

from pytest_backendbench.http.accounts import Account as User
from pytest_backendbench.http.accounts import AccountsApi, api_fixture, leak_checks_fixture
from pytest_backendbench.http.api import unique

WEEKDAYS_9_TO_5 = [{"weekday": day, "start": "09:00", "end": "17:00"} for day in range(5)]
ORACLE_HEADER = {"X-Oracle": "1"}


def calendar_id(prefix: str = "room", domain: str = "calendar.example") -> str:
    """A calendar id no other item uses."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}@{domain}"


def monday(weeks: int = 0) -> date:
    """A Monday at least 21 days from today, plus ``weeks`` weeks."""
    first = date.today() + timedelta(days=21)
    return first + timedelta(days=(7 - first.weekday()) % 7, weeks=weeks)


def at_time(day: date, time: str, days: int = 0) -> str:
    """The booking instant of ``day`` (+ ``days``) at ``time`` (HH:MM), e.g. 2031-03-03T09:00:00Z."""
    return f"{(day + timedelta(days=days)).isoformat()}T{time}:00Z"


class Calendar:
    """The calendar provider mock, seen from the oracle: what the service sent, and external events."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.session = requests.Session()

    def sent(self, calendar: str) -> list[dict[str, Any]]:
        """Requests the service sent about ``calendar`` (oldest first), paths percent-decoded."""
        prefix = f"/calendars/{calendar}/"
        found = []
        for entry in self.handle.requests():
            if (entry.get("headers") or {}).get("x-oracle"):
                continue
            path = unquote(entry.get("path", ""))
            if path.startswith(prefix):
                found.append({**entry, "path": path})
        return found

    def shape(self, calendar: str) -> list[tuple[str, str]]:
        """(method, path after the calendar) of each request the service sent, for comparisons."""
        prefix = len(f"/calendars/{calendar}")
        return [(e["method"], e["path"][prefix:]) for e in self.sent(calendar)]

    def writes(self, calendar: str) -> list[dict[str, Any]]:
        """The requests that create, change or cancel events (everything but GET)."""
        return [e for e in self.sent(calendar) if e["method"] != "GET"]

    def add_event(self, calendar: str, start: str, end: str, summary: str = "Made elsewhere") -> dict[str, Any]:
        """An event put into the calendar directly, outside the service."""
        response = self.session.post(
            f"{self.handle.base_url}/calendars/{calendar}/events",
            json={"summary": summary, "start": start, "end": end},
            headers=ORACLE_HEADER,
            timeout=10,
        )
        response.raise_for_status()
        return dict(response.json())

    def outage(self, calendar: str, *methods: str) -> None:
        """From now on ``methods`` (e.g. DELETE) on ``calendar`` answer 503 at the provider (mock control)."""
        response = self.session.post(f"{self.handle.base_url}/__mock__/outage", json={"calendar": calendar, "methods": list(methods)},
                                     headers=ORACLE_HEADER, timeout=10)
        if response.status_code != 200:
            pytest.fail(f"the calendar mock refused /__mock__/outage: {response.status_code} {response.text[:200]}", pytrace=False)

    def remove_event(self, calendar: str, event_id: str) -> None:
        """Delete an event directly at the provider."""
        self.session.delete(f"{self.handle.base_url}/calendars/{calendar}/events/{event_id}", headers=ORACLE_HEADER, timeout=10).raise_for_status()

    def event(self, calendar: str, event_id: str) -> dict[str, Any] | None:
        """The provider's copy of an event (None when it is not in that calendar)."""
        response = self.session.get(f"{self.handle.base_url}/calendars/{calendar}/events/{event_id}", headers=ORACLE_HEADER, timeout=10)
        return dict(response.json()) if response.status_code == 200 else None

    def events(self, calendar: str) -> list[dict[str, Any]]:
        """Every event of the calendar at the provider, by start."""
        response = self.session.get(f"{self.handle.base_url}/calendars/{calendar}/events", headers=ORACLE_HEADER, timeout=10)
        response.raise_for_status()
        return list(response.json()["data"])


class Api(AccountsApi):
    """Setup and inspection helpers on top of the ``http`` fixture; users register themselves."""

    calendar_id = staticmethod(calendar_id)
    user = AccountsApi.register

    # ---------------------------------------------------------------- resources

    def resource(self, owner: User, availability: list[dict[str, Any]] | None = None, **fields: Any) -> dict[str, Any]:
        """A new resource on its own calendar, open 09:00-17:00 Monday to Friday unless told otherwise."""
        body = {
            "name": unique("Room"),
            "kind": "room",
            "calendar_id": calendar_id(),
            "availability": WEEKDAYS_9_TO_5 if availability is None else availability,
            **fields,
        }
        return self.ok(self.http.post("/resources", json=body, headers=owner.headers), 201, "create a resource")

    def venue(self, availability: list[dict[str, Any]] | None = None) -> tuple[User, User, dict[str, Any]]:
        """A fresh owner and guest, and a new resource of the owner's (``resource``'s opening hours): (owner, guest, resource)."""
        owner, guest = self.user("owner"), self.user("guest")
        return owner, guest, self.resource(owner, availability)

    def guest_booking(self, start: str, end: str, title: str | None = None) -> tuple[User, User, dict[str, Any], dict[str, Any]]:
        """``venue``, and the guest's booking of the resource from ``start`` to ``end``: (owner, guest, resource, booking)."""
        owner, guest, resource = self.venue()
        return owner, guest, resource, self.book(guest, resource, start, end, title)

    def free(self, resource: dict[str, Any], user: User, day: date) -> list[tuple[str, str]]:
        """The free intervals of a day as (start, end) pairs."""
        response = self.http.get(f"/resources/{resource['id']}/availability", params={"date": day.isoformat()}, headers=user.headers)
        body = self.ok(response, 200, f"read free time of {day}")
        return [(i.get("start"), i.get("end")) for i in body.get("free", [])]

    def total(self, path: str, user: User, **params: Any) -> int:
        """The ``total`` of a list endpoint."""
        return int(self.ok(self.http.get(path, params={**params, "limit": 1}, headers=user.headers), 200, f"count {path}")["total"])

    # ---------------------------------------------------------------- bookings

    def book(self, user: User, resource: dict[str, Any], start: str, end: str, title: str | None = None) -> dict[str, Any]:
        """A confirmed booking by ``user``; must succeed."""
        body = {"start": start, "end": end, **({"title": title} if title is not None else {})}
        response = self.http.post(f"/resources/{resource['id']}/bookings", json=body, headers=user.headers)
        return self.ok(response, 201, f"book {start} to {end}")

    def try_book(self, user: User, resource: dict[str, Any], start: str, end: str, **extra: Any) -> requests.Response:
        """Attempt a booking; the response, whatever it is."""
        return self.http.post(f"/resources/{resource['id']}/bookings", json={"start": start, "end": end, **extra}, headers=user.headers)

    def get_booking(self, user: User, booking_id: str) -> dict[str, Any]:
        """Read one booking (must be visible)."""
        return self.ok(self.http.get(f"/bookings/{booking_id}", headers=user.headers), 200, "read a booking")

    def cancel(self, user: User, booking: dict[str, Any]) -> dict[str, Any]:
        """Cancel a booking; must succeed."""
        return self.ok(self.http.post(f"/bookings/{booking['id']}/cancel", headers=user.headers), 200, "cancel a booking")

    def my_bookings(self, user: User, **params: Any) -> dict[str, Any]:
        """One page of GET /bookings."""
        return self.ok(self.http.get("/bookings", params=params, headers=user.headers), 200, f"list my bookings with {params}")

    def resource_bookings(self, owner: User, resource: dict[str, Any], **params: Any) -> dict[str, Any]:
        """One page of GET /resources/{id}/bookings."""
        response = self.http.get(f"/resources/{resource['id']}/bookings", params=params, headers=owner.headers)
        return self.ok(response, 200, f"list the resource's bookings with {params}")


api = api_fixture(Api)
http_response_checks = leak_checks_fixture()


@pytest.fixture
def calendar(mocks: dict[str, Any]) -> Calendar:
    """The calendar provider mock."""
    return Calendar(mocks["calendar"])


@pytest.fixture
def day() -> date:
    """The Monday most items book on."""
    return monday()


@pytest.fixture
def at(day: date) -> Callable[..., str]:
    """``at("09:00")`` is that time on ``day``; ``at("09:00", days=1)`` the next day; ``weeks=`` moves by weeks."""

    def instant(time: str, days: int = 0, weeks: int = 0) -> str:
        return at_time(day + timedelta(weeks=weeks), time, days)

    return instant
