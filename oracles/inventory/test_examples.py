"""The spec's own examples and worked rules, each an item checked exactly (issue 35).

spec.md: "`low_stock` (boolean: `true` keeps products whose `on_hand` is **less than** their
`reorder_level`, `false` keeps the others)"; "`total_cost` the sum of `quantity × unit_cost`
over the lines"; "`GET /movements` lists movements **newest first** (so the last line of a
delivery comes first)"; "(a JSON number without a fraction; `true` is not a number)"; "An
`offset` at or past `total` gives an empty `items`"; "An empty value (`limit=`, `offset=`) is
invalid too"; "(renaming to its own name in another case is not a clash)".
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R8")
@pytest.mark.category("state")
def test_low_stock_means_strictly_less_than_the_reorder_level(api, http):
    warehouse, q = api.warehouse(), f"LOW-{api.tag()}"
    at, below = api.product(sku=f"{q}-A", reorder_level=4), api.product(sku=f"{q}-B", reorder_level=4)
    api.stocked(warehouse, at, 4)
    api.stocked(warehouse, below, 3)
    low = [p["sku"] for p in api.get("/products", q=q, low_stock="true")["items"]]
    others = [p["sku"] for p in api.get("/products", q=q, low_stock="false")["items"]]
    assert (low, others) == ([below["sku"]], [at["sku"]]), f"on_hand 3 < 4 is low, on_hand 4 = 4 is not: low {low}, others {others}"


@pytest.mark.requirement("R13")
@pytest.mark.category("api_surface")
def test_total_cost_is_the_sum_of_quantity_times_unit_cost(api, http):
    order = api.order(api.supplier(), api.warehouse(), [(api.product(), 3, 250), (api.product(), 2, 1000), (api.product(), 7, 0)])
    assert order["total_cost"] == 3 * 250 + 2 * 1000 + 7 * 0 == 2750, f"total_cost: {order}"
    assert api.get(f"/purchase-orders/{order['id']}")["total_cost"] == 2750


@pytest.mark.requirement("R24")
@pytest.mark.category("state")
def test_the_last_line_of_a_delivery_comes_first(api, http):
    warehouse, first, second, third = api.warehouse(), api.product(), api.product(), api.product()
    order = api.order(api.supplier(), warehouse, [(first, 1, 1), (second, 2, 1), (third, 3, 1)])
    api.submit(order)
    api.receive(order, lines=[(third, 3), (first, 1)])
    api.receive(order)
    listed = [m["product_id"] for m in api.movements(warehouse_id=warehouse["id"])]
    assert listed == [second["id"], first["id"], third["id"]], (
        "newest first: the second delivery's one line, then the first delivery's lines last to first "
        f"(sent third, first): {listed}")


@pytest.mark.requirement("R26")
@pytest.mark.category("validation")
def test_true_is_not_a_quantity(api, http):
    warehouse, product = api.warehouse(), api.product()
    line = {"product_id": product["id"], "quantity": True, "unit_cost": 1}
    made = http.post("/purchase-orders", json={"supplier_id": api.supplier()["id"], "warehouse_id": warehouse["id"], "lines": [line]}, headers=api.admin.headers)
    api.assert_no_problems([api.validation_problem(api.adjust(warehouse, product, True, "found"), ["quantity"], "an adjustment of quantity true"),
                            api.validation_problem(made, ["lines"], "an order line of quantity true")], "true is not a number")
    assert api.on_hand(product) == 0


@pytest.mark.requirement("R8")
@pytest.mark.category("api_surface")
def test_an_offset_at_the_total_gives_no_items(api, http):
    q = f"OFF-{api.tag()}"
    for suffix in "AB":
        api.product(sku=f"{q}-{suffix}")
    page = api.get("/products", q=q, offset=2)
    assert (page["items"], page["total"], page["limit"], page["offset"]) == ([], 2, 20, 2), f"an offset equal to total: {page}"


@pytest.mark.requirement("R8", "R15", "R24")
@pytest.mark.category("validation")
@pytest.mark.parametrize("path", ["/products", "/purchase-orders", "/movements"])
def test_an_empty_limit_or_offset_is_invalid(api, http, path):
    problems = [api.validation_problem(http.get(f"{path}?{name}=", headers=api.admin.headers), [name], f"GET {path}?{name}=") for name in ("limit", "offset")]
    api.assert_no_problems(problems, "only an absent parameter takes its default")


@pytest.mark.requirement("R11")
@pytest.mark.category("state")
def test_renaming_a_supplier_to_its_own_name_in_another_case_is_no_clash(api, http):
    supplier = api.supplier()
    got = api.ok(http.patch(f"/suppliers/{supplier['id']}", json={"name": supplier["name"].upper()}, headers=api.admin.headers), 200, "rename in upper case")
    assert got["name"] == supplier["name"].upper(), f"the new spelling is stored: {got}"
