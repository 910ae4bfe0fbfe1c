"""Accounts (spec.md: Running, Accounts): health, login, the administrator creating users, /me."""

from __future__ import annotations

import pytest

from pytest_backendbench.http.account_items import health_item

pytestmark = [pytest.mark.tier("base")]


test_health_needs_no_token = health_item("R1", name="test_health_needs_no_token", fixtures=["http"], exact=True)


@pytest.mark.requirement("R2")
@pytest.mark.category("api_surface")
def test_the_administrator_logs_in_with_the_task_credentials(api, http, task_env):
    r = http.post("/auth/token", json={"username": task_env["ISSUES_ADMIN_USERNAME"], "password": task_env["ISSUES_ADMIN_PASSWORD"]})
    body = api.ok(r, 200, "administrator login")
    assert body.get("token_type") == "bearer" and isinstance(body.get("token"), str) and body["token"], f"a bearer token: {body}"
    assert body["user"]["username"] == task_env["ISSUES_ADMIN_USERNAME"] and body["user"]["is_admin"] is True, f"the administrator's user: {body['user']}"
    me = api.ok(http.get("/me", headers={"Authorization": f"Bearer {body['token']}"}), 200, "GET /me")
    assert me["is_admin"] is True and me["id"] == body["user"]["id"], f"/me answers the administrator: {me}"


@pytest.mark.requirement("R3")
@pytest.mark.category("api_surface")
def test_the_administrator_creates_a_user_who_can_log_in(api, http):
    username = api.unique("ann")
    created = api.ok(http.post("/users", json={"username": username, "password": "correct horse"}, headers=api.admin.headers), 201, "create a user")
    assert created["username"] == username and created["is_admin"] is False and created["id"] and created["created_at"], f"the new user: {created}"
    ann = api.login(username, "correct horse")
    me = api.ok(http.get("/me", headers=ann.headers), 200, "GET /me")
    assert (me["id"], me["username"], me["is_admin"]) == (created["id"], username, False), f"/me answers the caller: {me}"


@pytest.mark.requirement("R2")
@pytest.mark.category("authorization")
def test_wrong_credentials_get_401(api, http):
    user = api.user()
    api.error(http.post("/auth/token", json={"username": user.username, "password": user.password + "x"}), 401, "unauthorized", "wrong password")
    api.error(http.post("/auth/token", json={"username": api.unique("nobody"), "password": user.password}), 401, "unauthorized", "unknown username")
    problems = [api.validation_problem(http.post("/auth/token", json={"username": user.username}), ["password"], "login without a password"),
                api.validation_problem(http.post("/auth/token", json={"username": 5, "password": user.password}), ["username"], "a numeric username")]
    api.assert_no_problems(problems, "login validation")


@pytest.mark.requirement("R2")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("method, path", [("GET", "/me"), ("GET", "/projects"), ("POST", "/projects"), ("POST", "/users"), ("GET", "/projects/x/issues")])
def test_every_endpoint_but_health_and_login_needs_a_token(http, method, path):
    r = http.request(method, path, json={"name": "x"} if method == "POST" else None)
    assert r.status_code == 401 and r.json().get("error") == "unauthorized", f"{method} {path} without a token: {r.status_code} {r.text[:200]}"


@pytest.mark.requirement("R3")
@pytest.mark.category("authorization")
def test_only_the_administrator_creates_users(api, http):
    user = api.user()
    username = api.unique("sneaky")
    api.error(http.post("/users", json={"username": username, "password": "long enough"}, headers=user.headers), 403, "forbidden", "a user creating a user")
    api.error(http.post("/auth/token", json={"username": username, "password": "long enough"}), 401, "unauthorized", "the refused user must not exist")


@pytest.mark.requirement("R3")
@pytest.mark.category("validation")
@pytest.mark.parametrize("body, fields", [
    ({"username": "ab", "password": "long enough"}, ["username"]),
    ({"username": "Upper_Case", "password": "long enough"}, ["username"]),
    ({"username": "a" * 33, "password": "long enough"}, ["username"]),
    ({"username": "fine_name", "password": "short"}, ["password"]),
    ({"username": "fine_name", "password": "p" * 129}, ["password"]),
    ({"password": 12345678}, ["username", "password"]),
], ids=["too-short", "upper-case", "too-long", "short-password", "long-password", "missing-and-wrong-type"])
def test_user_fields_are_validated(api, http, body, fields):
    if "username" in body and body["username"] == "fine_name":
        body = {**body, "username": api.unique("fine")}
    problem = api.validation_problem(http.post("/users", json=body, headers=api.admin.headers), fields, f"POST /users {body}")
    api.assert_no_problems([problem], "user validation")


@pytest.mark.requirement("R3")
@pytest.mark.category("state")
def test_a_taken_username_gets_409(api, http):
    user = api.user()
    api.error(http.post("/users", json={"username": user.username, "password": "another password"}, headers=api.admin.headers), 409, "conflict", "a taken username")
    assert api.login(user.username, user.password).id == user.id, "the first user's password still works"


@pytest.mark.requirement("R3")
@pytest.mark.category("validation")
def test_password_lengths_at_their_edges_are_accepted(api, http):
    for password in ("p" * 8, "p" * 128):
        username = api.unique("edge")
        api.ok(http.post("/users", json={"username": username, "password": password}, headers=api.admin.headers), 201, f"a password of {len(password)} characters")
        api.login(username, password)
