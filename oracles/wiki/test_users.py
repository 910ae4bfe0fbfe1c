"""Health, login, users and roles (spec.md: Running, Users, authentication and roles)."""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http.account_items import bootstrap_admin_item, health_item, login_validation_item, token_required_item

pytestmark = [pytest.mark.tier("base")]


test_health_needs_no_authentication = health_item("R1")


test_bootstrap_admin_logs_in = bootstrap_admin_item("R2", user={}, me_with_new_token=True, token_is_string=True)


@pytest.mark.requirement("R2")
@pytest.mark.category("api_surface")
def test_every_login_issues_a_new_token_and_both_work(api, http, editor):
    first, second = api.login(editor.username, editor.password), api.login(editor.username, editor.password)
    assert first["token"] != second["token"], "every login issues a new token"
    for token in (first["token"], second["token"], editor.token):
        me = http.get("/me", headers={"Authorization": f"Bearer {token}"})
        assert me.status_code == 200 and me.json().get("username") == editor.username, f"each token works: {api.brief(me)}"


@pytest.mark.requirement("R2")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("case", ["wrong-password", "unknown-username", "other-users-password"])
def test_bad_credentials_get_401(api, http, reader, case):
    other = api.user("reader")
    body = {
        "wrong-password": {"username": reader.username, "password": reader.password + "!"},
        "unknown-username": {"username": "nobody_" + uuid.uuid4().hex[:8], "password": reader.password},
        "other-users-password": {"username": reader.username, "password": other.password},
    }[case]
    api.error(http.post("/auth/login", json=body), 401, "unauthorized", f"logging in with a {case.replace('-', ' ')}")


test_login_with_missing_or_non_string_fields_gets_422 = login_validation_item("R2", "R16", name="test_login_with_missing_or_non_string_fields_gets_422", token_path="/auth/login", headline="malformed logins were not rejected with 422", cases=[
    ({"password": "whatever1"}, ["username"], "login without username"),
    ({"username": "someone", "password": None}, ["password"], "login with a null password"),
    ({"username": 5, "password": ["x"]}, ["username", "password"], "login with wrong types"),
    (["username", "password"], None, "login with an array body"),
])


def _all_endpoints(values, page):
    s, slug = page["slug"], values["api"].slug
    return (
        ("GET", "/me", None), ("GET", "/users", None), ("POST", "/users", {"username": "abc_def", "password": "password1", "role": "reader"}),
        ("GET", "/pages", None), ("POST", "/pages", {"slug": slug(), "title": "T", "body": "b"}), ("GET", f"/pages/{s}", None),
        ("PUT", f"/pages/{s}", {"body": "x", "base_revision": 1}), ("DELETE", f"/pages/{s}", None),
        ("GET", f"/pages/{s}/revisions", None), ("GET", f"/pages/{s}/revisions/1", None), ("GET", f"/pages/{s}/diff?from=1&to=1", None),
        ("POST", f"/pages/{s}/revert", {"revision": 1}), ("POST", f"/pages/{s}/move", {"new_slug": slug()}),
        ("PUT", f"/pages/{s}/protection", {"protected": True}),
    )


test_endpoints_need_a_token = token_required_item(
    "R3", name="test_endpoints_need_a_token", setup=lambda values: values["api"].page(), calls=_all_endpoints,
    after=lambda values, page: values["api"].unchanged(page, "requests without a valid token"),
)


@pytest.mark.requirement("R3")
@pytest.mark.category("authorization")
def test_malformed_and_tampered_tokens_get_401(api, http, editor, checks):
    problems = checks.token_problems(http, "GET", "/me", editor.token)
    problems += checks.token_problems(http, "POST", "/pages", editor.token, {"slug": api.slug(), "title": "T", "body": "b"})
    assert not problems, "tampered Authorization headers:\n" + "\n".join(problems)


@pytest.mark.requirement("R4")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("INSERT", table="users")
@pytest.mark.parametrize("role", ["reader", "editor", "admin"])
def test_admin_creates_a_user_of_each_role(api, http, admin, checks, role):
    username = f"new_{uuid.uuid4().hex[:10]}"
    r = http.post("/users", json={"username": username, "password": "s3cure-pass", "role": role}, headers=admin.headers)
    assert r.status_code == 201, f"creating a {role}: {api.brief(r)}"
    body = r.json()
    assert (body.get("username"), body.get("role")) == (username, role) and isinstance(body.get("id"), int), f"the new user: {body}"
    assert api.utc(body.get("created_at")), f"created_at is an ISO 8601 timestamp in UTC: {body.get('created_at')!r}"
    leaks = checks.password_leaks(r.text, "s3cure-pass")
    assert not leaks, f"the answer reveals {leaks}: {r.text[:200]}"
    logged = api.login(username, "s3cure-pass")
    assert logged["user"]["id"] == body["id"] and logged["user"]["role"] == role, f"the new user logs in with its role: {logged['user']}"


