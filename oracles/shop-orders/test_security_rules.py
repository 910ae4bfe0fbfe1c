"""Security items derived rule by rule from spec.md (issue 24; REVIEW.md "Security rules").

Each item exercises one rule, one caller or one hostile-value path at a time. Every answer any
item of this task receives is also checked, by conftest.py's http_response_checks, for the
password or a hash of it ("No response
ever contains a password.").
"""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http.account_items import almost_token_item, password_edge_item, password_leak_item
from pytest_backendbench.http.hostile import hostile_findings

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]


test_no_user_answer_carries_the_password_or_its_hash = password_leak_item("R2", me_path=None)  # the contract has no GET /me


test_a_password_wrong_only_at_its_edge_gets_401 = password_edge_item("R3")


test_a_token_that_is_almost_the_staff_token_gets_401 = almost_token_item("R3", name="test_a_token_that_is_almost_the_staff_token_gets_401", holder="staff", whose="the staff token",
                                                            calls=lambda api: [("POST", "/products", {"sku": api.sku(), "name": "Forged", "price": 1}), ("GET", "/orders", None)])


ANOTHER_CUSTOMER = {"read": ("GET", "", None), "pay": ("POST", "/pay", {"payment_source": "tok_visa"}), "cancel": ("POST", "/cancel", None),
                    "ship": ("POST", "/ship", None)}


@pytest.mark.requirement("R23")
@pytest.mark.cwe(639)
@pytest.mark.parametrize("action", sorted(ANOTHER_CUSTOMER))
def test_another_customers_order_does_not_exist_for_each_action(api, http, payments, action):
    alice, bob = api.customer("alice"), api.customer("bob")
    product = api.product(stock=5)
    order = api.order(alice, (product, 2))
    method, suffix, body = ANOTHER_CUSTOMER[action]
    api.error(http.request(method, f"/orders/{order['id']}{suffix}", json=body, headers=bob.headers), 404, "not_found",
              f"bob: {action} alice's order (404 before 403)")
    got = api.get_order(alice, order)
    assert (got["status"], got["charge_id"]) == ("pending", None) and api.get_product(product)["stock"] == 3, f"alice's order is untouched: {got}"
    assert payments.charges_for(order["id"]) == [], "nothing was sent to the provider"


OWN_ROLE_DENIED = {
    "customer-ships-own-order": ("customer", "POST", "/orders/{order}/ship", None),
    "staff-pays": ("staff", "POST", "/orders/{order}/pay", {"payment_source": "tok_visa"}),
    "staff-checks-out": ("staff", "POST", "/orders", {"shipping_address": "1 Main St"}),
    "staff-reads-cart": ("staff", "GET", "/cart", None),
    "staff-puts-cart-item": ("staff", "PUT", "/cart/items/{product}", {"quantity": 1}),
    "customer-creates-product": ("customer", "POST", "/products", "product"),
    "customer-edits-product": ("customer", "PATCH", "/products/{product}", {"price": 1, "stock": 99999}),
}


@pytest.mark.requirement("R8", "R9", "R18", "R19", "R12")
@pytest.mark.cwe(863)
@pytest.mark.parametrize("case", sorted(OWN_ROLE_DENIED))
def test_each_role_gets_403_where_the_table_denies_it(api, http, staff, payments, case):
    who, method, path, body = OWN_ROLE_DENIED[case]
    customer = api.customer()
    product = api.product(price=700, stock=5)
    order = api.order(customer, (product, 1))
    if case == "customer-ships-own-order":
        order = api.pay(customer, order)
    if body == "product":
        body = {"sku": api.sku(), "name": "Customer made", "price": 1}
    headers = {**(customer.headers if who == "customer" else staff.headers), "Idempotency-Key": api.key()}
    target = path.format(order=order["id"], product=product["id"])
    api.error(http.request(method, target, json=body, headers=headers), 403, "forbidden", f"{who}: {method} {target}")
    got = api.get_order(customer, order)
    assert got["status"] == ("paid" if case == "customer-ships-own-order" else "pending"), f"the order is untouched: {got}"
    assert (api.get_product(product)["price"], api.get_product(product)["stock"]) == (700, 4)
    assert len(payments.charges_for(order["id"])) == (1 if case == "customer-ships-own-order" else 0)


@pytest.mark.requirement("R15")
@pytest.mark.cwe(639)
def test_idempotency_keys_belong_to_their_customer(api, http):
    alice, bob = api.customer("alice"), api.customer("bob")
    product = api.product(stock=10)
    key = api.key()
    api.put(alice, product, 2)
    first = api.checkout(alice, key, "1 Alice Road")
    api.put(bob, product, 1)
    r = api.try_checkout(bob, key, "1 Alice Road")
    assert r.status_code == 201, f"bob's checkout with the key alice used is his own new order: {api.brief(r)}"
    theirs = r.json()
    assert theirs.get("id") != first["id"] and theirs.get("customer_id") == bob.id, f"bob must not receive alice's order: {theirs}"
    api.put(bob, product, 1)
    r = api.try_checkout(bob, key, "2 Other Street")
    api.error(r, 409, "idempotency_conflict", "bob reusing his own key with another body")
    assert api.get_order(alice, first)["shipping_address"] == "1 Alice Road" and api.orders(alice)["total"] == 1


