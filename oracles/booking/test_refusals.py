"""Refusals that change nothing, one invalid field at each position, and guards one condition at a time (issue 35).

spec.md, Errors: "A request that fails changes nothing, and a request rejected with 401, 403,
404, 422 or 409 sends nothing to the calendar provider that creates, changes or cancels an
event." Every endpoint that takes several fields is sent with each field invalid in turn and
the others valid (http/refusals.py), the state read back from outside and the provider's log
read for the item's own calendar. The guards: a state rule whose condition normally travels with
another (a confirmed booking and its event; a booking's own event and its old time) is tried
with the other condition undone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import requests

from pytest_backendbench.http.refusals import one_invalid_field, unchanged

pytestmark = [pytest.mark.tier("r1"), pytest.mark.category("state")]

MONDAY_MORNING = [{"weekday": 0, "start": "09:00", "end": "12:00"}]
KEYS = ("name", "kind", "calendar_id", "availability", "owner_id", "resource_id", "user_id", "title", "start", "end", "status",
        "calendar_event_id", "cancelled_at", "cancelled_by")
BAD_WINDOW = {"weekday": 7, "start": "09:00", "end": "12:00"}
BAD_START = ["tomorrow", "2031-02-30T09:00:00Z", "2031-03-03T09:00:00+00:00"]
BAD_END = ["later", "2031-03-03T09:50:00Z"]
BAD_TITLE = [" ", 5, None]


@dataclass
class Scene:
    """One endpoint with a world of its own: the valid body, how to send it, what a refusal must leave as it was."""

    valid: dict[str, Any]
    send: Callable[[dict[str, Any]], requests.Response]
    read: Callable[[], Any]
    calendar: str | None = None
    then: Callable[[], None] | None = None
    """A request the unchanged state must still allow afterwards (the username or calendar is free)."""


def state(answer: dict[str, Any]) -> dict[str, Any]:
    return {k: answer.get(k) for k in KEYS if k in answer}


def register(api: Any, http: requests.Session, calendar: Any, at: Callable[..., str]) -> Scene:
    valid = {"username": api.unique("refused"), "password": "pw-long-enough"}
    return Scene(valid, lambda body: http.post("/users", json=body), lambda: http.post("/auth/token", json=valid).status_code,
                 then=lambda: api.ok(http.post("/users", json=valid), 201, "the same registration with every field valid (the username is free)"))


def create_resource(api: Any, http: requests.Session, calendar: Any, at: Callable[..., str]) -> Scene:
    owner = api.user("owner")
    valid = {"name": api.unique("Room"), "kind": "room", "calendar_id": api.calendar_id(), "availability": MONDAY_MORNING}
    return Scene(valid, lambda body: http.post("/resources", json=body, headers=owner.headers), lambda: api.total("/resources", owner),
                 valid["calendar_id"],
                 lambda: api.ok(http.post("/resources", json=valid, headers=owner.headers), 201, "the same resource with every field valid"))


def edit_resource(api: Any, http: requests.Session, calendar: Any, at: Callable[..., str]) -> Scene:
    owner = api.user("owner")
    resource = api.resource(owner)
    return Scene({"name": "Renamed", "availability": MONDAY_MORNING},
                 lambda body: http.patch(f"/resources/{resource['id']}", json=body, headers=owner.headers),
                 lambda: state(api.ok(http.get(f"/resources/{resource['id']}", headers=owner.headers), 200, "read the resource")),
                 resource["calendar_id"])


def book(api: Any, http: requests.Session, calendar: Any, at: Callable[..., str]) -> Scene:
    owner, guest, resource = api.venue(MONDAY_MORNING)
    return Scene({"start": at("09:00"), "end": at("10:00"), "title": "Valid title"},
                 lambda body: http.post(f"/resources/{resource['id']}/bookings", json=body, headers=guest.headers),
                 lambda: (api.my_bookings(guest)["total"], api.resource_bookings(owner, resource)["items"]), resource["calendar_id"])


def reschedule(api: Any, http: requests.Session, calendar: Any, at: Callable[..., str]) -> Scene:
    _owner, guest, resource = api.venue()
    booking = api.book(guest, resource, at("10:00"), at("11:00"), title="Kept")
    return Scene({"start": at("13:00"), "end": at("14:00"), "title": "Moved"},
                 lambda body: http.patch(f"/bookings/{booking['id']}", json=body, headers=guest.headers),
                 lambda: state(api.get_booking(guest, booking["id"])), resource["calendar_id"])


SCENES: dict[str, tuple[Callable[..., Scene], dict[str, Any], dict[str, Any]]] = {
    "register": (register, {"username": "", "password": ""}, {"username": ["Upper", "ab"], "password": ["short", 12345678]}),
    "create-resource": (create_resource, {"name": "", "kind": "", "calendar_id": "", "availability": []},
                        {"name": [" ", 5, "n" * 101], "kind": ["desk", None], "calendar_id": ["no-at-sign", "a@b"],
                         "availability": [[BAD_WINDOW], "all week"]}),
    "edit-resource": (edit_resource, {"name": "", "availability": []}, {"name": [" ", 5], "availability": [[BAD_WINDOW], None]}),
    "book": (book, {"start": "", "end": "", "title": ""}, {"start": BAD_START, "end": BAD_END, "title": BAD_TITLE}),
    "reschedule": (reschedule, {"start": "", "end": "", "title": ""}, {"start": BAD_START, "end": BAD_END, "title": BAD_TITLE}),
}
"""Each endpoint: how to build its world, the key order of its body, the invalid values per field."""

CASES = [pytest.param(scene, *case.values, id=f"{scene}-{case.id}")
         for scene, (_, order, bad) in SCENES.items() for case in one_invalid_field(order, bad)]


@pytest.mark.requirement("R2", "R5", "R8", "R12", "R16", "R23", "R24", "R26")
@pytest.mark.parametrize("scene,field,shape", CASES)
def test_a_body_with_one_invalid_field_changes_nothing(api, http, calendar, at, scene, field, shape):
    world = SCENES[scene][0](api, http, calendar, at)
    body = {key: (shape[key] if key == field else world.valid[key]) for key in shape}
    with unchanged(lambda: (world.read(), calendar.writes(world.calendar) if world.calendar else []), f"{scene} with an invalid {field}"):
        problem = api.validation_problem(world.send(body), [field], f"{scene} with {field}={shape[field]!r} and every other field valid")
        assert problem is None, problem
    if world.then is not None:
        world.then()


# ---------------------------------------------------------------- guards, one condition at a time


@pytest.mark.requirement("R14")
def test_a_confirmed_booking_blocks_its_time_without_its_event(api, http, calendar, at):
    """booking_conflict is about confirmed bookings; their events normally travel with them, so the event is removed at the provider."""
    owner, guest, resource = api.venue()
    booking = api.book(owner, resource, at("10:00"), at("11:00"))
    calendar.remove_event(resource["calendar_id"], booking["calendar_event_id"])
    with unchanged(lambda: (api.my_bookings(guest)["total"], calendar.writes(resource["calendar_id"])), "a refused booking"):
        api.error(api.try_book(guest, resource, at("10:30"), at("11:30")), 409, "booking_conflict",
                  "overlapping a confirmed booking whose event was removed at the provider")
    api.cancel(owner, booking)
    api.book(guest, resource, at("10:30"), at("11:30"))


@pytest.mark.requirement("R15", "R23")
def test_only_the_bookings_own_event_is_ignored_over_its_old_time(api, http, calendar, at):
    """A reschedule ignores its own event (by its id), which normally covers its old time; an external event there still counts."""
    _owner, guest, resource = api.venue()
    booking = api.book(guest, resource, at("10:00"), at("11:00"))
    calendar.add_event(resource["calendar_id"], at("10:30"), at("11:00"), "Made elsewhere over the old time")
    before = state(api.get_booking(guest, booking["id"]))
    with unchanged(lambda: (state(api.get_booking(guest, booking["id"])), calendar.writes(resource["calendar_id"])), "a refused reschedule"):
        r = http.patch(f"/bookings/{booking['id']}", json={"start": at("10:15"), "end": at("11:15")}, headers=guest.headers)
        api.error(r, 409, "calendar_conflict", "moving over an external event that lies within the booking's old time")
    r = http.patch(f"/bookings/{booking['id']}", json={"start": at("09:30"), "end": at("10:30")}, headers=guest.headers)
    moved = api.ok(r, 200, "moving over its own event only")
    assert (moved["start"], moved["end"], moved["calendar_event_id"]) == (at("09:30"), at("10:30"), before["calendar_event_id"]), moved
