"""Accounts (spec.md: Running, Accounts): registration, login, tokens, the bootstrap admin, users."""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http.account_items import health_item

pytestmark = [pytest.mark.tier("base")]

PASSWORD = "correct horse 42"  # conftest.PASSWORD
USER_KEYS = ("id", "email", "name", "role", "created_at")


def fresh_email(prefix: str = "u") -> str:
    return f"{prefix}.{uuid.uuid4().hex[:12]}@example.org"


test_health_answers_ok_without_a_token = health_item("R1", name="test_health_answers_ok_without_a_token", exact=True)


@pytest.mark.requirement("R2")
@pytest.mark.category("api_surface")
def test_register_answers_a_customer_with_the_email_lower_cased(api, http):
    local = fresh_email("Mixed").split("@")[0]
    r = http.post("/api/auth/register", json={"email": f"{local}@Example.ORG", "name": "Dana Doe", "password": PASSWORD})
    user = api.ok(r, 201, "register")
    assert all(k in user for k in USER_KEYS), f"a user has {USER_KEYS}: {user}"
    assert (user["email"], user["name"], user["role"]) == (f"{local.lower()}@example.org", "Dana Doe", "customer"), f"registered: {user}"
    assert isinstance(user["id"], int) and api.instant(user["created_at"]) is not None, f"an integer id and a timestamp: {user}"


REGISTER_INVALID = [
    ("no-email", {"name": "N", "password": PASSWORD}, ["email"]),
    ("email-without-at", {"email": "nobody.example.org", "name": "N", "password": PASSWORD}, ["email"]),
    ("email-with-space", {"email": "a b@example.org", "name": "N", "password": PASSWORD}, ["email"]),
    ("email-255", {"email": "e" * 243 + "@example.org", "name": "N", "password": PASSWORD}, ["email"]),
    ("blank-name", {"email": "fresh", "name": "   ", "password": PASSWORD}, ["name"]),
    ("name-101", {"email": "fresh", "name": "n" * 101, "password": PASSWORD}, ["name"]),
    ("password-7", {"email": "fresh", "name": "N", "password": "1234567"}, ["password"]),
    ("password-129", {"email": "fresh", "name": "N", "password": "p" * 129}, ["password"]),
    ("wrong-types", {"email": 5, "name": None, "password": 12345678}, ["email", "name", "password"]),
]


@pytest.mark.requirement("R2")
@pytest.mark.category("validation")
@pytest.mark.parametrize("case, body, fields", REGISTER_INVALID, ids=[c[0] for c in REGISTER_INVALID])
def test_invalid_registrations_get_422_naming_each_field(api, http, db, case, body, fields):
    body = {**body, "email": fresh_email() if body.get("email") == "fresh" else body.get("email")} if "email" in body else body
    r = http.post("/api/auth/register", json=body)
    api.assert_no_problems([api.validation_problem(r, fields, f"register {case}")], "registration validation")
    if isinstance(body.get("email"), str):
        assert db.scalar("SELECT count(*) FROM users WHERE email = %s", (body["email"].lower(),)) == 0, "a refused registration stored a user"


@pytest.mark.requirement("R2")
@pytest.mark.category("validation")
def test_registration_limits_are_inclusive(api, http):
    local = fresh_email().split("@")[0]
    email = local + "x" * (254 - len(local) - len("@example.org")) + "@example.org"
    assert len(email) == 254
    for body in ({"email": email, "name": "n" * 100, "password": "p" * 8}, {"email": fresh_email(), "name": "N", "password": "p" * 128}):
        r = http.post("/api/auth/register", json=body)
        assert r.status_code == 201, f"a 254-character email, a 100-character name, 8 and 128 character passwords are valid: {api.brief(r)}"


@pytest.mark.requirement("R2")
@pytest.mark.category("state")
def test_a_taken_email_in_any_case_gets_409(api, http):
    email = fresh_email()
    api.ok(http.post("/api/auth/register", json={"email": email, "name": "First", "password": PASSWORD}), 201, "register")
    for again in (email, email.upper()):
        api.error(http.post("/api/auth/register", json={"email": again, "name": "Second", "password": PASSWORD}), 409, "conflict", f"register {again} again")
    api.login(email, PASSWORD)