@pytest.mark.requirement("R13")
@pytest.mark.cwe(20)
def test_an_idempotency_key_outside_its_alphabet_gets_422(api, http):
    customer, product = api.shopper(1, stock=5)
    problems = []
    for key in ("abc' OR '1'='1", "abc def", "abc;--", "abc%", "abc*", "abc/../x", "k" * 65, "a.b"):
        r = api.try_checkout(customer, key)
        if why := api.validation_problem(r, ["Idempotency-Key"], f"checkout with Idempotency-Key {key!r}"):
            problems.append(why)
    assert not problems, "an Idempotency-Key is 1-64 characters of A-Z a-z 0-9 _ -:\n" + "\n".join(problems)
    assert api.cart(customer)["items"] != [] and api.orders(customer)["total"] == 0 and api.get_product(product)["stock"] == 5


@pytest.mark.requirement("R24")
@pytest.mark.cwe(639)
@pytest.mark.parametrize("param", ["customer_id", "user_id", "owner", "all"])
def test_a_customers_order_list_never_widens(api, http, param):
    alice, bob = api.customer("alice"), api.customer("bob")
    product = api.product(stock=10)
    mine, theirs = api.order(alice, (product, 1)), api.order(bob, (product, 1))
    value = "true" if param == "all" else bob.id
    r = http.get("/orders", params={param: value, "limit": 100}, headers=alice.headers)
    if r.status_code not in (400, 422):
        assert r.status_code == 200, api.brief(r)
        assert [o.get("id") for o in r.json().get("items", [])] == [mine["id"]], f"GET /orders?{param}=... lists only alice's orders: {r.text[:300]}"
        assert theirs["id"] not in r.text


@pytest.mark.requirement("R24", "R28")
@pytest.mark.cwe(89)
def test_a_status_filter_that_is_not_a_status_gets_422(api, http, staff):
    customer = api.customer()
    api.order(customer, (api.product(stock=3), 1))
    problems = []
    for value in ("pending' OR '1'='1", "pending'--", "%", "_", "*", "PENDING", "pending ", '{"$ne": null}'):
        for who in (customer, staff):
            r = http.get("/orders", params={"status": value}, headers=who.headers)
            if why := api.validation_problem(r, ["status"], f"GET /orders?status={value!r} as {who.id}"):
                problems.append(why)
    assert not problems, "status is one of the five statuses; anything else gets 422:\n" + "\n".join(problems)


@pytest.mark.requirement("R9", "R11")
@pytest.mark.cwe(639)
def test_nothing_a_customer_does_changes_another_customers_cart(api, http):
    alice, bob = api.customer("alice"), api.customer("bob")
    kept, other = api.product(stock=9), api.product(stock=9)
    api.put(bob, kept, 3)
    api.error(http.delete(f"/cart/items/{kept['id']}", headers=alice.headers), 404, "not_found", "alice removing a line only bob's cart has")
    api.put(alice, kept, 1)
    api.put(alice, other, 2)
    api.ok(http.delete(f"/cart/items/{kept['id']}", headers=alice.headers), 200, "alice removes her own line")
    api.checkout(alice)
    cart = api.cart(bob)
    assert [(i["product_id"], i["quantity"]) for i in cart["items"]] == [(kept["id"], 3)], f"bob's cart is his alone: {cart}"


@pytest.mark.requirement("R4", "R12", "R16", "R28")
@pytest.mark.cwe(116)
def test_hostile_text_is_stored_and_answered_verbatim(api, http, staff, payments):
    found = hostile_findings(lambda body: http.post("/products", json={**body, "sku": api.sku()}, headers=staff.headers),
                             {"name": "n", "description": "d", "price": 5, "stock": 100}, fields=["name", "description"],
                             verbatim=["name", "description"], accepted=[201])
    customer = api.customer()
    product = api.product(stock=100)

    def checkout(body):
        api.put(customer, product, 1)
        return http.post("/orders", json=body, headers={**customer.headers, "Idempotency-Key": api.key()})

    found += hostile_findings(checkout, {"shipping_address": "a"}, verbatim=["shipping_address"], accepted=[201])
    order = api.order(customer, (product, 1))
    source = "tok_' OR '1'='1 \"$gt\" <b>"
    paid = api.pay(customer, order, source)
    sent = [(c.get("json") or {}).get("source") for c in payments.charges_for(order["id"])]
    assert sent == [source] and paid["status"] == "paid", f"the payment source reaches the provider exactly as sent: {sent}"
    assert not found, "text is stored and answered exactly as sent:\n" + "\n".join(found)


@pytest.mark.requirement("R10", "R27")
@pytest.mark.cwe(20)
def test_quantities_below_one_never_reach_a_cart(api, http):
    customer = api.customer()
    product = api.product(price=500, stock=50)
    problems = []
    for quantity in (0, -1, -99, 100, 1.5, "2", True):
        r = http.put(f"/cart/items/{product['id']}", json={"quantity": quantity}, headers=customer.headers)
        if why := api.validation_problem(r, ["quantity"], f"quantity {quantity!r}"):
            problems.append(why)
    assert not problems, "a quantity is an integer from 1 to 99:\n" + "\n".join(problems)
    assert api.cart(customer)["items"] == [] and api.cart(customer)["total"] == 0


@pytest.mark.requirement("R2", "R28")
@pytest.mark.cwe(943)
def test_username_uniqueness_compares_literally(api, http):
    stem = uuid.uuid4().hex[:10]
    api.ok(http.post("/users", json={"username": f"q{stem}az", "password": "pw-12345678"}), 201, "register q…az")
    for name in (f"q{stem}_z", f"q{stem}a_", f"_{stem}az"):
        r = http.post("/users", json={"username": name, "password": "pw-12345678"})
        assert r.status_code == 201, f"username {name} is free beside q{stem}az ('_' is a character, not a wildcard): {api.brief(r)}"
