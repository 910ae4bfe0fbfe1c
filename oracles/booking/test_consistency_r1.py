"""R1 (evolved) items: isolation between users, precise validation, consistency with the provider."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r1")]


@pytest.mark.requirement("R18", "R21", "R23")
@pytest.mark.category("authorization")
def test_a_stranger_can_do_nothing_to_a_booking(api, http, calendar, at):
    owner, guest, stranger = api.user("owner"), api.user("guest"), api.user("stranger")
    resource = api.resource(owner)
    booking = api.book(guest, resource, at("10:00"), at("11:00"))
    path = f"/bookings/{booking['id']}"
    for r in (
        http.get(path, headers=stranger.headers),
        http.patch(path, json={"title": "mine now"}, headers=stranger.headers),
        http.patch(path, json={"start": "garbage"}, headers=stranger.headers),
        http.post(f"{path}/cancel", headers=stranger.headers),
    ):
        api.error(r, 404, "not_found", f"a stranger: {r.request.method} {r.request.path_url} (404 before 422)")
    assert booking["id"] not in [b["id"] for b in api.my_bookings(stranger)["items"]], "someone else's booking in a stranger's list"
    assert [e["method"] for e in calendar.writes(resource["calendar_id"])] == ["POST"], "nothing a stranger does may reach the calendar"


@pytest.mark.requirement("R18", "R25")
@pytest.mark.category("authorization")
def test_the_owner_loses_sight_of_bookings_of_a_deleted_resource(api, http, at):
    owner, guest, resource, booking = api.guest_booking(at("10:00"), at("11:00"))
    assert http.delete(f"/resources/{resource['id']}", headers=owner.headers).status_code == 204, "deleting the resource"
    api.error(http.get(f"/bookings/{booking['id']}", headers=owner.headers), 404, "not_found", "the former owner reading a booking of the deleted resource")
    got = api.get_booking(guest, booking["id"])
    assert (got["status"], got["cancelled_by"]) == ("cancelled", owner.id), f"the booker still sees it, cancelled by the owner: {got}"
    api.error(http.post(f"/bookings/{booking['id']}/cancel", headers=guest.headers), 409, "invalid_state", "the booker cancelling it again")


@pytest.mark.requirement("R6", "R25")
@pytest.mark.category("state")
def test_a_deleted_resources_calendar_can_be_reused(api, http):
    alice, bob = api.user("alice"), api.user("bob")
    old = api.resource(alice)
    assert http.delete(f"/resources/{old['id']}", headers=alice.headers).status_code == 204, "deleting the resource"
    r = http.post("/resources", json={"name": "Reborn", "kind": "room", "calendar_id": old["calendar_id"]}, headers=bob.headers)
    assert r.status_code == 201, f"the calendar of a deleted resource is free again: {r.status_code} {r.text[:300]}"
    assert r.json()["id"] != old["id"], "a new resource must get a new id"


@pytest.mark.requirement("R8", "R13", "R23")
@pytest.mark.category("state")
def test_new_opening_hours_apply_only_to_later_changes(api, http, at):
    owner = api.user("owner")
    resource = api.resource(owner, availability=[{"weekday": 0, "start": "09:00", "end": "17:00"}])
    booking = api.book(owner, resource, at("15:00"), at("16:00"))
    api.ok(http.patch(f"/resources/{resource['id']}", json={"availability": [{"weekday": 0, "start": "09:00", "end": "12:00"}]},
                      headers=owner.headers), 200, "shorten the opening hours")
    assert api.get_booking(owner, booking["id"])["status"] == "confirmed", "existing bookings stay as they are"
    api.error(api.try_book(owner, resource, at("13:00"), at("14:00")), 409, "outside_availability", "a new booking after closing")
    r = http.patch(f"/bookings/{booking['id']}", json={"start": at("15:30"), "end": at("16:30")}, headers=owner.headers)
    api.error(r, 409, "outside_availability", "rescheduling under the new hours")
    r = http.patch(f"/bookings/{booking['id']}", json={"title": "Renamed only"}, headers=owner.headers)
    assert r.status_code == 200, f"a title-only PATCH checks no state rule: {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R15", "R23", "R24")
@pytest.mark.category("side_effects")
def test_rescheduling_ignores_its_own_event_but_not_others(api, http, calendar, at):
    owner = api.user("owner")
    resource = api.resource(owner)
    booking = api.book(owner, resource, at("10:00"), at("11:00"))
    calendar.add_event(resource["calendar_id"], at("12:00"), at("13:00"), "Made elsewhere")
    r = http.patch(f"/bookings/{booking['id']}", json={"start": at("11:30"), "end": at("12:30")}, headers=owner.headers)
    api.error(r, 409, "calendar_conflict", "moving onto an external event")
    r = http.patch(f"/bookings/{booking['id']}", json={"start": at("10:15"), "end": at("11:15")}, headers=owner.headers)
    assert r.status_code == 200, f"the booking's own event is not a conflict: {r.status_code} {r.text[:300]}"
    patches = [e for e in calendar.writes(resource["calendar_id"]) if e["method"] == "PATCH"]
    assert len(patches) == 1, f"only the accepted reschedule may PATCH the event, got {len(patches)}"


@pytest.mark.requirement("R26", "R12")
@pytest.mark.category("validation")
def test_every_invalid_booking_field_is_listed_once(api, http, at):
    owner = api.user("owner")
    resource = api.resource(owner)
    r = api.try_book(owner, resource, "2020-13-01T09:00:00Z", "soon", title=42)
    error = api.error(r, 422, "validation_error", "a booking with three invalid fields")
    assert sorted(error.get("fields", [])) == ["end", "start", "title"], f"each invalid field listed once: {error}"
    r = api.try_book(owner, resource, "2020-01-06T09:00:00Z", "2020-01-06T18:00:00Z")
    error = api.error(r, 422, "validation_error", "a 9-hour booking in the past")
    assert sorted(error.get("fields", [])) == ["end", "start"], f"start (in the past) and end (too long) are both invalid: {error}"


@pytest.mark.requirement("R17", "R10")
@pytest.mark.category("side_effects")
def test_free_time_reports_a_calendar_outage(api, http, day):
    owner = api.user("owner")
    resource = api.resource(owner, calendar_id=api.calendar_id("room", "outage.example"))
    r = http.get(f"/resources/{resource['id']}/availability", params={"date": day.isoformat()}, headers=owner.headers)
    api.error(r, 502, "calendar_unavailable", "reading free time while the calendar is down")


@pytest.mark.requirement("R16", "R22", "R24")
@pytest.mark.category("side_effects")
def test_the_calendar_mirrors_every_booking(api, http, calendar, at):
    owner, guest, resource, kept = api.guest_booking(at("09:00"), at("10:00"), "Kept")
    moved = api.book(guest, resource, at("10:00"), at("11:00"), title="Moved")
    dropped = api.book(owner, resource, at("11:00"), at("12:00"), title="Dropped")
    api.ok(http.patch(f"/bookings/{moved['id']}", json={"start": at("14:00"), "end": at("15:00")}, headers=guest.headers), 200, "reschedule")
    api.cancel(owner, dropped)
    events = {e["id"]: (e["summary"], e["start"], e["end"], e["status"], e["reference"]) for e in calendar.events(resource["calendar_id"])}
    expected = {
        kept["calendar_event_id"]: ("Kept", at("09:00"), at("10:00"), "confirmed", kept["id"]),
        moved["calendar_event_id"]: ("Moved", at("14:00"), at("15:00"), "confirmed", moved["id"]),
        dropped["calendar_event_id"]: ("Dropped", at("11:00"), at("12:00"), "cancelled", dropped["id"]),
    }
    assert events == expected, f"the provider's calendar should mirror the bookings:\n  expected {expected}\n  got      {events}"
