"""Locked weeks (spec.md: Timesheets — a submitted or approved week is locked; Time entries: state rules)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R20")
@pytest.mark.category("state")
@pytest.mark.parametrize("status", ["submitted", "approved"])
def test_a_locked_week_refuses_every_change(api, http, admin, work, status):
    user = api.staff()
    e = api.entry(user, work, api.day(2), start="09:00", end="10:00", description="kept")
    api.submitted(user)
    if status == "approved":
        api.ok(api.act(user, "approve", admin), 200, "approve")
    api.error(api.post_entry(user, work, api.day(6), duration=5), 409, "locked", f"a new entry in a {status} week")
    api.error(http.patch(f"/entries/{e['id']}", json={"description": "changed"}, headers=user.headers), 409, "locked", f"changing an entry of a {status} week")
    api.error(http.patch(f"/entries/{e['id']}", json={"date": api.day(7)}, headers=user.headers), 409, "locked", f"moving an entry out of a {status} week")
    api.error(http.delete(f"/entries/{e['id']}", headers=user.headers), 409, "locked", f"deleting an entry of a {status} week")
    got = api.get(f"/entries/{e['id']}", by=user)
    assert (got["description"], got["date"]) == ("kept", api.day(2)), f"a locked entry changed: {got}"
    sheet = api.sheet(user)
    assert (sheet["status"], sheet["entry_count"]) == (status, 1), f"the locked week: {sheet}"


@pytest.mark.requirement("R20")
@pytest.mark.category("state")
def test_an_entry_cannot_move_into_a_locked_week(api, http, work):
    user = api.staff()
    api.entry(user, work, api.day(0))
    api.submitted(user)
    e = api.entry(user, work, api.day(7))
    api.error(http.patch(f"/entries/{e['id']}", json={"date": api.day(3)}, headers=user.headers), 409, "locked", "moving an entry into a submitted week")
    assert api.sheet(user)["entry_count"] == 1


@pytest.mark.requirement("R20", "R18")
@pytest.mark.category("state")
def test_open_and_rejected_weeks_are_editable(api, http, admin, work):
    user = api.staff()
    e = api.entry(user, work)
    api.submitted(user)
    api.ok(api.act(user, "withdraw", user), 200, "withdraw")
    api.ok(http.patch(f"/entries/{e['id']}", json={"description": "after withdraw"}, headers=user.headers), 200, "editing a withdrawn week")
    api.submitted(user)
    api.ok(api.act(user, "reject", admin, reason="fix it"), 200, "reject")
    api.entry(user, work, api.day(1))
    api.ok(http.delete(f"/entries/{e['id']}", headers=user.headers), 204, "deleting in a rejected week")
    assert api.sheet(user)["entry_count"] == 1


@pytest.mark.requirement("R20")
@pytest.mark.category("state")
def test_locks_are_per_user_and_per_week(api, http, work):
    _, (a, b) = api.team(2)
    api.entry(a, work)
    api.submitted(a)
    api.entry(b, work)
    api.entry(a, work, api.day(7))
    api.entry(a, work, api.day(-1))
    assert [s["entry_count"] for s in (api.sheet(b), api.sheet(a, "2026-W11"), api.sheet(a, "2026-W09"))] == [1, 1, 1]


@pytest.mark.requirement("R20", "R24")
@pytest.mark.category("state")
def test_locked_wins_over_overlap_and_validation_wins_over_locked(api, http, work):
    user = api.staff()
    api.entry(user, work, start="09:00", end="10:00")
    api.submitted(user)
    api.error(api.post_entry(user, work, start="09:00", end="10:00"), 409, "locked", "an overlapping entry in a locked week")
    problem = api.validation_problem(api.post_entry(user, work, start="10:00", end="09:00"), ["end"], "an invalid entry in a locked week")
    assert problem is None, problem


@pytest.mark.requirement("R20", "R17")
@pytest.mark.category("side_effects")
def test_the_week_totals_follow_its_entries(api, http, work):
    user = api.staff()
    a = api.entry(user, work, api.day(0), start="08:00", end="08:50")
    api.entry(user, work, api.day(6), duration=25)
    api.entry(user, work, api.day(7), duration=999)
    sheet = api.sheet(user)
    assert (sheet["entry_count"], sheet["total_minutes"]) == (2, 75), f"totals of W10: {sheet}"
    api.ok(http.delete(f"/entries/{a['id']}", headers=user.headers), 204, "delete")
    sheet = api.submitted(user)
    assert (sheet["entry_count"], sheet["total_minutes"]) == (1, 25), f"totals after a delete: {sheet}"
