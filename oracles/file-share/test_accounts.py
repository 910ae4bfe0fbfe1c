"""Health, login, users with quotas (spec.md: Running, Users and authentication)."""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http.account_items import bad_credentials_item, health_item, login_validation_item, token_required_item

pytestmark = [pytest.mark.tier("base")]

DEFAULT_QUOTA = 10_485_760
"""spec.md: the quota of the bootstrap administrator and of a user created without quota_bytes."""


test_health_needs_no_authentication = health_item("R1")


@pytest.mark.requirement("R2")
@pytest.mark.category("api_surface")
def test_bootstrap_admin_logs_in_with_the_default_quota(api, http, admin):
    body = api.login(admin.username, admin.password)
    assert body.get("token_type") == "bearer" and body.get("token"), f"a bearer token: {body}"
    user = body.get("user", {})
    assert (user.get("username"), user.get("role"), user.get("quota_bytes")) == (admin.username, "admin", DEFAULT_QUOTA), f"the bootstrap administrator: {user}"
    me = api.me(admin)
    assert me.get("id") == user.get("id") and isinstance(me.get("used_bytes"), int), f"GET /me: {me}"


test_bad_credentials_get_401 = bad_credentials_item("R2", user="alice")


test_login_with_missing_or_non_string_fields_gets_422 = login_validation_item("R2", name="test_login_with_missing_or_non_string_fields_gets_422", headline="incomplete logins were not rejected", cases=[
    ({"password": "whatever1"}, ["username"], "login without username"),
    ({"username": "x", "password": None}, ["password"], "login with a null password"),
    ({"username": 5, "password": ["x"]}, ["username", "password"], "login with non-string fields"),
])


def _file_and_share(values):
    file = values["api"].put_file(values["alice"])
    return file, values["api"].share(values["alice"], file)


def _all_endpoints(values, made):
    (file, share), alice = made, values["alice"]
    return (
        ("GET", "/me", None), ("GET", "/users", None), ("POST", "/users", {"username": "zzz_x", "password": "password1"}),
        ("PATCH", f"/users/{alice.id}", {"quota_bytes": 1}), ("GET", "/files", None), ("GET", f"/files/{file['id']}", None),
        ("GET", f"/files/{file['id']}/content", None), ("DELETE", f"/files/{file['id']}", None),
        ("GET", f"/files/{file['id']}/shares", None), ("POST", f"/files/{file['id']}/shares", {}), ("DELETE", f"/shares/{share['id']}", None),
    )


def _no_upload_and_nothing_changed(values, made):
    (file, share), api, headers = made, values["api"], values["headers"]
    api.error(values["http"].post("/files", params={"name": "x.txt"}, data=b"abc", headers=headers), 401, "unauthorized",
              f"an upload with {headers or 'no header'}")
    assert api.names(values["alice"]) == [file["name"]], "refused requests change nothing"
    assert api.public(share["token"]).status_code == 200, "the share still works"


test_protected_endpoints_need_a_token = token_required_item(
    "R2", name="test_protected_endpoints_need_a_token", fixtures=["api", "http", "alice", "headers"],
    setup=_file_and_share, calls=_all_endpoints, after=_no_upload_and_nothing_changed,
)


@pytest.mark.requirement("R3")
@pytest.mark.category("api_surface")
def test_a_new_user_gets_the_defaults_and_no_password(api, http, admin):
    username, password = "u_" + uuid.uuid4().hex[:10], "pw-" + uuid.uuid4().hex
    r = http.post("/users", json={"username": username, "password": password}, headers=admin.headers)
    assert r.status_code == 201, f"POST /users: {api.brief(r)}"
    user = r.json()
    got = (user.get("username"), user.get("role"), user.get("quota_bytes"), user.get("used_bytes"))
    assert got == (username, "user", DEFAULT_QUOTA, 0), f"role user, quota 10,485,760 and usage 0 by default: {user}"
    assert user.get("id") and user.get("created_at"), f"an id and created_at: {user}"
    assert password not in r.text, "the answer contains the password"
    logged = api.login(username, password)["user"]
    assert logged.get("id") == user["id"], f"the new user logs in: {logged}"


