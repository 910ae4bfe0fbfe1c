"""Security items (spec.md: Customers and staff, Cart, Orders, Limits and hostile input), each tagged with its CWE."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]


@pytest.mark.requirement("R9", "R15", "R23")
@pytest.mark.cwe(639)
def test_another_customers_order_key_and_cart_reach_nothing(api, http, payments):
    alice, bob = api.customer("alice"), api.customer("bob")
    product = api.carted(alice, 2, stock=10)
    key = api.key()
    order = api.checkout(alice, key)
    for method, path in (("GET", f"/orders/{order['id']}"), ("POST", f"/orders/{order['id']}/cancel")):
        api.error(http.request(method, path, headers=bob.headers), 404, "not_found", f"bob: {method} {path} of alice's order")
    api.error(api.try_pay(bob, order), 404, "not_found", "bob paying alice's order")
    api.put(bob, product, 1)
    r = api.try_checkout(bob, key)
    assert r.status_code == 201 and r.json().get("id") != order["id"], f"alice's key gives bob a checkout of his own cart, never her order: {api.brief(r)}"
    assert r.json().get("customer_id") == bob.id, f"bob's checkout belongs to bob: {r.text[:300]}"
    assert api.get_order(alice, order)["status"] == "pending" and payments.charges_for(order["id"]) == [], "bob's requests changed alice's order"
    assert [x["id"] for x in api.orders(bob)["items"]] == [r.json()["id"]], "bob lists only his own order"


@pytest.mark.requirement("R9", "R12", "R16")
@pytest.mark.cwe(915)
def test_prices_totals_states_and_owners_cannot_be_assigned(api, http, payments):
    alice, bob = api.customer("alice"), api.customer("bob")
    product = api.product(price=2_500, stock=5)
    r = http.put(f"/cart/items/{product['id']}", json={"quantity": 2, "unit_price": 1, "line_total": 2}, headers=alice.headers)
    assert r.status_code == 200, f"undefined cart fields are ignored: {api.brief(r)}"
    assert r.json().get("total") == 5_000, f"the cart total comes from the product's price: {r.text[:300]}"
    forged = {"shipping_address": "1 Main St", "total": 1, "status": "paid", "charge_id": "ch_forged", "customer_id": bob.id, "paid_at": "2001-01-01T00:00:00Z"}
    r = http.post("/orders", json=forged, headers={**alice.headers, "Idempotency-Key": api.key()})
    assert r.status_code == 201, f"server-owned order fields are ignored at checkout: {api.brief(r)}"
    order = r.json()
    got = (order.get("total"), order.get("status"), order.get("charge_id"), order.get("customer_id"), order.get("paid_at"))
    assert got == (5_000, "pending", None, alice.id, None), f"the client assigned server-owned order fields: {order}"
    r = http.post(f"/orders/{order['id']}/pay", json={"payment_source": "tok_visa", "amount": 1, "currency": "eur"}, headers=alice.headers)
    assert r.status_code == 200, f"paying with forged amount fields: {api.brief(r)}"
    charges = payments.charges_for(order["id"])
    assert [(c["json"].get("amount"), c["json"].get("currency")) for c in charges] == [(5_000, "usd")], f"the charge is for the order total in usd: {charges}"


@pytest.mark.requirement("R4", "R12", "R24", "R28")
@pytest.mark.cwe(89)
def test_hostile_text_is_stored_verbatim_and_filters_never_widen(api, http, staff, checks):
    for text in checks.injection_texts:
        product = api.product(name=text[:100], description=text)
        got = api.get_product(product)
        assert (got["name"], got["description"]) == (text[:100], text), f"the text must come back verbatim: sent {text!r}, got {got['name']!r}"
    customer = api.customer()
    api.put(customer, api.product(), 1)
    address = "1 Main St'); DELETE FROM orders;-- {\"$gt\": \"\"}"
    order = api.checkout(customer, address=address)
    assert api.get_order(customer, order)["shipping_address"] == address, "the shipping address is stored verbatim"
    for value in ("' OR '1'='1", "%", "*", "pending' OR 'a'='a"):
        r = http.get("/orders", params={"status": value}, headers=staff.headers)
        assert r.status_code == 422 or (r.status_code == 200 and r.json().get("items") == []), f"status={value!r} is no status: {r.status_code} {r.text[:200]}"


@pytest.mark.requirement("R28")
@pytest.mark.cwe(400)
def test_oversized_and_deeply_nested_bodies_are_refused(api, http, service, staff, checks):
    sku = api.sku()
    problems = checks.hostile_body_problems(service, http.timeout_s, "POST", "/products", staff.headers, {"sku": sku, "name": "big", "price": 100}, "description")
    customer, product = api.shopper(1, stock=3)
    problems += checks.hostile_body_problems(service, http.timeout_s, "POST", "/orders", {**customer.headers, "Idempotency-Key": api.key()},
                                             {"shipping_address": "x"}, "shipping_address")
    problems += checks.hostile_body_problems(service, http.timeout_s, "PUT", f"/cart/items/{product['id']}", customer.headers, {"quantity": 2}, "note")
    assert not problems, "limits on request bodies:\n" + "\n".join(problems)
    assert api.orders(customer)["items"] == [], "a refused checkout must create no order"
    assert [(x["product_id"], x["quantity"]) for x in api.cart(customer)["items"]] == [(product["id"], 1)], "refused bodies must not change the cart"
    assert api.get_product(product)["stock"] == 3, "refused bodies must not take stock"


@pytest.mark.requirement("R3")
@pytest.mark.cwe(287)
def test_tampered_tokens_get_401(api, http, staff, checks):
    customer = api.customer()
    product = api.product(stock=4)
    problems = checks.token_problems(http, "PUT", f"/cart/items/{product['id']}", customer.token, {"quantity": 1})
    problems += checks.token_problems(http, "PATCH", f"/products/{product['id']}", staff.token, {"stock": 0})
    assert not problems, "token misuse was not refused:\n" + "\n".join(problems)
    assert api.cart(customer)["items"] == [] and api.get_product(product)["stock"] == 4, "a request with a bad token changed something"


@pytest.mark.requirement("R7", "R23", "R28")
@pytest.mark.cwe(22)
def test_path_traversal_in_ids_gets_404(api, http, service, staff, checks):
    customer = api.customer()
    problems = checks.traversal_problems(service, http.timeout_s, "/orders/", customer.headers)
    problems += checks.traversal_problems(service, http.timeout_s, "/orders/", staff.headers)
    problems += checks.traversal_problems(service, http.timeout_s, "/products/", {})
    assert not problems, "ids that climb out of their path must name nothing:\n" + "\n".join(problems)
