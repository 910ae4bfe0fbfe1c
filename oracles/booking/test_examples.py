"""The worked examples spec.md gives, each an item of its own and checked exactly (issue 35).

Each example pins a rule down with values of its own; the item uses those very values (on a
future Monday where the example names only times of day).
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("state")]


@pytest.mark.requirement("R14")
def test_example_0900_to_1000_and_1000_to_1100_do_not_overlap(api, at):
    """Conventions, Intervals: "a booking from 09:00 to 10:00 and one from 10:00 to 11:00 do not overlap"."""
    owner, guest, resource = api.venue()
    api.book(owner, resource, at("09:00"), at("10:00"))
    second = api.book(guest, resource, at("10:00"), at("11:00"))
    assert (second["start"], second["end"], second["status"]) == (at("10:00"), at("11:00"), "confirmed"), second


@pytest.mark.requirement("R9", "R13")
def test_example_touching_windows_0900_1200_and_1200_1700_are_one_window(api, day, at):
    """Resources: "Windows of the same weekday that touch (09:00–12:00 and 12:00–17:00) count as one continuous window"."""
    _owner, guest, resource = api.venue([{"weekday": 0, "start": "09:00", "end": "12:00"}, {"weekday": 0, "start": "12:00", "end": "17:00"}])
    assert api.free(resource, guest, day) == [(at("09:00"), at("17:00"))], "one free interval from 09:00 to 17:00"
    booking = api.book(guest, resource, at("11:00"), at("13:00"))
    assert (booking["start"], booking["end"]) == (at("11:00"), at("13:00")), booking


@pytest.mark.requirement("R11", "R12")
def test_example_instant_2031_03_03_0900_is_answered_in_the_same_form(api):
    """Conventions, Times of a booking: "exactly as `YYYY-MM-DDTHH:MM:SSZ`, e.g. `2031-03-03T09:00:00Z`" (a Monday)."""
    _owner, guest, resource = api.venue()
    booking = api.book(guest, resource, "2031-03-03T09:00:00Z", "2031-03-03T10:00:00Z")
    assert (booking["start"], booking["end"]) == ("2031-03-03T09:00:00Z", "2031-03-03T10:00:00Z"), booking
    assert api.get_booking(guest, booking["id"])["start"] == "2031-03-03T09:00:00Z"


@pytest.mark.requirement("R5", "R12", "R27")
@pytest.mark.category("validation")
@pytest.mark.parametrize("where,field", [("resource", "name"), ("booking", "title")], ids=["name-5", "title-null"])
def test_example_wrong_json_types_get_422(api, http, at, where, field):
    """Conventions, Request bodies: "A defined field whose value has the wrong JSON type gets `422` (for example `"name": 5` or `"title": null`)"."""
    owner, guest, resource = api.venue()
    if where == "resource":
        r = http.post("/resources", json={"name": 5, "kind": "room", "calendar_id": api.calendar_id()}, headers=owner.headers)
    else:
        r = api.try_book(guest, resource, at("09:00"), at("10:00"), title=None)
    problem = api.validation_problem(r, [field], f'"{field}": {"5" if field == "name" else "null"}')
    assert problem is None, problem
