"""Customers, login, the staff token, public reads and body parsing (spec.md: Running, Conventions, Users)."""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http.account_items import health_item, login_item, register_item, taken_username_item

pytestmark = [pytest.mark.tier("base")]


test_health_answers_ok_without_auth = health_item("R1", name="test_health_answers_ok_without_auth", fixtures=["http"])


test_register_returns_the_customer_without_password = register_item("R2", name="test_register_returns_the_customer_without_password",
                                                                    fixtures=["http", "checks"], prefix="buyer", string_id=True, created_at=True)


@pytest.mark.requirement("R2", "R26")
@pytest.mark.category("validation")
def test_register_validates_username_and_password(api, http):
    fine = f"ok_{uuid.uuid4().hex[:8]}"
    cases = {
        "a dash in the username": ({"username": "no-dash", "password": "long enough"}, ["username"]),
        "two-character username": ({"username": "ab", "password": "long enough"}, ["username"]),
        "missing password": ({"username": fine}, ["password"]),
        "7-character password": ({"username": fine, "password": "1234567"}, ["password"]),
        "both wrong": ({"username": 12, "password": None}, ["username", "password"]),
    }
    problems = [api.validation_problem(http.post("/users", json=body), fields, label) for label, (body, fields) in cases.items()]
    problems = [p for p in problems if p]
    assert not problems, "invalid registrations were not rejected as the spec says:\n" + "\n".join(problems)


test_taken_username_gets_409 = taken_username_item("R2", caller=lambda api: api.customer("dup"), password="another one")


test_login_checks_credentials = login_item("R3", caller=lambda api: api.customer("login"), wrong_password=lambda password: "wrong-password")


@pytest.mark.requirement("R3")
@pytest.mark.category("validation")
def test_login_with_missing_fields_gets_422(api, http):
    problem = api.validation_problem(http.post("/auth/token", json={"username": "someone"}), ["password"], "login without password")
    assert problem is None, problem


@pytest.mark.requirement("R3", "R26")
@pytest.mark.category("authorization")
def test_protected_endpoints_need_a_valid_token(api, http):
    product = api.product()
    calls = [
        ("post", "/products"),
        ("patch", f"/products/{product['id']}"),
        ("get", "/cart"),
        ("put", f"/cart/items/{product['id']}"),
        ("delete", f"/cart/items/{product['id']}"),
        ("get", "/orders"),
        ("post", "/orders"),
        ("get", "/orders/some-order"),
        ("post", "/orders/some-order/pay"),
        ("post", "/orders/some-order/ship"),
        ("post", "/orders/some-order/cancel"),
    ]
    for headers, label in (({}, "no token"), ({"Authorization": "Basic c3RhZmY="}, "a malformed header"),
                           ({"Authorization": "Bearer staff"}, "a wrong token")):
        for method, path in calls:
            r = http.request(method, path, json={} if method in ("post", "put", "patch") else None, headers=headers)
            api.error(r, 401, "unauthorized", f"{method.upper()} {path} with {label}")


@pytest.mark.requirement("R3", "R7")
@pytest.mark.category("api_surface")
def test_product_reads_are_public(api, http):
    product = api.product()
    r = http.get("/products")
    assert r.status_code == 200, f"GET /products without a token: {r.status_code} {r.text[:300]}"
    r = http.get(f"/products/{product['id']}")
    assert r.status_code == 200 and r.json().get("sku") == product["sku"], f"GET /products/{{id}} without a token: {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R3", "R4")
@pytest.mark.category("authorization")
def test_the_staff_token_acts_as_staff(api, http, staff):
    r = http.post("/products", json={"sku": api.sku(), "name": "Staff made", "price": 5}, headers=staff.headers)
    assert r.status_code == 201, f"the SHOP_STAFF_TOKEN bearer should be staff: {r.status_code} {r.text[:300]}"
    api.error(http.get("/cart", headers=staff.headers), 403, "forbidden", "staff have no cart")


@pytest.mark.requirement("R27")
@pytest.mark.category("validation")
def test_bodies_must_be_json_objects(api, http, staff):
    customer = api.customer()
    product = api.product()
    for raw in ("not json", "[1]", "42", "null"):
        r = http.post("/products", data=raw, headers={**staff.headers, "Content-Type": "application/json"})
        api.error(r, 422, "validation_error", f"POST /products with the body {raw!r}")
        r = http.put(f"/cart/items/{product['id']}", data=raw, headers={**customer.headers, "Content-Type": "application/json"})
        api.error(r, 422, "validation_error", f"PUT /cart/items/{{id}} with the body {raw!r}")
    assert api.cart(customer)["items"] == [], "rejected requests must not change the cart"
