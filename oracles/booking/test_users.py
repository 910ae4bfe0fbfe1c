"""Users, login, tokens, the health probe and body parsing (spec.md: Running, Conventions, Users)."""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http.account_items import health_item, login_item, me_item, register_item

pytestmark = [pytest.mark.tier("base")]


test_health_answers_ok_without_auth = health_item("R1", name="test_health_answers_ok_without_auth", fixtures=["http"])


test_register_returns_the_user_without_password = register_item("R2", fixtures=["http", "checks"], prefix="ann", string_id=True, created_at=True)


@pytest.mark.requirement("R2", "R26")
@pytest.mark.category("validation")
def test_register_validates_username_and_password(api, http):
    ok_name = f"ok_{uuid.uuid4().hex[:8]}"
    cases = {
        "upper-case username": ({"username": "Ann" + uuid.uuid4().hex[:6], "password": "long enough"}, ["username"]),
        "two-character username": ({"username": "ab", "password": "long enough"}, ["username"]),
        "33-character username": ({"username": "a" * 33, "password": "long enough"}, ["username"]),
        "missing username": ({"password": "long enough"}, ["username"]),
        "7-character password": ({"username": ok_name, "password": "short12"}, ["password"]),
        "129-character password": ({"username": ok_name, "password": "p" * 129}, ["password"]),
        "both wrong": ({"username": "no spaces", "password": 12345678}, ["username", "password"]),
    }
    problems = [api.validation_problem(http.post("/users", json=body), fields, label) for label, (body, fields) in cases.items()]
    problems = [p for p in problems if p]
    assert not problems, "invalid registrations were not rejected as the spec says:\n" + "\n".join(problems)
    r = http.post("/auth/token", json={"username": ok_name, "password": "short12"})
    api.error(r, 401, "unauthorized", "logging in as a user whose registration was rejected")


@pytest.mark.requirement("R2")
@pytest.mark.category("state")
def test_taken_username_gets_409(api, http):
    user = api.user("dup")
    r = http.post("/users", json={"username": user.username, "password": "another password"})
    api.error(r, 409, "conflict", "registering a taken username")
    r = http.post("/auth/token", json={"username": user.username, "password": user.password})
    assert r.status_code == 200, f"the original password must still work after a rejected duplicate: {r.status_code} {r.text[:200]}"


test_login_checks_credentials = login_item("R3", caller=lambda api: api.user("login"))


@pytest.mark.requirement("R3")
@pytest.mark.category("validation")
def test_login_with_missing_fields_gets_422(api, http):
    for body, fields in (({"username": "someone"}, ["password"]), ({"username": 7, "password": "x" * 8}, ["username"])):
        problem = api.validation_problem(http.post("/auth/token", json=body), fields, f"login with {body}")
        assert problem is None, problem


test_me_answers_the_caller = me_item("R3", caller=lambda api: api.user("me"))


@pytest.mark.requirement("R3", "R26")
@pytest.mark.category("authorization")
def test_every_endpoint_needs_a_valid_token(api, http):
    owner = api.user("owner")
    resource = api.resource(owner)
    rid = resource["id"]
    calls = [
        ("get", "/me"),
        ("get", "/resources"),
        ("post", "/resources"),
        ("get", f"/resources/{rid}"),
        ("patch", f"/resources/{rid}"),
        ("delete", f"/resources/{rid}"),
        ("get", f"/resources/{rid}/availability?date=2031-01-06"),
        ("get", f"/resources/{rid}/bookings"),
        ("post", f"/resources/{rid}/bookings"),
        ("get", "/bookings"),
        ("get", "/bookings/some-booking"),
        ("patch", "/bookings/some-booking"),
        ("post", "/bookings/some-booking/cancel"),
    ]
    for headers, label in (({}, "no token"), ({"Authorization": "Token abc"}, "a malformed header"),
                           ({"Authorization": "Bearer not-a-real-token"}, "an unknown token")):
        for method, path in calls:
            r = http.request(method, path, json={} if method in ("post", "patch") else None, headers=headers)
            api.error(r, 401, "unauthorized", f"{method.upper()} {path} with {label}")
    assert api.ok(http.get(f"/resources/{rid}", headers=owner.headers), 200, "read the resource")["name"] == resource["name"], (
        "unauthenticated requests must change nothing"
    )


@pytest.mark.requirement("R27")
@pytest.mark.category("validation")
def test_bodies_must_be_json_objects(api, http):
    user = api.user("parser")
    json_header = {**user.headers, "Content-Type": "application/json"}
    for raw in ("not json", "[1, 2]", "\"a string\"", "null"):
        r = http.post("/resources", data=raw, headers=json_header)
        api.error(r, 422, "validation_error", f"POST /resources with the body {raw!r}")
        r = http.post("/users", data=raw, headers={"Content-Type": "application/json"})
        api.error(r, 422, "validation_error", f"POST /users with the body {raw!r}")
