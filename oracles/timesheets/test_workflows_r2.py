"""Whole stories across users and weeks, and concurrent requests (spec.md: Timesheets, Reports, Running)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r2")]


@pytest.mark.requirement("R10", "R18", "R19", "R20", "R22")
@pytest.mark.category("workflow")
def test_a_team_month_from_entries_to_an_approved_report(api, http, admin):
    manager, (ann, bob) = api.team(2)
    site, app = api.work(budget_minutes=2000), api.work()
    api.entry(ann, site, api.day(0), start="09:00", end="12:10")          # 190 -> 195
    api.entry(ann, app, api.day(1), duration=7)                            # 7 -> 15
    api.entry(bob, site, api.day(2), start="13:00", end="14:00")           # 60 -> 60
    api.entry(bob, site, api.day(8), duration=31)                          # next week: 31 -> 45
    for user in (ann, bob):
        api.submitted(user)
    api.ok(api.act(ann, "approve", manager), 200, "approve ann")
    rejected = api.ok(api.act(bob, "reject", manager, reason="Add the client call"), 200, "reject bob")
    assert rejected["reason"] == "Add the client call"
    api.entry(bob, app, api.day(3), duration=45)                           # 45 -> 45
    api.submitted(bob)
    api.ok(api.act(bob, "approve", admin), 200, "an admin approves bob")
    month = api.report(manager, "project", first="2026-03-01", last="2026-03-31", approved="true")
    got = [(g["key"], g["entry_count"], g["minutes"], g["rounded_minutes"]) for g in month["groups"]]
    assert got == [(site.project["id"], 2, 250, 255), (app.project["id"], 2, 52, 60)], f"approved March by project: {got}"
    everything = api.report(manager, "user", first="2026-03-01", last="2026-03-31")
    assert [(g["key"], g["minutes"]) for g in everything["groups"]] == [(ann.id, 197), (bob.id, 136)], f"all March by user: {everything['groups']}"
    listed = {(s["user_id"], s["status"], s["decided_by"]) for s in api.get("/timesheets", by=manager, status="approved")["items"]}
    assert listed == {(ann.id, "approved", manager.id), (bob.id, "approved", admin.id)}, f"approved weeks: {listed}"
    assert api.get(f"/projects/{site.project['id']}")["used_minutes"] == 281


@pytest.mark.requirement("R11", "R24")
@pytest.mark.category("state")
def test_concurrent_overlapping_entries_record_one(api, http, checks, work):
    user = api.staff()
    statuses = checks.concurrently(lambda _: api.post_entry(user, work, start="09:00", end="10:00").status_code, list(range(6)))
    assert sorted(statuses) == [201] + [409] * 5, f"six simultaneous identical entries: {statuses}"
    assert len(api.entries(user)) == 1


@pytest.mark.requirement("R18", "R20", "R24")
@pytest.mark.category("state")
def test_concurrent_submit_and_edit_never_change_a_locked_week(api, http, checks, work):
    user = api.staff()
    e = api.entry(user, work, duration=30)

    def step(i: int) -> int:
        if i == 0:
            return api.act(user, "submit", user).status_code
        return http.patch(f"/entries/{e['id']}", json={"duration_minutes": 30 + i}, headers=user.headers).status_code

    checks.concurrently(step, list(range(5)))
    sheet = api.sheet(user)
    entry = api.get(f"/entries/{e['id']}", by=user)
    assert sheet["status"] == "submitted" and sheet["total_minutes"] == entry["duration_minutes"], f"the week and its entry agree: {sheet}, {entry}"
    api.error(http.patch(f"/entries/{e['id']}", json={"duration_minutes": 99}, headers=user.headers), 409, "locked", "after the submission")


@pytest.mark.requirement("R4", "R19", "R21")
@pytest.mark.category("workflow")
def test_moving_a_user_to_another_team_moves_the_approval(api, http, admin, work):
    old_manager, (member,) = api.team(1)
    new_manager = api.staff("manager")
    api.entry(member, work)
    api.submitted(member)
    api.patch_user(member, manager_id=new_manager.id)
    api.error(api.act(member, "approve", old_manager), 404, "not_found", "the former manager approving")
    assert {s["user_id"] for s in api.get("/timesheets", by=old_manager)["items"]} == set(), "the former manager no longer lists the week"
    assert {s["user_id"] for s in api.get("/timesheets", by=new_manager, status="submitted")["items"]} == {member.id}
    assert api.ok(api.act(member, "approve", new_manager), 200, "the new manager approves")["decided_by"] == new_manager.id
    api.patch_user(member, manager_id=None)
    assert api.patch_user(old_manager, role="employee")["role"] == "employee", "a manager without a team can be demoted"


@pytest.mark.requirement("R22", "R16")
@pytest.mark.category("side_effects")
def test_report_totals_follow_changes_and_deletions(api, http, work):
    user = api.staff()
    a = api.entry(user, work, duration=14)
    b = api.entry(user, work, api.day(1), start="10:00", end="10:31")
    assert (api.report(user, "activity")["total"]["minutes"], api.report(user, "activity")["total"]["rounded_minutes"]) == (45, 60)
    api.ok(http.patch(f"/entries/{a['id']}", json={"duration_minutes": 16}, headers=user.headers), 200, "change a")
    total = api.report(user, "activity")["total"]
    assert (total["minutes"], total["rounded_minutes"]) == (47, 75), f"after a change: {total}"
    api.ok(http.delete(f"/entries/{b['id']}", headers=user.headers), 204, "delete b")
    total = api.report(user, "activity")["total"]
    assert (total["entry_count"], total["minutes"], total["rounded_minutes"]) == (1, 16, 30), f"after a delete: {total}"
