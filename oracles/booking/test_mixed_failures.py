"""Failed requests change nothing, also when valid fields travel with the failing one (spec.md: Errors).

"A request that fails changes nothing, and a request rejected with 401, 403, 404, 422 or 409
sends nothing to the calendar provider that creates, changes or cancels an event": each item
sends valid changes together with the one field (or state, or caller) that makes the request
fail, then reads back that none of the valid fields was written, no booking or resource exists,
and the calendar mock received no write.
"""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http.account_items import refused_registration_item

pytestmark = [pytest.mark.tier("base")]

MONDAY_MORNING = [{"weekday": 0, "start": "09:00", "end": "12:00"}]
RESOURCE_KEYS = ("owner_id", "name", "kind", "calendar_id", "availability")
BOOKING_KEYS = ("resource_id", "user_id", "title", "start", "end", "status", "calendar_event_id", "cancelled_at", "cancelled_by")


def resource_state(api, http, user, resource):
    got = api.ok(http.get(f"/resources/{resource['id']}", headers=user.headers), 200, "read the resource")
    return {k: got.get(k) for k in RESOURCE_KEYS}


def booking_state(api, user, booking):
    got = api.get_booking(user, booking["id"])
    return {k: got.get(k) for k in BOOKING_KEYS}


test_mixed_registration_that_fails_creates_nothing = refused_registration_item("R2", "R26")


@pytest.mark.requirement("R4", "R5", "R26")
@pytest.mark.category("validation")
def test_mixed_resource_creation_with_one_invalid_field_creates_nothing(api, http, calendar):
    owner = api.user("owner")
    cal = api.calendar_id()
    valid = {"name": "Mixed room", "kind": "room", "calendar_id": cal, "availability": MONDAY_MORNING}
    cases = {
        "overlapping windows": ({**valid, "availability": [*MONDAY_MORNING, {"weekday": 0, "start": "11:00", "end": "13:00"}]}, ["availability"]),
        "kind desk": ({**valid, "kind": "desk"}, ["kind"]),
        "a blank name": ({**valid, "name": "  "}, ["name"]),
        "a 101-character name": ({**valid, "name": "n" * 101}, ["name"]),
    }
    before = api.total("/resources", owner)
    problems = [api.validation_problem(http.post("/resources", json=body, headers=owner.headers), fields, label) for label, (body, fields) in cases.items()]
    problems = [p for p in problems if p]
    assert not problems, "invalid resources were not rejected:\n" + "\n".join(problems)
    assert api.total("/resources", owner) == before, "a refused creation must not add a resource"
    assert calendar.writes(cal) == [], "a refused creation must send nothing to the calendar"
    r = http.post("/resources", json=valid, headers=owner.headers)
    assert r.status_code == 201, f"the calendar of refused creations is still free: {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R6", "R26")
@pytest.mark.category("state")
def test_mixed_taken_calendar_changes_nothing(api, http):
    alice, bob = api.user("alice"), api.user("bob")
    first = api.resource(alice)
    before, size = resource_state(api, http, alice, first), api.total("/resources", alice)
    r = http.post("/resources", json={"name": "Copy", "kind": "practitioner", "calendar_id": first["calendar_id"], "availability": MONDAY_MORNING}, headers=bob.headers)
    api.error(r, 409, "conflict", "a taken calendar with a valid name, kind and opening hours")
    assert api.total("/resources", bob) == size, "the refused creation must not add a resource"
    assert resource_state(api, http, alice, first) == before, "the refused creation must not change the resource that has the calendar"


@pytest.mark.requirement("R8", "R5", "R26")
@pytest.mark.category("validation")
def test_mixed_resource_edit_with_one_invalid_field_changes_nothing(api, http):
    owner = api.user("owner")
    resource = api.resource(owner)
    before = resource_state(api, http, owner, resource)
    cases = {
        "a blank name beside new opening hours": ({"name": " ", "availability": MONDAY_MORNING}, ["name"]),
        "a 101-character name beside new opening hours": ({"name": "n" * 101, "availability": MONDAY_MORNING}, ["name"]),
        "a name of the wrong type beside new opening hours": ({"name": 5, "availability": MONDAY_MORNING}, ["name"]),
        "an end off the quarter hour beside a new name": ({"name": "Renamed", "availability": [{"weekday": 0, "start": "09:00", "end": "10:10"}]}, ["availability"]),
    }
    problems = [api.validation_problem(http.patch(f"/resources/{resource['id']}", json=body, headers=owner.headers), fields, label) for label, (body, fields) in cases.items()]
    problems = [p for p in problems if p]
    assert not problems, "invalid edits were not rejected:\n" + "\n".join(problems)
    after = resource_state(api, http, owner, resource)
    assert after == before, f"a refused edit must write none of its valid fields:\n  before {before}\n  after  {after}"


