"""Booking a slot: the answer, validation, the 409 rules and the event at the provider (spec.md: Booking a slot)."""

from __future__ import annotations

import pytest
import requests

pytestmark = [pytest.mark.tier("base")]

MONDAY_MORNING = [{"weekday": 0, "start": "09:00", "end": "12:00"}]


@pytest.mark.requirement("R11")
@pytest.mark.category("api_surface")
def test_booking_answers_a_confirmed_booking(api, http, at):
    _owner, guest, resource = api.venue()
    r = http.post(f"/resources/{resource['id']}/bookings", json={"start": at("10:00"), "end": at("11:30"), "title": "Physio"}, headers=guest.headers)
    assert r.status_code == 201, f"booking a free slot: {r.status_code} {r.text[:300]}"
    b = r.json()
    got = (b.get("resource_id"), b.get("user_id"), b.get("title"), b.get("start"), b.get("end"), b.get("status"))
    assert got == (resource["id"], guest.id, "Physio", at("10:00"), at("11:30"), "confirmed"), f"the booking's fields: {b}"
    assert (b.get("cancelled_at"), b.get("cancelled_by")) == (None, None), f"a new booking is not cancelled: {b}"
    assert isinstance(b.get("calendar_event_id"), str) and b["calendar_event_id"], f"calendar_event_id should be set: {b}"
    assert api.get_booking(guest, b["id"]) == b, "reading the booking back should give the same booking"


@pytest.mark.requirement("R11")
@pytest.mark.category("api_surface")
def test_title_defaults_to_booking(api, http, at):
    owner = api.user("owner")
    resource = api.resource(owner)
    assert api.book(owner, resource, at("09:00"), at("09:15"))["title"] == "Booking", "title should default to 'Booking'"


@pytest.mark.requirement("R16", "R11")
@pytest.mark.category("side_effects")
def test_booking_creates_one_event_in_the_resource_calendar(api, http, calendar, at):
    _owner, guest, resource = api.venue()
    booking = api.book(guest, resource, at("14:00"), at("15:00"), title="Team sync")
    writes = calendar.writes(resource["calendar_id"])
    assert [(e["method"], e["path"]) for e in writes] == [("POST", f"/calendars/{resource['calendar_id']}/events")], (
        f"exactly one event should be created in the resource's calendar, the service sent {[(e['method'], e['path']) for e in writes]}"
    )
    sent = writes[0].get("json") or {}
    expected = {"summary": "Team sync", "start": at("14:00"), "end": at("15:00"), "reference": booking["id"]}
    assert {k: sent.get(k) for k in expected} == expected, f"the event body:\n  expected {expected}\n  got      {sent}"
    event = calendar.event(resource["calendar_id"], booking["calendar_event_id"])
    assert event is not None and event["reference"] == booking["id"], (
        f"calendar_event_id {booking['calendar_event_id']!r} should be the id the provider gave the event: {calendar.events(resource['calendar_id'])}"
    )


@pytest.mark.requirement("R12")
@pytest.mark.category("validation")
def test_booking_times_must_have_the_exact_form(api, http, at):
    owner = api.user("owner")
    resource = api.resource(owner)
    good = at("10:00")
    day = good[:10]
    bad_starts = {
        "a space instead of T": f"{day} 09:00:00Z",
        "an offset": f"{day}T09:00:00+00:00",
        "fractional seconds": f"{day}T09:00:00.000Z",
        "no seconds": f"{day}T09:00Z",
        "not a real date": "2031-02-30T09:00:00Z",
        "minutes not on a quarter hour": f"{day}T09:10:00Z",
        "seconds": f"{day}T09:00:30Z",
        "a number": 1900000000,
    }
    problems = [api.validation_problem(api.try_book(owner, resource, start, good), ["start"], f"start with {label}")
                for label, start in bad_starts.items()]
    problems.append(api.validation_problem(api.try_book(owner, resource, at("09:00"), f"{day}T10:05:00Z"), ["end"], "end not on a quarter hour"))
    problems.append(api.validation_problem(api.http.post(f"/resources/{resource['id']}/bookings", json={}, headers=owner.headers),
                                           ["start", "end"], "neither start nor end"))
    problems = [p for p in problems if p]
    assert not problems, "malformed booking times were not rejected as the spec says:\n" + "\n".join(problems)


@pytest.mark.requirement("R12")
@pytest.mark.category("validation")
def test_end_must_follow_start_within_eight_hours(api, http, at):
    owner = api.user("owner")
    resource = api.resource(owner, availability=[{"weekday": 0, "start": "00:00", "end": "24:00"}])
    problems = [
        api.validation_problem(api.try_book(owner, resource, at("10:00"), at("09:00")), ["end"], "end before start"),
        api.validation_problem(api.try_book(owner, resource, at("10:00"), at("10:00")), ["end"], "end equal to start"),
        api.validation_problem(api.try_book(owner, resource, at("09:00"), at("17:15")), ["end"], "8 hours 15 minutes"),
    ]
    problems = [p for p in problems if p]
    assert not problems, "bad intervals were not rejected with field end:\n" + "\n".join(problems)
    r = api.try_book(owner, resource, at("09:00"), at("17:00"))
    assert r.status_code == 201, f"exactly 8 hours is allowed: {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R12")
