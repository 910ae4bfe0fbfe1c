"""Health, login, users, teams and their lifecycle (spec.md: Running; Users, authentication and roles)."""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http import account_items as kit

pytestmark = [pytest.mark.tier("base")]


test_health_needs_no_authentication = kit.health_item("R1")


test_bootstrap_admin_logs_in = kit.bootstrap_admin_item("R2", user={"active": True, "manager_id": None}, me_with_new_token=True, new_token_differs=True)


test_bad_credentials_get_401 = kit.bad_credentials_item("R2", user="employee")


test_login_with_missing_or_non_string_fields_gets_422 = kit.login_validation_item("R2", name="test_login_with_missing_or_non_string_fields_gets_422", headline="incomplete logins were not rejected", cases=[
    ({"password": "whatever1"}, ["username"], "login without username"),
    ({"username": "x", "password": None}, ["password"], "login with a null password"),
    ({"username": 12, "password": "whatever1"}, ["username"], "login with a numeric username"),
])


def _all_endpoints(values, made):
    employee = values["employee"]
    return (
        ("GET", "/me", None), ("GET", "/users", None), ("GET", "/customers", None), ("POST", "/customers", {"name": "x"}),
        ("GET", "/projects", None), ("GET", "/activities", None), ("GET", "/entries", None), ("POST", "/entries", {}),
        ("GET", f"/timesheets/{employee.id}/2026-W10", None), ("POST", f"/timesheets/{employee.id}/2026-W10/submit", None),
        ("GET", "/timesheets", None), ("GET", "/reports/summary?from=2026-03-02&to=2026-03-08&group_by=user", None),
    )


test_protected_endpoints_need_a_token = kit.token_required_item(
    "R2", name="test_protected_endpoints_need_a_token", fixtures=["api", "http", "headers", "employee"], calls=_all_endpoints,
)


@pytest.mark.requirement("R3")
@pytest.mark.category("api_surface")
def test_admin_creates_users_in_a_team(api, http, admin):
    manager = api.staff("manager")
    username = f"new_{uuid.uuid4().hex[:10]}"
    r = http.post("/users", json={"username": username, "password": "s3cure-pass", "role": "employee", "manager_id": manager.id}, headers=admin.headers)
    assert r.status_code == 201, f"creating an employee: {api.brief(r)}"
    got = {k: r.json().get(k) for k in ("username", "role", "active", "manager_id")}
    assert got == {"username": username, "role": "employee", "active": True, "manager_id": manager.id}, f"the new user: {got}"
    assert api.login(username, "s3cure-pass")["user"]["id"] == r.json()["id"], "the new user can log in"
    plain = api.ok(http.post("/users", json={"username": f"np_{uuid.uuid4().hex[:10]}", "password": "s3cure-pass", "role": "manager"}, headers=admin.headers), 201, "a user without manager_id")
    assert plain.get("manager_id") is None, f"manager_id defaults to null: {plain}"


@pytest.mark.requirement("R3", "R25")
@pytest.mark.category("validation")
@pytest.mark.parametrize(
    "field, values",
    [("username", ["ab", "Has_Upper", "dash-name", "x" * 33, None, 5]), ("password", ["short77", "p" * 129, None, 12345678]),
     ("role", ["owner", "Admin", "teamlead", None, ""]), ("manager_id", ["u_nobody", 7, "employee", "admin"])],
    ids=["username", "password", "role", "manager_id"],
)
def test_create_user_validation(api, http, admin, field, values):
    employee = api.staff("employee")
    problems = []
    for value in values:
        # "employee"/"admin" as manager_id stand for ids of users whose role is not manager
        value = {"employee": employee.id, "admin": admin.id}.get(value, value) if field == "manager_id" else value
        body = {"username": f"ok_{uuid.uuid4().hex[:10]}", "password": "long enough", "role": "employee", field: value}
        problems.append(api.validation_problem(http.post("/users", json=body, headers=admin.headers), [field], f"a user with {field}={value!r}"))
    api.assert_no_problems(problems, f"invalid {field} values were not rejected")


test_taken_username_gets_409 = kit.taken_username_item("R3", caller="employee", extra={"role": "manager"}, by_admin=True)


@pytest.mark.requirement("R3")
@pytest.mark.category("api_surface")
def test_admin_lists_every_user_in_creation_order(api, http, admin):
    first, second = api.staff("manager"), api.staff("employee")
    r = http.get("/users", headers=admin.headers)
    assert r.status_code == 200, f"listing users: {api.brief(r)}"
    ids = [u.get("id") for u in r.json().get("items", [])]
    assert ids and ids[0] == admin.id, f"the bootstrap administrator is listed first: {ids[:3]}"
    assert first.id in ids and second.id in ids and ids.index(first.id) < ids.index(second.id), "users are listed in creation order"


