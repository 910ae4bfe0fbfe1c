"""Weekly timesheets: reading, submitting, withdrawing, approving, rejecting (spec.md: Timesheets)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R17")
@pytest.mark.category("api_surface")
def test_an_untouched_week_is_open(api, http, employee):
    sheet = api.sheet(employee)
    got = {k: sheet.get(k) for k in ("user_id", "week", "status", "first_date", "last_date", "total_minutes", "entry_count", "submitted_at", "decided_at", "decided_by", "reason")}
    assert got == {"user_id": employee.id, "week": "2026-W10", "status": "open", "first_date": "2026-03-02", "last_date": "2026-03-08", "total_minutes": 0,
                   "entry_count": 0, "submitted_at": None, "decided_at": None, "decided_by": None, "reason": None}, f"an untouched week: {got}"


@pytest.mark.requirement("R17")
@pytest.mark.category("api_surface")
def test_iso_weeks_cross_year_boundaries(api, http, employee, work):
    for when in ("2026-12-28", "2027-01-01", "2027-01-03", "2027-01-04", "2025-12-29"):
        api.entry(employee, work, when, duration=15)
    w53 = api.sheet(employee, "2026-W53")
    assert (w53["first_date"], w53["last_date"], w53["entry_count"], w53["total_minutes"]) == ("2026-12-28", "2027-01-03", 3, 45), f"2026-W53: {w53}"
    w1 = api.sheet(employee, "2027-W01")
    assert (w1["first_date"], w1["entry_count"]) == ("2027-01-04", 1), f"2027-W01: {w1}"
    w1_2026 = api.sheet(employee, "2026-W01")
    assert (w1_2026["first_date"], w1_2026["entry_count"]) == ("2025-12-29", 1), f"2026-W01 starts in 2025: {w1_2026}"


@pytest.mark.requirement("R17", "R26")
@pytest.mark.category("validation")
@pytest.mark.parametrize("week", ["2026-W54", "2025-W53", "2026-W00", "2026-5", "2026W05", "2026-W5", "week"])
def test_an_invalid_week_names_nothing(api, http, employee, week):
    api.error(http.get(f"/timesheets/{employee.id}/{week}", headers=employee.headers), 404, "not_found", f"week {week!r}")


@pytest.mark.requirement("R18")
@pytest.mark.category("workflow")
def test_submit_and_withdraw_a_week(api, http, employee, work):
    api.entry(employee, work, api.day(1), duration=90)
    r = api.act(employee, "submit", employee)
    assert r.status_code == 200, f"submitting: {api.brief(r)}"
    body = r.json()
    assert (body["status"], body["entry_count"], body["total_minutes"]) == ("submitted", 1, 90) and body["submitted_at"], f"a submitted week: {body}"
    api.error(api.act(employee, "submit", employee), 409, "invalid_state", "submitting twice")
    r = api.act(employee, "withdraw", employee)
    assert r.status_code == 200 and r.json()["status"] == "open", f"withdrawing: {api.brief(r)}"
    api.error(api.act(employee, "withdraw", employee), 409, "invalid_state", "withdrawing an open week")
    assert api.submitted(employee)["status"] == "submitted", "an open week can be submitted again"


@pytest.mark.requirement("R18")
@pytest.mark.category("state")
def test_a_week_without_entries_cannot_be_submitted(api, http, employee, work):
    api.entry(employee, work, api.day(7))  # next week
    api.error(api.act(employee, "submit", employee), 409, "empty_week", "submitting an empty week")
    assert api.sheet(employee)["status"] == "open"


@pytest.mark.requirement("R19")
@pytest.mark.category("workflow")
def test_the_manager_approves_a_team_members_week(api, http, work):
    manager, (member,) = api.team(1)
    api.entry(member, work)
    api.submitted(member)
    r = api.act(member, "approve", manager)
    assert r.status_code == 200, f"approving: {api.brief(r)}"
    body = r.json()
    assert (body["status"], body["decided_by"], body["reason"]) == ("approved", manager.id, None) and body["decided_at"], f"an approved week: {body}"
    assert api.sheet(member)["status"] == "approved"
    api.error(api.act(member, "approve", manager), 409, "invalid_state", "approving twice")
    api.error(api.act(member, "reject", manager, reason="late"), 409, "invalid_state", "rejecting an approved week")
    api.error(api.act(member, "submit", member), 409, "invalid_state", "submitting an approved week")
    api.error(api.act(member, "withdraw", member), 409, "invalid_state", "withdrawing an approved week")


@pytest.mark.requirement("R19", "R18")
@pytest.mark.category("workflow")
def test_reject_then_fix_and_resubmit(api, http, admin, work):
    member = api.staff()
    e = api.entry(member, work, duration=60)
    api.submitted(member)
    r = api.act(member, "reject", admin, reason="Split the meeting time")
    assert r.status_code == 200, f"rejecting: {api.brief(r)}"
    assert (r.json()["status"], r.json()["reason"], r.json()["decided_by"]) == ("rejected", "Split the meeting time", admin.id), f"a rejected week: {r.json()}"
    api.ok(http.patch(f"/entries/{e['id']}", json={"duration_minutes": 30}, headers=member.headers), 200, "a rejected week is editable")
    again = api.submitted(member)
    assert (again["status"], again["decided_at"], again["decided_by"], again["reason"], again["total_minutes"]) == ("submitted", None, None, None, 30), f"resubmitted: {again}"
    assert api.ok(api.act(member, "approve", admin), 200, "approve")["status"] == "approved"


@pytest.mark.requirement("R19")
@pytest.mark.category("validation")
@pytest.mark.parametrize("body", [{}, {"reason": ""}, {"reason": "   "}, {"reason": "r" * 501}, {"reason": None}, {"reason": 5}], ids=["missing", "empty", "blank", "long", "null", "number"])
def test_a_rejection_needs_a_reason(api, http, work, body):
    manager, (member,) = api.team(1)
    api.entry(member, work)
    api.submitted(member)
    r = http.post(api.sheet_path(member, action="reject"), json=body, headers=manager.headers)
    problem = api.validation_problem(r, ["reason"], f"rejecting with {body}")
    assert problem is None, problem
    assert api.sheet(member)["status"] == "submitted", "a refused rejection changes nothing"


@pytest.mark.requirement("R19")
@pytest.mark.category("state")
@pytest.mark.parametrize("status", ["open", "rejected"])
def test_only_submitted_weeks_are_decided(api, http, admin, work, status):
    member = api.staff()
    api.entry(member, work)
    if status == "rejected":
        api.submitted(member)
        api.ok(api.act(member, "reject", admin, reason="no"), 200, "reject")
    api.error(api.act(member, "approve", admin), 409, "invalid_state", f"approving a {status} week")
    api.error(api.act(member, "reject", admin, reason="again"), 409, "invalid_state", f"rejecting a {status} week")


@pytest.mark.requirement("R19")
@pytest.mark.category("authorization")
def test_nobody_decides_their_own_week(api, http, work):
    boss = api.staff("manager")
    manager = api.staff("manager", boss)
    second_admin = api.staff("admin")
    for user in (manager, second_admin):
        api.entry(user, work)
        api.submitted(user)
        api.error(api.act(user, "approve", user), 403, "forbidden", f"a {user.role} approving their own week")
        api.error(api.act(user, "reject", user, reason="self"), 403, "forbidden", f"a {user.role} rejecting their own week")
        assert api.sheet(user)["status"] == "submitted"
    assert api.ok(api.act(manager, "approve", boss), 200, "the manager's own manager approves")["status"] == "approved"


@pytest.mark.requirement("R19", "R15")
@pytest.mark.category("authorization")
def test_deciders_are_the_users_manager_or_an_admin(api, http, work):
    manager, (member,) = api.team(1)
    other_manager = api.staff("manager")
    colleague = api.staff("employee", manager)
    api.entry(member, work)
    api.submitted(member)
    api.error(api.act(member, "approve", other_manager), 404, "not_found", "a manager of another team approving")
    api.error(api.act(member, "approve", colleague), 403, "forbidden", "an employee of the same team approving")
    api.error(api.act(member, "reject", colleague, reason="x"), 403, "forbidden", "an employee rejecting")
    assert api.sheet(member)["status"] == "submitted"


@pytest.mark.requirement("R18")
@pytest.mark.category("authorization")
def test_only_the_user_submits_or_withdraws_their_week(api, http, admin, work):
    manager, (member,) = api.team(1)
    outsider = api.staff()
    api.entry(member, work)
    for caller, status, code, who in ((manager, 403, "forbidden", "their manager"), (admin, 403, "forbidden", "an admin"), (outsider, 404, "not_found", "another employee")):
        api.error(api.act(member, "submit", caller), status, code, f"{who} submitting the week")
    api.submitted(member)
    for caller, status, code, who in ((manager, 403, "forbidden", "their manager"), (admin, 403, "forbidden", "an admin"), (outsider, 404, "not_found", "another employee")):
        api.error(api.act(member, "withdraw", caller), status, code, f"{who} withdrawing the week")
    assert api.sheet(member)["status"] == "submitted"


@pytest.mark.requirement("R21")
@pytest.mark.category("api_surface")
def test_the_timesheet_list_shows_non_open_weeks_of_visible_users(api, http, work):
    manager, (a, b) = api.team(2)
    outsider = api.staff()
    for user in (a, b, outsider):
        api.entry(user, work)
        api.submitted(user)
    api.entry(a, work, api.day(7))
    api.submitted(a, "2026-W11")
    api.ok(api.act(a, "approve", manager), 200, "approve a's W10")
    api.entry(b, work, api.day(14))  # open week: not listed
    listed = {(s["user_id"], s["week"], s["status"]) for s in api.get("/timesheets", by=manager)["items"]}
    assert listed == {(a.id, "2026-W10", "approved"), (a.id, "2026-W11", "submitted"), (b.id, "2026-W10", "submitted")}, f"the manager's list: {listed}"
    pending = {(s["user_id"], s["week"]) for s in api.get("/timesheets", by=manager, status="submitted")["items"]}
    assert pending == {(a.id, "2026-W11"), (b.id, "2026-W10")}, f"status=submitted: {pending}"
    only_b = {(s["user_id"], s["week"]) for s in api.get("/timesheets", by=manager, user_id=b.id)["items"]}
    assert only_b == {(b.id, "2026-W10")}, f"user_id=b: {only_b}"
    own = {(s["user_id"], s["week"]) for s in api.get("/timesheets", by=outsider)["items"]}
    assert own == {(outsider.id, "2026-W10")}, f"an employee lists only their own weeks: {own}"
    api.error(http.get("/timesheets", params={"status": "open"}, headers=manager.headers), 422, "validation_error", "status=open")
    api.error(http.get("/timesheets", params={"user_id": outsider.id}, headers=manager.headers), 403, "forbidden", "user_id outside the team")
