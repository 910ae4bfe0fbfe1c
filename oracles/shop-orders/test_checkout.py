"""Checkout: the pending order, stock and cart effects, its rules and idempotency (spec.md: Checkout)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R12")
@pytest.mark.category("api_surface")
def test_checkout_creates_a_pending_order(api, http):
    customer, mug, tea = api.two_lines((2, {"price": 900}), (1, {"price": 450}))
    r = api.try_checkout(customer, api.key(), "42 Elm Street")
    assert r.status_code == 201, f"checking out a filled cart: {r.status_code} {r.text[:300]}"
    order = r.json()
    got = (order.get("customer_id"), order.get("status"), order.get("total"), order.get("currency"), order.get("shipping_address"))
    assert got == (customer.id, "pending", 2250, "usd", "42 Elm Street"), f"the order's fields: {order}"
    assert [(x["product_id"], x["unit_price"], x["quantity"], x["line_total"]) for x in order["items"]] == [
        (mug["id"], 900, 2, 1800), (tea["id"], 450, 1, 450)], f"the cart's lines are copied in order: {order['items']}"
    nulls = {k: order.get(k) for k in ("charge_id", "refund_id", "paid_at", "shipped_at", "cancelled_at")}
    assert set(nulls.values()) == {None}, f"a pending order has no charge, refund, paid_at, shipped_at or cancelled_at: {nulls}"
    keys = ["id", "customer_id", "status", "items", "total", "currency", "shipping_address", "charge_id", "refund_id", "created_at", "paid_at", "shipped_at", "cancelled_at"]
    got = api.get_order(customer, order)
    assert {k: got.get(k) for k in keys} == {k: order.get(k) for k in keys}, "reading the order back should give the same order (documented fields)"


@pytest.mark.requirement("R12")
@pytest.mark.category("state")
def test_checkout_takes_stock_and_empties_the_cart(api, http, checks):
    customer, product = api.shopper(4, stock=10)
    api.checkout(customer)
    assert api.get_product(product)["stock"] == 6, "checkout should decrement the stock by the line's quantity"
    assert checks.documented(api.cart(customer), {"items": [], "total": 0, "currency": "usd"}) == {"items": [], "total": 0, "currency": "usd"}, "checkout should empty the cart"


@pytest.mark.requirement("R12")
@pytest.mark.category("side_effects")
def test_checkout_charges_nothing(api, http, payments):
    customer = api.customer()
    order = api.order(customer, (api.product(), 1))
    assert payments.charges_for(order["id"]) == [], "nothing may be sent to the payments provider at checkout"


@pytest.mark.requirement("R12", "R26")
@pytest.mark.category("authorization")
def test_staff_cannot_check_out(api, http, staff):
    r = http.post("/orders", json={"shipping_address": "HQ"}, headers={**staff.headers, "Idempotency-Key": api.key()})
    api.error(r, 403, "forbidden", "staff checking out")


@pytest.mark.requirement("R13")
@pytest.mark.category("validation")
def test_checkout_needs_a_valid_idempotency_key(api, http):
    customer = api.customer()
    api.put(customer, api.product(), 1)
    problems = [api.validation_problem(api.try_checkout(customer, None), ["Idempotency-Key"], "no Idempotency-Key")]
    for label, value in (("an empty key", ""), ("a key with a space", "two words"), ("a 65-character key", "k" * 65), ("a key with a dot", "a.b")):
        problems.append(api.validation_problem(api.try_checkout(customer, value), ["Idempotency-Key"], label))
    problems = [p for p in problems if p]
    assert not problems, "invalid Idempotency-Key headers were not rejected:\n" + "\n".join(problems)
    assert len(api.cart(customer)["items"]) == 1, "a rejected checkout must leave the cart alone"
    assert api.try_checkout(customer, "K" * 64).status_code == 201, "a 64-character key is valid"


@pytest.mark.requirement("R13", "R27")
@pytest.mark.category("validation")
def test_checkout_validates_the_shipping_address(api, http):
    customer = api.customer()
    api.put(customer, api.product(), 1)
    problems = [
        api.validation_problem(api.try_checkout(customer, api.key(), address), ["shipping_address"], f"shipping_address {label}")
        for label, address in (("blank", "  "), ("empty", ""), ("of 301 characters", "a" * 301), ("a number", 12), ("null", None))
    ]
    r = http.post("/orders", json={}, headers={**customer.headers, "Idempotency-Key": api.key()})
    problems.append(api.validation_problem(r, ["shipping_address"], "shipping_address missing"))
    r = http.post("/orders", json={"shipping_address": ""}, headers=customer.headers)
    problems.append(api.validation_problem(r, ["Idempotency-Key", "shipping_address"], "no key and an empty address"))
    problems = [p for p in problems if p]
    assert not problems, "invalid checkouts were not rejected:\n" + "\n".join(problems)
    assert api.orders(customer)["total"] == 0, "no order may exist after rejected checkouts"


@pytest.mark.requirement("R14")
@pytest.mark.category("state")
def test_an_empty_cart_cannot_be_checked_out(api, http):
    customer = api.customer()
    api.error(api.try_checkout(customer, api.key()), 409, "cart_empty", "checking out an empty cart")


@pytest.mark.requirement("R14")
@pytest.mark.category("state")
def test_an_inactive_product_blocks_checkout(api, http):
    customer, kept, dropped = api.two_lines((1, {"stock": 5}), (1, {"stock": 5}))
    api.patch_product(dropped, active=False)
    api.error(api.try_checkout(customer, api.key()), 409, "product_unavailable", "checking out a cart with a deactivated product")
    assert len(api.cart(customer)["items"]) == 2, "a failed checkout must leave the cart as it was"
    assert api.get_product(kept)["stock"] == 5, "a failed checkout must not take stock"


@pytest.mark.requirement("R14")
@pytest.mark.category("state")
def test_stock_is_checked_again_at_checkout(api, http):
    customer, product = api.shopper(4, stock=5)
    api.patch_product(product, stock=3)
    api.error(api.try_checkout(customer, api.key()), 409, "insufficient_stock", "checking out 4 when only 3 are left")
    assert api.get_product(product)["stock"] == 3, "a failed checkout must not take stock"
    assert api.orders(customer)["total"] == 0, "no order may exist after a failed checkout"


@pytest.mark.requirement("R15")
@pytest.mark.category("state")
def test_a_repeated_checkout_is_answered_from_the_first(api, http):
    customer, product = api.shopper(2, stock=10)
    k = api.key()
    first = api.checkout(customer, k, "1 Main St")
    api.put(customer, product, 1)
    r = api.try_checkout(customer, k, "1 Main St")
    assert r.status_code == 200, f"a replay of the same key and body answers 200: {r.status_code} {r.text[:300]}"
    assert r.json().get("id") == first["id"], f"the replay answers the first order: {r.json()}"
    assert api.orders(customer)["total"] == 1, "a replay must not create a second order"
    assert api.get_product(product)["stock"] == 8, "a replay must not take stock again"
    assert api.cart(customer)["items"][0]["quantity"] == 1, "a replay must not touch the current cart"


@pytest.mark.requirement("R15")
@pytest.mark.category("state")
def test_a_key_reused_with_another_body_gets_409(api, http):
    customer, product = api.shopper(1)
    k = api.key()
    api.checkout(customer, k, "1 Main St")
    api.put(customer, product, 1)
    api.error(api.try_checkout(customer, k, "2 Other Rd"), 409, "idempotency_conflict", "the same key with another shipping_address")
    assert api.orders(customer)["total"] == 1, "no second order"


@pytest.mark.requirement("R15")
@pytest.mark.category("authorization")
def test_idempotency_keys_belong_to_their_customer(api, http):
    alice, bob = api.customer("alice"), api.customer("bob")
    product = api.product()
    k = api.key()
    api.put(alice, product, 1)
    api.put(bob, product, 1)
    hers = api.checkout(alice, k, "Same St 1")
    r = api.try_checkout(bob, k, "Same St 1")
    assert r.status_code == 201, f"bob's first checkout with a key alice used is a new checkout: {r.status_code} {r.text[:300]}"
    assert r.json()["id"] != hers["id"] and r.json()["customer_id"] == bob.id, f"bob must get his own order, not alice's: {r.json()}"


@pytest.mark.requirement("R15", "R14")
@pytest.mark.category("state")
def test_a_failed_checkout_does_not_use_up_its_key(api, http):
    customer = api.customer()
    k = api.key()
    api.error(api.try_checkout(customer, k), 409, "cart_empty", "the first attempt, with an empty cart")
    api.put(customer, api.product(), 1)
    r = api.try_checkout(customer, k)
    assert r.status_code == 201, f"after a failed checkout the same key creates the order: {r.status_code} {r.text[:300]}"
