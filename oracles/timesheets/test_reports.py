"""Reports: grouping, per-entry rounding to 15 minutes, filters, visibility (spec.md: Reports)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


def only(report, keys):
    """The report's groups whose key is one of ``keys`` (the admin's report spans every user)."""
    return [g for g in report["groups"] if g["key"] in keys]


@pytest.mark.requirement("R22")
@pytest.mark.category("api_surface")
def test_each_entry_is_rounded_up_to_15_minutes(api, http, work):
    user = api.staff()
    for minutes in (1, 15, 16, 44, 60):
        api.entry(user, work, duration=minutes)
    report = api.report(user, "user")
    assert report["groups"] == [{**report["groups"][0], "key": user.id, "name": user.username, "entry_count": 5, "minutes": 136, "rounded_minutes": 165}], \
        f"1+15+16+44+60 = 136 raw, 15+15+30+45+60 = 165 rounded: {report['groups']}"
    assert {k: report["total"].get(k) for k in ("entry_count", "minutes", "rounded_minutes")} == {"entry_count": 5, "minutes": 136, "rounded_minutes": 165}, f"total: {report['total']}"
    assert (report["from"], report["to"], report["group_by"]) == (api.day(0), api.day(6), "user"), f"the echo: {report}"


@pytest.mark.requirement("R22")
@pytest.mark.category("api_surface")
def test_rounding_is_per_entry_not_of_the_sum(api, http, work):
    user = api.staff()
    for _ in range(4):
        api.entry(user, work, duration=5)
    group = api.report(user, "project")["groups"][0]
    assert (group["minutes"], group["rounded_minutes"]) == (20, 60), f"four 5-minute entries: 20 raw, 60 rounded: {group}"


@pytest.mark.requirement("R22")
@pytest.mark.category("api_surface")
@pytest.mark.parametrize("group_by", ["project", "activity", "user"])
def test_groups_are_ordered_by_minutes_then_key(api, http, group_by):
    manager, (a, b) = api.team(2)
    one, two = api.work(), api.work()
    extra = api.activity(one.project)
    api.entry(a, one, duration=100)
    api.entry(b, two, duration=30)
    api.entry(b, one, api.day(1), duration=20, activity_id=extra["id"])
    api.entry(a, two, api.day(1), duration=70)
    report = api.report(manager, group_by)
    expected = {
        "project": [(one.project["id"], one.project["name"], 2, 120, 135), (two.project["id"], two.project["name"], 2, 100, 105)],
        "activity": [(two.activity["id"], two.activity["name"], 2, 100, 105), (one.activity["id"], one.activity["name"], 1, 100, 105), (extra["id"], extra["name"], 1, 20, 30)],
        "user": [(a.id, a.username, 2, 170, 180), (b.id, b.username, 2, 50, 60)],
    }[group_by]
    if group_by == "activity":  # two activities tie at 100 minutes: ordered by key
        expected[:2] = sorted(expected[:2], key=lambda g: g[0])
    got = [(g["key"], g["name"], g["entry_count"], g["minutes"], g["rounded_minutes"]) for g in report["groups"]]
    assert got == expected, f"groups by {group_by}: {got}"
    assert (report["total"]["entry_count"], report["total"]["minutes"], report["total"]["rounded_minutes"]) == (4, 220, sum(g[4] for g in expected))


@pytest.mark.requirement("R22", "R15")
@pytest.mark.category("authorization")
def test_a_report_covers_only_visible_users(api, http, admin, work):
    manager, (member,) = api.team(1)
    outsider = api.staff()
    api.entry(member, work, duration=30)
    api.entry(manager, work, duration=45)
    api.entry(outsider, work, duration=60)
    users = {g["key"]: g["minutes"] for g in api.report(manager, "user")["groups"]}
    assert users == {member.id: 30, manager.id: 45}, f"a manager's report: themself and the team: {users}"
    assert {g["key"] for g in api.report(outsider, "user")["groups"]} == {outsider.id}, "an employee's report: themself"
    everyone = {g["key"]: g["minutes"] for g in only(api.report(admin, "user", project_id=work.project["id"]), {member.id, manager.id, outsider.id})}
    assert everyone == {member.id: 30, manager.id: 45, outsider.id: 60}, f"an admin's report: everyone: {everyone}"
    for caller, target in ((outsider, member), (manager, outsider), (member, manager)):
        api.error(http.get("/reports/summary", params={"from": api.day(0), "to": api.day(6), "group_by": "user", "user_id": target.id}, headers=caller.headers),
                  403, "forbidden", f"{caller.username} reporting on {target.username}")


@pytest.mark.requirement("R22")
@pytest.mark.category("api_surface")
def test_report_filters(api, http, admin, work):
    manager, (a, b) = api.team(2)
    other = api.work()
    api.entry(a, work, api.day(0), duration=10)
    api.entry(a, other, api.day(1), duration=20)
    api.entry(b, work, api.day(2), duration=40)
    api.entry(a, work, api.day(7), duration=80)
    api.entry(a, work, api.day(-1), duration=160)
    api.submitted(a)
    api.ok(api.act(a, "approve", manager), 200, "approve a's week")
    minutes = lambda **params: api.report(manager, "user", **params)["total"]["minutes"]
    assert minutes() == 70, "the range keeps W10 only"
    assert minutes(user_id=a.id) == 30
    assert minutes(project_id=work.project["id"]) == 50
    assert minutes(approved="true") == 30, "approved=true: entries of approved weeks"
    assert minutes(approved="false") == 40
    assert api.report(manager, "user", first=api.day(-1), last=api.day(7))["total"]["minutes"] == 310, "from and to are inclusive"


@pytest.mark.requirement("R23")
@pytest.mark.category("validation")
@pytest.mark.parametrize(
    "params, fields",
    [({"to": "2026-03-08", "group_by": "user"}, ["from"]), ({"from": "2026-03-02", "group_by": "user"}, ["to"]), ({"from": "2026-03-02", "to": "2026-03-08"}, ["group_by"]),
     ({"from": "2026-03-09", "to": "2026-03-08", "group_by": "user"}, ["to"]), ({"from": "2026-01-01", "to": "2027-01-02", "group_by": "user"}, ["to"]),
     ({"from": "2026-02-30", "to": "2026-03-08", "group_by": "user"}, ["from"]), ({"from": "2026-03-02", "to": "2026-03-08", "group_by": "customer"}, ["group_by"]),
     ({"from": "2026-03-02", "to": "2026-03-08", "group_by": "user", "approved": "yes"}, ["approved"])],
    ids=["no-from", "no-to", "no-group_by", "from-after-to", "367-days", "bad-from", "bad-group_by", "bad-approved"],
)
def test_invalid_report_parameters_get_422(api, http, employee, params, fields):
    problem = api.validation_problem(http.get("/reports/summary", params=params, headers=employee.headers), fields, f"a report with {params}")
    assert problem is None, problem


@pytest.mark.requirement("R23")
@pytest.mark.category("validation")
def test_a_report_may_span_366_days(api, http, employee, work):
    api.entry(employee, work, "2028-12-31", duration=7)
    api.entry(employee, work, "2028-01-01", duration=8)
    report = api.report(employee, "project", first="2028-01-01", last="2028-12-31")
    assert report["total"]["minutes"] == 15, f"2028 has 366 days: {report['total']}"
    same = api.report(employee, "project", first="2028-01-01", last="2028-01-01")
    assert same["total"]["minutes"] == 8 and same["total"]["rounded_minutes"] == 15, f"a one-day report: {same['total']}"
    empty = api.report(employee, "activity", first="2027-01-01", last="2027-01-31")
    assert empty["groups"] == [] and empty["total"]["minutes"] == 0, f"groups without entries are left out: {empty}"
