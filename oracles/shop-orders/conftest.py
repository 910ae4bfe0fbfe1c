"""Shared setup for the shop-orders oracle: customers, staff, products, carts, orders, the payments mock.

Every item builds its own world (unique usernames, products with unique SKUs), so items never
depend on each other or on what the shared service already holds. What the service sent to the
shared payments mock is always filtered by something the item owns: charges by
``metadata.order_id``, refunds by the charge id. Requests the oracle itself sends to the mock
carry ``X-Oracle: 1`` and are left out.

The staff token is the one the task promises the service in ``SHOP_STAFF_TOKEN`` (task.yaml).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
import requests

from pytest_backendbench.http.accounts import Account as Caller
from pytest_backendbench.http.accounts import AccountsApi, api_fixture, leak_checks_fixture, role_fixture
from pytest_backendbench.http.api import unique

ORACLE_HEADER = {"X-Oracle": "1"}


def sku() -> str:
    """A fresh SKU."""
    return f"SKU-{uuid.uuid4().hex[:12].upper()}"


def key() -> str:
    """A fresh Idempotency-Key."""
    return f"checkout-{uuid.uuid4().hex}"


class Payments:
    """The payments mock, seen from the oracle: what the service sent it, and its own records."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.session = requests.Session()

    def _sent(self) -> list[dict[str, Any]]:
        return [e for e in self.handle.requests() if not (e.get("headers") or {}).get("x-oracle")]

    @staticmethod
    def _attempts(requests_sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One entry per attempt: a retry with the same Idempotency-Key and body is the same attempt.

        The spec asks for one charge (one refund); the provider answers a keyed retry with its
        first answer and creates nothing new, so a service may retry that way after a failure.
        """
        seen: set[tuple[str, str]] = set()
        attempts = []
        for entry in requests_sent:
            key = (entry.get("headers") or {}).get("idempotency-key") or (entry.get("json") or {}).get("idempotency_key")
            body = json.dumps({k: v for k, v in (entry.get("json") or {}).items() if k != "idempotency_key"}, sort_keys=True)
            if key and (str(key), body) in seen:
                continue
            if key:
                seen.add((str(key), body))
            attempts.append(entry)
        return attempts

    def charges_for(self, order_id: str) -> list[dict[str, Any]]:
        """Every charge attempt the service made for this order (metadata.order_id), oldest first."""
        return self._attempts([
            e for e in self._sent()
            if e.get("method") == "POST" and e.get("path") == "/charges"
            and isinstance(e.get("json"), dict) and (e["json"].get("metadata") or {}).get("order_id") == order_id
        ])

    def refunds_for(self, charge_id: str | None) -> list[dict[str, Any]]:
        """Every refund attempt the service made for this charge, oldest first."""
        return self._attempts([
            e for e in self._sent()
            if e.get("method") == "POST" and e.get("path") == "/refunds" and isinstance(e.get("json"), dict) and e["json"].get("charge") == charge_id
        ])

    def fail_refunds(self, charge_id: str) -> None:
        """Make the provider answer 500 to every refund of ``charge_id`` (an oracle-only control)."""
        response = self.session.post(f"{self.handle.base_url}/__mock__/fail-refunds", json={"charge": charge_id}, headers=ORACLE_HEADER, timeout=10)
        if response.status_code != 200:
            pytest.fail(f"the payments mock refused /__mock__/fail-refunds: {response.status_code} {response.text[:200]}", pytrace=False)

    def charge(self, charge_id: str) -> dict[str, Any]:
        """The provider's record of a charge."""
        response = self.session.get(f"{self.handle.base_url}/charges/{charge_id}", headers=ORACLE_HEADER, timeout=10)
        response.raise_for_status()
        return dict(response.json())

    def refund(self, refund_id: str) -> dict[str, Any]:
        """The provider's record of a refund."""
        response = self.session.get(f"{self.handle.base_url}/refunds/{refund_id}", headers=ORACLE_HEADER, timeout=10)
        response.raise_for_status()
        return dict(response.json())


class Api(AccountsApi):
    """Setup and inspection helpers on top of the ``http`` fixture."""

    sku = staticmethod(sku)
    key = staticmethod(key)
    admin_token_key = "SHOP_STAFF_TOKEN"
    staff = property(lambda self: self.admin, doc="The shop's staff: the token task.yaml promises the service.")

    def customer(self, prefix: str = "cust") -> Caller:
        """A registered customer with a token."""
        return self.register(prefix)

    # ---------------------------------------------------------------- customers

    # ---------------------------------------------------------------- products

    def product(self, price: int = 1000, stock: int = 10, **fields: Any) -> dict[str, Any]:
        """A new product created by staff."""
        body = {"sku": sku(), "name": unique("Product"), "price": price, "stock": stock, **fields}
        return self.ok(self.http.post("/products", json=body, headers=self.staff.headers), 201, "create a product")

    def get_product(self, product: dict[str, Any]) -> dict[str, Any]:
        """The product as the service has it now."""
        return self.ok(self.http.get(f"/products/{product['id']}"), 200, "read a product")

    def patch_product(self, product: dict[str, Any], **fields: Any) -> dict[str, Any]:
        """Staff edit a product; must succeed."""
        return self.ok(self.http.patch(f"/products/{product['id']}", json=fields, headers=self.staff.headers), 200, f"edit a product with {fields}")

    # ---------------------------------------------------------------- cart and orders

    def put(self, customer: Caller, product: dict[str, Any], quantity: int) -> dict[str, Any]:
        """Set a cart line; must succeed. Answers the cart."""
        response = self.http.put(f"/cart/items/{product['id']}", json={"quantity": quantity}, headers=customer.headers)
        return self.ok(response, 200, f"put {quantity} into the cart")

    def fill(self, customer: Caller, *lines: tuple[dict[str, Any], int]) -> None:
        """Put each (product, quantity) line into the customer's cart, in order; each must succeed."""
        for product, quantity in lines:
            self.put(customer, product, quantity)

    def carted(self, customer: Caller, quantity: int, **product_fields: Any) -> dict[str, Any]:
        """A new product (``product_fields``) with ``quantity`` of it put into the customer's cart; the product."""
        product = self.product(**product_fields)
        self.put(customer, product, quantity)
        return product

    def two_lines(self, first: tuple[int, dict[str, Any]], second: tuple[int, dict[str, Any]]) -> tuple[Caller, dict[str, Any], dict[str, Any]]:
        """A new customer and two new products, each (quantity, product fields) put into the cart in order: (customer, first, second)."""
        customer = self.customer()
        a, b = self.product(**first[1]), self.product(**second[1])
        self.fill(customer, (a, first[0]), (b, second[0]))
        return customer, a, b

    def shopper(self, quantity: int, **product_fields: Any) -> tuple[Caller, dict[str, Any]]:
        """A new customer with ``quantity`` of a new product (``product_fields``) in the cart; both."""
        customer = self.customer()
        return customer, self.carted(customer, quantity, **product_fields)

    def cart(self, customer: Caller) -> dict[str, Any]:
        """The customer's cart."""
        return self.ok(self.http.get("/cart", headers=customer.headers), 200, "read the cart")

    def try_checkout(self, customer: Caller, idempotency_key: str | None = None, address: Any = "1 Main St, Springfield") -> requests.Response:
        """Attempt a checkout; the response, whatever it is."""
        headers = {**customer.headers, **({"Idempotency-Key": idempotency_key} if idempotency_key is not None else {})}
        return self.http.post("/orders", json={"shipping_address": address}, headers=headers)

    def checkout(self, customer: Caller, idempotency_key: str | None = None, address: str = "1 Main St, Springfield") -> dict[str, Any]:
        """A new pending order from the customer's cart; must succeed."""
        return self.ok(self.try_checkout(customer, idempotency_key or key(), address), 201, "check out")

    def order(self, customer: Caller, *lines: tuple[dict[str, Any], int]) -> dict[str, Any]:
        """A pending order of ``lines`` ((product, quantity), ...) for ``customer``."""
        for product, quantity in lines:
            self.put(customer, product, quantity)
        return self.checkout(customer)

    def try_pay(self, customer: Caller, order: dict[str, Any], source: Any = "tok_visa") -> requests.Response:
        """Attempt a payment; the response, whatever it is."""
        return self.http.post(f"/orders/{order['id']}/pay", json={"payment_source": source}, headers=customer.headers)

    def pay(self, customer: Caller, order: dict[str, Any], source: str = "tok_visa") -> dict[str, Any]:
        """Pay an order; must succeed."""
        return self.ok(self.try_pay(customer, order, source), 200, f"pay with {source}")

    def ship(self, order: dict[str, Any]) -> dict[str, Any]:
        """Staff ship an order; must succeed."""
        return self.ok(self.http.post(f"/orders/{order['id']}/ship", headers=self.staff.headers), 200, "ship")

    def cancel(self, caller: Caller, order: dict[str, Any]) -> dict[str, Any]:
        """Cancel an order; must succeed."""
        return self.ok(self.http.post(f"/orders/{order['id']}/cancel", headers=caller.headers), 200, "cancel")

    def get_order(self, caller: Caller, order: dict[str, Any]) -> dict[str, Any]:
        """Read one order (must be visible)."""
        return self.ok(self.http.get(f"/orders/{order['id']}", headers=caller.headers), 200, "read an order")

    def orders(self, caller: Caller, **params: Any) -> dict[str, Any]:
        """One page of GET /orders."""
        return self.ok(self.http.get("/orders", params=params, headers=caller.headers), 200, f"list orders with {params}")


staff = role_fixture("staff", lambda api: api.admin, "The shop's staff.")


api = api_fixture(Api)


@pytest.fixture
def payments(mocks: dict[str, Any]) -> Payments:
    """The payments provider mock."""
    return Payments(mocks["payments"])


http_response_checks = leak_checks_fixture()
