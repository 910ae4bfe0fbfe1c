"""Carts: lines, quantities, current prices and privacy (spec.md: Cart)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R9")
@pytest.mark.category("api_surface")
def test_a_new_cart_is_empty(api, http, checks):
    customer = api.customer()
    assert checks.documented(api.cart(customer), {"items": [], "total": 0, "currency": "usd"}) == {"items": [], "total": 0, "currency": "usd"}, "a new customer's cart is empty"


@pytest.mark.requirement("R9")
@pytest.mark.category("api_surface")
def test_cart_lines_and_totals(api, http):
    customer = api.customer()
    mug, tea = api.product(price=900), api.product(price=450)
    api.put(customer, mug, 2)
    r = http.put(f"/cart/items/{tea['id']}", json={"quantity": 3}, headers=customer.headers)
    assert r.status_code == 200, f"putting a product into the cart: {r.status_code} {r.text[:300]}"
    cart = r.json()
    expected = [
        {"product_id": mug["id"], "sku": mug["sku"], "name": mug["name"], "unit_price": 900, "quantity": 2, "line_total": 1800},
        {"product_id": tea["id"], "sku": tea["sku"], "name": tea["name"], "unit_price": 450, "quantity": 3, "line_total": 1350},
    ]
    lines = [{k: line.get(k) for k in expected[0]} for line in cart["items"]]
    assert lines == expected, f"cart lines in first-added order:\n  expected {expected}\n  got      {lines}"
    assert (cart["total"], cart["currency"]) == (3150, "usd"), f"total is the sum of line totals: {cart}"
    line_keys = ["product_id", "sku", "name", "unit_price", "quantity", "line_total"]
    same = lambda c: (c.get("total"), c.get("currency"), [{k: x.get(k) for k in line_keys} for x in c.get("items", [])])
    assert same(api.cart(customer)) == same(cart), "GET /cart should answer the same cart (documented fields)"


@pytest.mark.requirement("R9")
@pytest.mark.category("state")
def test_putting_again_sets_the_quantity_in_place(api, http):
    customer, a, b = api.two_lines((1, {"price": 100}), (1, {"price": 10}))
    cart = api.put(customer, a, 5)
    assert [(x["product_id"], x["quantity"]) for x in cart["items"]] == [(a["id"], 5), (b["id"], 1)], (
        f"the quantity is replaced (not added) and the line keeps its place: {cart['items']}"
    )
    assert cart["total"] == 510, f"total after the change: {cart}"


@pytest.mark.requirement("R9")
@pytest.mark.category("state")
def test_the_cart_shows_current_prices(api, http):
    customer, product = api.shopper(2, price=1000)
    api.patch_product(product, price=1200, name="Renamed mug")
    cart = api.cart(customer)
    line = cart["items"][0]
    assert (line["unit_price"], line["line_total"], line["name"], cart["total"]) == (1200, 2400, "Renamed mug", 2400), (
        f"the cart reflects the product's current price and name: {cart}"
    )


@pytest.mark.requirement("R9")
@pytest.mark.category("authorization")
def test_staff_have_no_cart(api, http, staff):
    product = api.product()
    api.error(http.get("/cart", headers=staff.headers), 403, "forbidden", "staff reading a cart")
    api.error(http.put(f"/cart/items/{product['id']}", json={"quantity": 1}, headers=staff.headers), 403, "forbidden", "staff filling a cart")
    # The product is in no cart: "403 on every cart endpoint" and "404 before 403" are both readings.
    r = http.delete(f"/cart/items/{product['id']}", headers=staff.headers)
    expected = {403: "forbidden", 404: "not_found"}
    assert r.status_code in expected, f"staff emptying a cart: expected 403 (or 404, the product being in no cart), got {r.status_code} {r.text[:200]}"
    api.error(r, r.status_code, expected[r.status_code], "staff emptying a cart")


@pytest.mark.requirement("R10", "R27")
@pytest.mark.category("validation")
def test_quantity_is_validated(api, http):
    customer = api.customer()
    product = api.product(stock=500)
    problems = []
    for label, body in (("0", {"quantity": 0}), ("100", {"quantity": 100}), ("1.5", {"quantity": 1.5}), ("a string", {"quantity": "2"}),
                        ("true", {"quantity": True}), ("null", {"quantity": None}), ("missing", {})):
        r = http.put(f"/cart/items/{product['id']}", json=body, headers=customer.headers)
        problems.append(api.validation_problem(r, ["quantity"], f"quantity {label}"))
    problems = [p for p in problems if p]
    assert not problems, "invalid quantities were not rejected:\n" + "\n".join(problems)
    assert api.cart(customer)["items"] == [], "rejected quantities must not change the cart"
    assert api.put(customer, product, 99)["items"][0]["quantity"] == 99, "99 is the largest valid quantity"


@pytest.mark.requirement("R10")
@pytest.mark.category("api_surface")
def test_unknown_product_gets_404(api, http):
    customer = api.customer()
    r = http.put("/cart/items/no-such-product", json={"quantity": 1}, headers=customer.headers)
    api.error(r, 404, "not_found", "putting an unknown product into the cart")
    r = http.put("/cart/items/no-such-product", json={"quantity": 0}, headers=customer.headers)
    api.error(r, 404, "not_found", "an unknown product with an invalid quantity (404 before 422)")


@pytest.mark.requirement("R10")
@pytest.mark.category("state")
def test_inactive_products_cannot_be_added(api, http):
    customer = api.customer()
    product = api.product(active=False)
    r = http.put(f"/cart/items/{product['id']}", json={"quantity": 1}, headers=customer.headers)
    api.error(r, 409, "product_unavailable", "putting an inactive product into the cart")
    assert api.cart(customer)["items"] == [], "the rejected line must not be in the cart"


@pytest.mark.requirement("R10")
@pytest.mark.category("state")
def test_quantity_cannot_exceed_stock(api, http):
    customer = api.customer()
    product = api.product(stock=3)
    r = http.put(f"/cart/items/{product['id']}", json={"quantity": 4}, headers=customer.headers)
    api.error(r, 409, "insufficient_stock", "4 of a product with 3 in stock")
    assert api.put(customer, product, 3)["items"][0]["quantity"] == 3, "exactly the stock is allowed"
    assert api.get_product(product)["stock"] == 3, "a cart does not reserve stock"


@pytest.mark.requirement("R11")
@pytest.mark.category("state")
def test_removing_a_line(api, http):
    customer, a, b = api.two_lines((1, {"price": 100}), (2, {"price": 10}))
    r = http.delete(f"/cart/items/{a['id']}", headers=customer.headers)
    assert r.status_code == 200, f"removing a line: {r.status_code} {r.text[:300]}"
    cart = r.json()
    assert [x["product_id"] for x in cart["items"]] == [b["id"]] and cart["total"] == 20, f"only the other line remains: {cart}"


@pytest.mark.requirement("R11")
@pytest.mark.category("api_surface")
def test_removing_what_is_not_in_the_cart_gets_404(api, http):
    customer = api.customer()
    product = api.product()
    api.error(http.delete(f"/cart/items/{product['id']}", headers=customer.headers), 404, "not_found", "removing a product not in the cart")


@pytest.mark.requirement("R11")
@pytest.mark.category("authorization")
def test_carts_are_private(api, http):
    alice, bob = api.customer("alice"), api.customer("bob")
    product = api.carted(alice, 2, price=100)
    assert api.cart(bob)["items"] == [], "bob must not see alice's cart lines"
    api.error(http.delete(f"/cart/items/{product['id']}", headers=bob.headers), 404, "not_found", "bob removing a line from his own empty cart")
    api.put(bob, product, 1)
    assert api.cart(alice)["items"][0]["quantity"] == 2, "bob's cart changes must not touch alice's cart"
