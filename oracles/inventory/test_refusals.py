"""Refused requests change nothing, guards one condition at a time, and ids in bodies (issue 35).

spec.md, Errors: "A request that fails changes nothing"; Running: "a request either applies
completely or not at all". Every endpoint that takes several fields gets its valid body with one
field invalid, at each position in turn (``one_invalid_field``), and the state is read back
(``unchanged``). Refusals for another reason (a taken name, a state, stock) carry valid fields.

Body references: "`supplier_id` and `warehouse_id` must name an existing supplier and
warehouse", "`product_id` names an existing **active** product", adjustments' "`warehouse_id`
and `product_id` name an existing warehouse and product (otherwise `422` naming the field)": an
id of a deleted entity and an id of another kind (a warehouse's id as `supplier_id`) name no
such entity. The catalogue has no owners or groups, so there is no other owner's id to try.

Guards whose conditions usually travel together, each isolated through the API:
"A product that has ever had a movement, or that a line of any purchase order names, cannot be
deleted" (a cancelled order's line; stock adjusted back to 0 is test_catalog.py's); "A warehouse that holds stock ...
or that an open purchase order ... is destined for, cannot be deleted" (stock back to 0 with
the order received); "An adjustment that would make the stock of that product in that warehouse
negative" (stock held in another warehouse); "An order with no lines cannot be submitted" (lines
removed by a PATCH); "An inactive product ... may be received on orders that already list it".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import requests

from pytest_backendbench.http.refusals import one_invalid_field, unchanged

pytestmark = [pytest.mark.tier("base")]

FRESH, SUPPLIER, WAREHOUSE, PRODUCT = "<a fresh name>", "<the supplier's id>", "<the warehouse's id>", "<the product's id>"
GONE_SUPPLIER, GONE_WAREHOUSE, GONE_PRODUCT, INACTIVE = "<a deleted supplier's id>", "<a deleted warehouse's id>", "<a deleted product's id>", "<an inactive product's id>"
LINES, LINES_OF = "<valid lines>", "<lines naming {}>"
"""Placeholders in the bodies below, replaced when the item runs (ids are the service's)."""


def lines_of(placeholder: str) -> str:
    return LINES_OF.format(placeholder)


BODIES: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    # endpoint: (requirement, a valid body, bad values per field)
    "create-user": ("R3", {"username": FRESH, "password": "long-enough-1", "role": "buyer"},
                    {"username": ["Upper_Case", "ab"], "password": ["short", 12345678], "role": ["owner", None]}),
    "patch-user": ("R4", {"role": "clerk", "active": False}, {"role": ["root", None], "active": ["no", 0]}),
    "create-product": ("R7", {"sku": FRESH, "name": "Valid name", "unit": "kg", "reorder_level": 5},
                       {"sku": ["lower-case"], "name": [" ", "n" * 121], "unit": ["u" * 17], "reorder_level": [1_000_001, 2.5]}),
    "patch-product": ("R9", {"name": "Changed", "unit": "box", "reorder_level": 9, "active": False},
                      {"name": [None], "unit": [" "], "reorder_level": [-1, True], "active": ["false"]}),
    "create-supplier": ("R11", {"name": FRESH, "email": "buy@acme.example"}, {"name": [" \t", 7], "email": ["not-an-email", False]}),
    "patch-supplier": ("R11", {"name": FRESH, "email": "new@acme.example"}, {"name": ["n" * 121], "email": ["a b@c.example"]}),
    "create-warehouse": ("R12", {"code": FRESH, "name": "Valid depot"}, {"code": ["W", "lower"], "name": [" ", None]}),
    "create-order": ("R13", {"supplier_id": SUPPLIER, "warehouse_id": WAREHOUSE, "lines": LINES, "notes": "valid"},
                     {"supplier_id": [GONE_SUPPLIER, WAREHOUSE], "warehouse_id": [GONE_WAREHOUSE, SUPPLIER],
                      "lines": [lines_of(GONE_PRODUCT), lines_of(INACTIVE), lines_of(SUPPLIER)], "notes": ["n" * 1001]}),
    "patch-order": ("R13", {"supplier_id": SUPPLIER, "warehouse_id": WAREHOUSE, "lines": LINES, "notes": "changed"},
                    {"supplier_id": [PRODUCT], "warehouse_id": [GONE_WAREHOUSE], "lines": [lines_of(GONE_PRODUCT), lines_of(WAREHOUSE)],
                     "notes": [None]}),
    "adjustment": ("R21", {"warehouse_id": WAREHOUSE, "product_id": PRODUCT, "quantity": -2, "reason": "damaged", "note": "valid"},
                   {"warehouse_id": [GONE_WAREHOUSE, PRODUCT], "product_id": [GONE_PRODUCT, WAREHOUSE], "quantity": [0, True, 1_000_001],
                    "reason": ["stolen"], "note": ["n" * 501]}),
}
CASES = [pytest.param(endpoint, *case.values, id=f"{endpoint}-{case.id}", marks=[pytest.mark.requirement(requirement, "R25")])
         for endpoint, (requirement, valid, bad) in BODIES.items() for case in one_invalid_field(valid, bad)]


