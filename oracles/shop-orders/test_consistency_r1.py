"""R1 (evolved) items: stock under concurrency, idempotency over time, isolation and the provider's ledger."""

from __future__ import annotations

import pytest
import requests

pytestmark = [pytest.mark.tier("r1")]


@pytest.mark.requirement("R14", "R12")
@pytest.mark.category("state")
def test_the_last_unit_is_sold_once(api, http, service, checks):
    buyers = [api.customer(f"buyer{i}") for i in range(5)]
    product = api.product(stock=1)
    for buyer in buyers:
        api.put(buyer, product, 1)
    statuses: list[int] = []

    def attempt(buyer):
        r = requests.post(f"{service.base_url}/orders", json={"shipping_address": "Here"},
                          headers={**buyer.headers, "Idempotency-Key": api.key()}, timeout=http.timeout_s)
        statuses.append(r.status_code)

    checks.concurrently(attempt, list(buyers), 2 * http.timeout_s)
    assert sorted(statuses) == [201, 409, 409, 409, 409], f"five simultaneous checkouts of the last unit: one 201 and four 409, got {sorted(statuses)}"
    assert api.get_product(product)["stock"] == 0, "stock must end at 0, never below"


@pytest.mark.requirement("R15", "R16")
@pytest.mark.category("state")
def test_a_replay_answers_the_orders_current_state(api, http, payments):
    customer = api.customer()
    api.put(customer, api.product(), 1)
    k = api.key()
    order = api.checkout(customer, k)
    api.pay(customer, order)
    r = api.try_checkout(customer, k)
    assert r.status_code == 200 and r.json().get("status") == "paid", f"a later replay answers the order as it is now (paid): {r.status_code} {r.text[:300]}"
    assert len(payments.charges_for(order["id"])) == 1, "a replay must not charge"


@pytest.mark.requirement("R15", "R20")
@pytest.mark.category("side_effects")
def test_a_replay_after_cancelling_creates_nothing(api, http):
    customer, product = api.shopper(2, stock=4)
    k = api.key()
    order = api.cancel(customer, api.checkout(customer, k))
    r = api.try_checkout(customer, k)
    assert r.status_code == 200 and r.json().get("id") == order["id"] and r.json().get("status") == "cancelled", (
        f"the replay answers the cancelled order, not a new one: {r.status_code} {r.text[:300]}"
    )
    assert api.get_product(product)["stock"] == 4, "a replay of a cancelled checkout must not take stock again"


@pytest.mark.requirement("R16", "R17")
@pytest.mark.category("side_effects")
def test_the_charge_id_is_the_successful_charge(api, http, payments):
    customer = api.customer()
    order = api.order(customer, (api.product(price=333), 1))
    api.try_pay(customer, order, "tok_decline")
    api.try_pay(customer, order, "tok_error")
    paid = api.pay(customer, order, "tok_mastercard")
    charges = payments.charges_for(order["id"])
    assert [c["json"]["source"] for c in charges] == ["tok_decline", "tok_error", "tok_mastercard"], "each attempt reaches the provider once"
    charge = payments.charge(paid["charge_id"])
    assert (charge["status"], charge["source"], charge["amount"]) == ("succeeded", "tok_mastercard", 333), f"charge_id is the successful charge: {charge}"


@pytest.mark.requirement("R21", "R25")
@pytest.mark.category("side_effects")
def test_the_refund_is_for_what_was_paid(api, http, payments):
    customer = api.customer()
    product = api.product(price=1500, stock=3)
    order = api.pay(customer, api.order(customer, (product, 2)))
    api.patch_product(product, price=99)
    refunded = api.cancel(customer, order)
    refund = payments.refund(refunded["refund_id"])
    assert refund["amount"] == 3000, f"the refund is for the 3000 paid, not the new price: {refund}"
    assert payments.charge(order["charge_id"])["refunded"] is True, "the provider's charge should be fully refunded"


@pytest.mark.requirement("R23", "R24")
@pytest.mark.category("authorization")
def test_customers_see_nothing_of_each_other(api, http):
    alice, bob = api.customer("alice"), api.customer("bob")
    product = api.product(stock=10)
    hers = api.pay(alice, api.order(alice, (product, 1)))
    api.order(bob, (product, 1))
    for status in ("paid", None):
        body = api.orders(bob, **({"status": status} if status else {}))
        assert hers["id"] not in [o["id"] for o in body["items"]], f"bob's list (status={status}) shows alice's order: {body}"
    for r in (http.get(f"/orders/{hers['id']}", headers=bob.headers), http.post(f"/orders/{hers['id']}/cancel", headers=bob.headers)):
        api.error(r, 404, "not_found", f"bob: {r.request.method} {r.request.path_url}")
    assert api.get_order(alice, hers)["status"] == "paid", "alice's order is untouched"


@pytest.mark.requirement("R26", "R5")
@pytest.mark.category("validation")
def test_every_invalid_product_field_is_listed_once(api, http, staff):
    r = http.post("/products", json={"sku": "x", "name": "", "price": 0, "stock": 1.5, "active": "no", "description": 7}, headers=staff.headers)
    error = api.error(r, 422, "validation_error", "a product with six invalid fields")
    assert sorted(error.get("fields", [])) == ["active", "description", "name", "price", "sku", "stock"], f"each invalid field listed once: {error}"


@pytest.mark.requirement("R18", "R19")
@pytest.mark.category("authorization")
def test_roles_never_cross(api, http, staff, payments):
    customer = api.customer()
    order = api.order(customer, (api.product(), 1))
    api.error(api.try_pay(staff, order), 403, "forbidden", "staff paying")
    paid = api.pay(customer, order)
    api.error(http.post(f"/orders/{order['id']}/ship", headers=customer.headers), 403, "forbidden", "the customer shipping")
    assert api.ship(paid)["status"] == "shipped", "staff ship it"
    assert len(payments.charges_for(order["id"])) == 1, "only the customer's payment reached the provider"
