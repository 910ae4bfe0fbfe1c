"""Shipping, cancelling and refunding (spec.md: Statuses, Shipping, Cancelling)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R19")
@pytest.mark.category("state")
def test_staff_ship_a_paid_order(api, http, staff):
    customer = api.customer()
    order = api.pay(customer, api.order(customer, (api.product(), 1)))
    r = http.post(f"/orders/{order['id']}/ship", headers=staff.headers)
    assert r.status_code == 200, f"staff shipping a paid order: {r.status_code} {r.text[:300]}"
    shipped = r.json()
    assert shipped.get("status") == "shipped" and isinstance(shipped.get("shipped_at"), str), f"status shipped, shipped_at set: {shipped}"
    assert api.get_order(customer, order)["status"] == "shipped", "shipping did not persist"


@pytest.mark.requirement("R19", "R23")
@pytest.mark.category("authorization")
def test_customers_cannot_ship(api, http):
    customer, other = api.customer(), api.customer("other")
    order = api.pay(customer, api.order(customer, (api.product(), 1)))
    api.error(http.post(f"/orders/{order['id']}/ship", headers=customer.headers), 403, "forbidden", "the customer shipping their own order")
    api.error(http.post(f"/orders/{order['id']}/ship", headers=other.headers), 404, "not_found", "another customer shipping it")
    assert api.get_order(customer, order)["status"] == "paid", "rejected shipping changed the order"


@pytest.mark.requirement("R19")
@pytest.mark.category("state")
def test_only_paid_orders_ship(api, http, staff):
    customer = api.customer()
    pending = api.order(customer, (api.product(), 1))
    api.error(http.post(f"/orders/{pending['id']}/ship", headers=staff.headers), 409, "invalid_state", "shipping a pending order")
    cancelled = api.cancel(customer, api.order(customer, (api.product(), 1)))
    api.error(http.post(f"/orders/{cancelled['id']}/ship", headers=staff.headers), 409, "invalid_state", "shipping a cancelled order")


@pytest.mark.requirement("R20")
@pytest.mark.category("state")
def test_cancelling_a_pending_order(api, http):
    customer = api.customer()
    product = api.product(stock=10)
    order = api.order(customer, (product, 4))
    r = http.post(f"/orders/{order['id']}/cancel", headers=customer.headers)
    assert r.status_code == 200, f"cancelling a pending order: {r.status_code} {r.text[:300]}"
    got = r.json()
    assert (got.get("status"), got.get("refund_id")) == ("cancelled", None) and isinstance(got.get("cancelled_at"), str), (
        f"status cancelled, cancelled_at set, no refund: {got}"
    )
    assert api.get_product(product)["stock"] == 10, "cancelling should give the 4 units back to stock"


@pytest.mark.requirement("R20")
@pytest.mark.category("side_effects")
def test_cancelling_a_pending_order_sends_nothing(api, http, payments):
    customer = api.customer()
    order = api.cancel(customer, api.order(customer, (api.product(), 1)))
    assert payments.charges_for(order["id"]) == [], "cancelling an unpaid order must not charge"
    assert payments.refunds_for(order["charge_id"]) == [], "cancelling an unpaid order must not refund"


@pytest.mark.requirement("R21")
@pytest.mark.category("side_effects")
def test_cancelling_a_paid_order_refunds_it(api, http, payments):
    customer = api.customer()
    order = api.pay(customer, api.order(customer, (api.product(price=2500), 2)))
    refunded = api.cancel(customer, order)
    refunds = payments.refunds_for(order["charge_id"])
    assert len(refunds) == 1, f"exactly one refund of the order's charge should reach the provider, got {len(refunds)}"
    amount = refunds[0]["json"].get("amount")
    assert amount in (None, 5000), f"the refund is for the full total (amount omitted or 5000): {refunds[0]['json']}"
    assert refunded["refund_id"], f"refund_id should be set: {refunded}"
    refund = payments.refund(refunded["refund_id"])
    assert (refund["charge"], refund["amount"]) == (order["charge_id"], 5000), f"refund_id names the provider's full refund: {refund}"


@pytest.mark.requirement("R21")
@pytest.mark.category("side_effects")
def test_a_refund_failure_gets_502_and_changes_nothing(api, http, payments):
    customer = api.customer()
    product = api.product(price=700, stock=5)
    order = api.pay(customer, api.order(customer, (product, 2)))
    payments.fail_refunds(order["charge_id"])
    api.error(http.post(f"/orders/{order['id']}/cancel", headers=customer.headers), 502, "payment_unavailable", "cancelling while refunds fail")
    got = api.get_order(customer, order)
    assert (got["status"], got["refund_id"], got["cancelled_at"]) == ("paid", None, None), f"the order stays paid after a failed refund: {got}"
    assert api.get_product(product)["stock"] == 3, "a failed cancel must not restore stock"
    assert len(payments.refunds_for(order["charge_id"])) == 1, "one refund attempt reached the provider"


@pytest.mark.requirement("R21")
@pytest.mark.category("state")
def test_a_refunded_order_gives_back_its_stock(api, http):
    customer = api.customer()
    product = api.product(stock=5)
    order = api.pay(customer, api.order(customer, (product, 2)))
    assert api.get_product(product)["stock"] == 3, "setup: checkout took 2"
    got = api.cancel(customer, order)
    assert (got["status"], got["charge_id"]) == ("refunded", order["charge_id"]), f"status refunded, charge kept: {got}"
    assert isinstance(got["cancelled_at"], str), f"cancelled_at is set for a refund too: {got}"
    assert api.get_product(product)["stock"] == 5, "the refunded units go back to stock"


@pytest.mark.requirement("R21", "R23")
@pytest.mark.category("authorization")
def test_staff_may_cancel_a_customers_order(api, http, staff, payments):
    customer = api.customer()
    order = api.pay(customer, api.order(customer, (api.product(), 1)))
    got = api.cancel(staff, order)
    assert got["status"] == "refunded", f"staff cancelling a paid order refunds it: {got}"
    assert len(payments.refunds_for(order["charge_id"])) == 1, "one refund for the staff's cancel"


@pytest.mark.requirement("R22")
@pytest.mark.category("side_effects")
def test_a_shipped_order_cannot_be_cancelled(api, http, payments):
    customer = api.customer()
    order = api.ship(api.pay(customer, api.order(customer, (api.product(), 1))))
    api.error(http.post(f"/orders/{order['id']}/cancel", headers=customer.headers), 409, "invalid_state", "cancelling a shipped order")
    assert payments.refunds_for(order["charge_id"]) == [], "a shipped order must not be refunded"
    assert api.get_order(customer, order)["status"] == "shipped", "the rejected cancel changed the order"


@pytest.mark.requirement("R22")
@pytest.mark.category("state")
def test_final_states_stay_final(api, http, staff):
    customer = api.customer()
    product = api.product(stock=10)
    cancelled = api.cancel(customer, api.order(customer, (product, 1)))
    refunded = api.cancel(customer, api.pay(customer, api.order(customer, (product, 1))))
    for order in (cancelled, refunded):
        api.error(http.post(f"/orders/{order['id']}/cancel", headers=customer.headers), 409, "invalid_state", f"cancelling a {order['status']} order")
        api.error(http.post(f"/orders/{order['id']}/ship", headers=staff.headers), 409, "invalid_state", f"shipping a {order['status']} order")
    assert api.get_product(product)["stock"] == 10, "rejected cancels must not give stock back twice"


@pytest.mark.requirement("R23")
@pytest.mark.category("authorization")
def test_another_customer_cannot_cancel(api, http, payments):
    customer, other = api.customer(), api.customer("other")
    order = api.pay(customer, api.order(customer, (api.product(), 1)))
    api.error(http.post(f"/orders/{order['id']}/cancel", headers=other.headers), 404, "not_found", "another customer cancelling")
    assert payments.refunds_for(order["charge_id"]) == [], "a rejected cancel must not refund"
    assert api.get_order(customer, order)["status"] == "paid", "a rejected cancel changed the order"