@pytest.mark.category("validation")
def test_start_must_be_in_the_future(api, http):
    owner = api.user("owner")
    resource = api.resource(owner, availability=[{"weekday": d, "start": "00:00", "end": "24:00"} for d in range(7)])
    r = api.try_book(owner, resource, "2020-01-06T09:00:00Z", "2020-01-06T10:00:00Z")
    error = api.error(r, 422, "validation_error", "booking a slot in 2020")
    assert error.get("fields") == ["start"], f"422 should list exactly ['start']: {error}"


@pytest.mark.requirement("R12", "R27")
@pytest.mark.category("validation")
def test_title_is_validated(api, http, at):
    owner = api.user("owner")
    resource = api.resource(owner)
    problems = [
        api.validation_problem(api.try_book(owner, resource, at("09:00"), at("10:00"), title=title), ["title"], f"title {label}")
        for label, title in (("blank", "  "), ("empty", ""), ("of 101 characters", "t" * 101), ("a number", 5), ("null", None))
    ]
    problems = [p for p in problems if p]
    assert not problems, "invalid titles were not rejected:\n" + "\n".join(problems)
    assert api.book(owner, resource, at("09:00"), at("10:00"), title="t" * 100)["title"] == "t" * 100, "a 100-character title is valid"


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_outside_opening_hours_gets_409(api, http, at):
    owner = api.user("owner")
    resource = api.resource(owner, availability=[{"weekday": 0, "start": "09:00", "end": "12:00"}, {"weekday": 0, "start": "13:00", "end": "17:00"}])
    for start, end, label in (
        (at("08:45"), at("09:30"), "starting before opening"),
        (at("16:30"), at("17:15"), "ending after closing"),
        (at("11:30"), at("13:30"), "spanning the lunch gap"),
        (at("10:00", days=1), at("11:00", days=1), "on a Tuesday, which has no hours"),
    ):
        api.error(api.try_book(owner, resource, start, end), 409, "outside_availability", f"a booking {label}")
    assert api.my_bookings(owner)["total"] == 0, "rejected bookings must not exist"


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_touching_windows_form_one_window(api, http, at):
    owner = api.user("owner")
    resource = api.resource(owner, availability=[{"weekday": 0, "start": "12:00", "end": "17:00"}, {"weekday": 0, "start": "09:00", "end": "12:00"}])
    r = api.try_book(owner, resource, at("11:00"), at("13:00"))
    assert r.status_code == 201, f"11:00-13:00 lies within 09:00-12:00 + 12:00-17:00 joined: {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_a_booking_may_end_at_midnight(api, http, at):
    owner = api.user("owner")
    resource = api.resource(owner, availability=[{"weekday": 0, "start": "20:00", "end": "24:00"}])
    r = api.try_book(owner, resource, at("23:00"), at("00:00", days=1))
    assert r.status_code == 201, f"23:00 to 00:00 of the next date fits a window ending at 24:00: {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R14")
@pytest.mark.category("state")
def test_overlapping_bookings_get_409(api, http, at):
    owner, first, second = api.user("owner"), api.user("first"), api.user("second")
    resource = api.resource(owner)
    api.book(first, resource, at("10:00"), at("11:00"))
    for start, end, label in (
        (at("10:00"), at("11:00"), "the same time"),
        (at("10:15"), at("10:45"), "inside it"),
        (at("09:30"), at("10:15"), "overlapping its start"),
        (at("10:45"), at("12:00"), "overlapping its end"),
        (at("09:00"), at("12:00"), "around it"),
    ):
        api.error(api.try_book(second, resource, start, end), 409, "booking_conflict", f"a booking at {label}")
    assert api.my_bookings(second)["total"] == 0, "no rejected booking may exist"


@pytest.mark.requirement("R14")
@pytest.mark.category("state")
def test_touching_bookings_do_not_overlap(api, http, at):
    owner = api.user("owner")
    resource = api.resource(owner)
    api.book(owner, resource, at("10:00"), at("11:00"))
    for start, end in ((at("09:00"), at("10:00")), (at("11:00"), at("12:00"))):
        r = api.try_book(owner, resource, start, end)
        assert r.status_code == 201, f"{start}-{end} only touches 10:00-11:00 (intervals are half-open): {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R14")
