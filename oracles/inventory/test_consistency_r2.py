"""R2 (evolved) items: stock consistency over long sequences, concurrency, lifecycle cascades."""

from __future__ import annotations

import random
import threading

import pytest
import requests

pytestmark = [pytest.mark.tier("r2")]


@pytest.mark.requirement("R20", "R21", "R22", "R23", "R24")
@pytest.mark.category("state")
def test_stock_matches_a_model_over_a_long_sequence(api, http, setup):
    rng = random.Random(424242)
    warehouses = [setup["warehouse"], api.warehouse()]
    products = [setup["bolt"], setup["nut"]]
    model = {(p["id"], w["id"]): 0 for p in products for w in warehouses}
    for step in range(30):
        w, p = rng.choice(warehouses), rng.choice(products)
        if rng.random() < 0.3:
            qty = rng.randint(1, 6)
            order = api.submit(api.order(setup["supplier"], w, [(p, qty, 1)]))
            api.receive(order)
            model[(p["id"], w["id"])] += qty
            continue
        qty = rng.choice([-7, -3, -1, 2, 5])
        reason = "count_correction" if rng.random() < 0.5 else ("found" if qty > 0 else "damaged")
        r = api.adjust(w, p, qty, reason)
        if model[(p["id"], w["id"])] + qty < 0:
            api.error(r, 409, "insufficient_stock", f"step {step}: {reason} {qty} with stock {model[(p['id'], w['id'])]}")
        else:
            assert r.status_code == 201, f"step {step}: {reason} {qty} with stock {model[(p['id'], w['id'])]}: {api.brief(r)}"
            model[(p["id"], w["id"])] += qty
    got = {(p["id"], w["id"]): api.stock_in(w, p) for p in products for w in warehouses}
    assert got == model, f"stock after 30 steps differs from the model:\nexpected {model}\ngot      {got}"
    for p in products:
        assert api.on_hand(p) == sum(v for (pid, _), v in model.items() if pid == p["id"]), f"on_hand of {p['sku']} is not the total"
        ledger = sum(m["quantity"] for m in api.movements(product_id=p["id"]))
        assert ledger == api.on_hand(p), f"the movements of {p['sku']} sum to {ledger}, stock is {api.on_hand(p)}"


@pytest.mark.requirement("R22")
@pytest.mark.category("state")
def test_concurrent_removals_never_overdraw(api, http, service, clerk, setup, checks):
    api.stocked(setup["warehouse"], setup["bolt"], 5)
    statuses: list[int] = []
    lock = threading.Lock()

    def remove() -> None:
        with requests.Session() as session:
            r = session.post(f"{service.base_url}/adjustments", json={"warehouse_id": setup["warehouse"]["id"], "product_id": setup["bolt"]["id"], "quantity": -1, "reason": "damaged"},
                             headers=clerk.headers, timeout=http.timeout_s)
        with lock:
            statuses.append(r.status_code)

    checks.concurrently(lambda _: remove(), [None] * 9, 2 * http.timeout_s)
    assert sorted(statuses) == [201] * 5 + [409] * 4, f"9 concurrent removals from 5: exactly 5 succeed, got {sorted(statuses)}"
    assert api.stock_in(setup["warehouse"], setup["bolt"]) == 0, "stock must end at exactly 0"


@pytest.mark.requirement("R19", "R20")
@pytest.mark.category("state")
def test_concurrent_deliveries_never_over_receive(api, http, service, clerk, setup, checks):
    order = api.submit(api.order(setup["supplier"], setup["warehouse"], [(setup["nut"], 10, 1)]))
    statuses: list[int] = []
    lock = threading.Lock()

    def deliver() -> None:
        with requests.Session() as session:
            r = session.post(f"{service.base_url}/purchase-orders/{order['id']}/receive", json={"lines": [{"product_id": setup["nut"]["id"], "quantity": 4}]},
                             headers=clerk.headers, timeout=http.timeout_s)
        with lock:
            statuses.append(r.status_code)

    checks.concurrently(lambda _: deliver(), [None] * 4, 2 * http.timeout_s)
    assert sorted(statuses) == [200, 200, 409, 409], f"4 concurrent deliveries of 4 against 10 ordered: 2 fit, got {sorted(statuses)}"
    got = api.get(f"/purchase-orders/{order['id']}")
    assert (got["lines"][0]["received_quantity"], got["status"], api.stock_in(setup["warehouse"], setup["nut"])) == (8, "partially_received", 8), f"8 received: {got}"


