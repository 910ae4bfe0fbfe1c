"""Users, login, tokens and the health probe (spec.md: Running, Users and authentication)."""

from __future__ import annotations

import random
import uuid

import pytest

from pytest_backendbench.http.account_items import health_item

pytestmark = [pytest.mark.tier("base")]


test_health_answers_ok_without_auth = health_item("R1", name="test_health_answers_ok_without_auth", fixtures=["http"])


@pytest.mark.requirement("R2")
@pytest.mark.category("api_surface")
def test_register_returns_the_new_user(http):
    username = f"alice_{uuid.uuid4().hex[:10]}"
    r = http.post("/users", json={"username": username, "password": "correct horse", "display_name": "Alice A."})
    assert r.status_code == 201, f"registering a valid user: {r.status_code} {r.text[:300]}"
    user = r.json()
    assert user.get("username") == username, f"username not echoed: {user}"
    assert user.get("display_name") == "Alice A.", f"display_name not stored: {user}"
    assert isinstance(user.get("id"), str) and user["id"], f"no string id: {user}"
    assert isinstance(user.get("created_at"), str), f"no created_at: {user}"


@pytest.mark.requirement("R2")
@pytest.mark.category("api_surface")
def test_display_name_defaults_to_username(http):
    username = f"bob_{uuid.uuid4().hex[:10]}"
    r = http.post("/users", json={"username": username, "password": "long enough"})
    assert r.status_code == 201, f"registering without display_name: {r.status_code} {r.text[:300]}"
    assert r.json().get("display_name") == username, f"display_name should default to the username: {r.json()}"


@pytest.mark.requirement("R2", "R5")
@pytest.mark.category("api_surface")
def test_no_response_reveals_the_password(api, http, checks):
    password = "secret-" + uuid.uuid4().hex
    username = f"carol_{uuid.uuid4().hex[:10]}"
    responses = [http.post("/users", json={"username": username, "password": password})]
    responses.append(http.post("/auth/token", json={"username": username, "password": password}))
    assert responses[-1].status_code == 200, f"login after registering: {responses[-1].status_code} {responses[-1].text[:300]}"
    token = responses[-1].json()["token"]
    responses.append(http.get("/me", headers={"Authorization": f"Bearer {token}"}))
    for r in responses:
        where = f"{r.request.method} {r.request.path_url}"
        leaks = checks.password_leaks(r.text, password)
        assert not leaks, f"{where} reveals {leaks}: {r.text[:300]}"


@pytest.mark.requirement("R3", "R28")
@pytest.mark.category("validation")
def test_register_rejects_invalid_usernames(api, http):
    cases = {"too short": "ab", "upper case": "Alice_upper", "space": "has space", "too long": "x" * 33, "dash": "dash-name", "empty": ""}
    problems = [
        api.validation_problem(http.post("/users", json={"username": name, "password": "long enough pw"}), ["username"], f"username {label} ({name[:40]!r})")
        for label, name in cases.items()
    ]
    problems = [p for p in problems if p]
    assert not problems, "invalid usernames were not rejected as the spec says: " + "\n".join(problems)


@pytest.mark.requirement("R3", "R28")
@pytest.mark.category("validation")
def test_register_rejects_invalid_passwords(api, http):
    problems = []
    for password in ("short12", "x" * 129):
        r = http.post("/users", json={"username": f"dave_{uuid.uuid4().hex[:10]}", "password": password})
        problems.append(api.validation_problem(r, ["password"], f"a {len(password)}-character password"))
    problems = [p for p in problems if p]
    assert not problems, "invalid passwords were not rejected as the spec says: " + "\n".join(problems)


@pytest.mark.requirement("R3")
@pytest.mark.category("validation")
def test_register_accepts_boundary_lengths(http):
    username = ("e" + uuid.uuid4().hex)[:32]
    r = http.post("/users", json={"username": username, "password": "x" * 8, "display_name": "d" * 64})
    assert r.status_code == 201, f"32-char username, 8-char password, 64-char display_name are valid: {r.status_code} {r.text[:300]}"
    short = "".join(random.choice("abcdefghijklmnopqrstuvwxyz0123456789_") for _ in range(3))
    r = http.post("/users", json={"username": short, "password": "y" * 128})
    assert r.status_code in (201, 409), f"a 3-char username and 128-char password are valid: {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R3", "R28")
@pytest.mark.category("validation")
def test_register_lists_every_missing_field(api, http):
    r = http.post("/users", json={})
    body = api.error(r, 422, "validation_error", "registering with an empty object")
    assert sorted(body.get("fields", [])) == ["password", "username"], f"both required fields should be listed: {body}"


@pytest.mark.requirement("R3", "R29")
@pytest.mark.category("validation")
def test_register_rejects_wrong_types(api, http):
    r = http.post("/users", json={"username": 12345, "password": True})
    body = api.error(r, 422, "validation_error", "registering with a number username and boolean password")
    assert sorted(body.get("fields", [])) == ["password", "username"], f"both mistyped fields should be listed: {body}"


@pytest.mark.requirement("R3")
@pytest.mark.category("validation")
def test_register_rejects_blank_display_name(api, http):
    r = http.post("/users", json={"username": f"gina_{uuid.uuid4().hex[:10]}", "password": "long enough", "display_name": "   "})
    api.assert_invalid(r, ["display_name"], "registering with a blank display_name")


