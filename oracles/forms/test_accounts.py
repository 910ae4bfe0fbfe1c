"""Owners: health, registration, login, the caller, bearer tokens (spec.md: Running, Accounts, API conventions)."""

from __future__ import annotations

import pytest

from pytest_backendbench.http.account_items import health_item

PASSWORD = "correct horse battery"  # the password api.owner() registers (conftest.PASSWORD)

pytestmark = [pytest.mark.tier("base")]


test_health_answers_ok_without_a_token = health_item("R1", name="test_health_answers_ok_without_a_token")


@pytest.mark.requirement("R2")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("INSERT", table="owners")
def test_register_answers_the_owner_with_a_lower_cased_email(api, http):
    local = api.fresh_email().split("@")[0]
    r = api.register(f"Mixed.{local}@Example.ORG")
    assert r.status_code == 201, api.brief(r)
    owner = r.json()
    assert owner.get("email") == f"mixed.{local}@example.org", f"the email is stored and answered lower-cased: {owner}"
    assert isinstance(owner.get("id"), int) and not isinstance(owner.get("id"), bool), f"ids are integers: {owner}"
    assert isinstance(owner.get("created_at"), str), f"created_at is a timestamp: {owner}"


INVALID_OWNERS = [
    ("email-missing", {"email": ...}, "email"),
    ("email-no-at", {"email": "someone.example.org"}, "email"),
    ("email-no-dot", {"email": "someone@localhost"}, "email"),
    ("email-space", {"email": "some one@example.org"}, "email"),
    ("email-255", {"email": "a" * 243 + "@example.org"}, "email"),
    ("email-number", {"email": 42}, "email"),
    ("password-7", {"password": "x" * 7}, "password"),
    ("password-129", {"password": "x" * 129}, "password"),
    ("password-missing", {"password": ...}, "password"),
    ("password-number", {"password": 12345678}, "password"),
]


@pytest.mark.requirement("R2")
@pytest.mark.category("validation")
@pytest.mark.parametrize("case,change,field", INVALID_OWNERS, ids=[c[0] for c in INVALID_OWNERS])
def test_invalid_registrations_get_422_naming_the_field(api, http, case, change, field):
    body = {"email": api.fresh_email(), "password": PASSWORD, **change}
    body = {k: v for k, v in body.items() if v is not ...}
    r = http.post("/api/users", json=body)
    problem = api.validation_problem(r, [field], f"registration with {case}")
    assert problem is None, problem
    email = body.get("email")
    if isinstance(email, str) and field == "password":
        api.error(api.login(email, str(body.get("password", ""))), 401, "invalid_credentials", "the refused owner logs in")


@pytest.mark.requirement("R2")
@pytest.mark.category("validation")
@pytest.mark.parametrize("length", [8, 128])
def test_password_length_bounds_are_accepted(api, http, length):
    email, password = api.fresh_email(), ("p\u00e9" * 64)[:length]
    assert api.register(email, password).status_code == 201, f"a password of {length} characters is allowed"
    api.ok(api.login(email, password), 200, f"log in with the {length}-character password")


@pytest.mark.requirement("R2")
@pytest.mark.category("validation")
def test_both_invalid_fields_are_listed(api, http):
    r = http.post("/api/users", json={"email": "nope", "password": "short"})
    problem = api.validation_problem(r, ["email", "password"], "a registration with both fields invalid")
    assert problem is None, problem


@pytest.mark.requirement("R2")
@pytest.mark.category("state")
def test_an_email_registers_once_whatever_its_case(api, http):
    email = api.fresh_email()
    api.ok(api.register(email), 201, "register")
    api.error(api.register(email.upper(), "another password"), 409, "email_taken", "the same email in upper case")
    api.ok(api.login(email, PASSWORD), 200, "the first owner's password still works")
    api.error(api.login(email, "another password"), 401, "invalid_credentials", "the refused registration's password")


@pytest.mark.requirement("R3")
@pytest.mark.category("api_surface")
def test_login_answers_a_token_and_the_owner(api, http):
    email = api.fresh_email()
    made = api.ok(api.register(email), 201, "register")
    r = api.login(email.upper())
    assert r.status_code == 200, f"the email is compared without regard to case: {api.brief(r)}"
    body = r.json()
    assert isinstance(body.get("token"), str) and body["token"], f"a bearer token: {body}"
    assert isinstance(body.get("owner"), dict) and body["owner"].get("id") == made["id"] and body["owner"].get("email") == email, f"the owner: {body}"
    me = http.get("/api/me", headers={"Authorization": f"Bearer {body['token']}"})
    assert me.status_code == 200 and me.json().get("id") == made["id"] and me.json().get("email") == email, f"GET /api/me answers the caller: {api.brief(me)}"


WRONG_LOGINS = [
    ("wrong-password", lambda e: {"email": e, "password": PASSWORD + "x"}),
    ("password-case", lambda e: {"email": e, "password": PASSWORD.upper()}),
    ("password-prefix", lambda e: {"email": e, "password": PASSWORD[:-1]}),
    ("password-trailing-space", lambda e: {"email": e, "password": PASSWORD + " "}),
    ("unknown-email", lambda e: {"email": "x" + e, "password": PASSWORD}),
]


@pytest.mark.requirement("R3")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("case,body", WRONG_LOGINS, ids=[c[0] for c in WRONG_LOGINS])
def test_wrong_credentials_get_401(api, http, case, body):
    email = api.fresh_email()
    api.ok(api.register(email), 201, "register")
    api.error(http.post("/api/auth/token", json=body(email)), 401, "invalid_credentials", f"log in with {case}")


@pytest.mark.requirement("R3")
@pytest.mark.category("authorization")
def test_each_login_gets_a_working_token(api, http):
    owner = api.owner()
    second = api.ok(api.login(owner.email), 200, "log in again")["token"]
    for token in (owner.token, second):
        r = http.get("/api/me", headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 200 and r.json().get("id") == owner.id, f"every token of the owner works: {api.brief(r)}"


OWNER_PATHS = [
    ("GET", "/api/me"), ("GET", "/api/forms"), ("POST", "/api/forms"), ("GET", "/api/forms/{id}"), ("DELETE", "/api/forms/{id}"),
    ("POST", "/api/forms/{id}/questions"), ("DELETE", "/api/forms/{id}/questions/{qid}"), ("POST", "/api/forms/{id}/publish"),
    ("POST", "/api/forms/{id}/close"), ("GET", "/api/forms/{id}/responses"), ("GET", "/api/forms/{id}/summary"),
    ("GET", "/api/forms/{id}/export.csv"),
]


@pytest.mark.requirement("R3")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("method,path", OWNER_PATHS, ids=[f"{m} {p}" for m, p in OWNER_PATHS])
def test_owner_paths_need_a_token(api, http, method, path):
    built = api.build(publish=False, questions=[{"type": "short_text", "title": "Q"}])
    url = path.format(id=built.id, qid=built.qids["Q"])
    r = http.request(method, url, json={"title": "x", "type": "short_text"} if method == "POST" else None)
    api.error(r, 401, "unauthorized", f"{method} {url} without a token")
    r = http.request(method, url, json={"title": "x", "type": "short_text"} if method == "POST" else None, headers={"Authorization": "Bearer not-a-token"})
    api.error(r, 401, "unauthorized", f"{method} {url} with an unknown token")
    form = api.read(built)
    assert (form["status"], [q["id"] for q in form["questions"]]) == ("draft", [int(built.qids["Q"])]), f"nothing changed: {form}"
