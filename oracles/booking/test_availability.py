"""Free time: opening hours minus bookings minus the calendar's busy time (spec.md: Free time)."""

from __future__ import annotations

from datetime import timedelta

import pytest

pytestmark = [pytest.mark.tier("base")]

SPLIT_MONDAY = [
    {"weekday": 0, "start": "13:00", "end": "17:00"},
    {"weekday": 0, "start": "09:00", "end": "11:00"},
    {"weekday": 0, "start": "11:00", "end": "12:00"},
]


@pytest.mark.requirement("R9")
@pytest.mark.category("api_surface")
def test_an_empty_day_is_its_opening_hours(api, http, day, at):
    owner = api.user("owner")
    resource = api.resource(owner, availability=SPLIT_MONDAY)
    r = http.get(f"/resources/{resource['id']}/availability", params={"date": day.isoformat()}, headers=api.user("guest").headers)
    assert r.status_code == 200, f"reading free time: {r.status_code} {r.text[:300]}"
    body = r.json()
    assert (body.get("resource_id"), body.get("date")) == (resource["id"], day.isoformat()), f"resource_id and date are echoed: {body}"
    expected = [{"start": at("09:00"), "end": at("12:00")}, {"start": at("13:00"), "end": at("17:00")}]
    assert body.get("free") == expected, f"touching windows joined, ordered by time:\n  expected {expected}\n  got      {body.get('free')}"


@pytest.mark.requirement("R9")
@pytest.mark.category("api_surface")
def test_a_closed_day_has_no_free_time(api, http, day):
    owner = api.user("owner")
    resource = api.resource(owner, availability=SPLIT_MONDAY)
    assert api.free(resource, owner, day + timedelta(days=1)) == [], "Tuesday has no opening hours, so nothing is free"


@pytest.mark.requirement("R9", "R13")
@pytest.mark.category("api_surface")
def test_a_window_until_midnight_ends_at_the_next_date(api, http, day, at):
    owner = api.user("owner")
    sunday = day + timedelta(days=6)
    resource = api.resource(owner, availability=[{"weekday": 6, "start": "22:00", "end": "24:00"}])
    assert api.free(resource, owner, sunday) == [(at("22:00", days=6), at("00:00", days=7))], "24:00 is 00:00:00Z of the next date"


@pytest.mark.requirement("R9")
@pytest.mark.category("state")
def test_bookings_are_not_free(api, http, day, at):
    owner, guest, resource = api.venue(SPLIT_MONDAY)
    api.book(guest, resource, at("10:00"), at("10:30"))
    api.book(guest, resource, at("11:30"), at("12:00"))
    api.book(owner, resource, at("13:00"), at("14:00"))
    expected = [(at("09:00"), at("10:00")), (at("10:30"), at("11:30")), (at("14:00"), at("17:00"))]
    got = api.free(resource, api.user("reader"), day)
    assert got == expected, f"bookings are taken out of the day:\n  expected {expected}\n  got      {got}"


@pytest.mark.requirement("R9", "R14")
@pytest.mark.category("state")
def test_other_resources_bookings_do_not_count(api, http, day, at):
    owner = api.user("owner")
    busy, idle = api.resource(owner, availability=SPLIT_MONDAY), api.resource(owner, availability=SPLIT_MONDAY)
    api.book(owner, busy, at("09:00"), at("12:00"))
    assert api.free(idle, owner, day) == [(at("09:00"), at("12:00")), (at("13:00"), at("17:00"))], "another resource's booking changed free time"


@pytest.mark.requirement("R10", "R9")
@pytest.mark.category("side_effects")
def test_external_events_are_not_free(api, http, calendar, day, at):
    owner = api.user("owner")
    resource = api.resource(owner, availability=SPLIT_MONDAY)
    calendar.add_event(resource["calendar_id"], at("08:00"), at("09:30"), "Early meeting")
    calendar.add_event(resource["calendar_id"], at("11:45"), at("13:15"), "Long lunch")
    calendar.add_event(resource["calendar_id"], at("16:30"), at("01:00", days=1), "Evening")
    expected = [(at("09:30"), at("11:45")), (at("13:15"), at("16:30"))]
    got = api.free(resource, owner, day)
    assert got == expected, f"events put straight into the calendar are busy time:\n  expected {expected}\n  got      {got}"


@pytest.mark.requirement("R10")
@pytest.mark.category("side_effects")
def test_free_time_asks_the_calendar_about_the_whole_day(api, http, calendar, day, at):
    owner = api.user("owner")
    resource = api.resource(owner, availability=SPLIT_MONDAY)
    api.free(resource, owner, day)
    sent = calendar.sent(resource["calendar_id"])
    busy = [e for e in sent if e["method"] == "GET" and e["path"].endswith("/busy")]
    assert busy, f"reading free time should ask the provider for busy time, it sent: {[(e['method'], e['path']) for e in sent]}"
    query = busy[-1].get("query", {})
    assert (query.get("from"), query.get("to")) == (at("00:00"), at("00:00", days=1)), f"busy should be asked for the whole UTC day: {query}"
    assert not calendar.writes(resource["calendar_id"]), "reading free time must not create, change or cancel events"


@pytest.mark.requirement("R9", "R22")
@pytest.mark.category("state")
def test_cancelled_bookings_are_free_again(api, http, day, at):
    owner = api.user("owner")
    resource = api.resource(owner, availability=[{"weekday": 0, "start": "09:00", "end": "12:00"}])
    booking = api.book(owner, resource, at("10:00"), at("11:00"))
    api.cancel(owner, booking)
    assert api.free(resource, owner, day) == [(at("09:00"), at("12:00"))], "a cancelled booking's time should be free again (and joined)"


@pytest.mark.requirement("R9")
@pytest.mark.category("validation")
def test_date_is_required_and_real(api, http):
    owner = api.user("owner")
    resource = api.resource(owner)
    problems = []
    for params in ({}, {"date": "2031-02-30"}, {"date": "tomorrow"}, {"date": "2031-3-3"}, {"date": "2031-03-03T00:00:00Z"}):
        r = http.get(f"/resources/{resource['id']}/availability", params=params, headers=owner.headers)
        problems.append(api.validation_problem(r, ["date"], f"free time with {params}"))
    problems = [p for p in problems if p]
    assert not problems, "invalid dates were not rejected with field date:\n" + "\n".join(problems)
