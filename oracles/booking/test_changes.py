"""Cancelling and rescheduling bookings, and what reaches the provider (spec.md: Cancelling, Rescheduling)."""

from __future__ import annotations

from datetime import datetime

import pytest

pytestmark = [pytest.mark.tier("base")]


# ---------------------------------------------------------------- cancelling


@pytest.mark.requirement("R21")
@pytest.mark.category("state")
def test_booker_cancels(api, http, at):
    _owner, guest, _resource, booking = api.guest_booking(at("10:00"), at("11:00"))
    r = http.post(f"/bookings/{booking['id']}/cancel", headers=guest.headers)
    assert r.status_code == 200, f"the booker cancelling: {r.status_code} {r.text[:300]}"
    got = r.json()
    assert (got.get("status"), got.get("cancelled_by")) == ("cancelled", guest.id), f"status cancelled, cancelled_by the caller: {got}"
    assert isinstance(got.get("cancelled_at"), str), f"cancelled_at should be set: {got}"
    assert api.get_booking(guest, booking["id"])["status"] == "cancelled", "the cancellation did not persist"


@pytest.mark.requirement("R21")
@pytest.mark.category("authorization")
def test_resource_owner_cancels_a_guests_booking(api, http, at):
    owner, guest, _resource, booking = api.guest_booking(at("10:00"), at("11:00"))
    got = api.cancel(owner, booking)
    assert (got["status"], got["cancelled_by"]) == ("cancelled", owner.id), f"cancelled_by should be the resource's owner: {got}"
    assert api.get_booking(guest, booking["id"])["cancelled_by"] == owner.id, "the booker should see who cancelled"


@pytest.mark.requirement("R21")
@pytest.mark.category("authorization")
def test_strangers_cannot_cancel(api, http, calendar, at):
    owner, guest, stranger = api.user("owner"), api.user("guest"), api.user("stranger")
    resource = api.resource(owner)
    booking = api.book(guest, resource, at("10:00"), at("11:00"))
    api.error(http.post(f"/bookings/{booking['id']}/cancel", headers=stranger.headers), 404, "not_found", "a stranger cancelling")
    assert api.get_booking(guest, booking["id"])["status"] == "confirmed", "a rejected cancel changed the booking"
    assert [e["method"] for e in calendar.writes(resource["calendar_id"])] == ["POST"], "a rejected cancel must not touch the event"


@pytest.mark.requirement("R21")
@pytest.mark.category("state")
def test_cancelling_twice_gets_invalid_state(api, http, at):
    owner = api.user("owner")
    resource = api.resource(owner)
    booking = api.cancel(owner, api.book(owner, resource, at("10:00"), at("11:00")))
    r = http.post(f"/bookings/{booking['id']}/cancel", headers=owner.headers)
    api.error(r, 409, "invalid_state", "cancelling a cancelled booking")
    assert api.get_booking(owner, booking["id"])["cancelled_at"] == booking["cancelled_at"], "a second cancel must change nothing"


@pytest.mark.requirement("R22")
@pytest.mark.category("side_effects")
def test_cancelling_deletes_the_event(api, http, calendar, at):
    _owner, guest, resource, booking = api.guest_booking(at("10:00"), at("11:00"))
    api.cancel(guest, booking)
    cal, event_id = resource["calendar_id"], booking["calendar_event_id"]
    writes = [(e["method"], e["path"]) for e in calendar.writes(cal)]
    assert writes == [("POST", f"/calendars/{cal}/events"), ("DELETE", f"/calendars/{cal}/events/{event_id}")], (
        f"cancelling should send exactly one DELETE for the booking's event; the service sent {writes}"
    )
    event = calendar.event(cal, event_id)
    assert event is not None and event["status"] == "cancelled", f"the provider's event should be cancelled: {event}"


@pytest.mark.requirement("R22", "R21")
@pytest.mark.category("side_effects")
def test_a_refused_second_cancel_sends_nothing(api, http, calendar, at):
    owner = api.user("owner")
    resource = api.resource(owner)
    booking = api.cancel(owner, api.book(owner, resource, at("10:00"), at("11:00")))
    http.post(f"/bookings/{booking['id']}/cancel", headers=owner.headers)
    deletes = [e for e in calendar.writes(resource["calendar_id"]) if e["method"] == "DELETE"]
    assert len(deletes) == 1, f"the event should be deleted exactly once, got {len(deletes)} DELETE requests"


@pytest.mark.requirement("R22")
@pytest.mark.category("side_effects")
def test_an_event_already_gone_still_cancels(api, http, calendar, at):
    owner = api.user("owner")
    resource = api.resource(owner)
    booking = api.book(owner, resource, at("10:00"), at("11:00"))
    calendar.remove_event(resource["calendar_id"], booking["calendar_event_id"])
    r = http.post(f"/bookings/{booking['id']}/cancel", headers=owner.headers)
    assert r.status_code == 200 and r.json().get("status") == "cancelled", (
        f"a 410 from the provider means the event is already gone and counts as success: {r.status_code} {r.text[:300]}"
    )


