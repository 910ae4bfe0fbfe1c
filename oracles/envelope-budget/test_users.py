"""Health, registration, login and authentication (spec.md: Running, Users and authentication)."""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http import account_items as kit

pytestmark = [pytest.mark.tier("base")]


test_health_needs_no_authentication = kit.health_item("R1")


test_register_returns_the_user_without_password = kit.register_item("R2", password="correct horse")


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


test_login_with_missing_fields_gets_422 = kit.login_validation_item("R3", headline="incomplete logins were not rejected as the spec says", cases=[
    ({"password": "abcdefgh"}, ["username"], "login without username"),
    ({"username": "someone"}, ["password"], "login without password"),
    ({"username": 5, "password": "abcdefgh"}, ["username"], "login with a numeric username"),
])


test_me_answers_the_caller = kit.me_item("R4", caller="alice")


def _all_endpoints(values, account):
    return [
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


def _no_income_arrived(values, account):
    assert values["api"].balance(values["alice"], account) == 0, "an unauthenticated income must not reach the account"


test_protected_endpoints_need_a_valid_token = kit.token_required_item(
    "R4", name="test_protected_endpoints_need_a_valid_token", fixtures=["api", "http", "alice", "headers"],
    headers={"missing": {}, "wrong-scheme": {"Authorization": "Token abc"}, "empty-bearer": {"Authorization": "Bearer"},
             "unknown-token": {"Authorization": "Bearer never-issued-token"}},
    setup=lambda values: values["api"].account(values["alice"]), calls=_all_endpoints, after=_no_income_arrived, unnamed="no Authorization header",
)


def _no_account_created(values):
    assert values["api"].get(values["alice"], "/accounts")["items"] == [], "a rejected body must not create an account"


test_body_must_be_a_json_object = kit.json_object_body_item("R28", caller="alice", paths=("/accounts", "/envelopes", "/transactions"),
                                                        raws={"malformed": "{not json", "array": "[1, 2]", "string": '"a string"', "null": "null"},
                                                        after=_no_account_created)
