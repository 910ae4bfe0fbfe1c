"""Who sees and changes whose time (spec.md: Roles — visible users; Time entries: GET /entries)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R15")
@pytest.mark.category("authorization")
def test_an_employee_cannot_see_another_users_entry(api, http, work):
    owner, other = api.staff(), api.staff()
    e = api.entry(owner, work)
    api.error(http.get(f"/entries/{e['id']}", headers=other.headers), 404, "not_found", "another employee's entry")
    assert api.entries(other) == [], "GET /entries without user_id lists only the caller's entries"


@pytest.mark.requirement("R14", "R15")
@pytest.mark.category("authorization")
def test_user_id_naming_someone_not_visible_gets_403(api, http, work):
    manager, (member,) = api.team(1)
    outsider = api.staff()
    api.entry(outsider, work)
    for caller, target, who in ((member, outsider, "an employee"), (member, manager, "an employee (their manager)"), (manager, outsider, "a manager (outside the team)")):
        api.error(http.get("/entries", params={"user_id": target.id}, headers=caller.headers), 403, "forbidden", f"{who} listing {target.username}'s entries")
    api.error(http.get("/entries", params={"user_id": "u_nobody"}, headers=member.headers), 403, "forbidden", "user_id naming no user")


@pytest.mark.requirement("R15", "R14")
@pytest.mark.category("authorization")
def test_a_manager_and_an_admin_read_the_teams_entries(api, http, admin, work):
    manager, (member,) = api.team(1)
    e = api.entry(member, work, description="team work")
    for reader, who in ((manager, "the manager"), (admin, "an admin")):
        r = http.get(f"/entries/{e['id']}", headers=reader.headers)
        assert r.status_code == 200 and r.json().get("description") == "team work", f"{who} reads a team member's entry: {api.brief(r)}"
        assert [x["id"] for x in api.entries(reader, user_id=member.id)] == [e["id"]], f"{who} lists the member's entries"
    assert api.entries(manager) == [], "without user_id a manager lists their own entries only"


@pytest.mark.requirement("R16")
@pytest.mark.category("authorization")
def test_a_visible_entry_of_someone_else_gets_403_on_change(api, http, admin, work):
    manager, (member,) = api.team(1)
    e = api.entry(member, work, description="original")
    for caller, who in ((manager, "the manager"), (admin, "an admin")):
        api.error(http.patch(f"/entries/{e['id']}", json={"description": "edited"}, headers=caller.headers), 403, "forbidden", f"{who} changing a member's entry")
        api.error(http.delete(f"/entries/{e['id']}", headers=caller.headers), 403, "forbidden", f"{who} deleting a member's entry")
    assert api.get(f"/entries/{e['id']}", by=member)["description"] == "original", "a refused change changed the entry"


@pytest.mark.requirement("R15", "R16")
@pytest.mark.category("authorization")
def test_an_invisible_entry_gets_404_on_change(api, http, work):
    owner, other = api.staff(), api.staff()
    manager = api.staff("manager")
    e = api.entry(owner, work, description="original")
    for caller, who in ((other, "another employee"), (manager, "a manager of another team")):
        api.error(http.patch(f"/entries/{e['id']}", json={"description": "x"}, headers=caller.headers), 404, "not_found", f"{who} changing the entry")
        api.error(http.delete(f"/entries/{e['id']}", headers=caller.headers), 404, "not_found", f"{who} deleting the entry")
    assert api.get(f"/entries/{e['id']}", by=owner)["description"] == "original"


@pytest.mark.requirement("R4", "R15")
@pytest.mark.category("state")
def test_a_team_change_applies_to_the_next_request(api, http, work):
    manager, (member,) = api.team(1)
    e = api.entry(member, work)
    assert http.get(f"/entries/{e['id']}", headers=manager.headers).status_code == 200
    api.patch_user(member, manager_id=None)
    api.error(http.get(f"/entries/{e['id']}", headers=manager.headers), 404, "not_found", "the former manager reading the entry")
    api.patch_user(member, manager_id=manager.id)
    assert http.get(f"/entries/{e['id']}", headers=manager.headers).status_code == 200, "the manager again"


@pytest.mark.requirement("R14")
@pytest.mark.category("api_surface")
def test_entries_are_listed_by_date_then_creation_and_paginated(api, http, employee, work):
    made = [api.entry(employee, work, api.day(d), duration=10 + i) for i, d in enumerate((3, 1, 3, 0, 1))]
    expected = [made[i]["id"] for i in (3, 1, 4, 0, 2)]
    body = api.get("/entries", by=employee)
    assert [x["id"] for x in body["items"]] == expected, "by date, then creation order"
    assert (body["total"], body["limit"], body["offset"]) == (5, 20, 0), f"defaults echoed: {body}"
    page = api.get("/entries", by=employee, limit=2, offset=3)
    assert [x["id"] for x in page["items"]] == expected[3:5] and page["total"] == 5, f"a page: {page}"


@pytest.mark.requirement("R14")
@pytest.mark.category("api_surface")
def test_entry_filters_combine(api, http, employee):
    one, two = api.work(), api.work()
    a = api.entry(employee, one, api.day(0), description="Fix the Login bug")
    b = api.entry(employee, two, api.day(2), description="login page review")
    c = api.entry(employee, one, api.day(4), description="meeting")
    other_activity = api.activity(one.project)
    d = api.entry(employee, one, api.day(5), duration=10, activity_id=other_activity["id"], description="LOGIN again")
    cases = [({"from": api.day(2)}, [b, c, d]), ({"to": api.day(2)}, [a, b]), ({"from": api.day(1), "to": api.day(4)}, [b, c]),
             ({"project_id": one.project["id"]}, [a, c, d]), ({"activity_id": other_activity["id"]}, [d]), ({"q": "login"}, [a, b, d]),
             ({"q": "LOGIN", "project_id": one.project["id"], "to": api.day(4)}, [a])]
    for params, want in cases:
        got = [x["id"] for x in api.entries(employee, **params)]
        assert got == [x["id"] for x in want], f"GET /entries with {params}: got {got}"


@pytest.mark.requirement("R14")
@pytest.mark.category("validation")
@pytest.mark.parametrize("params, fields", [({"from": "2026-02-30"}, ["from"]), ({"to": "soon"}, ["to"]), ({"q": "x" * 101}, ["q"]), ({"limit": "0"}, ["limit"]),
                                            ({"limit": "101"}, ["limit"]), ({"offset": "-1"}, ["offset"]), ({"limit": ""}, ["limit"]), ({"limit": "ten", "from": "x"}, ["limit", "from"])],
                         ids=["from", "to", "q-too-long", "limit-0", "limit-101", "offset-negative", "limit-empty", "two"])
def test_invalid_entry_list_parameters_get_422(api, http, employee, params, fields):
    problem = api.validation_problem(http.get("/entries", params=params, headers=employee.headers), fields, f"GET /entries with {params}")
    assert problem is None, problem