# ---------------------------------------------------------------- rescheduling


@pytest.mark.requirement("R23")
@pytest.mark.category("state")
def test_booker_reschedules(api, http, at):
    owner, guest, _resource, booking = api.guest_booking(at("10:00"), at("11:00"))
    r = http.patch(f"/bookings/{booking['id']}", json={"start": at("14:00"), "end": at("15:30"), "title": "Moved"}, headers=guest.headers)
    assert r.status_code == 200, f"the booker rescheduling: {r.status_code} {r.text[:300]}"
    got = r.json()
    assert (got["start"], got["end"], got["title"], got["status"]) == (at("14:00"), at("15:30"), "Moved", "confirmed"), f"new values: {got}"
    assert (got["id"], got["calendar_event_id"]) == (booking["id"], booking["calendar_event_id"]), f"the booking keeps its ids: {got}"
    assert api.get_booking(owner, booking["id"])["start"] == at("14:00"), "the reschedule did not persist"


@pytest.mark.requirement("R23")
@pytest.mark.category("authorization")
def test_only_the_booker_reschedules(api, http, calendar, at):
    owner, guest, stranger = api.user("owner"), api.user("guest"), api.user("stranger")
    resource = api.resource(owner)
    booking = api.book(guest, resource, at("10:00"), at("11:00"))
    body = {"start": at("13:00"), "end": at("14:00")}
    api.error(http.patch(f"/bookings/{booking['id']}", json=body, headers=owner.headers), 403, "forbidden", "the resource's owner rescheduling")
    api.error(http.patch(f"/bookings/{booking['id']}", json=body, headers=stranger.headers), 404, "not_found", "a stranger rescheduling")
    assert api.get_booking(guest, booking["id"])["start"] == at("10:00"), "a rejected reschedule moved the booking"
    assert [e["method"] for e in calendar.writes(resource["calendar_id"])] == ["POST"], "rejected reschedules must not touch the event"


@pytest.mark.requirement("R24", "R23")
@pytest.mark.category("side_effects")
def test_rescheduling_updates_the_event(api, http, calendar, at):
    owner = api.user("owner")
    resource = api.resource(owner)
    booking = api.book(owner, resource, at("10:00"), at("11:00"), title="Review")
    r = http.patch(f"/bookings/{booking['id']}", json={"start": at("15:00"), "end": at("16:00")}, headers=owner.headers)
    assert r.status_code == 200, f"rescheduling: {r.status_code} {r.text[:300]}"
    cal = resource["calendar_id"]
    patches = [e for e in calendar.writes(cal) if e["method"] == "PATCH"]
    assert [e["path"] for e in patches] == [f"/calendars/{cal}/events/{booking['calendar_event_id']}"], (
        f"one PATCH of the booking's event expected, got {[(e['method'], e['path']) for e in calendar.writes(cal)]}"
    )
    expected = {"summary": "Review", "start": at("15:00"), "end": at("16:00")}
    sent = patches[0].get("json") or {}
    assert {k: sent.get(k) for k in expected} == expected, f"the PATCH body:\n  expected {expected}\n  got      {sent}"
    event = calendar.event(cal, booking["calendar_event_id"])
    assert (event["start"], event["end"]) == (at("15:00"), at("16:00")), f"the provider's event should have moved: {event}"


@pytest.mark.requirement("R24")
@pytest.mark.category("side_effects")
def test_a_title_change_reaches_the_event(api, http, calendar, at):
    owner = api.user("owner")
    resource = api.resource(owner)
    booking = api.book(owner, resource, at("10:00"), at("11:00"), title="Old")
    r = http.patch(f"/bookings/{booking['id']}", json={"title": "New title"}, headers=owner.headers)
    assert r.status_code == 200 and r.json().get("title") == "New title", f"changing only the title: {r.status_code} {r.text[:300]}"
    patches = [e.get("json") or {} for e in calendar.writes(resource["calendar_id"]) if e["method"] == "PATCH"]
    expected = {"summary": "New title", "start": at("10:00"), "end": at("11:00")}
    assert [{k: p.get(k) for k in expected} for p in patches] == [expected], f"one PATCH with the new summary and the same times: {patches}"


@pytest.mark.requirement("R23")
@pytest.mark.category("state")
def test_a_booking_may_move_over_its_own_time(api, http, at):
    owner = api.user("owner")
    resource = api.resource(owner)
    booking = api.book(owner, resource, at("10:00"), at("11:00"))
    r = http.patch(f"/bookings/{booking['id']}", json={"start": at("10:30"), "end": at("11:30")}, headers=owner.headers)
    assert r.status_code == 200, f"moving a booking by half an hour overlaps only itself and its own event: {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R24", "R14")
