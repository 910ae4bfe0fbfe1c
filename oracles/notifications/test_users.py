"""Users, addresses, login, the administrator's token and body parsing (spec.md: Users and authentication)."""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http.account_items import health_item, me_item, taken_username_item

pytestmark = [pytest.mark.tier("base")]


test_health_answers_ok_without_auth = health_item("R1", name="test_health_answers_ok_without_auth", fixtures=["http"])


@pytest.mark.requirement("R2")
@pytest.mark.category("api_surface")
def test_register_with_addresses(api, http, checks):
    username, password, mail, number = f"ann_{uuid.uuid4().hex[:8]}", "secret-" + uuid.uuid4().hex, api.email(), api.phone()
    r = http.post("/users", json={"username": username, "password": password, "email": mail, "phone": number})
    assert r.status_code == 201, f"registering with an email and a phone: {r.status_code} {r.text[:300]}"
    user = r.json()
    assert (user.get("username"), user.get("email"), user.get("phone")) == (username, mail, number), f"the user's fields: {user}"
    assert isinstance(user.get("id"), str) and user["id"] and isinstance(user.get("created_at"), str), f"id and created_at: {user}"
    leaks = checks.password_leaks(r.text, password)
    assert not leaks, f"the answer reveals {leaks}: {r.text[:300]}"


@pytest.mark.requirement("R2")
@pytest.mark.category("api_surface")
def test_addresses_are_optional(api, http):
    r = http.post("/users", json={"username": api.unique("bare"), "password": "long enough"})
    assert r.status_code == 201, f"registering without addresses: {r.status_code} {r.text[:300]}"
    assert (r.json().get("email"), r.json().get("phone")) == (None, None), f"missing addresses are null: {r.json()}"
    r = http.post("/users", json={"username": api.unique("nulls"), "password": "long enough", "email": None, "phone": None})
    assert r.status_code == 201, f"null addresses mean none: {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R2", "R26")
@pytest.mark.category("validation")
def test_register_validates_every_field(api, http):
    def body(**changes):
        return {"username": api.unique("v"), "password": "long enough", **changes}

    cases = {
        "upper-case username": (body(username="Bad" + uuid.uuid4().hex[:5]), ["username"]),
        "7-character password": (body(password="short12"), ["password"]),
        "email without @": (body(email="ann.example.com"), ["email"]),
        "email without a dot in the domain": (body(email="ann@localhost"), ["email"]),
        "email with a space": (body(email="ann smith@example.com"), ["email"]),
        "phone without +": (body(phone="14155550100"), ["phone"]),
        "phone starting +0": (body(phone="+04155550100"), ["phone"]),
        "phone too short": (body(phone="+1234567"), ["phone"]),
        "phone too long": (body(phone="+1234567890123456"), ["phone"]),
        "phone as a number": (body(phone=14155550100), ["phone"]),
        "both addresses wrong": (body(email="x", phone="y"), ["email", "phone"]),
    }
    problems = [api.validation_problem(http.post("/users", json=b), fields, label) for label, (b, fields) in cases.items()]
    problems = [p for p in problems if p]
    assert not problems, "invalid registrations were not rejected as the spec says:\n" + "\n".join(problems)


test_taken_username_gets_409 = taken_username_item("R2", caller=lambda api: api.user("dup"), password="another one")


@pytest.mark.requirement("R3")
@pytest.mark.category("authorization")
def test_login_checks_credentials(api, http):
    user = api.user("login")
    r = http.post("/auth/token", json={"username": user.username, "password": user.password})
    assert r.status_code == 200 and r.json().get("token_type") == "bearer", f"logging in: {r.status_code} {r.text[:300]}"
    assert r.json().get("user", {}).get("id") == user.id, f"the login answer carries the user: {r.json()}"
    api.error(http.post("/auth/token", json={"username": user.username, "password": "not the password"}), 401, "unauthorized", "a wrong password")
    api.error(http.post("/auth/token", json={"username": user.username}), 422, "validation_error", "a login without password")


