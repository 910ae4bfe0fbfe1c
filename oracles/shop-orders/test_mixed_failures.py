"""Failed requests change nothing, also when valid fields travel with the failing one (spec.md: Errors).

"A request that fails changes nothing (no order, no stock change, no cart change), and a request
rejected with 401, 403, 404, 409 or 422 sends nothing to the provider": each item sends valid
changes together with the one field (or header, line, role) that makes the request fail, then
reads back that none of the valid fields was written and no side effect happened.
"""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http.account_items import refused_registration_item

pytestmark = [pytest.mark.tier("base")]

PRODUCT_KEYS = ("sku", "name", "description", "price", "stock", "active", "currency")


def product_state(api, product):
    got = api.get_product(product)
    return {k: got.get(k) for k in PRODUCT_KEYS}


def cart_state(api, customer):
    cart = api.cart(customer)
    return [(line.get("product_id"), line.get("quantity")) for line in cart.get("items", [])], cart.get("total")


def catalogue_size(api, http):
    return api.ok(http.get("/products", params={"limit": 1}), 200, "count the catalogue")["total"]


test_mixed_registration_that_fails_creates_nothing = refused_registration_item("R2", "R26")


@pytest.mark.requirement("R4", "R5", "R26")
@pytest.mark.category("validation")
def test_mixed_product_creation_with_one_invalid_field_creates_nothing(api, http, staff):
    sku = api.sku()
    valid = {"sku": sku, "name": "Mixed mug", "price": 900, "description": "A mug", "stock": 5, "active": True}
    cases = {
        "active as a string": ({**valid, "active": "yes"}, ["active"]),
        "a price of 0": ({**valid, "price": 0}, ["price"]),
        "a stock above 100000": ({**valid, "stock": 100_001}, ["stock"]),
        "a 1001-character description": ({**valid, "description": "d" * 1001}, ["description"]),
        "a blank name": ({**valid, "name": "  "}, ["name"]),
    }
    before = catalogue_size(api, http)
    problems = [api.validation_problem(http.post("/products", json=body, headers=staff.headers), fields, label) for label, (body, fields) in cases.items()]
    problems = [p for p in problems if p]
    assert not problems, "invalid products were not rejected:\n" + "\n".join(problems)
    assert catalogue_size(api, http) == before, "a refused creation must not add a product to the catalogue"
    r = http.post("/products", json=valid, headers=staff.headers)
    assert r.status_code == 201, f"the SKU of refused creations is still free: {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R6", "R26")
@pytest.mark.category("state")
def test_mixed_taken_sku_changes_nothing(api, http, staff):
    product = api.product(price=1000, stock=5, description="first")
    before, size = product_state(api, product), catalogue_size(api, http)
    r = http.post("/products", json={"sku": product["sku"], "name": "Twin", "price": 5, "description": "second", "stock": 99, "active": True}, headers=staff.headers)
    api.error(r, 409, "conflict", "a taken SKU with valid other fields")
    assert catalogue_size(api, http) == size, "the refused creation must not add a product"
    assert product_state(api, product) == before, "the refused creation must not change the product that has the SKU"


@pytest.mark.requirement("R8", "R5", "R26")
@pytest.mark.category("validation")
def test_mixed_product_edit_with_one_invalid_field_changes_nothing(api, http, staff):
    product = api.product(price=1000, stock=5, description="old")
    before = product_state(api, product)
    valid = {"name": "Renamed", "description": "new", "price": 2000, "stock": 50, "active": False}
    cases = {
        "active as a string": ({**valid, "active": "no"}, ["active"]),
        "a blank name": ({**valid, "name": " "}, ["name"]),
        "a 1001-character description": ({**valid, "description": "d" * 1001}, ["description"]),
        "a price above 1000000": ({**valid, "price": 1_000_001}, ["price"]),
        "a fractional stock": ({**valid, "stock": 1.5}, ["stock"]),
    }
    problems = [api.validation_problem(http.patch(f"/products/{product['id']}", json=body, headers=staff.headers), fields, label) for label, (body, fields) in cases.items()]
    problems = [p for p in problems if p]
    assert not problems, "invalid edits were not rejected:\n" + "\n".join(problems)
    after = product_state(api, product)
    assert after == before, f"a refused edit must write none of its valid fields:\n  before {before}\n  after  {after}"


@pytest.mark.requirement("R4", "R8")
@pytest.mark.category("authorization")
def test_mixed_customers_change_no_product(api, http):
    customer = api.customer()
    product = api.product(price=1000, stock=5, description="old")
    before, size = product_state(api, product), catalogue_size(api, http)
    sku = api.sku()
    api.error(http.post("/products", json={"sku": sku, "name": "Sneaky", "price": 1, "stock": 5, "description": "x"}, headers=customer.headers),
              403, "forbidden", "a customer creating a valid product")
    api.error(http.patch(f"/products/{product['id']}", json={"name": "Sneaky", "description": "x", "price": 1, "stock": 99, "active": False}, headers=customer.headers),
              403, "forbidden", "a customer editing every field of a product")
    assert product_state(api, product) == before, "the refused edit changed the product"
    assert catalogue_size(api, http) == size, "the refused creation added a product"
    r = http.post("/products", json={"sku": sku, "name": "Real", "price": 1}, headers=api.staff.headers)
    assert r.status_code == 201, f"the SKU a customer tried is still free: {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R9", "R10", "R26")
