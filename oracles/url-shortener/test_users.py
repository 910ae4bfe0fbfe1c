"""Health, registration, login, logout and authentication (spec.md: Running, Users and authentication)."""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http.account_items import health_item, login_validation_item, me_item, register_item, token_required_item

pytestmark = [pytest.mark.tier("base")]


test_health_needs_no_authentication = health_item("R1")


test_register_returns_the_user_without_password = register_item("R2", password="hunter2-hunter2")


@pytest.mark.requirement("R2", "R26")
@pytest.mark.category("validation")
@pytest.mark.parametrize(
    "field, values",
    [("username", ["ab", "Bad", "with-dash", "u" * 33, None, 99]), ("password", ["seven77", "p" * 129, None, ["x" * 10]])],
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
def test_taken_username_gets_409(api, http, alice):
    api.error(http.post("/users", json={"username": alice.username, "password": "another password"}), 409, "conflict", "registering a taken username")
    r = http.post("/auth/token", json={"username": alice.username, "password": alice.password})
    assert r.status_code == 200, f"the original password must still work: {api.brief(r)}"


@pytest.mark.requirement("R3")
@pytest.mark.category("api_surface")
def test_login_returns_a_bearer_token(api, http, alice):
    r = http.post("/auth/token", json={"username": alice.username, "password": alice.password})
    assert r.status_code == 200, f"logging in: {api.brief(r)}"
    body = r.json()
    assert body.get("token_type") == "bearer" and body.get("token"), f"expected a bearer token: {body}"
    assert body.get("user", {}).get("id") == alice.id, f"the login answer carries the user: {body}"


@pytest.mark.requirement("R3")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("case", ["wrong-password", "unknown-username"])
def test_bad_credentials_get_401(api, http, alice, case):
    body = (
        {"username": alice.username, "password": alice.password.upper()}
        if case == "wrong-password"
        else {"username": f"nobody_{uuid.uuid4().hex[:10]}", "password": alice.password}
    )
    api.error(http.post("/auth/token", json=body), 401, "unauthorized", f"logging in with a {case.replace('-', ' ')}")


@pytest.mark.requirement("R3")
@pytest.mark.category("authorization")
def test_wrong_credentials_get_401_whatever_their_shape(api, http, alice):
    """spec.md: login does not apply the registration rules (body schema ``LoginCredentials``);
    a pair that is not a user's credentials gets 401 whatever its length or characters."""
    wrong_but_well_formed = alice.password[:-1] + ("x" if alice.password[-1] != "x" else "y")
    cases = [
        ("a 5-character password", alice.username, "abcde"),
        ("an empty password", alice.username, ""),
        ("a 129-character password", alice.username, "p" * 129),
        ("a password of the registration's length, but wrong", alice.username, wrong_but_well_formed),
        ("an upper-case username (breaks the registration pattern)", alice.username.upper(), alice.password),
        ("a 2-character username", "ab", alice.password),
        ("a username with a dash and a 5-character password", "no-such-user", "abcde"),
    ]
    problems = []
    for what, username, password in cases:
        r = http.post("/auth/token", json={"username": username, "password": password})
        try:
            code = r.json().get("error") if r.status_code == 401 and isinstance(r.json(), dict) else None
        except ValueError:
            code = None
        if code != "unauthorized":
            problems.append(f"logging in with {what}: expected 401 unauthorized, got {api.brief(r)}")
    api.assert_no_problems(problems, "wrong credentials must get 401 whatever their shape")
    assert api.login(alice.username, alice.password), "the right credentials still log in after the refused attempts"


test_login_with_missing_fields_gets_422 = login_validation_item("R3", headline="incomplete logins were not rejected as the spec says", cases=[
    ({"password": "abcdefgh"}, ["username"], "login without username"),
    ({"username": "someone", "password": 12345678}, ["password"], "login with a numeric password"),
])


test_me_answers_the_caller = me_item("R4", caller="alice")


def _all_endpoints(values, link):
    return [
        ("GET", "/me", None), ("POST", "/auth/logout", None), ("GET", "/links", None),
        ("POST", "/links", {"url": "https://example.com"}), ("GET", f"/links/{link['id']}", None),
        ("PATCH", f"/links/{link['id']}", {"disabled": True}), ("DELETE", f"/links/{link['id']}", None),
        ("GET", f"/links/{link['id']}/stats", None), ("GET", f"/links/{link['id']}/visits", None),
        ("DELETE", f"/links/{link['id']}/visits", None), ("GET", "/tags", None),
    ]


def _link_unchanged(values, link):
    got = values["api"].get_link(values["alice"], link)
    assert got.get("disabled") is False, f"an unauthenticated PATCH changed the link: {got}"


test_protected_endpoints_need_a_valid_token = token_required_item(
    "R4", name="test_protected_endpoints_need_a_valid_token", fixtures=["api", "http", "alice", "headers"],
    headers={"missing": {}, "basic-scheme": {"Authorization": "Basic dXNlcjpwYXNz"}, "empty-bearer": {"Authorization": "Bearer "},
             "unknown-token": {"Authorization": "Bearer made-up-token"}},
    setup=lambda values: values["api"].link(values["alice"]), calls=_all_endpoints, after=_link_unchanged, unnamed="no Authorization",
)


@pytest.mark.requirement("R5")
@pytest.mark.category("authorization")
def test_logout_revokes_only_that_token(api, http, alice):
    second = api.login(alice.username, alice.password)
    r = http.post("/auth/logout", headers=alice.headers)
    assert r.status_code == 204, f"logging out: {api.brief(r)}"
    api.error(http.get("/me", headers=alice.headers), 401, "unauthorized", "GET /me with the revoked token")
    r = http.get("/me", headers={"Authorization": f"Bearer {second}"})
    assert r.status_code == 200, f"the user's other token must keep working: {api.brief(r)}"


@pytest.mark.requirement("R26")
@pytest.mark.category("validation")
@pytest.mark.parametrize("raw", ["{broken", "[]", '"https://example.com"', "null"], ids=["malformed", "array", "string", "null"])
def test_body_must_be_a_json_object(api, http, alice, raw):
    link = api.link(alice)
    headers = {**alice.headers, "Content-Type": "application/json"}
    problems = [
        api.validation_problem(http.post("/links", data=raw, headers=headers), None, f"POST /links with {raw!r}"),
        api.validation_problem(http.patch(f"/links/{link['id']}", data=raw, headers=headers), None, f"PATCH /links/{{id}} with {raw!r}"),
    ]
    api.assert_no_problems(problems, "bodies that are not JSON objects were not rejected with 422")
    assert api.links(alice)["total"] == 1, "a rejected body created a link"
