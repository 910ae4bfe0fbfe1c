"""The worked examples of spec.md, each checked exactly (issue 35).

Conventions: "A defined field whose value has the wrong JSON type gets `422` (`"price": "10"`,
`"quantity": 1.5`, `"active": "yes"`; ...)" -- each example sent where its field is defined, with
the rest of the body valid, and read back unchanged; "Money is an integer number of cents
(`1999` is $19.99)". The charge's `"description": "Order <order id>"` is
`test_payment.py::test_paying_sends_one_charge_for_the_total`; "The stock goes back up in full
even past 100000" is `test_spec_clarifications.py::test_a_cancel_restores_stock_past_100000`.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_backendbench.http.refusals import unchanged

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("validation"), pytest.mark.requirement("R27")]


def prepared(api: Any, customer: Any, field: str, value: Any) -> tuple[str, str, dict[str, Any], dict[str, str]]:
    """The request that carries the example (method, path, body, headers), its product made beforehand."""
    if field == "price":
        return "POST", "/products", {"sku": api.sku(), "name": "Example", "price": value, "stock": 3}, api.staff.headers
    product = api.product(stock=5)
    if field == "quantity":
        return "PUT", f"/cart/items/{product['id']}", {"quantity": value}, customer.headers
    return "PATCH", f"/products/{product['id']}", {"name": "Example", "active": value}, api.staff.headers


def state(api: Any, customer: Any, path: str) -> Any:
    """What the refused example must leave as it was: the catalogue's size, the cart, the product it names."""
    size = api.ok(api.http.get("/products", params={"limit": 1}), 200, "count the catalogue")["total"]
    product = api.http.get(path).json() if path.startswith("/products/") else None
    return size, api.cart(customer), product


@pytest.mark.parametrize("field,value", [("price", "10"), ("quantity", 1.5), ("active", "yes")], ids=["price-string-10", "quantity-1.5", "active-yes"])
def test_the_wrong_type_examples_get_422(api, http, field, value):
    customer = api.customer()
    method, path, body, headers = prepared(api, customer, field, value)
    with unchanged(lambda: state(api, customer, path), f"the example {field}: {value!r}"):
        response = http.request(method, path, json=body, headers=headers)
    problem = api.validation_problem(response, [field], f"spec.md's example {field}: {value!r}")
    assert problem is None, problem


@pytest.mark.requirement("R4", "R9")
@pytest.mark.category("api_surface")
def test_money_is_an_integer_number_of_cents(api, http):
    customer, product = api.shopper(2, price=1999, stock=5)
    assert api.get_product(product)["price"] == 1999, "a price of 1999 cents is answered as the integer 1999"
    cart = api.cart(customer)
    assert (cart["items"][0]["unit_price"], cart["items"][0]["line_total"], cart["total"]) == (1999, 3998, 3998), f"cents add up as integers: {cart}"
