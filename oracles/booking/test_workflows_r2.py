"""R2 (evolved) items: multi-step journeys where bookings, opening hours and the shared calendar interact."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r2"), pytest.mark.weight(2.0)]


@pytest.mark.requirement("R11", "R16", "R22", "R24")
@pytest.mark.category("workflow")
def test_book_move_cancel_lifecycle(api, http, calendar, day, at):
    _owner, guest, resource, booking = api.guest_booking(at("09:00"), at("10:00"), "Checkup")
    moved = api.ok(http.patch(f"/bookings/{booking['id']}", json={"start": at("11:00"), "end": at("11:45")}, headers=guest.headers), 200, "move")
    assert api.free(resource, guest, day) == [(at("09:00"), at("11:00")), (at("11:45"), at("17:00"))], (
        "after the move, the old time is free and the new one is taken"
    )
    api.cancel(guest, moved)
    cal, event = resource["calendar_id"], booking["calendar_event_id"]
    writes = [(e["method"], e["path"][len(f"/calendars/{cal}"):]) for e in calendar.writes(cal)]
    assert writes == [("POST", "/events"), ("PATCH", f"/events/{event}"), ("DELETE", f"/events/{event}")], (
        f"book (create), move (patch), cancel (delete) of one event; the service sent {writes}"
    )
    assert api.free(resource, guest, day) == [(at("09:00"), at("17:00"))], "after the cancel, the whole day is free"


@pytest.mark.requirement("R25", "R22", "R19")
@pytest.mark.category("workflow")
def test_deleting_a_resource_cancels_its_future(api, http, calendar, at):
    owner, alice, bob = api.user("owner"), api.user("alice"), api.user("bob")
    resource = api.resource(owner)
    late = api.book(alice, resource, at("15:00"), at("16:00"))
    early = api.book(bob, resource, at("09:00"), at("10:00"))
    gone = api.cancel(alice, api.book(alice, resource, at("12:00"), at("13:00")))
    assert http.delete(f"/resources/{resource['id']}", headers=owner.headers).status_code == 204, "deleting the resource"
    cal = resource["calendar_id"]
    deletes = [e["path"] for e in calendar.writes(cal) if e["method"] == "DELETE"]
    assert deletes == [f"/calendars/{cal}/events/{b['calendar_event_id']}" for b in (gone, early, late)], (
        f"the already-cancelled event once, then each confirmed booking's event in order of start: {deletes}"
    )
    for user, booking in ((alice, late), (bob, early)):
        got = api.get_booking(user, booking["id"])
        assert (got["status"], got["cancelled_by"]) == ("cancelled", owner.id), f"cancelled by the resource's owner: {got}"
    assert [b["id"] for b in api.my_bookings(alice, status="cancelled")["items"]] == [gone["id"], late["id"]], "alice keeps both, cancelled"
    api.error(http.get(f"/resources/{resource['id']}", headers=alice.headers), 404, "not_found", "the deleted resource")


@pytest.mark.requirement("R10", "R15", "R9")
@pytest.mark.category("workflow")
def test_an_external_event_blocks_until_it_is_removed(api, http, calendar, day, at):
    owner, guest = api.user("owner"), api.user("guest")
    resource = api.resource(owner, availability=[{"weekday": 0, "start": "09:00", "end": "12:00"}])
    event = calendar.add_event(resource["calendar_id"], at("10:00"), at("11:00"), "Board meeting")
    assert api.free(resource, guest, day) == [(at("09:00"), at("10:00")), (at("11:00"), at("12:00"))], "the external event is busy"
    api.error(api.try_book(guest, resource, at("10:30"), at("11:30")), 409, "calendar_conflict", "booking over the external event")
    calendar.remove_event(resource["calendar_id"], event["id"])
    assert api.free(resource, guest, day) == [(at("09:00"), at("12:00"))], "once removed at the provider, the time is free"
    booking = api.book(guest, resource, at("10:30"), at("11:30"))
    assert booking["status"] == "confirmed", f"the time can now be booked: {booking}"


@pytest.mark.requirement("R9", "R14", "R22", "R23")
@pytest.mark.category("workflow")
def test_a_full_day_opens_up_when_someone_cancels(api, http, day, at):
    owner, alice, bob = api.user("owner"), api.user("alice"), api.user("bob")
    resource = api.resource(owner, availability=[{"weekday": 0, "start": "09:00", "end": "12:00"}])
    slots = [api.book(alice, resource, at(f"{h:02d}:00"), at(f"{h + 1:02d}:00")) for h in (9, 10, 11)]
    assert api.free(resource, bob, day) == [], "a fully booked morning has no free time"
    mine = api.book(bob, resource, at("09:00", days=7), at("10:00", days=7))
    r = http.patch(f"/bookings/{mine['id']}", json={"start": at("10:00"), "end": at("11:00")}, headers=bob.headers)
    api.error(r, 409, "booking_conflict", "moving into a fully booked day")
    api.cancel(alice, slots[1])
    assert api.free(resource, bob, day) == [(at("10:00"), at("11:00"))], "the cancelled hour is free again"
    moved = api.ok(http.patch(f"/bookings/{mine['id']}", json={"start": at("10:00"), "end": at("11:00")}, headers=bob.headers), 200, "move in")
    assert moved["start"] == at("10:00"), f"bob takes the freed hour: {moved}"
    assert [b["user_id"] for b in api.resource_bookings(owner, resource, status="confirmed")["items"]] == [alice.id, bob.id, alice.id], (
        "the owner sees alice, bob, alice in order of start"
    )


@pytest.mark.requirement("R18", "R20", "R21", "R23")
@pytest.mark.category("workflow")
def test_an_owner_booking_their_own_resource_is_both(api, http, at):
    owner, guest, resource = api.venue()
    own = api.book(owner, resource, at("09:00"), at("10:00"))
    theirs = api.book(guest, resource, at("10:00"), at("11:00"))
    r = http.patch(f"/bookings/{own['id']}", json={"start": at("13:00"), "end": at("14:00")}, headers=owner.headers)
    assert r.status_code == 200, f"the owner reschedules their own booking as its booker: {r.status_code} {r.text[:300]}"
    api.error(http.patch(f"/bookings/{theirs['id']}", json={"title": "x"}, headers=owner.headers), 403, "forbidden", "the owner editing a guest's booking")
    assert [b["id"] for b in api.my_bookings(owner)["items"]] == [own["id"]], "the owner's own list holds only what they booked"
    assert [b["id"] for b in api.resource_bookings(owner, resource)["items"]] == [theirs["id"], own["id"]], "the resource list holds both, by start"
    api.cancel(owner, theirs)
    api.error(http.get(f"/bookings/{theirs['id']}", headers=api.user("x").headers), 404, "not_found", "an unrelated user")


@pytest.mark.requirement("R6", "R16", "R25")
@pytest.mark.category("workflow")
def test_moving_a_room_to_a_new_resource_keeps_the_calendar_honest(api, http, calendar, at):
    owner, guest = api.user("owner"), api.user("guest")
    old = api.resource(owner)
    first = api.book(guest, old, at("09:00"), at("10:00"))
    assert http.delete(f"/resources/{old['id']}", headers=owner.headers).status_code == 204, "deleting the old resource"
    new = api.ok(http.post("/resources", json={"name": "Same room", "kind": "room", "calendar_id": old["calendar_id"],
                                               "availability": old["availability"]}, headers=owner.headers), 201, "recreate the room")
    second = api.book(guest, new, at("09:00"), at("10:00"))
    events = {e["id"]: e["status"] for e in calendar.events(old["calendar_id"])}
    assert events == {first["calendar_event_id"]: "cancelled", second["calendar_event_id"]: "confirmed"}, (
        f"the old booking's event is cancelled, the new one confirmed: {events}"
    )
    assert [b["resource_id"] for b in api.my_bookings(guest)["items"]] == [old["id"], new["id"]], "both bookings stay in the guest's list"
