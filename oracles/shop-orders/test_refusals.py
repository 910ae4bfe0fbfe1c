"""Refusals that change nothing, one field at a time, and guards condition by condition (issue 35).

spec.md, Errors: "A request that fails changes nothing (no order, no stock change, no cart
change), and a request rejected with 401, 403, 404, 409 or 422 sends nothing to the provider".
Each body with several fields is sent with one field bad at a time (each position, the others
valid changes), then read back. Guards: a declined charge leaves the order `pending` ("can be
paid again"), so cancelling it is a plain cancel with nothing sent to the provider; the checkout's
state rules come "in this order", each shown alone by undoing the one before through the API;
the final states refuse every action whatever timestamps and ids they carry.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_backendbench.http.refusals import one_invalid_field, unchanged

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("validation")]

PRODUCT = {"sku": "", "name": "Refusal mug", "price": 900, "description": "A mug", "stock": 5, "active": True}
PRODUCT_BAD = {"sku": ["lower-case", "AB", 7], "name": [" ", "n" * 101], "price": [0, 1_000_001, "900", 9.5], "description": ["d" * 1001, None],
               "stock": [-1, 100_001, 1.5], "active": ["yes", 1, None]}
CREATE_CASES = one_invalid_field(PRODUCT, PRODUCT_BAD)
EDIT = {"name": "Renamed", "description": "new", "price": 2000, "stock": 50, "active": False}
EDIT_CASES = one_invalid_field(EDIT, {k: v for k, v in PRODUCT_BAD.items() if k in EDIT})
USER = {"username": "", "password": "long enough secret"}
USER_CASES = one_invalid_field(USER, {"username": ["ab", "Upper", 5], "password": ["1234567", "p" * 129, None]})


def product_view(api: Any, product: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in api.get_product(product).items() if k != "created_at"}


def provider_requests(payments: Any, path: str) -> int:
    """How many requests the service has sent to ``path`` of the payments mock (the oracle's own left out)."""
    return sum(1 for e in payments.handle.requests() if e.get("path") == path and not (e.get("headers") or {}).get("x-oracle"))


def catalogue_size(api: Any) -> int:
    return int(api.ok(api.http.get("/products", params={"limit": 1}), 200, "count the catalogue")["total"])


@pytest.mark.requirement("R4", "R5", "R26")
@pytest.mark.parametrize("field,body", CREATE_CASES)
def test_a_refused_product_is_not_created(api, http, staff, field, body):
    body = {**body, "sku": body["sku"] or api.sku()}
    with unchanged(lambda: catalogue_size(api), f"POST /products with only {field} invalid"):
        problem = api.validation_problem(http.post("/products", json=body, headers=staff.headers), [field], f"a product with only {field} invalid")
    assert problem is None, problem
    if field != "sku":
        api.ok(http.post("/products", json={**body, field: PRODUCT[field]}, headers=staff.headers), 201, "the SKU of the refused product is still free")


@pytest.mark.requirement("R8", "R5", "R26")
@pytest.mark.parametrize("field,body", EDIT_CASES)
def test_a_refused_product_edit_changes_nothing(api, http, staff, field, body):
    product = api.product(price=1000, stock=5, description="old")
    with unchanged(lambda: product_view(api, product), f"PATCH with only {field} invalid"):
        problem = api.validation_problem(http.patch(f"/products/{product['id']}", json=body, headers=staff.headers), [field], f"an edit with only {field} invalid")
    assert problem is None, problem


@pytest.mark.requirement("R2", "R26")
@pytest.mark.parametrize("field,body", USER_CASES)
def test_a_refused_registration_takes_no_username(api, http, field, body):
    body = {**body, "username": body["username"] or api.unique("refused")}
    problem = api.validation_problem(http.post("/users", json=body), [field], f"a registration with only {field} invalid")
    assert problem is None, problem
    if field != "username":
        api.ok(http.post("/users", json={**body, field: USER[field]}), 201, "the username of the refused registration is still free")


@pytest.mark.requirement("R17", "R20")
@pytest.mark.category("side_effects")
@pytest.mark.parametrize("card", ["tok_decline", "tok_insufficient_funds"])
def test_cancelling_after_a_declined_charge_is_a_plain_cancel(api, http, payments, card):
    customer, product = api.shopper(2, stock=5)
    order = api.checkout(customer)
    api.error(api.try_pay(customer, order, card), 402, "payment_declined", f"paying with {card}")
    assert len(payments.charges_for(order["id"])) == 1, "one charge attempt for the declined payment"
    refunds = provider_requests(payments, "/refunds")
    cancelled = api.ok(http.post(f"/orders/{order['id']}/cancel", headers=customer.headers), 200, "cancel the order whose charge was declined")
    got = {k: cancelled.get(k) for k in ("status", "refund_id")}
    assert got == {"status": "cancelled", "refund_id": None}, f"a pending order (its charge declined) is cancelled, not refunded: {cancelled}"
    assert provider_requests(payments, "/refunds") == refunds, "cancelling a pending order sends no refund to the provider"
    assert len(payments.charges_for(order["id"])) == 1, "cancelling sends no charge"
    assert api.get_product(product)["stock"] == 5, "the stock comes back"


# the checkout's state rules in their stated order; each step undoes the rule refused before it
CHECKOUT_STEPS = [
    ("inactive and over its stock", {"active": False, "stock": 2}, "product_unavailable"),
    ("active again, still over its stock", {"active": True}, "insufficient_stock"),
    ("enough stock again", {"stock": 4}, None),
]


@pytest.mark.requirement("R14")
@pytest.mark.category("state")
def test_checkout_rules_come_in_order_and_each_alone(api, http, payments):
    customer, product = api.shopper(4, stock=5)
    key = api.key()
    api.error(api.try_checkout(api.customer(), key), 409, "cart_empty", "an empty cart (another customer's, the same key)")
    for what, change, code in CHECKOUT_STEPS:
        api.patch_product(product, **change)
        if code is None:
            made = api.ok(api.try_checkout(customer, key), 201, f"checkout once the product is {what}: the refused attempts used up no key")
            assert api.get_product(product)["stock"] == 0, f"the order took the 4 units: {made}"
            return
        with unchanged(lambda: (api.cart(customer), api.get_product(product)["stock"], api.orders(customer)["total"]), f"a checkout refused as {code}"):
            api.error(api.try_checkout(customer, key), 409, code, f"checkout of a line whose product is {what}")


@pytest.mark.requirement("R22", "R18", "R19")
@pytest.mark.category("state")
@pytest.mark.parametrize("final", ["cancelled", "refunded", "shipped"])
def test_final_orders_refuse_every_action_and_send_nothing(api, http, staff, payments, final):
    customer, _ = api.shopper(1, stock=5)
    order = api.checkout(customer)
    if final != "cancelled":
        order = api.pay(customer, order)
    order = api.ship(order) if final == "shipped" else api.cancel(customer, order)
    assert order.get("status") == final, f"setup: the order is {final}: {order}"
    sent = provider_requests(payments, "/charges"), provider_requests(payments, "/refunds")
    actions = [("pay", customer, {"payment_source": "tok_visa"}), ("ship", staff, None), ("cancel", customer, None), ("cancel", staff, None)]
    with unchanged(lambda: api.get_order(customer, order), f"actions on a {final} order"):
        for action, who, body in actions:
            api.error(http.post(f"/orders/{order['id']}/{action}", json=body, headers=who.headers), 409, "invalid_state", f"{action} a {final} order")
    assert (provider_requests(payments, "/charges"), provider_requests(payments, "/refunds")) == sent, f"a refused action on a {final} order sends nothing to the provider"