@pytest.mark.category("state")
def test_mixed_refused_cart_changes_keep_the_cart(api, http):
    customer = api.customer()
    a, b, c = api.product(price=100, stock=5), api.product(price=10, stock=5), api.product(price=1, stock=5)
    api.put(customer, a, 2)
    api.put(customer, b, 1)
    api.put(customer, c, 1)
    api.patch_product(c, active=False)
    before = cart_state(api, customer)
    refusals = (
        (f"/cart/items/{a['id']}", {"quantity": 100}, 422, "validation_error", "a quantity of 100 for a line already in the cart"),
        (f"/cart/items/{a['id']}", {"quantity": 6}, 409, "insufficient_stock", "6 of a line already in the cart with 5 in stock"),
        (f"/cart/items/{c['id']}", {"quantity": 3}, 409, "product_unavailable", "a new quantity for a line whose product is now inactive"),
        (f"/cart/items/ghost-{uuid.uuid4().hex}", {"quantity": 1}, 404, "not_found", "an unknown product"),
    )
    for path, body, status, code, what in refusals:
        api.error(http.put(path, json=body, headers=customer.headers), status, code, what)
    after = cart_state(api, customer)
    assert after == before, f"refused cart changes must keep every line, its quantity and its place:\n  before {before}\n  after  {after}"
    assert [api.get_product(p)["stock"] for p in (a, b, c)] == [5, 5, 5], "a cart change never touches stock"


@pytest.mark.requirement("R13", "R15", "R26")
@pytest.mark.category("validation")
def test_mixed_checkout_with_one_invalid_part_changes_nothing(api, http, payments):
    customer, a, b = api.two_lines((2, {"stock": 5}), (1, {"stock": 5}))
    before = cart_state(api, customer)
    k = api.key()
    problems = [
        api.validation_problem(api.try_checkout(customer, "not valid!", "1 Main St"), ["Idempotency-Key"], "an invalid key with a valid address and cart"),
        api.validation_problem(api.try_checkout(customer, k, " "), ["shipping_address"], "a valid key and cart with a blank address"),
        api.validation_problem(api.try_checkout(customer, k, "a" * 301), ["shipping_address"], "a valid key and cart with a 301-character address"),
    ]
    problems = [p for p in problems if p]
    assert not problems, "invalid checkouts were not rejected:\n" + "\n".join(problems)
    assert api.orders(customer)["total"] == 0, "a refused checkout must not create an order"
    assert cart_state(api, customer) == before, "a refused checkout must leave the cart as it was"
    assert [api.get_product(p)["stock"] for p in (a, b)] == [5, 5], "a refused checkout must not take stock"
    r = api.try_checkout(customer, k, "1 Main St")
    assert r.status_code == 201, f"the key of refused checkouts is still unused: {r.status_code} {r.text[:300]}"
    assert payments.charges_for(r.json()["id"]) == [], "nothing reaches the provider at checkout"


@pytest.mark.requirement("R14", "R15")
@pytest.mark.category("state")
def test_mixed_checkout_with_one_line_over_stock_changes_nothing(api, http):
    customer, fine, short = api.two_lines((3, {"stock": 5}), (4, {"stock": 5}))
    api.patch_product(short, stock=2)
    before = cart_state(api, customer)
    k = api.key()
    api.error(api.try_checkout(customer, k, "1 Main St"), 409, "insufficient_stock", "a cart whose second line exceeds the stock")
    assert api.orders(customer)["total"] == 0, "the refused checkout must not create an order"
    assert (api.get_product(fine)["stock"], api.get_product(short)["stock"]) == (5, 2), "the refused checkout must not take stock, not even for the line that fits"
    assert cart_state(api, customer) == before, "the refused checkout must leave the cart as it was"
    api.patch_product(short, stock=4)
    r = api.try_checkout(customer, k, "1 Main St")
    assert r.status_code == 201, f"the key of the refused checkout is still unused: {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R15")
@pytest.mark.category("state")
def test_mixed_key_reused_with_another_body_changes_nothing(api, http):
    customer = api.customer()
    first_product, later = api.product(stock=5), api.product(stock=5)
    api.put(customer, first_product, 1)
    k = api.key()
    first = api.checkout(customer, k, "1 Main St")
    api.put(customer, later, 2)
    before = cart_state(api, customer)
    api.error(api.try_checkout(customer, k, "2 Other Rd"), 409, "idempotency_conflict", "the same key with another shipping_address and a new cart")
    got = api.get_order(customer, first)
    assert (got.get("shipping_address"), got.get("status"), [x.get("product_id") for x in got.get("items", [])]) == ("1 Main St", "pending", [first_product["id"]]), (
        f"the refused checkout must not change the first order: {got}"
    )
    assert api.orders(customer)["total"] == 1, "the refused checkout must not create an order"
    assert api.get_product(later)["stock"] == 5, "the refused checkout must not take stock"
    assert cart_state(api, customer) == before, "the refused checkout must leave the cart as it was"