@pytest.mark.requirement("R4", "R16")
@pytest.mark.category("validation")
@pytest.mark.parametrize(
    "field, values",
    [("username", ["ab", "Has_Upper", "dash-name", "x" * 33, None, 5, ""]), ("password", ["short12", "p" * 129, None, 12345678]),
     ("role", ["owner", "Admin", "", None, ["admin"]])],
    ids=["username", "password", "role"],
)
def test_create_user_validation(api, http, admin, field, values):
    problems = []
    for value in values:
        body = {"username": f"val_{uuid.uuid4().hex[:10]}", "password": "good-password", "role": "reader", field: value}
        r = http.post("/users", json=body, headers=admin.headers)
        problems.append(api.validation_problem(r, [field], f"{field}={value!r}"))
        if field != "username" and r.status_code == 201:
            problems.append(f"{field}={value!r} created the user {r.text[:120]}")
    api.assert_no_problems(problems, f"invalid {field} values were accepted")


@pytest.mark.requirement("R4")
@pytest.mark.category("validation")
def test_create_user_boundaries_are_accepted(api, http, admin):
    import random

    taken = {u["username"] for u in api.ok(http.get("/users", headers=admin.headers), 200, "list users")["items"]}
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789_"
    short = next(name for name in ("".join(random.choices(alphabet, k=3)) for _ in range(1000)) if name not in taken)
    for username, password in ((short, "p" * 8), ("a" * 20 + uuid.uuid4().hex[:12], "p" * 128), (f"x_{uuid.uuid4().hex[:6]}_9", "p" * 9)):
        r = http.post("/users", json={"username": username, "password": password, "role": "reader"}, headers=admin.headers)
        assert r.status_code == 201, f"username {username!r} ({len(username)} chars) with a {len(password)}-character password is valid: {api.brief(r)}"


@pytest.mark.requirement("R4")
@pytest.mark.category("state")
def test_taken_username_gets_409(api, http, admin, editor):
    r = http.post("/users", json={"username": editor.username, "password": "another-pass", "role": "admin"}, headers=admin.headers)
    api.error(r, 409, "username_taken", "creating a user with a taken username")
    me = api.ok(http.get("/me", headers=editor.headers), 200, "read the editor")
    assert me["role"] == "editor", f"the existing user is unchanged: {me}"
    api.login(editor.username, editor.password)
    api.error(http.post("/auth/login", json={"username": editor.username, "password": "another-pass"}), 401, "unauthorized", "the refused password")


@pytest.mark.requirement("R4")
@pytest.mark.category("state")
def test_user_list_is_in_creation_order_with_the_bootstrap_admin_first(api, http, admin):
    made = [api.user(role) for role in ("reader", "editor", "admin")]
    items = api.ok(http.get("/users", headers=admin.headers), 200, "list users")["items"]
    ids = [u["id"] for u in items]
    assert ids and ids[0] == admin.id, f"the bootstrap administrator comes first: {ids[:3]}"
    mine = [u for u in items if u["id"] in {m.id for m in made}]
    assert [(u["id"], u["username"], u["role"]) for u in mine] == [(m.id, m.username, m.role) for m in made], f"the new users in creation order: {mine}"


@pytest.mark.requirement("R4", "R5")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("role", ["reader", "editor"])
def test_only_admins_manage_users(api, http, role):
    user = api.user(role)
    username = f"sneaky_{uuid.uuid4().hex[:8]}"
    api.error(http.post("/users", json={"username": username, "password": "password1", "role": "admin"}, headers=user.headers), 403, "forbidden", f"a {role} creating an admin")
    api.error(http.get("/users", headers=user.headers), 403, "forbidden", f"a {role} listing users")
    api.error(http.post("/auth/login", json={"username": username, "password": "password1"}), 401, "unauthorized", "the refused user does not exist")


@pytest.mark.requirement("R2")
@pytest.mark.category("api_surface")
@pytest.mark.parametrize("role", ["reader", "editor"])
def test_me_answers_each_role(api, http, role):
    user = api.user(role)
    me = api.ok(http.get("/me", headers=user.headers), 200, "GET /me")
    assert (me.get("id"), me.get("username"), me.get("role")) == (user.id, user.username, role), f"GET /me: {me}"