@pytest.mark.requirement("R3")
@pytest.mark.category("api_surface")
def test_login_answers_a_token_and_the_user_for_any_case_of_the_email(api, http):
    email = fresh_email()
    made = api.ok(http.post("/api/auth/register", json={"email": email, "name": "Lee", "password": PASSWORD}), 201, "register")
    got = api.ok(http.post("/api/auth/login", json={"email": email.upper(), "password": PASSWORD}), 200, "log in with the email upper-cased")
    assert isinstance(got.get("token"), str) and got["token"], f"a token: {got}"
    assert got.get("user", {}).get("id") == made["id"] and got["user"].get("role") == "customer", f"the user: {got}"
    me = api.ok(http.get("/api/me", headers={"Authorization": f"Bearer {got['token']}"}), 200, "GET /api/me")
    assert (me.get("id"), me.get("email"), me.get("name")) == (made["id"], email, "Lee"), f"GET /api/me answers the caller: {me}"


@pytest.mark.requirement("R3")
@pytest.mark.category("authorization")
def test_wrong_credentials_get_401(api, http):
    email = fresh_email()
    api.ok(http.post("/api/auth/register", json={"email": email, "name": "Kim", "password": PASSWORD}), 201, "register")
    for body in ({"email": email, "password": PASSWORD + "x"}, {"email": fresh_email(), "password": PASSWORD}, {"email": email, "password": PASSWORD.upper()}):
        api.error(http.post("/api/auth/login", json=body), 401, "unauthorized", f"log in with {body}")


LOGIN_INVALID = [
    ("no-password", {"email": "x@example.org"}, ["password"]),
    ("no-email", {"password": PASSWORD}, ["email"]),
    ("non-strings", {"email": 1, "password": ["p"]}, ["email", "password"]),
]


@pytest.mark.requirement("R3")
@pytest.mark.category("validation")
@pytest.mark.parametrize("case, body, fields", LOGIN_INVALID, ids=[c[0] for c in LOGIN_INVALID])
def test_login_with_a_missing_or_non_string_field_gets_422(api, http, case, body, fields):
    api.assert_no_problems([api.validation_problem(http.post("/api/auth/login", json=body), fields, f"login {case}")], "login validation")


@pytest.mark.requirement("R3")
@pytest.mark.category("state")
def test_every_login_issues_a_new_token_and_both_work(api, http):
    customer = api.customer()
    second = api.login(customer.email, PASSWORD)
    assert second.token != customer.token, "every login issues a new token"
    for actor in (customer, second):
        assert api.ok(api.call(actor, "GET", "/api/me"), 200, "GET /api/me")["id"] == customer.id


PROTECTED = [("GET", "/api/me"), ("GET", "/api/tickets"), ("POST", "/api/tickets"), ("GET", "/api/users"), ("GET", "/api/sla"),
             ("PUT", "/api/sla/low"), ("GET", "/api/escalations"), ("GET", "/api/tickets/1/articles")]


@pytest.mark.requirement("R3")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("method, path", PROTECTED, ids=[f"{m} {p}" for m, p in PROTECTED])
def test_missing_malformed_or_unknown_tokens_get_401(api, http, method, path):
    customer = api.customer()
    problems = []
    for headers in ({}, {"Authorization": customer.token}, {"Authorization": "Bearer "}, {"Authorization": "Bearer not-a-token"},
                    {"Authorization": f"Basic {customer.token}"}):
        r = http.request(method, path, headers=headers, json={"title": "t", "body": "b", "first_response_s": 5, "resolution_s": 5})
        if r.status_code != 401 or r.json().get("error") != "unauthorized":
            problems.append(f"{headers}: expected 401 unauthorized, got {api.brief(r)}")
    assert not problems, f"{method} {path} needs a valid bearer token:\n" + "\n".join(problems)
    assert api.tickets(customer)["total"] == 0, "nothing was created without a token"


@pytest.mark.requirement("R3")
@pytest.mark.category("api_surface")
def test_the_bootstrap_admin_exists(api, http):
    email, _ = api.admin_credentials()
    me = api.ok(api.call(api.admin, "GET", "/api/me"), 200, "GET /api/me as the bootstrap admin")
    assert (me.get("email"), me.get("role"), me.get("name")) == (email.lower(), "admin", "Administrator"), f"the bootstrap admin: {me}"


