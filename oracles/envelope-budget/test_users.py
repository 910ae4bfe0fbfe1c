"""Health, registration, login and authentication (spec.md: Running, Users and authentication)."""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http.account_items import health_item, login_validation_item, me_item

pytestmark = [pytest.mark.tier("base")]


test_health_needs_no_authentication = health_item("R1")


@pytest.mark.requirement("R2")
@pytest.mark.category("api_surface")
def test_register_returns_the_user_without_password(api, http, checks):
    username = f"reg_{uuid.uuid4().hex[:10]}"
    r = http.post("/users", json={"username": username, "password": "correct horse"})
    assert r.status_code == 201, f"registering a new user: {r.status_code} {r.text[:300]}"
    body = r.json()
    assert body.get("username") == username and body.get("id"), f"the new user should echo its username and have an id: {body}"
    leaks = checks.password_leaks(r.text, "correct horse")
    assert not leaks, f"the answer reveals {leaks}: {r.text[:300]}"


@pytest.mark.requirement("R2", "R28")
@pytest.mark.category("validation")
@pytest.mark.parametrize(
    "field, values",
    [
        ("username", ["ab", "Upper_case", "has space", "x" * 33, 12345, None]),
        ("password", ["short", "p" * 129, 12345678, None]),
    ],
    ids=["username", "password"],
)
def test_register_rejects_invalid_fields(api, http, field, values):
    problems = []
    for value in values:
        body = {"username": f"ok_{uuid.uuid4().hex[:10]}", "password": "long enough", field: value}
        problems.append(api.validation_problem(http.post("/users", json=body), [field], f"registering with {field}={value!r}"))
    api.assert_no_problems(problems, f"invalid {field} values were not rejected as the spec says")


@pytest.mark.requirement("R2")
@pytest.mark.category("state")
def test_taken_username_gets_409(api, http):
    username = f"dup_{uuid.uuid4().hex[:10]}"
    first = http.post("/users", json={"username": username, "password": "first password"})
    assert first.status_code == 201, f"first registration: {api.brief(first)}"
    second = http.post("/users", json={"username": username, "password": "second password"})
    api.error(second, 409, "conflict", "registering a taken username")
    r = http.post("/auth/token", json={"username": username, "password": "first password"})
    assert r.status_code == 200, f"the first user's password must still work after the rejected duplicate: {api.brief(r)}"


@pytest.mark.requirement("R3")
@pytest.mark.category("api_surface")
def test_login_returns_a_bearer_token(api, http):
    username = f"login_{uuid.uuid4().hex[:10]}"
    created = http.post("/users", json={"username": username, "password": "s3cret-pass"}).json()
    r = http.post("/auth/token", json={"username": username, "password": "s3cret-pass"})
    assert r.status_code == 200, f"logging in with the right password: {api.brief(r)}"
    body = r.json()
    assert body.get("token_type") == "bearer" and body.get("token"), f"expected a bearer token: {body}"
    assert body.get("user", {}).get("id") == created["id"], f"the login answer should carry the user: {body}"
    me = http.get("/me", headers={"Authorization": f"Bearer {body['token']}"})
    assert me.status_code == 200 and me.json().get("username") == username, f"GET /me with the new token: {api.brief(me)}"


@pytest.mark.requirement("R3")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("case", ["wrong-password", "unknown-username"])
def test_bad_credentials_get_401(api, http, alice, case):
    body = (
        {"username": alice.username, "password": alice.password + "x"}
        if case == "wrong-password"
        else {"username": f"ghost_{uuid.uuid4().hex[:10]}", "password": "whatever123"}
    )
    api.error(http.post("/auth/token", json=body), 401, "unauthorized", f"logging in with a {case.replace('-', ' ')}")


test_login_with_missing_fields_gets_422 = login_validation_item("R3", headline="incomplete logins were not rejected as the spec says", cases=[
    ({"password": "abcdefgh"}, ["username"], "login without username"),
    ({"username": "someone"}, ["password"], "login without password"),
    ({"username": 5, "password": "abcdefgh"}, ["username"], "login with a numeric username"),
])


test_me_answers_the_caller = me_item("R4", caller="alice")


@pytest.mark.requirement("R4")
@pytest.mark.category("authorization")
@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Token abc"}, {"Authorization": "Bearer"}, {"Authorization": "Bearer never-issued-token"}],
    ids=["missing", "wrong-scheme", "empty-bearer", "unknown-token"],
)
def test_protected_endpoints_need_a_valid_token(api, http, alice, headers):
    account = api.account(alice)
    calls = [
        ("GET", "/me", None),
        ("GET", "/accounts", None),
        ("POST", "/accounts", {"name": "x"}),
        ("GET", f"/accounts/{account['id']}", None),
        ("GET", "/envelopes", None),
        ("POST", "/envelopes", {"name": "x"}),
        ("GET", "/transactions", None),
        ("POST", "/transactions", {"type": "income", "date": "2025-01-01", "amount": 1, "account_id": account["id"]}),
        ("GET", "/summary", None),
        ("GET", "/months/2025-01", None),
    ]
    for method, path, body in calls:
        r = http.request(method, path, json=body, headers=headers)
        api.error(r, 401, "unauthorized", f"{method} {path} with {headers or 'no Authorization header'}")
    assert api.balance(alice, account) == 0, "an unauthenticated income must not reach the account"


@pytest.mark.requirement("R28")
@pytest.mark.category("validation")
@pytest.mark.parametrize("raw", ["{not json", "[1, 2]", '"a string"', "null"], ids=["malformed", "array", "string", "null"])
def test_body_must_be_a_json_object(api, http, alice, raw):
    headers = {**alice.headers, "Content-Type": "application/json"}
    problems = [
        api.validation_problem(http.post(path, data=raw, headers=headers), None, f"POST {path} with body {raw!r}")
        for path in ("/accounts", "/envelopes", "/transactions")
    ]
    api.assert_no_problems(problems, "bodies that are not JSON objects were not rejected with 422")
    assert api.get(alice, "/accounts")["items"] == [], "a rejected body must not create an account"