@pytest.mark.category("state")
def test_different_resources_do_not_conflict(api, http, at):
    owner = api.user("owner")
    a, b = api.resource(owner), api.resource(owner)
    api.book(owner, a, at("10:00"), at("11:00"))
    r = api.try_book(owner, b, at("10:00"), at("11:00"))
    assert r.status_code == 201, f"the same time on another resource is free: {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R14", "R22")
@pytest.mark.category("state")
def test_cancelled_bookings_do_not_conflict(api, http, at):
    owner, guest, resource = api.venue()
    api.cancel(owner, api.book(owner, resource, at("10:00"), at("11:00")))
    r = api.try_book(guest, resource, at("10:00"), at("11:00"))
    assert r.status_code == 201, f"the time of a cancelled booking can be booked again: {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R14")
@pytest.mark.category("state")
def test_concurrent_requests_never_double_book(api, http, service, at, checks):
    owner = api.user("owner")
    guests = [api.user(f"guest{i}") for i in range(6)]
    resource = api.resource(owner)
    statuses: list[int] = []

    def attempt(guest):
        r = requests.post(f"{service.base_url}/resources/{resource['id']}/bookings",
                          json={"start": at("15:00"), "end": at("16:00")}, headers=guest.headers, timeout=http.timeout_s)
        statuses.append(r.status_code)

    checks.concurrently(attempt, list(guests), 2 * http.timeout_s)
    assert sorted(statuses) == [201] + [409] * 5, f"six simultaneous requests for one slot: exactly one 201 and five 409, got {sorted(statuses)}"
    listed = api.resource_bookings(owner, resource)
    assert listed["total"] == 1, f"exactly one booking may exist for the slot: {listed}"


@pytest.mark.requirement("R15")
@pytest.mark.category("side_effects")
def test_busy_calendar_gets_calendar_conflict(api, http, calendar, at):
    owner = api.user("owner")
    resource = api.resource(owner)
    calendar.add_event(resource["calendar_id"], at("10:30"), at("11:30"), "Booked by phone")
    api.error(api.try_book(owner, resource, at("10:00"), at("11:00")), 409, "calendar_conflict", "a booking over an event made in the calendar directly")
    assert not calendar.writes(resource["calendar_id"]), "a rejected booking must not create an event"
    r = api.try_book(owner, resource, at("11:30"), at("12:00"))
    assert r.status_code == 201, f"the time right after the external event is free: {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R16", "R13", "R14")
@pytest.mark.category("side_effects")
def test_rejected_bookings_create_no_event(api, http, calendar, at):
    owner = api.user("owner")
    resource = api.resource(owner, availability=MONDAY_MORNING)
    api.book(owner, resource, at("10:00"), at("11:00"))
    for start, end in ((at("10:30"), at("11:30")), (at("13:00"), at("14:00")), (at("11:00"), at("10:00"))):
        r = api.try_book(owner, resource, start, end)
        assert r.status_code in (409, 422), f"setup: {start}-{end} should be rejected: {r.status_code} {r.text[:200]}"
    writes = [(e["method"], e["path"]) for e in calendar.writes(resource["calendar_id"])]
    assert len(writes) == 1, f"only the one accepted booking may create an event; the service sent {writes}"


@pytest.mark.requirement("R17")
@pytest.mark.category("side_effects")
def test_calendar_outage_gets_502_and_no_booking(api, http, at):
    owner = api.user("owner")
    resource = api.resource(owner, calendar_id=api.calendar_id("room", "outage.example"))
    api.error(api.try_book(owner, resource, at("10:00"), at("11:00")), 502, "calendar_unavailable", "booking while the calendar is down")
    assert api.my_bookings(owner)["total"] == 0, "no booking may exist after a 502"
    assert api.resource_bookings(owner, resource)["total"] == 0, "the resource must have no booking after a 502"


@pytest.mark.requirement("R26")
@pytest.mark.category("api_surface")
def test_error_precedence_when_booking(api, http, calendar, at):
    owner = api.user("owner")
    resource = api.resource(owner, availability=MONDAY_MORNING)
    api.book(owner, resource, at("10:00"), at("11:00"))
    r = http.post("/resources/no-such-resource/bookings", json={"start": "bad"}, headers=owner.headers)
    api.error(r, 404, "not_found", "an unknown resource with an invalid body (404 before 422)")
    r = api.try_book(owner, resource, at("10:00"), at("11:00"), title="")
    api.error(r, 422, "validation_error", "an invalid title for a taken slot (422 before 409)")
    r = api.try_book(owner, resource, at("11:30"), at("12:30"))
    api.error(r, 409, "outside_availability", "outside the hours (checked before anything else at 409)")
    calendar.add_event(resource["calendar_id"], at("09:00"), at("12:00"), "Blocked")
    api.error(api.try_book(owner, resource, at("10:30"), at("11:15")), 409, "booking_conflict", "overlapping a booking and a busy block")
