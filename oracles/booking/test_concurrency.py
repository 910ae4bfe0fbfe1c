"""Requests that arrive at once (spec.md: "Requests may arrive concurrently: two requests must
never both book the same time"; "exactly one such request per booking" to the calendar).

Bookings and reschedules onto one slot sent as bursts released together
(http/concurrency.py): one wins, every other gets `409 booking_conflict`, and the calendar
provider holds one event for the slot.
"""

from __future__ import annotations

import pytest

from pytest_backendbench.http.concurrency import at_once, one_winner

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("state"), pytest.mark.requirement("R14")]


def events_at(calendar, resource, start):
    return [e for e in calendar.events(resource["calendar_id"]) if e.get("start") == start]


def test_one_slot_booked_at_once_creates_one_calendar_event(api, http, calendar, at):
    owner, guests = api.user("owner"), [api.user("guest") for _ in range(6)]
    resource = api.resource(owner)
    answers = at_once(http.base_url, lambda guest: api.try_book(guest, resource, at("15:00"), at("16:00")), guests, http.timeout_s)
    one_winner(answers, "six bookings of one slot at once", code="booking_conflict")
    posts = [e for e in calendar.writes(resource["calendar_id"]) if e["method"] == "POST"]
    assert len(posts) == 1, f"exactly one event is created at the provider for the one booking: {[e['path'] for e in posts]}"


def test_bookings_moved_at_once_onto_one_slot_move_one(api, http, calendar, at):
    owner, guests = api.user("owner"), [api.user("guest") for _ in range(4)]
    resource = api.resource(owner)
    bookings = [api.book(guest, resource, at(f"{9 + i:02d}:00"), at(f"{10 + i:02d}:00")) for i, guest in enumerate(guests)]
    answers = at_once(http.base_url, lambda i: http.patch(f"/bookings/{bookings[i]['id']}", json={"start": at("15:00"), "end": at("16:00")},
                                                          headers=guests[i].headers), range(len(guests)), http.timeout_s)
    one_winner(answers, "four bookings rescheduled onto one slot at once", won=200, code="booking_conflict")
    listed = api.resource_bookings(owner, resource)["items"]
    assert sorted(b["start"] for b in listed).count(at("15:00")) == 1, f"one booking holds the slot: {listed}"
    assert len(events_at(calendar, resource, at("15:00"))) == 1, "the provider has one event in the slot"
