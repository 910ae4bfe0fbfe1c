"""Error precedence and the order of the state rules (spec.md: Errors — Precedence; Time entries — state rules)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r1")]


@pytest.mark.requirement("R24", "R19")
@pytest.mark.category("authorization")
def test_the_role_is_decided_before_the_path(api, http, employee):
    api.error(http.post("/timesheets/u_nobody/2026-W10/approve", headers=employee.headers), 403, "forbidden", "an employee approving an unknown user's week")
    api.error(http.post("/timesheets/u_nobody/2026-W99/reject", json={}, headers=employee.headers), 403, "forbidden", "an employee rejecting an invalid week")
    api.error(http.patch("/projects/p_nobody", json={"name": ""}, headers=employee.headers), 403, "forbidden", "an employee changing an unknown project")
    api.error(http.patch("/users/u_nobody", json={"role": "x"}, headers=employee.headers), 403, "forbidden", "an employee changing an unknown user")
    api.error(http.post("/timesheets/u_nobody/2026-W10/approve"), 401, "unauthorized", "no token at all")


@pytest.mark.requirement("R24", "R16")
@pytest.mark.category("authorization")
def test_visibility_before_ownership_before_validation(api, http, admin, work):
    manager, (member,) = api.team(1)
    e = api.entry(member, work)
    api.error(http.patch(f"/entries/{e['id']}", json={"duration_minutes": -1}, headers=manager.headers), 403, "forbidden", "the manager sending an invalid change")
    api.error(http.patch(f"/entries/{e['id']}", json={"duration_minutes": -1}, headers=api.staff().headers), 404, "not_found", "a stranger sending an invalid change")
    api.error(http.post(api.sheet_path(manager, action="reject"), json={"reason": ""}, headers=manager.headers), 403, "forbidden", "rejecting one's own week with a blank reason")
    api.error(http.post(api.sheet_path(member, "2026-W60", "reject"), json={"reason": ""}, headers=manager.headers), 404, "not_found", "an invalid week with a blank reason")


@pytest.mark.requirement("R24", "R20")
@pytest.mark.category("validation")
def test_validation_before_state(api, http, admin, work):
    user = api.staff()
    e = api.entry(user, work)
    api.submitted(user)
    problem = api.validation_problem(http.patch(f"/entries/{e['id']}", json={"duration_minutes": 0}, headers=user.headers), ["duration_minutes"], "an invalid change of a locked entry")
    assert problem is None, problem
    api.ok(api.act(user, "approve", admin), 200, "approve")
    problem = api.validation_problem(http.post(api.sheet_path(user, action="reject"), json={"reason": " "}, headers=admin.headers), ["reason"], "a blank reason for an approved week")
    assert problem is None, problem


@pytest.mark.requirement("R24", "R11", "R12", "R13")
@pytest.mark.category("state")
def test_overlap_before_daily_limit_before_budget(api, http, admin):
    work = api.work(budget_minutes=1500)
    user = api.staff()
    api.entry(user, work, start="00:00", end="23:00")   # 1380 minutes
    api.entry(user, work, duration=50)                  # day 0: 1430
    api.entry(user, work, api.day(1), duration=60)      # project: 1490 of 1500
    api.error(api.post_entry(user, work, start="22:00", end="23:59"), 409, "overlap", "overlapping, over the day and over budget")
    api.error(api.post_entry(user, work, duration=11), 409, "daily_limit", "over the day (1441) and over budget (1501)")
    api.error(api.post_entry(user, work, api.day(2), duration=11), 409, "over_budget", "11 minutes over a 10-minute remainder")
    api.entry(user, work, api.day(2), duration=10)
    assert api.get(f"/projects/{work.project['id']}")["used_minutes"] == 1500


@pytest.mark.requirement("R24", "R11")
@pytest.mark.category("state")
def test_a_failed_request_changes_nothing(api, http, work):
    user = api.staff()
    first = api.entry(user, work, start="09:00", end="10:00", description="first")
    second = api.entry(user, work, start="10:00", end="11:00", description="second")
    api.error(http.patch(f"/entries/{second['id']}", json={"start": "09:30", "end": "11:00", "description": "changed"}, headers=user.headers), 409, "overlap", "a change that overlaps")
    got = api.get(f"/entries/{second['id']}", by=user)
    assert (got["start"], got["description"]) == ("10:00", "second"), f"a refused change applied partly: {got}"
    assert api.get(f"/entries/{first['id']}", by=user)["description"] == "first"
    sheet = api.sheet(user)
    assert (sheet["entry_count"], sheet["total_minutes"]) == (2, 120)


@pytest.mark.requirement("R22", "R18")
@pytest.mark.category("side_effects")
def test_only_approved_weeks_count_in_approved_reports(api, http, admin, work):
    manager, (member,) = api.team(1)
    api.entry(member, work, duration=50)
    api.submitted(member)
    assert api.report(manager, "user", approved="true")["groups"] == [], "a submitted week is not approved"
    api.ok(api.act(member, "approve", manager), 200, "approve")
    approved = api.report(manager, "user", approved="true")
    assert (approved["total"]["minutes"], approved["total"]["rounded_minutes"]) == (50, 60), f"approved totals: {approved['total']}"
    assert api.report(manager, "user", approved="false")["total"]["minutes"] == 0
