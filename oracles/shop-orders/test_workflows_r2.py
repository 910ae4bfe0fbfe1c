"""R2 (evolved) items: shopping journeys across catalogue, cart, orders and the payments provider."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r2"), pytest.mark.weight(2.0)]


@pytest.mark.requirement("R9", "R12", "R16", "R19", "R24")
@pytest.mark.category("workflow")
def test_browse_buy_pay_ship(api, http, staff, payments):
    customer, lamp, bulb = api.two_lines((1, {"price": 4999, "stock": 2}), (4, {"price": 299, "stock": 20}))
    assert api.cart(customer)["total"] == 6195, "cart total before checkout"
    order = api.checkout(customer)
    assert (api.get_product(lamp)["stock"], api.get_product(bulb)["stock"]) == (1, 16), "stock after checkout"
    paid = api.pay(customer, order)
    shipped = api.ship(paid)
    assert (shipped["status"], shipped["charge_id"]) == ("shipped", paid["charge_id"]), f"shipped, same charge: {shipped}"
    assert [o["status"] for o in api.orders(customer)["items"]] == ["shipped"], "the customer sees one shipped order"
    assert [c["json"]["amount"] for c in payments.charges_for(order["id"])] == [6195], "one charge of the total"
    api.error(http.post(f"/orders/{order['id']}/cancel", headers=customer.headers), 409, "invalid_state", "cancelling after shipping")


@pytest.mark.requirement("R14", "R20", "R21", "R10")
@pytest.mark.category("workflow")
def test_stock_freed_by_a_refund_can_be_bought(api, http, payments):
    first, second = api.customer("first"), api.customer("second")
    product = api.product(price=800, stock=2)
    order = api.pay(first, api.order(first, (product, 2)))
    api.error(http.put(f"/cart/items/{product['id']}", json={"quantity": 1}, headers=second.headers), 409, "insufficient_stock", "sold out")
    api.cancel(first, order)
    assert api.get_product(product)["stock"] == 2, "the refund gives the stock back"
    theirs = api.pay(second, api.order(second, (product, 2)))
    assert theirs["status"] == "paid", f"the second customer buys the freed units: {theirs}"
    assert len(payments.refunds_for(order["charge_id"])) == 1 and len(payments.charges_for(theirs["id"])) == 1, "one refund, one new charge"


@pytest.mark.requirement("R14", "R11", "R8")
@pytest.mark.category("workflow")
def test_a_product_withdrawn_while_in_the_cart(api, http):
    customer, kept, withdrawn = api.two_lines((1, {"price": 100, "stock": 5}), (1, {"price": 200, "stock": 5}))
    api.patch_product(withdrawn, active=False)
    k = api.key()
    api.error(api.try_checkout(customer, k), 409, "product_unavailable", "checking out with a withdrawn product")
    cart = api.ok(http.delete(f"/cart/items/{withdrawn['id']}", headers=customer.headers), 200, "remove the withdrawn line")
    assert cart["total"] == 100, f"only the kept line remains: {cart}"
    order = api.ok(api.try_checkout(customer, k), 201, "check out again with the same key")
    assert [x["product_id"] for x in order["items"]] == [kept["id"]] and order["total"] == 100, f"the order holds the kept product: {order}"
    assert api.get_product(withdrawn)["stock"] == 5, "the withdrawn product's stock is untouched"


@pytest.mark.requirement("R17", "R21", "R16")
@pytest.mark.category("workflow")
def test_declined_then_paid_then_refunded(api, http, staff, payments):
    customer = api.customer()
    order = api.order(customer, (api.product(price=1234), 1))
    api.error(api.try_pay(customer, order, "tok_insufficient_funds"), 402, "payment_declined", "a card without funds")
    api.error(api.try_pay(customer, order, "tok_error"), 502, "payment_unavailable", "the provider failing")
    paid = api.pay(customer, order, "tok_visa")
    refunded = api.cancel(staff, paid)
    assert (refunded["status"], refunded["charge_id"]) == ("refunded", paid["charge_id"]), f"refunded by staff: {refunded}"
    refunds = payments.refunds_for(paid["charge_id"])
    assert len(refunds) == 1, f"only the successful charge is refunded, once: {[r['json'] for r in refunds]}"
    declined = [c for c in payments.charges_for(order["id"]) if c["json"]["source"] == "tok_insufficient_funds"]
    assert len(declined) == 1, "the declined attempt reached the provider once"


@pytest.mark.requirement("R15", "R18", "R16")
@pytest.mark.category("workflow")
def test_double_clicks_do_not_double_charge(api, http, payments):
    customer, product = api.shopper(1, price=2500, stock=3)
    k = api.key()
    first = api.checkout(customer, k)
    again = api.ok(api.try_checkout(customer, k), 200, "the second click on 'place order'")
    assert again["id"] == first["id"], "the second click answers the same order"
    api.pay(customer, first)
    api.error(api.try_pay(customer, first), 409, "invalid_state", "the second click on 'pay'")
    assert len(payments.charges_for(first["id"])) == 1, "exactly one charge despite the double clicks"
    assert api.get_product(product)["stock"] == 2, "exactly one unit taken"
    assert api.orders(customer)["total"] == 1, "exactly one order"


@pytest.mark.requirement("R24", "R23", "R19", "R22")
@pytest.mark.category("workflow")
def test_staff_work_the_paid_queue(api, http, staff):
    alice, bob = api.customer("alice"), api.customer("bob")
    product = api.product(stock=10)
    a = api.pay(alice, api.order(alice, (product, 1)))
    api.order(bob, (product, 1))
    b = api.pay(bob, api.order(bob, (product, 1)))
    queue = [o["id"] for o in api.orders(staff, status="paid", limit=100)["items"]]
    assert queue[:2] == [b["id"], a["id"]], f"the paid queue holds both customers' paid orders, newest first: {queue[:2]}"
    for order in (a, b):
        api.ship(order)
    queue = [o["id"] for o in api.orders(staff, status="paid", limit=100)["items"]]
    assert a["id"] not in queue and b["id"] not in queue, "shipped orders leave the paid queue"
    api.error(http.post(f"/orders/{a['id']}/ship", headers=staff.headers), 409, "invalid_state", "shipping twice")
    assert api.get_order(alice, a)["status"] == "shipped", "alice sees her order shipped"
