"""Receiving goods: deliveries, stock effects, refusals (spec.md: Status workflow, Movements)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.fixture
def submitted(api, setup):
    """A submitted order of 10 bolts at 25 and 4 nuts at 10 for the setup warehouse."""
    order = api.order(setup["supplier"], setup["warehouse"], [(setup["bolt"], 10, 25), (setup["nut"], 4, 10)])
    return api.submit(order)


@pytest.mark.requirement("R20")
@pytest.mark.category("side_effects")
def test_receiving_everything(api, http, clerk, setup, submitted):
    r = api.act(submitted, "receive", clerk)
    assert r.status_code == 200, f"a clerk receiving the whole order: {api.brief(r)}"
    order = r.json()
    assert order.get("status") == "received" and order.get("received_at"), f"the order is received with received_at: {order}"
    assert [x.get("received_quantity") for x in order.get("lines", [])] == [10, 4], f"every line fully received: {order.get('lines')}"
    assert (api.stock_in(setup["warehouse"], setup["bolt"]), api.stock_in(setup["warehouse"], setup["nut"])) == (10, 4), "stock arrived in the order's warehouse"
    assert (api.on_hand(setup["bolt"]), api.on_hand(setup["nut"])) == (10, 4), "products' on_hand grew"


@pytest.mark.requirement("R20")
@pytest.mark.category("side_effects")
def test_receiving_in_several_deliveries(api, http, clerk, setup, submitted):
    first = api.receive(submitted, clerk, lines=[(setup["bolt"], 6)])
    assert first.get("status") == "partially_received" and first.get("received_at") is None, f"after a partial delivery: {first}"
    assert [x.get("received_quantity") for x in first["lines"]] == [6, 0], f"received so far: {first['lines']}"
    second = api.receive(submitted, clerk, lines=[(setup["nut"], 4), (setup["bolt"], 3)])
    assert second.get("status") == "partially_received", f"one bolt is still missing: {second}"
    last = api.receive(submitted, clerk)
    assert last.get("status") == "received" and [x.get("received_quantity") for x in last["lines"]] == [10, 4], f"receiving the rest: {last}"
    assert api.stock_in(setup["warehouse"], setup["bolt"]) == 10, "6 + 3 + 1 bolts arrived"
    moves = [(m["product_id"], m["quantity"]) for m in api.movements(warehouse_id=setup["warehouse"]["id"], type="receipt")]
    assert moves == [(setup["bolt"]["id"], 1), (setup["bolt"]["id"], 3), (setup["nut"]["id"], 4), (setup["bolt"]["id"], 6)], (
        f"one receipt movement per delivered line, newest first: {moves}"
    )


@pytest.mark.requirement("R19")
@pytest.mark.category("state")
@pytest.mark.parametrize("status", ["draft", "cancelled", "received"])
def test_only_submitted_orders_receive(api, http, setup, status):
    order = api.order(setup["supplier"], setup["warehouse"], [(setup["bolt"], 2, 1)])
    if status == "cancelled":
        api.ok(api.act(order, "cancel"), 200, "cancel")
    if status == "received":
        api.submit(order)
        api.receive(order)
    before = api.stock_in(setup["warehouse"], setup["bolt"])
    r = api.act(order, "receive", lines=[{"product_id": setup["bolt"]["id"], "quantity": 1}])
    # A fully received order breaks two state rules at once (its status, and nothing remains of
    # the line); the spec orders them nowhere, so either code is right there.
    codes = ("invalid_state", "over_receipt") if status == "received" else ("invalid_state",)
    assert r.status_code == 409 and r.json().get("error") in codes, f"receiving a {status} order: expected 409 {' or '.join(codes)}, got {api.brief(r)}"
    assert api.stock_in(setup["warehouse"], setup["bolt"]) == before, "the refused delivery changed stock"


@pytest.mark.requirement("R19")
@pytest.mark.category("state")
def test_over_receipt_records_nothing(api, http, clerk, setup, submitted):
    api.receive(submitted, clerk, lines=[(setup["bolt"], 8)])
    r = api.act(submitted, "receive", clerk, lines=[{"product_id": setup["nut"]["id"], "quantity": 4}, {"product_id": setup["bolt"]["id"], "quantity": 3}])
    api.error(r, 409, "over_receipt", "receiving 3 bolts when 2 remain")
    got = api.get(f"/purchase-orders/{submitted['id']}")
    assert [x.get("received_quantity") for x in got["lines"]] == [8, 0] and got["status"] == "partially_received", f"nothing of the refused delivery was recorded: {got}"
    assert (api.stock_in(setup["warehouse"], setup["bolt"]), api.stock_in(setup["warehouse"], setup["nut"])) == (8, 0), "the refused delivery changed stock"


@pytest.mark.requirement("R19", "R26")
@pytest.mark.category("validation")
@pytest.mark.parametrize(
    "case",
    ["empty-list", "not-on-order", "zero", "negative", "fractional", "duplicate", "not-a-list", "null", "missing-quantity"],
)
def test_invalid_receipt_lines_get_422(api, http, clerk, setup, submitted, case):
    bolt = setup["bolt"]["id"]
    stranger = api.product()["id"]
    lines = {
        "empty-list": [], "not-on-order": [{"product_id": stranger, "quantity": 1}], "zero": [{"product_id": bolt, "quantity": 0}],
        "negative": [{"product_id": bolt, "quantity": -1}], "fractional": [{"product_id": bolt, "quantity": 1.5}],
        "duplicate": [{"product_id": bolt, "quantity": 1}, {"product_id": bolt, "quantity": 1}], "not-a-list": {"product_id": bolt, "quantity": 1},
        "null": None, "missing-quantity": [{"product_id": bolt}],
    }[case]
    r = http.post(f"/purchase-orders/{submitted['id']}/receive", json={"lines": lines}, headers=clerk.headers)
    problem = api.validation_problem(r, ["lines"], f"receipt lines: {case}")
    assert problem is None, problem
    assert api.get(f"/purchase-orders/{submitted['id']}")["status"] == "submitted", "an invalid delivery changed the order"


@pytest.mark.requirement("R5")
@pytest.mark.category("authorization")
def test_buyers_cannot_receive(api, http, setup):
    buyer = api.staff("buyer")
    order = api.submit(api.order(setup["supplier"], setup["warehouse"], [(setup["bolt"], 1, 1)], by=buyer), buyer)
    api.error(api.act(order, "receive", buyer), 403, "forbidden", "a buyer receiving their own order")
    assert api.stock_in(setup["warehouse"], setup["bolt"]) == 0, "the refused delivery changed stock"


@pytest.mark.requirement("R24", "R20")
@pytest.mark.category("side_effects")
def test_receipt_movements(api, http, clerk, setup, submitted):
    api.receive(submitted, clerk, lines=[(setup["nut"], 2)])
    moves = api.movements(product_id=setup["nut"]["id"])
    assert len(moves) == 1, f"one receipt movement for the nut line: {moves}"
    m = moves[0]
    got = {k: m.get(k) for k in ("type", "product_id", "warehouse_id", "quantity", "reason", "purchase_order_id", "note", "actor_id")}
    expected = {"type": "receipt", "product_id": setup["nut"]["id"], "warehouse_id": setup["warehouse"]["id"], "quantity": 2,
                "reason": None, "purchase_order_id": submitted["id"], "note": "", "actor_id": clerk.id}
    assert got == expected, f"the receipt movement:\nexpected {expected}\ngot      {got}"


@pytest.mark.requirement("R20", "R23")
@pytest.mark.category("side_effects")
def test_goods_go_to_the_orders_warehouse_only(api, http, setup):
    east = api.warehouse()
    west = api.warehouse()
    order = api.submit(api.order(setup["supplier"], west, [(setup["bolt"], 7, 1)]))
    api.receive(order)
    assert (api.stock_in(east, setup["bolt"]), api.stock_in(west, setup["bolt"])) == (0, 7), "all 7 bolts arrived in the order's warehouse only"
