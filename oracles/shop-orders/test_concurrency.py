"""Requests that arrive at once (spec.md: "Requests may arrive concurrently"; the status table:
pay makes "one charge at the provider", cancelling a paid order "one full refund at the
provider; stock restored"; any other action gets `409 invalid_state` and sends nothing).

One order paid, or cancelled, by a burst released together (http/concurrency.py): one request
wins, every other gets `409 invalid_state`, and the provider and the stock show the side effect
once.
"""

from __future__ import annotations

import pytest

from pytest_backendbench.http.concurrency import at_once, one_winner

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("side_effects")]


@pytest.mark.requirement("R16", "R17")
def test_an_order_paid_at_once_is_charged_once(api, http, payments):
    customer = api.customer()
    order = api.order(customer, (api.product(), 1))
    answers = at_once(http.base_url, lambda _: api.try_pay(customer, order), range(6), http.timeout_s)
    one_winner(answers, "six payments of one order at once", won=200, code="invalid_state")
    assert len(payments.charges_for(order["id"])) == 1, f"one charge at the provider: {payments.charges_for(order['id'])}"
    assert api.get_order(customer, order)["status"] == "paid", "the order is paid"


@pytest.mark.requirement("R21")
def test_a_paid_order_cancelled_at_once_is_refunded_and_restocked_once(api, http, payments):
    customer, product = api.customer(), api.product(stock=10)
    order = api.pay(customer, api.order(customer, (product, 3)))
    answers = at_once(http.base_url, lambda _: http.post(f"/orders/{order['id']}/cancel", headers=customer.headers), range(6), http.timeout_s)
    one_winner(answers, "six cancellations of one paid order at once", won=200, code="invalid_state")
    assert len(payments.refunds_for(order["charge_id"])) == 1, f"one refund at the provider: {payments.refunds_for(order['charge_id'])}"
    assert api.get_product(product)["stock"] == 10, f"the stock is restored once: {api.get_product(product)['stock']}, expected 10"
