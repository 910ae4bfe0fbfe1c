"""Health, login, staff users and their lifecycle (spec.md: Running, Users, authentication and roles)."""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http import account_items as kit

pytestmark = [pytest.mark.tier("base")]


test_health_needs_no_authentication = kit.health_item("R1")


test_bootstrap_admin_logs_in = kit.bootstrap_admin_item("R2", user={"active": True})


test_bad_credentials_get_401 = kit.bad_credentials_item("R2", user="clerk")


test_login_with_missing_fields_gets_422 = kit.login_validation_item("R2", headline="incomplete logins were not rejected", cases=[
    ({"password": "whatever1"}, ["username"], "login without username"),
    ({"username": "x", "password": None}, ["password"], "login with a null password"),
])


def _all_endpoints(values, made):
    return (
        ("GET", "/me", None), ("GET", "/users", None), ("GET", "/products", None), ("POST", "/products", {"sku": "ABC-1", "name": "x"}),
        ("GET", f"/products/{values['setup']['bolt']['id']}/stock", None), ("GET", "/suppliers", None), ("GET", "/warehouses", None),
        ("GET", "/purchase-orders", None), ("POST", "/adjustments", {}), ("GET", "/movements", None),
    )


test_protected_endpoints_need_a_token = kit.token_required_item(
    "R2", name="test_protected_endpoints_need_a_token", fixtures=["api", "http", "headers", "setup"], calls=_all_endpoints,
)


@pytest.mark.requirement("R3")
@pytest.mark.category("api_surface")
def test_admin_creates_a_user(api, http, admin, checks):
    username = f"new_{uuid.uuid4().hex[:10]}"
    r = http.post("/users", json={"username": username, "password": "s3cure-pass", "role": "clerk"}, headers=admin.headers)
    assert r.status_code == 201, f"creating a clerk: {api.brief(r)}"
    got = {k: r.json().get(k) for k in ("username", "role", "active")}
    assert got == {"username": username, "role": "clerk", "active": True}, f"the new user: {got}"
    leaks = checks.password_leaks(r.text, "s3cure-pass")
    assert not leaks, f"the answer reveals {leaks}: {r.text[:200]}"
    assert api.login(username, "s3cure-pass")["user"]["id"] == r.json()["id"], "the new user can log in"


@pytest.mark.requirement("R3", "R26")
@pytest.mark.category("validation")
@pytest.mark.parametrize(
    "field, values",
    [("username", ["ab", "Has_Upper", "dash-name", None, 5]), ("password", ["short", "p" * 129, None]), ("role", ["owner", "Admin", None, ""])],
    ids=["username", "password", "role"],
)
def test_create_user_validation(api, http, admin, field, values):
    problems = []
    for value in values:
        body = {"username": f"ok_{uuid.uuid4().hex[:10]}", "password": "long enough", "role": "buyer", field: value}
        problems.append(api.validation_problem(http.post("/users", json=body, headers=admin.headers), [field], f"a user with {field}={value!r}"))
    api.assert_no_problems(problems, f"invalid {field} values were not rejected")


test_taken_username_gets_409 = kit.taken_username_item("R3", caller="buyer", extra={"role": "clerk"}, by_admin=True)


@pytest.mark.requirement("R3")
@pytest.mark.category("api_surface")
def test_list_users_in_creation_order(api, http, admin, checks):
    first = api.staff("manager")
    second = api.staff("clerk")
    r = http.get("/users", headers=admin.headers)
    assert r.status_code == 200, f"listing users: {api.brief(r)}"
    ids = [u.get("id") for u in r.json().get("items", [])]
    assert ids and ids[0] == admin.id, f"the bootstrap administrator is listed first: {ids[:3]}"
    assert first.id in ids and second.id in ids and ids.index(first.id) < ids.index(second.id), "users are listed in creation order"
    assert not checks.password_leaks(r.text, first.password) and not checks.password_leaks(r.text, second.password), "the user list must not contain passwords or their hashes"


@pytest.mark.requirement("R5")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("role", ["manager", "buyer", "clerk"])
def test_only_admins_manage_users(api, http, role):
    caller = api.staff(role)
    victim = api.staff("clerk")
    for method, path, body in (("GET", "/users", None), ("POST", "/users", {"username": "x_" + uuid.uuid4().hex[:8], "password": "abcdefgh1", "role": "admin"}),
                               ("PATCH", f"/users/{victim.id}", {"active": False})):
        api.error(http.request(method, path, json=body, headers=caller.headers), 403, "forbidden", f"a {role}: {method} {path}")
    assert http.get("/me", headers=victim.headers).status_code == 200, "the victim was deactivated by a non-admin"