@pytest.mark.requirement("R3", "R15")
@pytest.mark.category("authorization")
def test_a_manager_lists_only_their_team(api, http):
    manager, members = api.team(2)
    _, others = api.team(1)
    r = http.get("/users", headers=manager.headers)
    assert r.status_code == 200, f"a manager lists users: {api.brief(r)}"
    ids = [u.get("id") for u in r.json().get("items", [])]
    assert ids == [m.id for m in members], f"a manager sees exactly their team, in creation order: {ids}"
    api.error(http.get("/users", headers=others[0].headers), 403, "forbidden", "an employee listing users")


@pytest.mark.requirement("R6")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("role", ["manager", "employee"])
def test_only_admins_create_and_change_users(api, http, role):
    caller = api.staff(role)
    victim = api.staff("employee", caller if role == "manager" else None)
    for method, path, body in (("POST", "/users", {"username": "x_" + uuid.uuid4().hex[:8], "password": "abcdefgh1", "role": "admin"}),
                               ("PATCH", f"/users/{victim.id}", {"active": False}), ("PATCH", f"/users/{caller.id}", {"role": "admin"})):
        api.error(http.request(method, path, json=body, headers=caller.headers), 403, "forbidden", f"a {role}: {method} {path}")
    assert http.get("/me", headers=victim.headers).status_code == 200, "the victim was deactivated by a non-admin"
    assert api.get("/me", by=caller)["role"] == role, "a non-admin changed their own role"


@pytest.mark.requirement("R4")
@pytest.mark.category("state")
def test_deactivation_revokes_tokens_and_reactivation_needs_a_new_login(api, http, employee):
    assert api.patch_user(employee, active=False)["active"] is False
    api.error(http.get("/me", headers=employee.headers), 401, "unauthorized", "an inactive user's token")
    api.error(http.post("/auth/token", json={"username": employee.username, "password": employee.password}), 401, "unauthorized", "an inactive user logging in")
    api.patch_user(employee, active=True)
    api.error(http.get("/me", headers=employee.headers), 401, "unauthorized", "an old token after reactivation")
    token = api.login(employee.username, employee.password)["token"]
    assert http.get("/me", headers={"Authorization": f"Bearer {token}"}).status_code == 200, "a new login works after reactivation"


@pytest.mark.requirement("R4")
@pytest.mark.category("state")
@pytest.mark.parametrize("change", [{"role": "manager"}, {"role": "employee"}, {"active": False}], ids=["to-manager", "to-employee", "deactivate"])
def test_an_admin_cannot_demote_or_deactivate_themselves(api, http, change):
    second_admin = api.staff("admin")
    api.error(http.patch(f"/users/{second_admin.id}", json=change, headers=second_admin.headers), 409, "conflict", f"an admin changing themselves: {change}")
    me = api.get("/me", by=second_admin)
    assert (me["role"], me["active"]) == ("admin", True), f"a refused change changed the admin: {me}"


@pytest.mark.requirement("R4")
@pytest.mark.category("state")
def test_a_manager_with_team_members_keeps_the_role(api, http, admin):
    manager, members = api.team(1)
    api.error(http.patch(f"/users/{manager.id}", json={"role": "employee"}, headers=admin.headers), 409, "conflict", "demoting a manager with a team")
    assert api.get("/me", by=manager)["role"] == "manager"
    api.patch_user(members[0], manager_id=None)
    assert api.patch_user(manager, role="employee")["role"] == "employee", "without team members the role can change"


@pytest.mark.requirement("R4")
@pytest.mark.category("validation")
def test_manager_id_must_name_a_manager_other_than_the_user(api, http, admin):
    manager = api.staff("manager")
    employee = api.staff("employee")
    problems = [
        api.validation_problem(http.patch(f"/users/{manager.id}", json={"manager_id": manager.id}, headers=admin.headers), ["manager_id"], "a manager as their own manager"),
        api.validation_problem(http.patch(f"/users/{manager.id}", json={"manager_id": employee.id}, headers=admin.headers), ["manager_id"], "an employee as manager"),
        api.validation_problem(http.patch(f"/users/{employee.id}", json={"manager_id": "nobody"}, headers=admin.headers), ["manager_id"], "an unknown manager"),
        api.validation_problem(http.patch(f"/users/{employee.id}", json={"active": "no"}, headers=admin.headers), ["active"], "a non-boolean active"),
    ]
    api.assert_no_problems(problems, "invalid user changes were not rejected")
    assert api.patch_user(employee, manager_id=manager.id)["manager_id"] == manager.id, "a valid manager_id is set"
