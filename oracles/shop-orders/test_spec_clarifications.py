"""Passages careful readers found open, now settled in spec.md (issue 15); each item tests the sentence from both sides.

- Errors: "a path that exists but not with the request's method gets `405` (`method_not_allowed`)".
- Lists: "An empty value (`limit=`, `offset=`) is invalid too: only an absent parameter takes its default."
- Checkout: "\"Same body\" compares the defined field `shipping_address` only".
- Paying: "the provider never reports a decline with a `4xx`, only as a `201` charge with `status: \"declined\"`".
- Cancelling: "The stock goes back up in full even past 100000".
"""

from __future__ import annotations

import pytest

from pytest_backendbench.http.account_items import empty_paging_item, wrong_method_item

pytestmark = [pytest.mark.tier("base")]


test_a_method_a_path_does_not_have_gets_405 = wrong_method_item("R26", caller=lambda api: api.customer())


test_an_empty_limit_or_offset_is_invalid_not_the_default = empty_paging_item("R24", "R26", caller=lambda api: api.customer(), path="/orders", other_path="/products", other_caller=None)


@pytest.mark.requirement("R15")
@pytest.mark.category("state")
def test_a_replayed_checkout_compares_only_the_defined_field(api, http):
    customer, product = api.shopper(2, stock=10)
    k = api.key()
    headers = {**customer.headers, "Idempotency-Key": k}
    first = api.ok(http.post("/orders", json={"shipping_address": "1 Main St", "note": "leave at the door"}, headers=headers), 201, "check out")
    for label, body in (("another undefined field value", {"shipping_address": "1 Main St", "note": "ring twice", "gift": True}),
                        ("no undefined field", {"shipping_address": "1 Main St"})):
        r = http.post("/orders", json=body, headers=headers)
        assert r.status_code == 200, f"a replay with {label} is the same body (200): {r.status_code} {r.text[:300]}"
        assert r.json().get("id") == first["id"], f"a replay with {label} answers the first order: {r.text[:300]}"
    r = http.post("/orders", json={"shipping_address": "2 Other Rd", "note": "leave at the door"}, headers=headers)
    api.error(r, 409, "idempotency_conflict", "the same key with another shipping_address")
    assert api.orders(customer)["total"] == 1, "one order only"
    assert api.get_product(product)["stock"] == 8, "the stock was taken once"


@pytest.mark.requirement("R17")
@pytest.mark.category("side_effects")
def test_a_provider_4xx_is_a_failure_and_a_decline_is_a_201_charge(api, http, payments):
    customer = api.customer()
    # 2 x 99 x 1,000,000 cents: more than the provider takes in one charge, so it answers 400.
    big = api.order(customer, (api.product(price=1_000_000, stock=99), 99), (api.product(price=1_000_000, stock=99), 99))
    api.error(api.try_pay(customer, big, "tok_visa"), 502, "payment_unavailable", "the provider answering 400 to the charge")
    got = api.get_order(customer, big)
    assert (got.get("status"), got.get("charge_id"), got.get("paid_at")) == ("pending", None, None), f"the order stays pending: {got}"
    small = api.order(customer, (api.product(price=1_500), 1))
    api.error(api.try_pay(customer, small, "tok_decline"), 402, "payment_declined", "a 201 charge with status declined")
    assert api.get_order(customer, small).get("status") == "pending", "a declined order stays pending"
    assert len(payments.charges_for(small["id"])) == 1, "the decline came from one charge"


@pytest.mark.requirement("R20", "R8")
@pytest.mark.category("state")
def test_a_cancel_restores_stock_past_100000(api, http, staff):
    customer = api.customer()
    product = api.product(stock=100_000)
    order = api.order(customer, (product, 5))
    assert api.get_product(product)["stock"] == 99_995, "checkout took 5"
    api.patch_product(product, stock=100_000)
    api.cancel(customer, order)
    assert api.get_product(product)["stock"] == 100_005, "the cancel puts all 5 back, even past 100000"
    r = http.patch(f"/products/{product['id']}", json={"stock": 100_001}, headers=staff.headers)
    problem = api.validation_problem(r, ["stock"], "a request setting stock to 100001")
    assert problem is None, problem
    assert api.get_product(product)["stock"] == 100_005, "the refused PATCH changed the stock"
