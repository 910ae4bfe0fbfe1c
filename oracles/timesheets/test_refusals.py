"""Refusals that change nothing, one field at a time, and a guard isolated through the API (issue 35).

spec.md, Errors: "A request that fails changes nothing." Each body with several fields is sent
with one field bad at a time (each position, the others valid), then read back from outside.
Users: "changing the role of a manager who still has team members" gets 409 -- and only while
they have: once the team has moved to another manager, the change is accepted.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_backendbench.http.refusals import one_invalid_field, unchanged

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("validation")]

NEW_USER = {"username": "", "password": "long enough secret", "role": "employee", "manager_id": ""}
USER_CASES = one_invalid_field(NEW_USER, {"username": ["ab", "Upper", 5], "password": ["short", "p" * 129, None], "role": ["boss", None],
                                          "manager_id": ["employee", "nobody", 7]})
USER_CHANGE = {"role": "manager", "active": True, "manager_id": ""}
CHANGE_CASES = one_invalid_field(USER_CHANGE, {"role": ["boss", None], "active": ["yes", None], "manager_id": ["employee", "self", "nobody"]})
ENTRY = {"project_id": "", "activity_id": "", "date": "2026-03-03", "start": "09:00", "end": "10:30", "description": "work"}
ENTRY_BAD = {"project_id": ["nobody", 5], "activity_id": ["other-project", "nobody"], "date": ["2026-02-30", "2100-01-01", "03/03/2026"],
             "start": ["9:00", "24:00"], "end": ["25:00", "08:00"], "description": ["d" * 1001, None]}
ENTRY_CASES = one_invalid_field(ENTRY, ENTRY_BAD)
ALSO = {"project_id": ("activity_id",)}
"""An activity cannot be of a project that names nothing: it may be named beside the project."""


def user_row(api: Any, user_id: str) -> Any:
    """The user as the administrator's list shows it (None when absent)."""
    return next((u for u in api.get("/users")["items"] if u.get("id") == user_id), None)


def resolved(body: dict[str, Any], valid: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """``body`` made real: a field left ``""`` takes its ``valid`` value, a symbolic id ("employee", "self", ...) in an ``*_id``
    field its ``names`` value."""
    return {k: valid[k] if v == "" else names.get(v, v) if isinstance(v, str) and k.endswith("_id") else v for k, v in body.items()}


@pytest.mark.requirement("R3", "R24")
@pytest.mark.parametrize("field,body", USER_CASES)
def test_a_refused_user_is_not_created(api, http, admin, field, body):
    manager, employee = api.staff("manager"), api.staff()
    body = resolved(body, {"username": api.staff_username("employee"), "manager_id": manager.id}, {"employee": employee.id})
    with unchanged(lambda: api.get("/users")["items"], f"POST /users with only {field} invalid"):
        problem = api.validation_problem(http.post("/users", json=body, headers=admin.headers), [field], f"a user with only {field} invalid")
    assert problem is None, problem
    if field != "username":
        api.ok(http.post("/users", json={**body, field: manager.id if field == "manager_id" else NEW_USER[field]}, headers=admin.headers), 201,
               "the username of the refused user is still free")


@pytest.mark.requirement("R4", "R24")
@pytest.mark.parametrize("field,body", CHANGE_CASES)
def test_a_refused_user_change_changes_nothing(api, http, admin, field, body):
    manager, employee, target = api.staff("manager"), api.staff(), api.staff()
    body = resolved(body, {"manager_id": manager.id}, {"employee": employee.id, "self": target.id})
    with unchanged(lambda: (user_row(api, target.id), api.get("/me", by=target)), f"PATCH /users/{{id}} with only {field} invalid"):
        problem = api.validation_problem(http.patch(f"/users/{target.id}", json=body, headers=admin.headers), [field], f"a user change with only {field} invalid")
    assert problem is None, problem


@pytest.mark.requirement("R10", "R24")
@pytest.mark.parametrize("field,body", ENTRY_CASES)
def test_a_refused_entry_is_not_recorded(api, http, employee, work, field, body):
    other = api.work()
    body = resolved(body, {"project_id": work.project["id"], "activity_id": work.activity["id"]}, {"other-project": other.activity["id"]})
    state = lambda: (api.entries(employee, **{"from": "2026-01-01", "to": "2026-12-31"}), api.get(f"/projects/{work.project['id']}")["used_minutes"])
    with unchanged(state, f"POST /entries with only {field} invalid"):
        problem = api.validation_problem(http.post("/entries", json=body, headers=employee.headers), [field], f"an entry with only {field} invalid", also=ALSO.get(field, ()))
    assert problem is None, problem


@pytest.mark.requirement("R16", "R24")
@pytest.mark.parametrize("field,body", ENTRY_CASES)
def test_a_refused_entry_change_changes_nothing(api, http, employee, work, field, body):
    recorded = api.entry(employee, work, api.day(0), start="13:00", end="14:00")
    other = api.work()
    body = resolved({**body, "date": body["date"] if field == "date" else "2026-03-04"},
                    {"project_id": other.project["id"], "activity_id": other.activity["id"]}, {"other-project": work.activity["id"]})
    state = lambda: (api.get(f"/entries/{recorded['id']}", by=employee), api.get(f"/projects/{work.project['id']}")["used_minutes"],
                     api.get(f"/projects/{other.project['id']}")["used_minutes"])
    with unchanged(state, f"PATCH /entries/{{id}} with only {field} invalid"):
        problem = api.validation_problem(http.patch(f"/entries/{recorded['id']}", json=body, headers=employee.headers), [field],
                                         f"an entry change with only {field} invalid", also=ALSO.get(field, ()))
    assert problem is None, problem


@pytest.mark.requirement("R4")
@pytest.mark.category("state")
def test_a_manager_keeps_the_role_only_while_the_team_has_members(api, http, admin):
    manager, team = api.team(1)
    successor = api.staff("manager")
    with unchanged(lambda: user_row(api, manager.id), "a role change of a manager with a team member"):
        api.error(http.patch(f"/users/{manager.id}", json={"role": "employee"}, headers=admin.headers), 409, "conflict", "the role of a manager who has a team member")
    api.patch_user(team[0], manager_id=successor.id)
    changed = api.patch_user(manager, role="employee")
    assert changed.get("role") == "employee", f"once the team moved to another manager the role changes: {changed}"