@pytest.mark.requirement("R8", "R25")
@pytest.mark.category("authorization")
def test_mixed_refused_owner_actions_by_others_change_nothing(api, http, calendar, at):
    owner, other = api.user("owner"), api.user("other")
    resource = api.resource(owner)
    booking = api.book(other, resource, at("10:00"), at("11:00"))
    before = (resource_state(api, http, owner, resource), booking_state(api, other, booking))
    api.error(http.patch(f"/resources/{resource['id']}", json={"name": "Hijacked", "availability": MONDAY_MORNING}, headers=other.headers),
              403, "forbidden", "someone else changing name and opening hours")
    api.error(http.delete(f"/resources/{resource['id']}", headers=other.headers), 403, "forbidden", "someone else deleting a resource with a booking")
    after = (resource_state(api, http, owner, resource), booking_state(api, other, booking))
    assert after == before, f"refused requests changed the resource or its booking:\n  before {before}\n  after  {after}"
    assert [e["method"] for e in calendar.writes(resource["calendar_id"])] == ["POST"], "a refused delete must not cancel the booking's event"


@pytest.mark.requirement("R11", "R12", "R16", "R26")
@pytest.mark.category("validation")
def test_mixed_booking_with_one_invalid_field_creates_nothing(api, http, calendar, day, at):
    owner, guest, resource = api.venue(MONDAY_MORNING)
    free_before = api.free(resource, guest, day)
    cases = {
        "a blank title beside valid times": ({"start": at("09:00"), "end": at("10:00"), "title": " "}, ["title"]),
        "an end 9 hours later beside a valid title": ({"start": at("09:00"), "end": at("18:00"), "title": "Fine"}, ["end"]),
        "an end off the quarter hour beside a valid title": ({"start": at("09:00"), "end": at("09:50"), "title": "Fine"}, ["end"]),
        "a start with an offset beside a valid title": ({"start": at("09:00").replace("Z", "+00:00"), "end": at("10:00"), "title": "Fine"}, ["start"]),
    }
    path = f"/resources/{resource['id']}/bookings"
    problems = [api.validation_problem(http.post(path, json=body, headers=guest.headers), fields, label) for label, (body, fields) in cases.items()]
    problems = [p for p in problems if p]
    assert not problems, "invalid bookings were not rejected:\n" + "\n".join(problems)
    api.error(http.post(f"/resources/ghost-{uuid.uuid4().hex}/bookings", json={"start": at("09:00"), "end": at("10:00"), "title": "Fine"}, headers=guest.headers),
              404, "not_found", "a valid booking of an unknown resource")
    assert api.my_bookings(guest)["total"] == 0, "a refused booking must not exist"
    assert api.resource_bookings(owner, resource)["total"] == 0, "the resource must have no booking"
    assert calendar.writes(resource["calendar_id"]) == [], "a refused booking must send nothing that creates an event"
    assert api.free(resource, guest, day) == free_before, "a refused booking must not take time"


@pytest.mark.requirement("R13", "R14", "R15", "R16")
@pytest.mark.category("state")
def test_mixed_booking_refused_by_a_state_rule_creates_nothing(api, http, calendar, at):
    owner, guest, resource = api.venue(MONDAY_MORNING)
    api.book(owner, resource, at("09:00"), at("10:00"))
    calendar.add_event(resource["calendar_id"], at("11:00"), at("11:30"))
    for start, end, code in ((at("11:30"), at("12:30"), "outside_availability"), (at("09:30"), at("10:30"), "booking_conflict"),
                             (at("10:30"), at("11:15"), "calendar_conflict")):
        api.error(api.try_book(guest, resource, start, end, title="Valid title"), 409, code, f"a valid title with {start[11:16]}-{end[11:16]}")
    assert api.my_bookings(guest)["total"] == 0, "a refused booking must not exist"
    assert api.resource_bookings(owner, resource)["total"] == 1, "the resource keeps only its one booking"
    assert [e["method"] for e in calendar.writes(resource["calendar_id"])] == ["POST"], "refused bookings must not create events"