@pytest.mark.requirement("R3")
@pytest.mark.category("api_surface")
def test_role_and_quota_are_taken_as_sent(api, http, admin):
    r = http.post("/users", json={"username": "a_" + uuid.uuid4().hex[:10], "password": "password123", "role": "admin", "quota_bytes": 0}, headers=admin.headers)
    assert r.status_code == 201 and (r.json().get("role"), r.json().get("quota_bytes")) == ("admin", 0), f"role admin, quota 0: {api.brief(r)}"
    big = http.post("/users", json={"username": "b_" + uuid.uuid4().hex[:10], "password": "password123", "quota_bytes": 1_099_511_627_776}, headers=admin.headers)
    assert big.status_code == 201 and big.json().get("quota_bytes") == 1_099_511_627_776, f"the largest quota: {api.brief(big)}"


@pytest.mark.requirement("R3")
@pytest.mark.category("state")
def test_a_taken_username_gets_409(api, http, admin, alice):
    api.error(http.post("/users", json={"username": alice.username, "password": "another-pass"}, headers=admin.headers), 409, "conflict", "a taken username")
    assert api.login(alice.username, alice.password)["user"]["id"] == alice.id, "the existing user keeps their password"


INVALID_USER_FIELDS = {
    "username-uppercase": ("username", "Alice_X"),
    "username-too-short": ("username", "ab"),
    "username-not-a-string": ("username", 12345),
    "password-too-short": ("password", "seven77"),
    "password-too-long": ("password", "p" * 129),
    "role-unknown": ("role", "owner"),
    "quota-negative": ("quota_bytes", -1),
    "quota-too-large": ("quota_bytes", 1_099_511_627_777),
    "quota-fractional": ("quota_bytes", 10.5),
    "quota-boolean": ("quota_bytes", True),
    "quota-string": ("quota_bytes", "1000"),
}


@pytest.mark.requirement("R3", "R21")
@pytest.mark.category("validation")
@pytest.mark.parametrize("case", sorted(INVALID_USER_FIELDS))
def test_an_invalid_user_field_gets_422_naming_it(api, http, admin, case):
    field, value = INVALID_USER_FIELDS[case]
    body = {"username": "v_" + uuid.uuid4().hex[:10], "password": "password123", field: value}
    problem = api.validation_problem(http.post("/users", json=body, headers=admin.headers), [field], f"POST /users with {field}={value!r}")
    api.assert_no_problems([problem], "an invalid user field")
    if field != "username":
        api.error(http.post("/auth/token", json={"username": body["username"], "password": "password123"}), 401, "unauthorized", "the refused user does not exist")


@pytest.mark.requirement("R3", "R21")
@pytest.mark.category("validation")
def test_every_invalid_user_field_is_named(api, http, admin):
    body = {"username": "NO", "password": "short", "role": "root", "quota_bytes": -5}
    problem = api.validation_problem(http.post("/users", json=body, headers=admin.headers), ["username", "password", "role", "quota_bytes"], "four invalid fields")
    missing = api.validation_problem(http.post("/users", json={}, headers=admin.headers), ["username", "password"], "no fields")
    api.assert_no_problems([problem, missing], "invalid users")


@pytest.mark.requirement("R3")
@pytest.mark.category("api_surface")
def test_users_are_listed_in_creation_order_with_the_admin_first(api, http, admin):
    first, second = api.user(), api.user(quota=5)
    items = api.ok(http.get("/users", headers=admin.headers), 200, "GET /users")["items"]
    ids = [u.get("id") for u in items]
    assert ids and ids[0] == admin.id, f"the bootstrap administrator comes first: {ids[:3]}"
    assert first.id in ids and second.id in ids and ids.index(first.id) < ids.index(second.id), "users in creation order"
    listed = next(u for u in items if u["id"] == second.id)
    assert (listed.get("username"), listed.get("quota_bytes"), listed.get("used_bytes")) == (second.username, 5, 0), f"the listed user: {listed}"


@pytest.mark.requirement("R3", "R4")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("action", ["list", "create", "change-quota"])
def test_a_non_admin_cannot_manage_users(api, http, alice, bob, action):
    method, path, body = {"list": ("GET", "/users", None), "create": ("POST", "/users", {"username": "m_" + uuid.uuid4().hex[:8], "password": "password123"}),
                          "change-quota": ("PATCH", f"/users/{alice.id}", {"quota_bytes": 1_099_511_627_776})}[action]
    api.error(http.request(method, path, json=body, headers=alice.headers), 403, "forbidden", f"a user: {method} {path}")
    assert api.me(alice)["quota_bytes"] == DEFAULT_QUOTA, "the quota is unchanged"
    if action == "create":
        api.error(http.post("/auth/token", json=body), 401, "unauthorized", "the refused user does not exist")