@pytest.mark.requirement("R9", "R14", "R20", "R21")
@pytest.mark.category("workflow")
def test_discontinuing_a_product(api, http, manager, setup):
    product = api.product()
    order = api.submit(api.order(setup["supplier"], setup["warehouse"], [(product, 6, 10)]))
    api.ok(http.patch(f"/products/{product['id']}", json={"active": False}, headers=manager.headers), 200, "discontinue the product")
    body = {"supplier_id": setup["supplier"]["id"], "warehouse_id": setup["warehouse"]["id"], "lines": [{"product_id": product["id"], "quantity": 1, "unit_cost": 1}]}
    assert api.validation_problem(http.post("/purchase-orders", json=body, headers=manager.headers), ["lines"], "ordering it again") is None, "a discontinued product cannot be ordered"
    api.receive(order)
    api.ok(api.adjust(setup["warehouse"], product, -6, "count_correction"), 201, "clear the remaining stock")
    assert api.on_hand(product) == 0 and api.get(f"/purchase-orders/{order['id']}")["status"] == "received", "the existing order was still received"
    api.error(http.delete(f"/products/{product['id']}", headers=manager.headers), 409, "conflict", "deleting a product with history")


@pytest.mark.requirement("R11", "R12", "R18")
@pytest.mark.category("workflow")
def test_cancelled_orders_release_the_warehouse_not_the_supplier(api, http, manager, setup):
    supplier = api.supplier()
    warehouse = api.warehouse()
    order = api.submit(api.order(supplier, warehouse, [(setup["bolt"], 3, 1)]))
    api.error(http.delete(f"/warehouses/{warehouse['id']}", headers=manager.headers), 409, "conflict", "closing a warehouse with a submitted order")
    api.ok(api.act(order, "cancel"), 200, "cancel the order")
    assert http.delete(f"/warehouses/{warehouse['id']}", headers=manager.headers).status_code == 204, "a cancelled order no longer holds the warehouse"
    api.error(http.delete(f"/suppliers/{supplier['id']}", headers=manager.headers), 409, "conflict", "the cancelled order still names the supplier")


@pytest.mark.requirement("R8", "R20", "R21")
@pytest.mark.category("side_effects")
def test_low_stock_follows_receipts_and_adjustments(api, http, setup):
    product = api.product(reorder_level=10)
    low = lambda: [p["id"] for p in api.get("/products", q=product["sku"], low_stock="true")["items"]]
    assert low() == [product["id"]], "0 of 10: low"
    api.receive(api.submit(api.order(setup["supplier"], setup["warehouse"], [(product, 10, 1)])))
    assert low() == [], "10 of 10: not low"
    api.ok(api.adjust(setup["warehouse"], product, -1, "damaged"), 201, "damage one")
    assert low() == [product["id"]], "9 of 10: low again"


@pytest.mark.requirement("R4", "R6")
@pytest.mark.category("authorization")
def test_a_demoted_buyer_loses_their_orders(api, http, admin, setup):
    buyer = api.staff("buyer")
    order = api.order(setup["supplier"], setup["warehouse"], [(setup["bolt"], 1, 1)], by=buyer)
    api.ok(http.patch(f"/users/{buyer.id}", json={"role": "clerk"}, headers=admin.headers), 200, "make the buyer a clerk")
    api.error(api.act(order, "submit", buyer), 403, "forbidden", "a former buyer submitting their draft as a clerk")
    api.ok(http.patch(f"/users/{buyer.id}", json={"role": "buyer"}, headers=admin.headers), 200, "make them a buyer again")
    assert api.submit(order, buyer)["status"] == "submitted", "as a buyer again they may submit their own draft"
