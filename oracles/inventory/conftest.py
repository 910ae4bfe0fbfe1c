"""Shared setup for the inventory oracle: staff users, catalogue, purchase orders, stock.

Products, suppliers, warehouses and orders are global in this service, so every item creates
its own (unique SKUs, codes and names) and filters lists by them; no item asserts global counts.
The bootstrap administrator's credentials are the ones task.yaml promises the service.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import requests

from pytest_backendbench.http.accounts import Account as Staff
from pytest_backendbench.http.accounts import AccountsApi, admin_fixture, api_fixture, leak_checks_fixture, staff_fixtures


def tag() -> str:
    """A fresh upper-case fragment for SKUs and warehouse codes."""
    return uuid.uuid4().hex[:8].upper()


class Api(AccountsApi):
    """Setup and inspection helpers on top of the ``http`` fixture."""

    staff_name_digits = 10

    tag = staticmethod(tag)

    # ---------------------------------------------------------------- catalogue

    def product(self, by: Staff | None = None, **fields: Any) -> dict[str, Any]:
        """A new product (unique SKU)."""
        body = {"sku": f"SKU-{tag()}", "name": f"Widget {tag()}", **fields}
        return self.ok(self.http.post("/products", json=body, headers=(by or self.admin).headers), 201, f"create product {body['sku']}")

    def supplier(self, **fields: Any) -> dict[str, Any]:
        """A new supplier (unique name)."""
        body = {"name": f"Supplier {uuid.uuid4().hex[:10]}", **fields}
        return self.ok(self.http.post("/suppliers", json=body, headers=self.admin.headers), 201, "create a supplier")

    def warehouse(self, **fields: Any) -> dict[str, Any]:
        """A new warehouse (unique code)."""
        body = {"code": f"W{tag()}", "name": f"Depot {tag()}", **fields}
        return self.ok(self.http.post("/warehouses", json=body, headers=self.admin.headers), 201, f"create warehouse {body['code']}")

    def get(self, path: str, by: Staff | None = None, **params: Any) -> Any:
        """GET that must answer 200."""
        return self.ok(self.http.get(path, params=params or None, headers=(by or self.admin).headers), 200, f"read {path}")

    # ---------------------------------------------------------------- orders and stock

    def order(self, supplier: dict[str, Any], warehouse: dict[str, Any], lines: list[tuple[dict[str, Any], int, int]] | None = None,
              by: Staff | None = None, **fields: Any) -> dict[str, Any]:
        """A new draft order; lines are (product, quantity, unit_cost)."""
        body: dict[str, Any] = {"supplier_id": supplier["id"], "warehouse_id": warehouse["id"], **fields}
        if lines is not None:
            body["lines"] = [{"product_id": p["id"], "quantity": q, "unit_cost": c} for p, q, c in lines]
        return self.ok(self.http.post("/purchase-orders", json=body, headers=(by or self.admin).headers), 201, "create a purchase order")

    def act(self, order: dict[str, Any], action: str, by: Staff | None = None, **body: Any) -> requests.Response:
        """POST /purchase-orders/{id}/{action} (submit, cancel, receive); the raw response."""
        return self.http.post(f"/purchase-orders/{order['id']}/{action}", json=body if body else None, headers=(by or self.admin).headers)

    def submit(self, order: dict[str, Any], by: Staff | None = None) -> dict[str, Any]:
        """Submit an order (must succeed)."""
        return dict(self.ok(self.act(order, "submit", by), 200, "submit the order"))

    def receive(self, order: dict[str, Any], by: Staff | None = None, lines: list[tuple[dict[str, Any], int]] | None = None) -> dict[str, Any]:
        """Receive goods (must succeed); lines are (product, quantity), None receives everything."""
        body = {} if lines is None else {"lines": [{"product_id": p["id"], "quantity": q} for p, q in lines]}
        return dict(self.ok(self.act(order, "receive", by, **body), 200, f"receive {body or 'everything'}"))

    def adjust(self, warehouse: dict[str, Any], product: dict[str, Any], quantity: int, reason: str, by: Staff | None = None, **extra: Any) -> requests.Response:
        """POST /adjustments; the raw response."""
        body = {"warehouse_id": warehouse["id"], "product_id": product["id"], "quantity": quantity, "reason": reason, **extra}
        return self.http.post("/adjustments", json=body, headers=(by or self.admin).headers)

    def stocked(self, warehouse: dict[str, Any], product: dict[str, Any], quantity: int) -> None:
        """Put ``quantity`` of a product into a warehouse with a `found` adjustment."""
        self.ok(self.adjust(warehouse, product, quantity, "found"), 201, f"stock {quantity} by adjustment")

    def on_hand(self, product: dict[str, Any]) -> int:
        """The product's total stock."""
        return int(self.get(f"/products/{product['id']}")["on_hand"])

    def stock_in(self, warehouse: dict[str, Any], product: dict[str, Any]) -> int:
        """The product's stock in one warehouse (0 when not listed)."""
        items = self.get(f"/warehouses/{warehouse['id']}/stock")["items"]
        return next((i["on_hand"] for i in items if i["product_id"] == product["id"]), 0)

    def movements(self, **params: Any) -> list[dict[str, Any]]:
        """Movements (newest first, first 100) matching the filters."""
        return list(self.get("/movements", limit=100, **params)["items"])


api = api_fixture(Api)
admin = admin_fixture
manager, buyer, clerk = staff_fixtures("manager", "buyer", "clerk")


@pytest.fixture
def setup(api: Api) -> dict[str, Any]:
    """A supplier, a warehouse and two active products."""
    return {"supplier": api.supplier(), "warehouse": api.warehouse(), "bolt": api.product(name="Bolt"), "nut": api.product(name="Nut")}


http_response_checks = leak_checks_fixture()
