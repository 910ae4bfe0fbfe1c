"""The worked examples of spec.md, each an item of its own, checked exactly (issue 35).

Conventions: "a week is an ISO 8601 week written `YYYY-Www` (e.g. `2026-W05`): Monday to
Sunday, the year being the ISO week-numbering year (so `2027-01-01`, a Friday, lies in
`2026-W53`)" -- also for what a submitted week locks. Time entries: "touching, `10:00–11:00` then
`11:00–12:00`, is no overlap". Reports: "rounded up to the next multiple of 15 (`1` -> `15`,
`15` -> `15`, `16` -> `30`)".
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R17")
@pytest.mark.category("api_surface")
def test_2026_w05_runs_monday_to_sunday(api, http, employee):
    sheet = api.sheet(employee, "2026-W05")
    assert (sheet.get("week"), sheet.get("first_date"), sheet.get("last_date")) == ("2026-W05", "2026-01-26", "2026-02-01"), f"2026-W05: {sheet}"


@pytest.mark.requirement("R17", "R20")
@pytest.mark.category("state")
def test_2027_01_01_lies_in_2026_w53_and_is_locked_with_it(api, http, work):
    user = api.staff()
    api.entry(user, work, "2027-01-01", duration=30)
    sheet = api.sheet(user, "2026-W53")
    assert (sheet.get("entry_count"), sheet.get("total_minutes")) == (1, 30), f"2027-01-01 counts in 2026-W53: {sheet}"
    api.submitted(user, "2026-W53")
    api.error(api.post_entry(user, work, "2027-01-01", duration=15), 409, "locked", "an entry on 2027-01-01 while 2026-W53 is submitted")
    assert api.sheet(user, "2026-W53").get("entry_count") == 1, "the refused entry is not recorded"
    api.entry(user, work, "2027-01-04", duration=15)  # 2027-W01 is open


@pytest.mark.requirement("R11")
@pytest.mark.category("state")
def test_touching_entries_are_no_overlap(api, http, employee, work):
    first = api.entry(employee, work, api.day(2), start="10:00", end="11:00")
    second = api.entry(employee, work, api.day(2), start="11:00", end="12:00")
    assert (first.get("duration_minutes"), second.get("duration_minutes")) == (60, 60), f"both recorded: {first} {second}"


@pytest.mark.requirement("R22")
@pytest.mark.category("api_surface")
@pytest.mark.parametrize("minutes,rounded", [(1, 15), (15, 15), (16, 30)], ids=["1-to-15", "15-to-15", "16-to-30"])
def test_the_rounding_examples(api, http, work, minutes, rounded):
    user = api.staff()
    api.entry(user, work, duration=minutes)
    total = api.report(user, "user")["total"]
    assert (total.get("minutes"), total.get("rounded_minutes")) == (minutes, rounded), f"spec.md: {minutes} -> {rounded}; the report: {total}"