def deleted(api: Any, path: str, body: dict[str, Any]) -> str:
    """The id of an entity created at ``path`` and deleted again."""
    made = api.ok(api.http.post(path, json=body, headers=api.admin.headers), 201, f"create under {path}")
    api.ok(api.http.delete(f"{path}/{made['id']}", headers=api.admin.headers), 204, f"delete {path}/{made['id']}")
    return str(made["id"])


def placeholders(api: Any) -> dict[str, Any]:
    """Each placeholder's value: fresh entities, deleted ones, an inactive product."""
    tag = api.tag()
    supplier, warehouse, product = api.supplier(), api.warehouse(), api.product()
    inactive = api.product()
    api.ok(api.http.patch(f"/products/{inactive['id']}", json={"active": False}, headers=api.admin.headers), 200, "deactivate a product")
    values = {FRESH: tag, SUPPLIER: supplier["id"], WAREHOUSE: warehouse["id"], PRODUCT: product["id"], INACTIVE: inactive["id"],
              GONE_SUPPLIER: deleted(api, "/suppliers", {"name": f"Gone {tag}"}),
              GONE_WAREHOUSE: deleted(api, "/warehouses", {"code": f"G{tag}", "name": "Gone"}),
              GONE_PRODUCT: deleted(api, "/products", {"sku": f"GONE-{tag}", "name": "Gone"})}
    values[LINES] = [{"product_id": product["id"], "quantity": 3, "unit_cost": 250}]
    for key in (GONE_PRODUCT, INACTIVE, SUPPLIER, WAREHOUSE):
        values[lines_of(key)] = [*values[LINES], {"product_id": values[key], "quantity": 1, "unit_cost": 100}]
    return values


