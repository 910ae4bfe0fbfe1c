"""Purchase orders: drafts, lines, the status workflow, roles and ownership (spec.md: Purchase orders)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R13")
@pytest.mark.category("api_surface")
def test_create_a_draft(api, http, buyer, setup):
    body = {"supplier_id": setup["supplier"]["id"], "warehouse_id": setup["warehouse"]["id"], "notes": "urgent",
            "lines": [{"product_id": setup["bolt"]["id"], "quantity": 100, "unit_cost": 25}, {"product_id": setup["nut"]["id"], "quantity": 40, "unit_cost": 10}]}
    r = http.post("/purchase-orders", json=body, headers=buyer.headers)
    assert r.status_code == 201, f"a buyer creating an order: {api.brief(r)}"
    order = r.json()
    got = {k: order.get(k) for k in ("supplier_id", "warehouse_id", "status", "notes", "total_cost", "created_by", "submitted_at", "received_at", "cancelled_at")}
    expected = {"supplier_id": setup["supplier"]["id"], "warehouse_id": setup["warehouse"]["id"], "status": "draft", "notes": "urgent",
                "total_cost": 100 * 25 + 40 * 10, "created_by": buyer.id, "submitted_at": None, "received_at": None, "cancelled_at": None}
    assert got == expected, f"a new draft:\nexpected {expected}\ngot      {got}"
    lines = [(x.get("product_id"), x.get("quantity"), x.get("unit_cost"), x.get("received_quantity")) for x in order.get("lines", [])]
    assert lines == [(setup["bolt"]["id"], 100, 25, 0), (setup["nut"]["id"], 40, 10, 0)], f"lines in the order given, nothing received: {lines}"
    empty = api.order(setup["supplier"], setup["warehouse"])
    assert (empty.get("lines"), empty.get("total_cost"), empty.get("notes")) == ([], 0, ""), f"lines default to [] and notes to '': {empty}"


@pytest.mark.requirement("R13", "R26")
@pytest.mark.category("validation")
def test_supplier_and_warehouse_must_exist(api, http, buyer, setup):
    cases = [
        ({"warehouse_id": setup["warehouse"]["id"]}, ["supplier_id"]),
        ({"supplier_id": "no-such-supplier", "warehouse_id": setup["warehouse"]["id"]}, ["supplier_id"]),
        ({"supplier_id": setup["supplier"]["id"], "warehouse_id": "no-such-warehouse"}, ["warehouse_id"]),
        ({"supplier_id": 1, "warehouse_id": None, "notes": "n" * 1001}, ["supplier_id", "warehouse_id", "notes"]),
    ]
    problems = [api.validation_problem(http.post("/purchase-orders", json=b, headers=buyer.headers), f, f"order {str(b)[:60]}") for b, f in cases]
    api.assert_no_problems(problems, "orders with invalid references were not rejected")


@pytest.mark.requirement("R14")
@pytest.mark.category("validation")
@pytest.mark.parametrize(
    "case",
    ["unknown-product", "duplicate-product", "zero-quantity", "huge-quantity", "fractional-quantity", "negative-cost", "huge-cost", "missing-cost", "not-a-list", "51-lines"],
)
def test_invalid_lines_get_422(api, http, buyer, setup, case):
    bolt, nut = setup["bolt"]["id"], setup["nut"]["id"]
    line = lambda pid=bolt, q=1, c=1: {"product_id": pid, "quantity": q, "unit_cost": c}
    lines = {
        "unknown-product": [line(pid="no-such-product")], "duplicate-product": [line(), line(q=2)], "zero-quantity": [line(q=0)],
        "huge-quantity": [line(q=1_000_001)], "fractional-quantity": [line(q=1.5)], "negative-cost": [line(c=-1)], "huge-cost": [line(c=100_000_001)],
        "missing-cost": [{"product_id": nut, "quantity": 1}], "not-a-list": {"product_id": bolt}, "51-lines": [line()] * 51,
    }[case]
    body = {"supplier_id": setup["supplier"]["id"], "warehouse_id": setup["warehouse"]["id"], "lines": lines}
    problem = api.validation_problem(http.post("/purchase-orders", json=body, headers=buyer.headers), ["lines"], f"order lines: {case}")
    assert problem is None, problem


@pytest.mark.requirement("R14", "R9")
@pytest.mark.category("validation")
def test_inactive_products_cannot_be_ordered(api, http, manager, setup):
    product = api.product()
    api.ok(http.patch(f"/products/{product['id']}", json={"active": False}, headers=manager.headers), 200, "deactivate the product")
    body = {"supplier_id": setup["supplier"]["id"], "warehouse_id": setup["warehouse"]["id"], "lines": [{"product_id": product["id"], "quantity": 1, "unit_cost": 1}]}
    problem = api.validation_problem(http.post("/purchase-orders", json=body, headers=manager.headers), ["lines"], "ordering an inactive product")
    assert problem is None, problem
    draft = api.order(setup["supplier"], setup["warehouse"])
    r = http.patch(f"/purchase-orders/{draft['id']}", json={"lines": body["lines"]}, headers=manager.headers)
    problem = api.validation_problem(r, ["lines"], "putting an inactive product on a draft's lines")
    assert problem is None, problem


@pytest.mark.requirement("R15")
@pytest.mark.category("api_surface")
def test_list_orders_newest_first_with_filters(api, http, clerk, setup):
    other_wh = api.warehouse()
    first = api.order(setup["supplier"], setup["warehouse"], [(setup["bolt"], 1, 1)])
    second = api.order(setup["supplier"], other_wh, [(setup["bolt"], 1, 1)])
    third = api.order(setup["supplier"], setup["warehouse"], [(setup["nut"], 1, 1)])
    api.submit(third)
    page = api.get("/purchase-orders", by=clerk, supplier_id=setup["supplier"]["id"])
    assert [o["id"] for o in page["items"]] == [third["id"], second["id"], first["id"]] and page["total"] == 3, f"newest first: {page}"
    assert [o["id"] for o in api.get("/purchase-orders", supplier_id=setup["supplier"]["id"], status="draft")["items"]] == [second["id"], first["id"]], "status=draft"
    assert [o["id"] for o in api.get("/purchase-orders", supplier_id=setup["supplier"]["id"], warehouse_id=setup["warehouse"]["id"], status="submitted")["items"]] == [third["id"]], "all three filters"
    limited = api.get("/purchase-orders", supplier_id=setup["supplier"]["id"], limit=1, offset=1)
    assert [o["id"] for o in limited["items"]] == [second["id"]] and (limited["limit"], limited["offset"]) == (1, 1), f"pagination: {limited}"


@pytest.mark.requirement("R15")
@pytest.mark.category("validation")
def test_invalid_order_filters_get_422(api, http):
    problems = [api.validation_problem(http.get("/purchase-orders", params=p, headers=api.admin.headers), [next(iter(p))], f"orders with {p}")
                for p in ({"status": "open"}, {"status": "DRAFT"}, {"limit": 0}, {"offset": -5})]
    api.assert_no_problems(problems, "invalid order list parameters were not rejected")


@pytest.mark.requirement("R16")
@pytest.mark.category("state")
def test_update_a_draft(api, http, buyer, setup):
    order = api.order(setup["supplier"], setup["warehouse"], [(setup["bolt"], 5, 100)], by=buyer)
    other = api.supplier()
    body = {"supplier_id": other["id"], "notes": "changed", "lines": [{"product_id": setup["nut"]["id"], "quantity": 3, "unit_cost": 7}]}
    r = http.patch(f"/purchase-orders/{order['id']}", json=body, headers=buyer.headers)
    assert r.status_code == 200, f"the buyer changing their draft: {api.brief(r)}"
    got = api.get(f"/purchase-orders/{order['id']}")
    summary = (got.get("supplier_id"), got.get("warehouse_id"), got.get("notes"), got.get("total_cost"), [x.get("product_id") for x in got.get("lines", [])])
    assert summary == (other["id"], setup["warehouse"]["id"], "changed", 21, [setup["nut"]["id"]]), f"lines are replaced as a whole: {got}"


@pytest.mark.requirement("R16")
@pytest.mark.category("state")
@pytest.mark.parametrize("status", ["submitted", "cancelled", "received"])
def test_only_drafts_can_be_changed_or_deleted(api, http, manager, setup, status):
    order = api.order(setup["supplier"], setup["warehouse"], [(setup["bolt"], 2, 10)])
    if status in ("submitted", "received"):
        api.submit(order)
    if status == "received":
        api.receive(order)
    if status == "cancelled":
        api.ok(api.act(order, "cancel"), 200, "cancel")
    api.error(http.patch(f"/purchase-orders/{order['id']}", json={"notes": "late change"}, headers=manager.headers), 409, "invalid_state", f"changing a {status} order")
    api.error(http.delete(f"/purchase-orders/{order['id']}", headers=manager.headers), 409, "invalid_state", f"deleting a {status} order")
    got = api.get(f"/purchase-orders/{order['id']}")
    assert (got.get("status"), got.get("notes")) == (status, ""), f"the refused requests changed the order: {got}"


@pytest.mark.requirement("R16")
@pytest.mark.category("state")
def test_delete_a_draft(api, http, buyer, setup):
    order = api.order(setup["supplier"], setup["warehouse"], by=buyer)
    assert http.delete(f"/purchase-orders/{order['id']}", headers=buyer.headers).status_code == 204, "the buyer deleting their draft"
    api.error(http.get(f"/purchase-orders/{order['id']}", headers=buyer.headers), 404, "not_found", "a deleted order")


@pytest.mark.requirement("R17")
@pytest.mark.category("state")
def test_submit_a_draft(api, http, buyer, setup):
    order = api.order(setup["supplier"], setup["warehouse"], [(setup["bolt"], 10, 5)], by=buyer)
    r = api.act(order, "submit", buyer)
    assert r.status_code == 200, f"submitting a draft: {api.brief(r)}"
    assert r.json().get("status") == "submitted" and r.json().get("submitted_at"), f"status submitted with submitted_at: {r.text[:300]}"
    api.error(api.act(order, "submit", buyer), 409, "invalid_state", "submitting twice")
    assert api.get(f"/purchase-orders/{order['id']}")["status"] == "submitted", "the submission persisted"


@pytest.mark.requirement("R17")
@pytest.mark.category("state")
def test_an_empty_draft_cannot_be_submitted(api, http, setup):
    order = api.order(setup["supplier"], setup["warehouse"])
    api.error(api.act(order, "submit"), 409, "invalid_state", "submitting a draft without lines")
    got = api.get(f"/purchase-orders/{order['id']}")
    assert (got.get("status"), got.get("submitted_at")) == ("draft", None), f"the refused submission changed the order: {got}"


@pytest.mark.requirement("R18")
@pytest.mark.category("state")
@pytest.mark.parametrize("start", ["draft", "submitted"])
def test_cancel(api, http, buyer, setup, start):
    order = api.order(setup["supplier"], setup["warehouse"], [(setup["bolt"], 1, 1)], by=buyer)
    if start == "submitted":
        api.submit(order, buyer)
    r = api.act(order, "cancel", buyer)
    assert r.status_code == 200 and r.json().get("status") == "cancelled" and r.json().get("cancelled_at"), f"cancelling a {start} order: {api.brief(r)}"
    api.error(api.act(order, "cancel", buyer), 409, "invalid_state", "cancelling twice")
    api.error(api.act(order, "submit", buyer), 409, "invalid_state", "submitting a cancelled order")


@pytest.mark.requirement("R18")
@pytest.mark.category("state")
@pytest.mark.parametrize("state", ["partially_received", "received"])
def test_orders_with_goods_cannot_be_cancelled(api, http, setup, state):
    order = api.order(setup["supplier"], setup["warehouse"], [(setup["bolt"], 4, 1)])
    api.submit(order)
    api.receive(order, lines=[(setup["bolt"], 1 if state == "partially_received" else 4)])
    api.error(api.act(order, "cancel"), 409, "invalid_state", f"cancelling a {state} order")
    assert api.get(f"/purchase-orders/{order['id']}")["status"] == state, "the refused cancellation changed the status"


@pytest.mark.requirement("R5")
@pytest.mark.category("authorization")
def test_clerks_cannot_raise_or_manage_orders(api, http, clerk, setup):
    order = api.order(setup["supplier"], setup["warehouse"], [(setup["bolt"], 1, 1)])
    body = {"supplier_id": setup["supplier"]["id"], "warehouse_id": setup["warehouse"]["id"]}
    for method, path, payload in (("POST", "/purchase-orders", body), ("PATCH", f"/purchase-orders/{order['id']}", {"notes": "x"}),
                                  ("POST", f"/purchase-orders/{order['id']}/submit", None), ("POST", f"/purchase-orders/{order['id']}/cancel", None),
                                  ("DELETE", f"/purchase-orders/{order['id']}", None)):
        api.error(http.request(method, path, json=payload, headers=clerk.headers), 403, "forbidden", f"a clerk: {method} {path}")
    assert api.get(f"/purchase-orders/{order['id']}")["status"] == "draft", "a clerk changed the order"


@pytest.mark.requirement("R6")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("action", ["update", "submit", "cancel", "delete"])
def test_buyers_act_only_on_their_own_orders(api, http, setup, action):
    owner = api.staff("buyer")
    other = api.staff("buyer")
    order = api.order(setup["supplier"], setup["warehouse"], [(setup["bolt"], 1, 1)], by=owner)
    method, path, body = {
        "update": ("PATCH", f"/purchase-orders/{order['id']}", {"notes": "not mine"}),
        "submit": ("POST", f"/purchase-orders/{order['id']}/submit", None),
        "cancel": ("POST", f"/purchase-orders/{order['id']}/cancel", None),
        "delete": ("DELETE", f"/purchase-orders/{order['id']}", None),
    }[action]
    api.error(http.request(method, path, json=body, headers=other.headers), 403, "forbidden", f"another buyer: {action}")
    got = api.get(f"/purchase-orders/{order['id']}")
    assert (got.get("status"), got.get("notes")) == ("draft", ""), f"another buyer changed the order: {got}"
    r = http.request(method, path, json=body, headers=owner.headers)
    assert r.status_code in (200, 204), f"the owner may {action} it: {api.brief(r)}"


@pytest.mark.requirement("R6")
@pytest.mark.category("authorization")
def test_managers_act_on_any_order(api, http, manager, buyer, setup):
    order = api.order(setup["supplier"], setup["warehouse"], [(setup["bolt"], 1, 1)], by=buyer)
    api.ok(http.patch(f"/purchase-orders/{order['id']}", json={"notes": "approved"}, headers=manager.headers), 200, "a manager changes a buyer's draft")
    assert api.submit(order, manager)["status"] == "submitted", "a manager submits a buyer's order"