@pytest.mark.category("side_effects")
def test_a_conflicting_reschedule_changes_nothing(api, http, calendar, at):
    owner, guest, resource = api.venue()
    api.book(owner, resource, at("13:00"), at("14:00"))
    booking = api.book(guest, resource, at("10:00"), at("11:00"))
    r = http.patch(f"/bookings/{booking['id']}", json={"start": at("13:30"), "end": at("14:30"), "title": "Clash"}, headers=guest.headers)
    api.error(r, 409, "booking_conflict", "moving onto another booking")
    got = api.get_booking(guest, booking["id"])
    assert (got["start"], got["end"], got["title"]) == (at("10:00"), at("11:00"), "Booking"), f"a rejected reschedule must change nothing: {got}"
    assert not [e for e in calendar.writes(resource["calendar_id"]) if e["method"] == "PATCH"], "a rejected reschedule must send no PATCH"


@pytest.mark.requirement("R23", "R12")
@pytest.mark.category("validation")
def test_start_and_end_go_together(api, http, at):
    owner = api.user("owner")
    resource = api.resource(owner)
    booking = api.book(owner, resource, at("10:00"), at("11:00"))
    path = f"/bookings/{booking['id']}"
    problems = [
        api.validation_problem(http.patch(path, json={"start": at("12:00")}, headers=owner.headers), ["end"], "only start"),
        api.validation_problem(http.patch(path, json={"end": at("12:00")}, headers=owner.headers), ["start"], "only end"),
        api.validation_problem(http.patch(path, json={"start": at("12:00"), "end": at("11:00")}, headers=owner.headers), ["end"], "end before start"),
        api.validation_problem(http.patch(path, json={"title": "   "}, headers=owner.headers), ["title"], "a blank title"),
    ]
    problems = [p for p in problems if p]
    assert not problems, "invalid reschedules were not rejected:\n" + "\n".join(problems)
    assert api.get_booking(owner, booking["id"])["start"] == at("10:00"), "a rejected reschedule moved the booking"


@pytest.mark.requirement("R23")
@pytest.mark.category("state")
def test_a_cancelled_booking_cannot_be_rescheduled(api, http, at):
    owner = api.user("owner")
    resource = api.resource(owner)
    booking = api.cancel(owner, api.book(owner, resource, at("10:00"), at("11:00")))
    r = http.patch(f"/bookings/{booking['id']}", json={"start": at("12:00"), "end": at("13:00")}, headers=owner.headers)
    api.error(r, 409, "invalid_state", "rescheduling a cancelled booking")


@pytest.mark.requirement("R23", "R13")
@pytest.mark.category("state")
def test_rescheduling_follows_the_opening_hours(api, http, at):
    owner = api.user("owner")
    resource = api.resource(owner, availability=[{"weekday": 0, "start": "09:00", "end": "12:00"}])
    booking = api.book(owner, resource, at("10:00"), at("11:00"))
    r = http.patch(f"/bookings/{booking['id']}", json={"start": at("11:30"), "end": at("12:30")}, headers=owner.headers)
    api.error(r, 409, "outside_availability", "moving a booking past closing time")


@pytest.mark.requirement("R21", "R22", "R23", "R24")
@pytest.mark.category("side_effects")
def test_provider_failures_on_cancel_and_reschedule_change_nothing(api, http, calendar, at, day):
    _owner, guest, resource, booking = api.guest_booking(at("10:00"), at("11:00"), "Kept")
    calendar.outage(resource["calendar_id"], "DELETE", "PATCH")
    api.error(http.post(f"/bookings/{booking['id']}/cancel", headers=guest.headers), 502, "calendar_unavailable", "cancelling while DELETE fails")
    r = http.patch(f"/bookings/{booking['id']}", json={"start": at("13:00"), "end": at("14:00"), "title": "Moved"}, headers=guest.headers)
    api.error(r, 502, "calendar_unavailable", "rescheduling while PATCH fails")
    got = api.get_booking(guest, booking["id"])
    assert (got["status"], got["start"], got["end"], got["title"], got["cancelled_at"]) == ("confirmed", booking["start"], booking["end"], "Kept", None), (
        f"failed provider calls must leave the booking as it was: {got}"
    )
    free = api.free(resource, guest, day)
    moment = lambda text: datetime.fromisoformat(text.replace("Z", "+00:00"))  # instants, not strings
    assert not any(moment(s) <= moment(booking["start"]) and moment(booking["end"]) <= moment(e) for s, e in free), f"the booked hour stays taken: {free}"


@pytest.mark.requirement("R23", "R25")
@pytest.mark.category("state")
def test_rescheduling_onto_a_deleted_resource_gets_409(api, http, calendar, at):
    owner, guest, resource, booking = api.guest_booking(at("10:00"), at("11:00"))
    api.ok(http.delete(f"/resources/{resource['id']}", headers=owner.headers), 204, "delete the resource")
    before = calendar.writes(resource["calendar_id"])
    r = http.patch(f"/bookings/{booking['id']}", json={"start": at("12:00"), "end": at("13:00")}, headers=guest.headers)
    api.error(r, 409, "invalid_state", "rescheduling a booking whose resource was deleted")
    assert calendar.writes(resource["calendar_id"]) == before, "a refused reschedule sends nothing to the provider"
    assert api.get_booking(guest, booking["id"])["status"] == "cancelled", "the booking stays cancelled"