@pytest.mark.requirement("R3", "R26")
@pytest.mark.category("authorization")
def test_every_endpoint_needs_a_valid_token(api, http):
    calls = [
        ("get", "/me"), ("patch", "/me"), ("get", "/me/preferences"), ("put", "/me/preferences"), ("get", "/me/notifications"),
        ("get", "/templates"), ("post", "/templates"), ("get", "/templates/x"), ("patch", "/templates/x"), ("delete", "/templates/x"),
        ("get", "/notifications"), ("post", "/notifications"), ("post", "/notifications/dispatch"), ("get", "/notifications/x"),
        ("post", "/notifications/x/retry"),
    ]
    for headers, label in (({}, "no token"), ({"Authorization": "Token x"}, "a malformed header"), ({"Authorization": "Bearer admin"}, "a wrong token")):
        for method, path in calls:
            r = http.request(method, path, json={} if method in ("post", "put", "patch") else None, headers=headers)
            api.error(r, 401, "unauthorized", f"{method.upper()} {path} with {label}")


@pytest.mark.requirement("R3", "R4")
@pytest.mark.category("authorization")
def test_the_administrator_token_is_not_a_user(api, http, admin):
    r = http.get("/templates", headers=admin.headers)
    assert r.status_code == 200, f"the NOTIFY_ADMIN_TOKEN bearer is the administrator: {r.status_code} {r.text[:300]}"
    for method, path in (("get", "/me"), ("patch", "/me"), ("get", "/me/preferences"), ("put", "/me/preferences"), ("get", "/me/notifications")):
        r = http.request(method, path, json={} if method in ("put", "patch") else None, headers=admin.headers)
        api.error(r, 403, "forbidden", f"the administrator on {method.upper()} {path}")


test_me_answers_the_caller = me_item("R4", caller=lambda api: api.user("me"), fields=("id", "email", "phone"))


@pytest.mark.requirement("R4")
@pytest.mark.category("state")
def test_addresses_can_be_changed_and_removed(api, http):
    user = api.user("mover")
    new_mail = api.email()
    got = api.set_addresses(user, email=new_mail)
    assert (got["email"], got["phone"]) == (new_mail, user.phone), f"only the email changes: {got}"
    got = api.set_addresses(user, phone=None)
    assert (got["email"], got["phone"]) == (new_mail, None), f"null removes the phone: {got}"
    me = api.ok(http.get("/me", headers=user.headers), 200, "read /me")
    assert (me["email"], me["phone"]) == (new_mail, None), f"the changes persist: {me}"


@pytest.mark.requirement("R4", "R27")
@pytest.mark.category("validation")
def test_address_changes_are_validated(api, http):
    user = api.user("careful")
    problems = [
        api.validation_problem(http.patch("/me", json=body, headers=user.headers), fields, label)
        for label, body, fields in (
            ("an invalid email", {"email": "nope"}, ["email"]),
            ("a numeric phone", {"phone": 123456789}, ["phone"]),
            ("an email that is a list", {"email": ["a@b.example"], "phone": "+1"}, ["email", "phone"]),
        )
    ]
    problems = [p for p in problems if p]
    assert not problems, "invalid address changes were not rejected:\n" + "\n".join(problems)
    me = api.ok(http.get("/me", headers=user.headers), 200, "read /me")
    assert (me["email"], me["phone"]) == (user.email, user.phone), f"rejected changes must change nothing: {me}"


@pytest.mark.requirement("R27")
@pytest.mark.category("validation")
def test_bodies_must_be_json_objects(api, http, admin):
    user = api.user("parser")
    for raw in ("not json", "[]", "true", "null"):
        r = http.put("/me/preferences", data=raw, headers={**user.headers, "Content-Type": "application/json"})
        api.error(r, 422, "validation_error", f"PUT /me/preferences with the body {raw!r}")
        r = http.post("/templates", data=raw, headers={**admin.headers, "Content-Type": "application/json"})
        api.error(r, 422, "validation_error", f"POST /templates with the body {raw!r}")
