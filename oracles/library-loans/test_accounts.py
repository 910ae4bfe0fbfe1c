"""Health, login, tokens, staff-only endpoints and librarians (spec.md: Running; Accounts and authorization)."""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http.account_items import health_item

pytestmark = [pytest.mark.tier("base")]


test_health_answers_ok_without_auth = health_item("R1", name="test_health_answers_ok_without_auth", fixtures=["http"])


@pytest.mark.requirement("R2")
@pytest.mark.category("api_surface")
def test_the_bootstrap_librarian_logs_in_as_staff(api, staff):
    answer = api.login(api.admin_username, api.admin_password)
    assert isinstance(answer.get("token"), str) and answer["token"], f"a token string: {answer}"
    assert (answer.get("role"), answer.get("patron_id")) == ("staff", None), f"role staff and patron_id null: {answer}"


@pytest.mark.requirement("R2")
@pytest.mark.category("api_surface")
def test_a_patron_logs_in_with_the_card_number(api):
    patron = api.patron()
    answer = api.login(patron.card_number, patron.password)
    assert (answer.get("role"), answer.get("patron_id")) == ("patron", patron.id), f"role patron and the patron's id: {answer}"
    me = api.ok(api.http.get(f"/patrons/{patron.id}", headers={"Authorization": f"Bearer {answer['token']}"}), 200, "read myself")
    assert me["card_number"] == patron.card_number, f"the token acts as the patron: {me}"


@pytest.mark.requirement("R2")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("case", ["wrong-password", "unknown-username", "staff-password-for-patron"])
def test_wrong_credentials_get_401(api, http, case):
    patron = api.patron()
    username, password = {
        "wrong-password": (patron.card_number, patron.password + "x"),
        "unknown-username": ("nobody." + uuid.uuid4().hex[:8], patron.password),
        "staff-password-for-patron": (patron.card_number, api.admin_password),
    }[case]
    api.error(http.post("/auth/token", json={"username": username, "password": password}), 401, "unauthorized", f"login with {case}")


@pytest.mark.requirement("R2", "R20")
@pytest.mark.category("validation")
@pytest.mark.parametrize("body", [{"username": "head.librarian", "password": None}, {"password": "x" * 10}, {"username": 12345678, "password": "x" * 10}, []],
                         ids=["no-password", "no-username", "number-username", "array"])
def test_a_malformed_login_gets_422(api, http, body):
    r = http.post("/auth/token", json=body)
    assert r.status_code == 422 and r.json().get("error") == "validation_error", f"POST /auth/token {body}: {r.status_code} {r.text[:200]}"


PROTECTED = [("GET", "/patrons"), ("POST", "/patrons"), ("GET", "/patrons/1"), ("GET", "/patrons/1/loans"), ("GET", "/patrons/1/holds"),
             ("POST", "/titles"), ("GET", "/titles/1"), ("GET", "/copies/B0000001"), ("POST", "/checkouts"), ("POST", "/returns"),
             ("GET", "/loans/1"), ("POST", "/loans/1/renew"), ("POST", "/holds"), ("GET", "/holds/1"), ("DELETE", "/holds/1"),
             ("POST", "/staff"), ("POST", "/patrons/1/payments")]


@pytest.mark.requirement("R2")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("method,path", PROTECTED, ids=[f"{m}-{p}" for m, p in PROTECTED])
def test_every_endpoint_needs_a_token(http, api, method, path):
    for headers in ({}, {"Authorization": "Bearer not-a-token-" + uuid.uuid4().hex}):
        r = http.request(method, path, json={}, headers=headers)
        api.error(r, 401, "unauthorized", f"{method} {path} with {headers or 'no token'}")


STAFF_ONLY = [("POST", "/staff", {"username": "x" + uuid.uuid4().hex[:8], "password": "long enough"}), ("POST", "/patrons", None),
              ("GET", "/patrons", None), ("POST", "/patrons/{me}/payments", {"amount": 1}), ("POST", "/titles", {"title": "T", "author": "A"}),
              ("POST", "/titles/{title}/copies", {"barcode": "ZZ"}), ("GET", "/titles/{title}/holds", None),
              ("POST", "/checkouts", None), ("POST", "/returns", None)]


@pytest.mark.requirement("R3")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("method,path,body", STAFF_ONLY, ids=[f"{m}-{p}" for m, p, _ in STAFF_ONLY])
def test_patrons_get_403_on_staff_only_endpoints(api, http, method, path, body):
    patron, title = api.patron(), api.title()
    if body is None and path == "/patrons" and method == "POST":
        body = api.patron_body()
    elif body is None and path == "/checkouts":
        body = {"card_number": patron.card_number, "barcode": title.barcodes[0], "date": "2030-03-01"}
    elif body is None and path == "/returns":
        body = {"barcode": title.barcodes[0], "date": "2030-03-01"}
    url = path.format(me=patron.id, title=title.id)
    api.error(http.request(method, url, json=body, headers=patron.headers), 403, "forbidden", f"a patron's {method} {url}")
    assert api.status(title.barcodes[0]) == "available", "the refused request changed nothing"


@pytest.mark.requirement("R3")
@pytest.mark.category("api_surface")
def test_staff_create_a_librarian_who_can_log_in(api, http, staff):
    username, password = "lib." + uuid.uuid4().hex[:10], "pw-" + uuid.uuid4().hex
    made = api.ok(http.post("/staff", json={"username": username, "password": password}, headers=staff.headers), 201, "create a librarian")
    assert made.get("username") == username and isinstance(made.get("id"), int), f"the new librarian: {made}"
    answer = api.login(username, password)
    assert answer.get("role") == "staff", f"the new librarian logs in as staff: {answer}"
    token = {"Authorization": f"Bearer {answer['token']}"}
    api.ok(http.post("/titles", json={"title": "By the new librarian", "author": "Me"}, headers=token), 201, "the new librarian works")


@pytest.mark.requirement("R3")
@pytest.mark.category("state")
def test_a_taken_username_gets_409(api, http, staff):
    username = "lib." + uuid.uuid4().hex[:10]
    api.ok(http.post("/staff", json={"username": username, "password": "first-password"}, headers=staff.headers), 201, "create a librarian")
    r = http.post("/staff", json={"username": username, "password": "second-password"}, headers=staff.headers)
    api.error(r, 409, "username_taken", "the same username again")
    api.login(username, "first-password")


@pytest.mark.requirement("R3")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field,value", [("username", "Lib.upper"), ("username", "ab"), ("username", "9lives"), ("username", "a" * 33),
                                         ("password", "short12"), ("password", "p" * 129), ("password", 12345678)],
                         ids=["upper-case", "too-short", "starts-with-digit", "too-long", "password-7", "password-129", "password-number"])
def test_invalid_librarian_fields_get_422(api, http, staff, field, value):
    body = {"username": "lib." + uuid.uuid4().hex[:10], "password": "long enough", field: value}
    api.invalid(http.post("/staff", json=body, headers=staff.headers), [field], f"POST /staff with {field}={value!r}")


@pytest.mark.requirement("R20")
@pytest.mark.category("api_surface")
def test_a_method_a_path_does_not_have_gets_405(api, service, checks):
    problems = checks.wrong_method_problems(service, 30, "/health", api.staff.headers)
    assert not problems, "\n".join(problems)
    assert api.http.get("/health").status_code == 200