@pytest.mark.requirement("R4")
@pytest.mark.category("state")
def test_deactivated_user_is_locked_out(api, http, admin, clerk):
    r = http.patch(f"/users/{clerk.id}", json={"active": False}, headers=admin.headers)
    assert r.status_code == 200 and r.json().get("active") is False, f"deactivating a clerk: {api.brief(r)}"
    api.error(http.get("/me", headers=clerk.headers), 401, "unauthorized", "a token of an inactive user")
    api.error(http.post("/auth/token", json={"username": clerk.username, "password": clerk.password}), 401, "unauthorized", "an inactive user logging in")


@pytest.mark.requirement("R4")
@pytest.mark.category("state")
def test_reactivated_user_must_log_in_again(api, http, admin, clerk):
    api.ok(http.patch(f"/users/{clerk.id}", json={"active": False}, headers=admin.headers), 200, "deactivate")
    api.ok(http.patch(f"/users/{clerk.id}", json={"active": True}, headers=admin.headers), 200, "reactivate")
    api.error(http.get("/me", headers=clerk.headers), 401, "unauthorized", "a token issued before the deactivation")
    fresh = api.login(clerk.username, clerk.password)["token"]
    assert http.get("/me", headers={"Authorization": f"Bearer {fresh}"}).status_code == 200, "a new login works after reactivation"


@pytest.mark.requirement("R4", "R5")
@pytest.mark.category("authorization")
def test_role_change_applies_to_the_next_request(api, http, admin, setup):
    user = api.staff("manager")
    api.ok(http.patch(f"/products/{setup['bolt']['id']}", json={"name": "Bolt M6"}, headers=user.headers), 200, "a manager renames a product")
    api.ok(http.patch(f"/users/{user.id}", json={"role": "buyer"}, headers=admin.headers), 200, "demote the manager to buyer")
    api.error(http.patch(f"/products/{setup['bolt']['id']}", json={"name": "Bolt M8"}, headers=user.headers), 403, "forbidden", "the same token after the demotion")
    assert api.get(f"/products/{setup['bolt']['id']}")["name"] == "Bolt M6", "the refused rename changed the product"


@pytest.mark.requirement("R4")
@pytest.mark.category("state")
def test_admins_cannot_demote_or_deactivate_themselves(api, http):
    boss = api.staff("admin")
    for body in ({"role": "manager"}, {"active": False}, {"role": "clerk", "active": True}):
        api.error(http.patch(f"/users/{boss.id}", json=body, headers=boss.headers), 409, "conflict", f"an admin sending {body} about themselves")
    me = http.get("/me", headers=boss.headers).json()
    assert (me.get("role"), me.get("active")) == ("admin", True), f"the refused changes applied: {me}"
    r = http.patch(f"/users/{boss.id}", json={"role": "admin", "active": True}, headers=boss.headers)
    assert r.status_code == 200, f"keeping one's own admin role is fine: {api.brief(r)}"


test_body_must_be_a_json_object = kit.json_object_body_item("R26", caller="admin", paths=("/products", "/suppliers", "/purchase-orders", "/adjustments"),
                                                        raws={"malformed": "{nope", "array": "[1]", "null": "null"})


@pytest.mark.requirement("R4", "R26")
@pytest.mark.category("validation")
def test_user_updates_are_validated_and_change_nothing_when_refused(api, http, admin):
    user = api.staff("clerk")
    problems = [
        api.validation_problem(http.patch(f"/users/{user.id}", json={"role": "owner"}, headers=admin.headers), ["role"], "an unknown role"),
        api.validation_problem(http.patch(f"/users/{user.id}", json={"active": "yes"}, headers=admin.headers), ["active"], "active as a string"),
        api.validation_problem(http.patch(f"/users/{user.id}", json={"role": "manager", "active": None}, headers=admin.headers), ["active"],
                               "a valid role sent with an invalid active"),
    ]
    api.assert_no_problems(problems, "invalid user updates were not rejected")
    got = next(u for u in api.get("/users")["items"] if u["id"] == user.id)
    assert (got["role"], got["active"]) == ("clerk", True), f"refused updates must change nothing, not even the valid role sent with them: {got}"
    api.error(http.patch("/users/no-such-user", json={"role": "clerk"}, headers=admin.headers), 404, "not_found", "updating an unknown user")