def fill(body: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """``body`` with its placeholders replaced; a fresh name is shaped for the field it fills."""
    shapes = {"username": lambda t: f"user_{t.lower()}", "sku": lambda t: f"SKU-{t}", "code": lambda t: f"C{t}", "name": lambda t: f"Name {t}"}
    return {key: shapes.get(key, str)(values[FRESH]) if value == FRESH else values.get(value, value) if isinstance(value, str) else value
            for key, value in body.items()}


Sender = Callable[[dict[str, Any]], requests.Response]


def scene(api: Any, endpoint: str, values: dict[str, Any]) -> tuple[Sender, Callable[[], Any]]:
    """How to send ``endpoint`` a body, and how to read back what it must not change."""
    http, headers = api.http, api.admin.headers

    def sender(method: str, path: str) -> Sender:
        return lambda body: http.request(method, path, json=body, headers=headers)

    def reader(path: str, **params: Any) -> Callable[[], Any]:
        return lambda: api.get(path, **params)

    if endpoint in ("create-user", "patch-user"):
        target = api.staff("buyer")
        return (sender("POST", "/users") if endpoint == "create-user" else sender("PATCH", f"/users/{target.id}")), reader("/users")
    if endpoint == "create-product":
        return sender("POST", "/products"), reader("/products", q=values[FRESH])
    if endpoint == "patch-product":
        return sender("PATCH", f"/products/{values[PRODUCT]}"), reader(f"/products/{values[PRODUCT]}")
    if endpoint in ("create-supplier", "create-warehouse"):
        return sender("POST", "/" + endpoint.split("-")[1] + "s"), reader("/" + endpoint.split("-")[1] + "s")
    if endpoint == "patch-supplier":
        return sender("PATCH", f"/suppliers/{values[SUPPLIER]}"), reader(f"/suppliers/{values[SUPPLIER]}")
    if endpoint == "create-order":
        return sender("POST", "/purchase-orders"), reader("/purchase-orders", limit=1)
    if endpoint == "patch-order":
        order = api.order(api.supplier(), api.warehouse(), [(api.product(), 1, 10)])
        return sender("PATCH", f"/purchase-orders/{order['id']}"), reader(f"/purchase-orders/{order['id']}")
    api.stocked(api.get(f"/warehouses/{values[WAREHOUSE]}"), api.get(f"/products/{values[PRODUCT]}"), 5)
    return sender("POST", "/adjustments"), lambda: (api.get(f"/products/{values[PRODUCT]}/stock"), api.get("/movements", limit=1))


@pytest.mark.category("validation")
@pytest.mark.parametrize("endpoint, field, body", CASES)
def test_one_invalid_field_anywhere_in_the_body_changes_nothing(api, http, endpoint, field, body):
    values = placeholders(api)
    send, read = scene(api, endpoint, values)
    sent = fill(body, values)
    with unchanged(read, f"{endpoint} with {field} invalid"):
        r = send(sent)
    api.assert_no_problems([api.validation_problem(r, [field], f"{endpoint} with only {field} invalid: {str(sent)[:300]}")], "one invalid field")


Refusal = tuple[Callable[[], requests.Response], Callable[[], Any], int, str]


def over_receipt(api: Any) -> Refusal:
    bolt, nut, warehouse = api.product(), api.product(), api.warehouse()
    order = api.order(api.supplier(), warehouse, [(bolt, 5, 10), (nut, 5, 10)])
    api.submit(order)
    body = {"lines": [{"product_id": bolt["id"], "quantity": 2}, {"product_id": nut["id"], "quantity": 9}]}
    return ((lambda: api.act(order, "receive", **body)),
            lambda: (api.get(f"/purchase-orders/{order['id']}"), api.get(f"/warehouses/{warehouse['id']}/stock"), api.movements(warehouse_id=warehouse["id"])),
            409, "over_receipt")


def self_demotion(api: Any, body: dict[str, Any]) -> Refusal:
    admin = api.staff("admin")
    return ((lambda: api.http.patch(f"/users/{admin.id}", json=body, headers=admin.headers)),
            lambda: [u for u in api.get("/users")["items"] if u["id"] == admin.id], 409, "conflict")


def taken_supplier_name(api: Any) -> Refusal:
    taken, supplier = api.supplier(), api.supplier(email="old@acme.example")
    body = {"email": "new@acme.example", "name": taken["name"].upper()}
    return ((lambda: api.http.patch(f"/suppliers/{supplier['id']}", json=body, headers=api.admin.headers)),
            lambda: api.get(f"/suppliers/{supplier['id']}"), 409, "conflict")


def insufficient_stock(api: Any) -> Refusal:
    warehouse, product = api.warehouse(), api.product()
    api.stocked(warehouse, product, 3)
    return ((lambda: api.adjust(warehouse, product, -4, "lost", note="valid note")),
            lambda: (api.get(f"/products/{product['id']}/stock"), api.movements(product_id=product["id"])), 409, "insufficient_stock")


def submitted_order_patch(api: Any) -> Refusal:
    order = api.order(api.supplier(), api.warehouse(), [(api.product(), 1, 10)])
    api.submit(order)
    body = {"notes": "changed", "supplier_id": api.supplier()["id"], "lines": [{"product_id": api.product()["id"], "quantity": 2, "unit_cost": 5}]}
    return ((lambda: api.http.patch(f"/purchase-orders/{order['id']}", json=body, headers=api.admin.headers)),
            lambda: api.get(f"/purchase-orders/{order['id']}"), 409, "invalid_state")


REFUSALS: dict[str, tuple[tuple[str, ...], Callable[[Any], Refusal]]] = {
    "over-receipt-after-a-valid-line": (("R19",), over_receipt),
    "admin-demoting-themselves": (("R4",), lambda api: self_demotion(api, {"active": True, "role": "manager"})),
    "admin-deactivating-themselves": (("R4",), lambda api: self_demotion(api, {"role": "admin", "active": False})),
    "taken-supplier-name-with-a-valid-email": (("R11",), taken_supplier_name),
    "insufficient-stock-with-a-valid-note": (("R22",), insufficient_stock),
    "submitted-order-with-valid-changes": (("R16",), submitted_order_patch),
}


@pytest.mark.category("state")
@pytest.mark.parametrize("case", [pytest.param(name, id=name, marks=[pytest.mark.requirement(*reqs, "R25")]) for name, (reqs, _) in REFUSALS.items()])
def test_a_request_refused_with_valid_fields_changes_nothing(api, http, case):
    send, read, status, code = REFUSALS[case][1](api)
    with unchanged(read, case):
        r = send()
    api.error(r, status, code, f"{case}, every other field valid")


def emptied(api: Any, warehouse: dict[str, Any], product: dict[str, Any]) -> None:
    """Stock put into ``warehouse`` and taken out again: movements, and stock back to 0."""
    api.stocked(warehouse, product, 4)
    api.ok(api.adjust(warehouse, product, -4, "count_correction"), 201, "adjust the stock back to 0")


def guard_product_on_a_cancelled_order(api: Any) -> tuple[str, int]:
    product = api.product()
    order = api.order(api.supplier(), api.warehouse(), [(product, 1, 10)])
    api.ok(api.act(order, "cancel"), 200, "cancel the order")
    return f"/products/{product['id']}", 409


def guard_warehouse_emptied(api: Any) -> tuple[str, int]:
    warehouse = api.warehouse()
    emptied(api, warehouse, api.product())
    return f"/warehouses/{warehouse['id']}", 204


def guard_warehouse_received_then_emptied(api: Any) -> tuple[str, int]:
    warehouse, product = api.warehouse(), api.product()
    order = api.order(api.supplier(), warehouse, [(product, 2, 10)])
    api.submit(order)
    api.receive(order)
    api.ok(api.adjust(warehouse, product, -2, "damaged"), 201, "damage what arrived")
    return f"/warehouses/{warehouse['id']}", 204


def guard_warehouse_with_an_open_order_only(api: Any) -> tuple[str, int]:
    warehouse = api.warehouse()
    api.submit(api.order(api.supplier(), warehouse, [(api.product(), 2, 10)]))
    return f"/warehouses/{warehouse['id']}", 409


def guard_warehouse_with_stock_of_a_received_order(api: Any) -> tuple[str, int]:
    warehouse = api.warehouse()
    order = api.order(api.supplier(), warehouse, [(api.product(), 2, 10)])
    api.submit(order)
    api.receive(order)
    return f"/warehouses/{warehouse['id']}", 409


DELETION_GUARDS = {
    "product-named-only-by-a-cancelled-order": ("R10", guard_product_on_a_cancelled_order),
    "warehouse-whose-stock-went-back-to-0": ("R12", guard_warehouse_emptied),
    "warehouse-of-a-received-order-emptied": ("R12", guard_warehouse_received_then_emptied),
    "warehouse-with-an-open-order-and-no-stock": ("R12", guard_warehouse_with_an_open_order_only),
    "warehouse-with-stock-and-no-open-order": ("R12", guard_warehouse_with_stock_of_a_received_order),
}


@pytest.mark.category("state")
@pytest.mark.parametrize("case", [pytest.param(name, id=name, marks=[pytest.mark.requirement(req)]) for name, (req, _) in DELETION_GUARDS.items()])
def test_each_deletion_guard_holds_alone(api, http, case):
    path, status = DELETION_GUARDS[case][1](api)
    r = http.delete(path, headers=api.admin.headers)
    if status == 409:
        api.error(r, 409, "conflict", f"deleting the {case}")
        api.get(path)
    else:
        assert r.status_code == 204, f"the {case} holds no stock and no open order is destined for it: expected 204, got {api.brief(r)}"
        api.error(http.get(path, headers=api.admin.headers), 404, "not_found", f"the deleted {case}")


@pytest.mark.requirement("R22")
@pytest.mark.category("state")
def test_stock_in_another_warehouse_does_not_cover_an_adjustment(api, http):
    full, empty, product = api.warehouse(), api.warehouse(), api.product()
    api.stocked(full, product, 5)
    api.error(api.adjust(empty, product, -1, "lost"), 409, "insufficient_stock", "taking 1 from a warehouse holding none while another holds 5")
    assert (api.stock_in(full, product), api.stock_in(empty, product), api.on_hand(product)) == (5, 0, 5), "the refused adjustment changed no stock"


@pytest.mark.requirement("R17")
@pytest.mark.category("state")
def test_a_draft_whose_lines_were_removed_cannot_be_submitted(api, http):
    order = api.order(api.supplier(), api.warehouse(), [(api.product(), 1, 10)])
    api.ok(http.patch(f"/purchase-orders/{order['id']}", json={"lines": []}, headers=api.admin.headers), 200, "remove every line")
    api.error(api.act(order, "submit"), 409, "invalid_state", "submitting a draft whose lines were removed")
    assert api.get(f"/purchase-orders/{order['id']}")["status"] == "draft"


@pytest.mark.requirement("R20")
@pytest.mark.category("state")
def test_a_product_deactivated_after_ordering_is_still_received(api, http):
    warehouse, product = api.warehouse(), api.product()
    order = api.order(api.supplier(), warehouse, [(product, 3, 10)])
    api.submit(order)
    api.ok(http.patch(f"/products/{product['id']}", json={"active": False}, headers=api.admin.headers), 200, "deactivate the product")
    got = api.receive(order)
    assert got["status"] == "received" and api.stock_in(warehouse, product) == 3, f"an inactive product may be received on an order that lists it: {got}"