@pytest.mark.requirement("R29")
@pytest.mark.category("validation")
def test_body_must_be_a_json_object(api, http):
    problems = []
    for payload in ('["a", "b"]', "not json at all", '"just a string"', "null"):
        r = http.post("/users", data=payload, headers={"Content-Type": "application/json"})
        try:
            code = r.json().get("error")
        except (ValueError, AttributeError):
            code = None
        if r.status_code != 422 or code != "validation_error":
            problems.append(f"POST /users with body {payload!r}: expected 422 validation_error, got {r.status_code} {r.text[:200]}")
    assert not problems, "bodies that are not JSON objects were not rejected: " + "\n".join(problems)


@pytest.mark.requirement("R4")
@pytest.mark.category("state")
def test_taken_username_gets_409(api, http):
    created, _ = api.register("henry")
    r = http.post("/users", json={"username": created["username"], "password": "another password"})
    api.error(r, 409, "conflict", "registering a username that is taken")


@pytest.mark.requirement("R5")
@pytest.mark.category("api_surface")
def test_login_returns_bearer_token_and_user(api, http):
    created, password = api.register("ivan")
    r = http.post("/auth/token", json={"username": created["username"], "password": password})
    assert r.status_code == 200, f"login with right credentials: {r.status_code} {r.text[:300]}"
    body = r.json()
    assert isinstance(body.get("token"), str) and body["token"], f"no token: {body}"
    assert body.get("token_type") == "bearer", f"token_type should be 'bearer': {body}"
    assert body.get("user", {}).get("id") == created["id"], f"login should return the user: {body}"


@pytest.mark.requirement("R5")
@pytest.mark.category("authorization")
def test_login_with_wrong_password_gets_401(api, http):
    created, password = api.register("judy")
    r = http.post("/auth/token", json={"username": created["username"], "password": password + "x"})
    api.error(r, 401, "unauthorized", "login with a wrong password")


@pytest.mark.requirement("R5")
@pytest.mark.category("authorization")
def test_login_with_unknown_username_gets_401(api, http):
    r = http.post("/auth/token", json={"username": f"nobody_{uuid.uuid4().hex[:10]}", "password": "whatever123"})
    api.error(r, 401, "unauthorized", "login with an unknown username")


@pytest.mark.requirement("R5", "R28")
@pytest.mark.category("validation")
def test_login_without_password_gets_422(api, http):
    r = http.post("/auth/token", json={"username": f"kim_{uuid.uuid4().hex[:10]}"})
    api.assert_invalid(r, ["password"], "login without a password")


@pytest.mark.requirement("R6")
@pytest.mark.category("api_surface")
def test_me_returns_the_caller(api, http):
    user = api.user("liam")
    r = http.get("/me", headers=user.headers)
    assert r.status_code == 200, f"GET /me with a valid token: {r.status_code} {r.text[:300]}"
    assert r.json().get("id") == user.id and r.json().get("username") == user.username, f"GET /me is not the caller: {r.text[:300]}"


@pytest.mark.requirement("R6")
@pytest.mark.category("authorization")
@pytest.mark.parametrize(
    "headers",
    [
        [None],
        ["Bearer not-a-real-token"],
        ["Basic dXNlcjpwYXNz", "Bearer", "token-without-scheme"],
    ],
    ids=["missing", "unknown-token", "malformed"],
)
def test_me_without_a_valid_token_gets_401(api, http, headers):
    for header in headers:
        r = http.get("/me", headers={} if header is None else {"Authorization": header})
        api.error(r, 401, "unauthorized", f"GET /me with Authorization {header!r}")


@pytest.mark.requirement("R7")
@pytest.mark.category("state")
def test_logout_revokes_only_that_token(api, http):
    user = api.user("mia")
    second = api.login(user.username, user.password)
    r = http.post("/auth/logout", headers=user.headers)
    assert r.status_code == 204, f"logout: {r.status_code} {r.text[:300]}"
    r = http.get("/me", headers=user.headers)
    api.error(r, 401, "unauthorized", "GET /me with a token that was logged out")
    r = http.get("/me", headers={"Authorization": f"Bearer {second}"})
    assert r.status_code == 200, f"the user's other token should still work after logout: {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R3", "R4")
@pytest.mark.category("validation")
def test_display_name_limit_and_validation_before_conflict(api, http):
    taken = f"dora_{uuid.uuid4().hex[:10]}"
    assert http.post("/users", json={"username": taken, "password": "long enough", "display_name": "d" * 64}).status_code == 201, "64 characters are allowed"
    problem = api.validation_problem(http.post("/users", json={"username": f"eve_{uuid.uuid4().hex[:10]}", "password": "long enough", "display_name": "d" * 65}),
                                     ["display_name"], "a 65-character display_name")
    assert problem is None, problem
    problem = api.validation_problem(http.post("/users", json={"username": taken, "password": "short", "display_name": "Valid"}), ["password"],
                                     "a taken username with an invalid password (422 before 409)")
    assert problem is None, problem
    r = http.post("/auth/token", json={"username": taken, "password": "long enough"})
    assert r.status_code == 200, f"the failed registrations changed nothing: {r.status_code} {r.text[:200]}"