@pytest.mark.requirement("R4")
@pytest.mark.category("api_surface")
def test_the_admin_creates_agents_and_customers_who_can_log_in(api, http):
    for role in ("agent", "customer"):
        email = fresh_email(role)
        made = api.ok(api.call(api.admin, "POST", "/api/users", json={"email": email.upper(), "name": f"New {role}", "password": PASSWORD, "role": role}),
                      201, f"create a {role}")
        assert (made.get("email"), made.get("role"), made.get("name")) == (email, role, f"New {role}"), f"the new user: {made}"
        assert api.login(email, PASSWORD).role == role


USER_INVALID = [
    ("role-admin", {"role": "admin"}, ["role"]),
    ("role-unknown", {"role": "superuser"}, ["role"]),
    ("role-missing", {"role": None}, ["role"]),
    ("bad-email-and-password", {"email": "no", "password": "short", "role": "agent"}, ["email", "password"]),
]


@pytest.mark.requirement("R4")
@pytest.mark.category("validation")
@pytest.mark.parametrize("case, fields_sent, fields", USER_INVALID, ids=[c[0] for c in USER_INVALID])
def test_invalid_users_get_422(api, http, db, case, fields_sent, fields):
    email = fresh_email()
    body = {"email": email, "name": "Nina", "password": PASSWORD, **fields_sent}
    body = {k: v for k, v in body.items() if v is not None}
    api.assert_no_problems([api.validation_problem(api.call(api.admin, "POST", "/api/users", json=body), fields, f"create user {case}")], "user validation")
    assert db.scalar("SELECT count(*) FROM users WHERE email = %s", (email,)) == 0, "a refused user was stored"


@pytest.mark.requirement("R4")
@pytest.mark.category("state")
def test_the_admin_gets_409_for_a_taken_email(api, http):
    customer = api.customer()
    body = {"email": customer.email.upper(), "name": "Twin", "password": PASSWORD, "role": "agent"}
    api.error(api.call(api.admin, "POST", "/api/users", json=body), 409, "conflict", "an agent with a customer's email")
    assert api.login(customer.email, PASSWORD).role == "customer", "the customer is unchanged"


@pytest.mark.requirement("R4")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("role", ["agent", "customer"])
def test_only_admins_create_and_list_users(api, http, db, role):
    actor = api.agent() if role == "agent" else api.customer()
    email = fresh_email()
    body = {"email": email, "name": "Sneaky", "password": PASSWORD, "role": "agent"}
    api.error(api.call(actor, "POST", "/api/users", json=body), 403, "forbidden", f"an {role} creating a user")
    api.error(api.call(actor, "GET", "/api/users"), 403, "forbidden", f"an {role} listing users")
    assert db.scalar("SELECT count(*) FROM users WHERE email = %s", (email,)) == 0, "a refused user was stored"


@pytest.mark.requirement("R4")
@pytest.mark.category("api_surface")
def test_users_filter_by_exact_email_and_role(api, http):
    agent, customer = api.agent(), api.customer()
    by_email = api.ok(api.call(api.admin, "GET", "/api/users", params={"email": agent.email.upper()}), 200, "users by email")["items"]
    assert [(u["id"], u["role"]) for u in by_email] == [(agent.id, "agent")], f"exactly the agent: {by_email}"
    both = api.ok(api.call(api.admin, "GET", "/api/users", params={"email": customer.email, "role": "agent"}), 200, "users by email and role")["items"]
    assert both == [], f"a customer's email filtered by role agent: {both}"
    page = api.ok(api.call(api.admin, "GET", "/api/users", params={"role": "customer", "limit": 5}), 200, "customers")["items"]
    ids = [u["id"] for u in page]
    assert 0 < len(page) <= 5 and all(u["role"] == "customer" for u in page) and ids == sorted(ids), f"customers by id, at most 5: {page}"


@pytest.mark.requirement("R4", "R17")
@pytest.mark.category("validation")
@pytest.mark.parametrize("params", [{"role": "root"}, {"role": "agent' OR '1'='1"}, {"limit": "0"}, {"limit": "101"}, {"offset": "-1"}],
                         ids=["role-root", "role-sql", "limit-0", "limit-101", "offset-negative"])
def test_invalid_user_list_parameters_get_422(api, http, params):
    r = api.call(api.admin, "GET", "/api/users", params=params)
    api.assert_no_problems([api.validation_problem(r, list(params), f"GET /api/users {params}")], "user list parameters")