@pytest.mark.requirement("R3")
@pytest.mark.category("authorization")
def test_an_admin_created_by_the_admin_manages_users(api, http):
    second_admin = api.user(role="admin")
    r = http.post("/users", json={"username": "n_" + uuid.uuid4().hex[:10], "password": "password123", "quota_bytes": 7}, headers=second_admin.headers)
    assert r.status_code == 201, f"another admin creates a user: {api.brief(r)}"
    assert http.get("/users", headers=second_admin.headers).status_code == 200, "another admin lists users"


@pytest.mark.requirement("R4")
@pytest.mark.category("state")
def test_patch_changes_the_quota(api, http, admin, alice):
    r = http.patch(f"/users/{alice.id}", json={"quota_bytes": 1234}, headers=admin.headers)
    assert r.status_code == 200 and r.json().get("quota_bytes") == 1234, f"PATCH quota: {api.brief(r)}"
    assert api.me(alice)["quota_bytes"] == 1234 and api.files(alice)["quota_bytes"] == 1234, "the new quota is seen by the user"
    r = http.patch(f"/users/{alice.id}", json={}, headers=admin.headers)
    assert r.status_code == 200 and r.json().get("quota_bytes") == 1234, f"an empty PATCH changes nothing: {api.brief(r)}"


@pytest.mark.requirement("R4")
@pytest.mark.category("api_surface")
def test_patch_of_an_unknown_user_gets_404(api, http, admin):
    api.error(http.patch("/users/no-such-user", json={"quota_bytes": 5}, headers=admin.headers), 404, "not_found", "PATCH an unknown user")


@pytest.mark.requirement("R4", "R21")
@pytest.mark.category("validation")
@pytest.mark.parametrize("value", [-1, 1.5, "5", None, True, 1_099_511_627_777], ids=["negative", "fraction", "string", "null", "boolean", "too-large"])
def test_patch_with_an_invalid_quota_gets_422(api, http, admin, alice, value):
    problem = api.validation_problem(http.patch(f"/users/{alice.id}", json={"quota_bytes": value}, headers=admin.headers), ["quota_bytes"], f"quota_bytes={value!r}")
    api.assert_no_problems([problem], "an invalid quota")
    assert api.me(alice)["quota_bytes"] == DEFAULT_QUOTA, "a refused PATCH changes nothing"


@pytest.mark.requirement("R2", "R9")
@pytest.mark.category("side_effects")
def test_me_and_the_user_list_show_the_usage(api, http, admin, alice):
    api.put_file(alice, data=api.blob(300))
    api.put_file(alice, data=api.blob(45))
    assert api.me(alice)["used_bytes"] == 345, "GET /me counts the caller's file sizes"
    listed = next(u for u in api.ok(http.get("/users", headers=admin.headers), 200, "GET /users")["items"] if u["id"] == alice.id)
    assert listed.get("used_bytes") == 345, f"GET /users shows the usage: {listed}"


@pytest.mark.requirement("R21", "R3", "R4")
@pytest.mark.category("authorization")
@pytest.mark.tier("r1")
def test_the_role_is_decided_before_the_path_and_the_path_before_the_body(api, http, admin, alice):
    api.error(http.patch("/users/no-such-user", json={"quota_bytes": -1}, headers=alice.headers), 403, "forbidden", "a user patching an unknown user with a bad body (403 first)")
    api.error(http.post("/users", json={"username": "X"}, headers=alice.headers), 403, "forbidden", "a user creating an invalid user (403 before 422)")
    api.error(http.patch("/users/no-such-user", json={"quota_bytes": -1}, headers=admin.headers), 404, "not_found", "the admin patching an unknown user with a bad body (404 before 422)")
    api.error(http.post("/users", json={"username": alice.username, "password": "short"}, headers=admin.headers), 422, "validation_error", "a taken username with a bad password (422 before 409)")
