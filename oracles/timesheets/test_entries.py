"""Time entries: recording, time rules, usable projects, overlap, daily limit, budget (spec.md: Time entries)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R10")
@pytest.mark.category("api_surface")
def test_an_entry_with_start_and_end(api, http, employee, work):
    r = api.post_entry(employee, work, api.day(1), start="08:15", end="10:05", description="Standup and planning")
    assert r.status_code == 201, f"recording an entry: {api.brief(r)}"
    e = r.json()
    got = {k: e.get(k) for k in ("user_id", "project_id", "activity_id", "date", "start", "end", "duration_minutes", "description")}
    assert got == {"user_id": employee.id, "project_id": work.project["id"], "activity_id": work.activity["id"], "date": api.day(1),
                   "start": "08:15", "end": "10:05", "duration_minutes": 110, "description": "Standup and planning"}, f"the entry: {got}"
    assert api.get(f"/entries/{e['id']}", by=employee)["duration_minutes"] == 110


@pytest.mark.requirement("R10")
@pytest.mark.category("api_surface")
def test_an_entry_with_a_duration_only(api, http, employee, work):
    e = api.entry(employee, work, api.day(2), duration=1440)
    got = {k: e.get(k) for k in ("start", "end", "duration_minutes", "description")}
    assert got == {"start": None, "end": None, "duration_minutes": 1440, "description": ""}, f"a duration-only entry: {got}"


TIME_CASES = {
    # id: (time fields, fields the 422 names, fields it may name too: a second rule about a field whose partner is invalid)
    "start-only": ({"start": "09:00"}, ["end"], ()),
    "end-only": ({"end": "17:00"}, ["start"], ()),
    "end-equals-start": ({"start": "10:00", "end": "10:00"}, ["end"], ()),
    "end-before-start": ({"start": "12:00", "end": "11:59"}, ["end"], ()),
    "times-and-duration": ({"start": "09:00", "end": "10:00", "duration_minutes": 60}, ["duration_minutes"], ()),
    "start-and-duration": ({"start": "09:00", "duration_minutes": 60}, ["duration_minutes"], ("end",)),
    "nothing": ({}, ["duration_minutes"], ()),
    "all-null": ({"start": None, "end": None, "duration_minutes": None}, ["duration_minutes"], ()),
    "zero": ({"duration_minutes": 0}, ["duration_minutes"], ()),
    "over-a-day": ({"duration_minutes": 1441}, ["duration_minutes"], ()),
    "fraction": ({"duration_minutes": 30.5}, ["duration_minutes"], ()),
    "boolean": ({"duration_minutes": True}, ["duration_minutes"], ()),
    "hour-24": ({"start": "24:00", "end": "23:00"}, ["start"], ("end",)),
    "one-digit-hour": ({"start": "9:00", "end": "10:00"}, ["start"], ("end",)),
    "minute-60": ({"start": "09:00", "end": "10:60"}, ["end"], ()),
}


@pytest.mark.requirement("R10", "R25")
@pytest.mark.category("validation")
@pytest.mark.parametrize("case", list(TIME_CASES))
def test_time_must_be_start_and_end_or_a_duration(api, http, employee, work, case):
    times, fields, also = TIME_CASES[case]
    body = {"project_id": work.project["id"], "activity_id": work.activity["id"], "date": api.day(), **times}
    problem = api.validation_problem(http.post("/entries", json=body, headers=employee.headers), fields, f"an entry with {times}", also=also)
    assert problem is None, problem
    assert api.entries(employee) == [], "a refused entry must not be recorded"


@pytest.mark.requirement("R10")
@pytest.mark.category("validation")
@pytest.mark.parametrize("value", ["2026-02-30", "2026-13-01", "1999-12-31", "2100-01-01", "2026-3-5", "05.03.2026", 20260305, None],
                         ids=["feb-30", "month-13", "before-2000", "after-2099", "short", "dotted", "number", "null"])
def test_date_must_be_a_real_day_in_range(api, http, employee, work, value):
    body = {"project_id": work.project["id"], "activity_id": work.activity["id"], "date": value, "duration_minutes": 30}
    problem = api.validation_problem(http.post("/entries", json=body, headers=employee.headers), ["date"], f"an entry dated {value!r}")
    assert problem is None, problem


@pytest.mark.requirement("R10")
@pytest.mark.category("validation")
def test_edge_dates_and_description_length(api, http, employee, work):
    for when in ("2000-01-01", "2099-12-31", "2028-02-29"):
        api.entry(employee, work, when, duration=5)
    api.entry(employee, work, duration=5, description="d" * 1000)
    problem = api.validation_problem(api.post_entry(employee, work, duration=5, description="d" * 1001), ["description"], "a description of 1001 characters")
    assert problem is None, problem
    problem = api.validation_problem(api.post_entry(employee, work, duration=5, description=None), ["description"], "a null description")
    assert problem is None, problem


@pytest.mark.requirement("R10")
@pytest.mark.category("validation")
@pytest.mark.parametrize("case", ["inactive-project", "inactive-customer", "unknown-project"])
def test_the_project_must_be_usable(api, http, employee, case):
    work = api.work()
    if case == "inactive-project":
        api.set_active("projects", work.project, False)
    elif case == "inactive-customer":
        api.set_active("customers", work.customer, False)
    body = {"project_id": work.project["id"] if case != "unknown-project" else "p_nobody", "activity_id": work.activity["id"], "date": api.day(), "duration_minutes": 30}
    # with an unknown project the activity does not belong to it either: listing activity_id too is allowed
    problem = api.validation_problem(http.post("/entries", json=body, headers=employee.headers), ["project_id"], f"an entry on a {case}",
                                     also=("activity_id",) if case == "unknown-project" else ())
    assert problem is None, problem


@pytest.mark.requirement("R10")
@pytest.mark.category("validation")
@pytest.mark.parametrize("case", ["inactive-activity", "other-projects-activity", "unknown-activity"])
def test_the_activity_must_be_an_active_activity_of_the_project(api, http, employee, case):
    work = api.work()
    activity = work.activity
    if case == "inactive-activity":
        api.set_active("activities", activity, False)
    elif case == "other-projects-activity":
        activity = api.activity(api.project(work.customer))
    body = {"project_id": work.project["id"], "activity_id": activity["id"] if case != "unknown-activity" else "a_nobody", "date": api.day(), "duration_minutes": 30}
    problem = api.validation_problem(http.post("/entries", json=body, headers=employee.headers), ["activity_id"], f"an entry with an {case}")
    assert problem is None, problem
    assert api.get(f"/projects/{work.project['id']}")["used_minutes"] == 0


@pytest.mark.requirement("R11")
@pytest.mark.category("state")
@pytest.mark.parametrize("times", [("09:30", "10:30"), ("08:00", "09:01"), ("09:59", "12:00"), ("08:00", "12:00"), ("09:15", "09:45"), ("09:00", "10:00")],
                         ids=["inside-end", "over-start", "over-end", "around", "within", "same"])
def test_overlapping_times_get_409(api, http, employee, work, times):
    api.entry(employee, work, start="09:00", end="10:00")
    api.error(api.post_entry(employee, work, start=times[0], end=times[1]), 409, "overlap", f"{times[0]}-{times[1]} against 09:00-10:00")
    assert len(api.entries(employee)) == 1, "a refused entry must not be recorded"


@pytest.mark.requirement("R11")
@pytest.mark.category("state")
def test_touching_other_days_other_users_and_durations_never_overlap(api, http, employee, work):
    api.entry(employee, work, start="09:00", end="10:00")
    api.entry(employee, work, start="10:00", end="11:00")
    api.entry(employee, work, start="08:00", end="09:00")
    api.entry(employee, work, api.day(1), start="09:00", end="10:00")
    api.entry(employee, work, duration=60)
    api.entry(api.staff(), work, start="09:00", end="10:00")
    assert len(api.entries(employee)) == 5


@pytest.mark.requirement("R12")
@pytest.mark.category("state")
def test_a_day_holds_at_most_1440_minutes(api, http, employee, work):
    api.entry(employee, work, duration=1000)
    api.entry(employee, work, start="00:00", end="07:20")   # 440: exactly 1,440
    api.error(api.post_entry(employee, work, duration=1), 409, "daily_limit", "one more minute on a full day")
    api.entry(employee, work, api.day(1), duration=1)
    assert api.sheet(employee)["total_minutes"] == 1441


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_a_budget_may_be_reached_but_not_exceeded(api, http, work):
    work = api.work(budget_minutes=120)
    one, two = api.staff(), api.staff()
    api.entry(one, work, duration=60)
    api.error(api.post_entry(two, work, duration=61), 409, "over_budget", "61 minutes on a project with 60 left")
    api.entry(two, work, duration=60)
    assert api.get(f"/projects/{work.project['id']}")["used_minutes"] == 120, "reaching the budget exactly is allowed"


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_a_lowered_budget_only_blocks_growth(api, http, admin):
    work = api.work(budget_minutes=300)
    user = api.staff()
    e = api.entry(user, work, duration=200)
    api.ok(http.patch(f"/projects/{work.project['id']}", json={"budget_minutes": 100}, headers=admin.headers), 200, "lower the budget below used_minutes")
    api.ok(http.patch(f"/entries/{e['id']}", json={"duration_minutes": 150}, headers=user.headers), 200, "shrinking is allowed over budget")
    api.ok(http.patch(f"/entries/{e['id']}", json={"description": "same minutes"}, headers=user.headers), 200, "a change that adds no minutes")
    api.error(http.patch(f"/entries/{e['id']}", json={"duration_minutes": 151}, headers=user.headers), 409, "over_budget", "growing over budget")
    api.error(api.post_entry(user, work, api.day(1), duration=1), 409, "over_budget", "a new entry over budget")
    api.ok(http.patch(f"/projects/{work.project['id']}", json={"budget_minutes": None}, headers=admin.headers), 200, "remove the budget")
    api.entry(user, work, api.day(1), duration=500)


@pytest.mark.requirement("R16")
@pytest.mark.category("state")
def test_patch_replaces_the_time_as_a_whole(api, http, employee, work):
    e = api.entry(employee, work, start="09:00", end="10:00")
    r = http.patch(f"/entries/{e['id']}", json={"duration_minutes": 45}, headers=employee.headers)
    assert r.status_code == 200, f"switching to a duration: {api.brief(r)}"
    assert (r.json()["start"], r.json()["end"], r.json()["duration_minutes"]) == (None, None, 45), f"the times are gone: {r.json()}"
    r = http.patch(f"/entries/{e['id']}", json={"start": "13:00", "end": "13:20", "duration_minutes": None}, headers=employee.headers)
    assert r.status_code == 200 and (r.json()["start"], r.json()["end"], r.json()["duration_minutes"]) == ("13:00", "13:20", 20), f"back to times: {api.brief(r)}"
    r = http.patch(f"/entries/{e['id']}", json={"description": "kept times"}, headers=employee.headers)
    assert r.status_code == 200 and (r.json()["start"], r.json()["end"], r.json()["description"]) == ("13:00", "13:20", "kept times"), f"no time field keeps the time: {api.brief(r)}"
    problem = api.validation_problem(http.patch(f"/entries/{e['id']}", json={"end": "14:00"}, headers=employee.headers), ["start"], "an end alone replaces the time")
    assert problem is None, problem
    assert api.get(f"/entries/{e['id']}", by=employee)["start"] == "13:00", "a refused PATCH changes nothing"


@pytest.mark.requirement("R16", "R11")
@pytest.mark.category("state")
def test_patch_checks_the_result_against_the_other_entries(api, http, employee, work):
    first = api.entry(employee, work, start="09:00", end="10:00")
    second = api.entry(employee, work, start="11:00", end="12:00")
    api.ok(http.patch(f"/entries/{first['id']}", json={"start": "09:30", "end": "11:00"}, headers=employee.headers), 200, "moving an entry over its own old time")
    api.error(http.patch(f"/entries/{second['id']}", json={"start": "10:59", "end": "12:00"}, headers=employee.headers), 409, "overlap", "moving onto another entry")
    assert api.get(f"/entries/{second['id']}", by=employee)["start"] == "11:00"


@pytest.mark.requirement("R16", "R10")
@pytest.mark.category("validation")
def test_patch_validates_the_resulting_project_and_activity(api, http, employee, work):
    e = api.entry(employee, work)
    other = api.work()
    problem = api.validation_problem(http.patch(f"/entries/{e['id']}", json={"project_id": other.project["id"]}, headers=employee.headers), ["activity_id"],
                                     "a new project without its activity")
    assert problem is None, problem
    r = http.patch(f"/entries/{e['id']}", json={"project_id": other.project["id"], "activity_id": other.activity["id"]}, headers=employee.headers)
    assert r.status_code == 200 and r.json()["project_id"] == other.project["id"], f"moving to another project with its activity: {api.brief(r)}"
    api.set_active("projects", work.project, False)
    problem = api.validation_problem(http.patch(f"/entries/{e['id']}", json={"project_id": work.project["id"], "activity_id": work.activity["id"]}, headers=employee.headers),
                                     ["project_id"], "moving onto an inactive project")
    assert problem is None, problem


@pytest.mark.requirement("R16")
@pytest.mark.category("api_surface")
def test_the_owner_deletes_an_entry(api, http, employee, work):
    e = api.entry(employee, work)
    api.ok(http.delete(f"/entries/{e['id']}", headers=employee.headers), 204, "delete an entry")
    api.error(http.get(f"/entries/{e['id']}", headers=employee.headers), 404, "not_found", "a deleted entry")
    api.error(http.delete(f"/entries/{e['id']}", headers=employee.headers), 404, "not_found", "deleting twice")