@pytest.mark.requirement("R23", "R12", "R24")
@pytest.mark.category("validation")
def test_mixed_reschedule_with_one_invalid_field_changes_nothing(api, http, calendar, at):
    owner = api.user("owner")
    resource = api.resource(owner)
    booking = api.book(owner, resource, at("10:00"), at("11:00"), title="Kept")
    before = booking_state(api, owner, booking)
    cases = {
        "a new title with an end 9 hours after the new start": ({"title": "Moved", "start": at("09:00"), "end": at("18:00")}, ["end"]),
        "a new title with only a start": ({"title": "Moved", "start": at("13:00")}, ["end"]),
        "a new title with a malformed start": ({"title": "Moved", "start": at("13:00").replace(":00Z", ":00.000Z"), "end": at("14:00")}, ["start"]),
        "new times with a blank title": ({"title": "  ", "start": at("13:00"), "end": at("14:00")}, ["title"]),
        "new times with a title of the wrong type": ({"title": 5, "start": at("13:00"), "end": at("14:00")}, ["title"]),
    }
    path = f"/bookings/{booking['id']}"
    problems = [api.validation_problem(http.patch(path, json=body, headers=owner.headers), fields, label) for label, (body, fields) in cases.items()]
    problems = [p for p in problems if p]
    assert not problems, "invalid reschedules were not rejected:\n" + "\n".join(problems)
    after = booking_state(api, owner, booking)
    assert after == before, f"a refused reschedule must write none of its valid fields:\n  before {before}\n  after  {after}"
    assert [e["method"] for e in calendar.writes(resource["calendar_id"])] == ["POST"], "a refused reschedule must send no PATCH"


@pytest.mark.requirement("R23", "R24", "R13", "R15")
@pytest.mark.category("state")
@pytest.mark.parametrize("refusal", ["outside-hours", "calendar-busy", "cancelled"])
def test_mixed_reschedule_refused_by_a_state_rule_changes_nothing(api, http, calendar, at, refusal):
    owner = api.user("owner")
    resource = api.resource(owner, availability=MONDAY_MORNING)
    booking = api.book(owner, resource, at("09:00"), at("10:00"), title="Kept")
    start, end, code = at("11:30"), at("12:30"), "outside_availability"
    if refusal == "calendar-busy":
        calendar.add_event(resource["calendar_id"], at("11:00"), at("11:30"))
        start, end, code = at("10:30"), at("11:15"), "calendar_conflict"
    elif refusal == "cancelled":
        api.cancel(owner, booking)
        start, end, code = at("10:00"), at("11:00"), "invalid_state"
    before, writes = booking_state(api, owner, booking), calendar.writes(resource["calendar_id"])
    r = http.patch(f"/bookings/{booking['id']}", json={"title": "Moved", "start": start, "end": end}, headers=owner.headers)
    api.error(r, 409, code, f"a new title with new times ({refusal})")
    after = booking_state(api, owner, booking)
    assert after == before, f"a refused reschedule must not change the title either:\n  before {before}\n  after  {after}"
    assert calendar.writes(resource["calendar_id"]) == writes, "a refused reschedule must send no PATCH"


@pytest.mark.requirement("R23")
@pytest.mark.category("authorization")
def test_mixed_reschedule_by_the_resource_owner_changes_nothing(api, http, calendar, at):
    owner, guest, resource, booking = api.guest_booking(at("10:00"), at("11:00"), "Kept")
    before = booking_state(api, guest, booking)
    r = http.patch(f"/bookings/{booking['id']}", json={"title": "Owner's choice", "start": at("13:00"), "end": at("14:00")}, headers=owner.headers)
    api.error(r, 403, "forbidden", "the resource's owner sending a valid title and times")
    assert booking_state(api, guest, booking) == before, "the refused reschedule changed the booking"
    assert [e["method"] for e in calendar.writes(resource["calendar_id"])] == ["POST"], "a refused reschedule must send no PATCH"
