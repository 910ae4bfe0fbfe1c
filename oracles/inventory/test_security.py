"""Security items (spec.md: Users and roles, Purchase orders, Limits and hostile input), each tagged with its CWE."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]


@pytest.mark.requirement("R6")
@pytest.mark.cwe(639)
def test_a_buyer_cannot_act_on_another_buyers_order(api, http, setup):
    owner, other = api.staff("buyer"), api.staff("buyer")
    order = api.order(setup["supplier"], setup["warehouse"], [(setup["bolt"], 5, 100)], by=owner)
    for method, path, body in (
        ("PATCH", f"/purchase-orders/{order['id']}", {"notes": "mine now", "lines": []}),
        ("POST", f"/purchase-orders/{order['id']}/submit", None),
        ("POST", f"/purchase-orders/{order['id']}/cancel", None),
        ("DELETE", f"/purchase-orders/{order['id']}", None),
    ):
        api.error(http.request(method, path, json=body, headers=other.headers), 403, "forbidden", f"another buyer: {method} {path}")
    got = api.get(f"/purchase-orders/{order['id']}")
    assert (got["status"], got["notes"], len(got["lines"])) == ("draft", order["notes"], 1), f"another buyer changed the order: {got}"


@pytest.mark.requirement("R4", "R13", "R21")
@pytest.mark.cwe(915)
def test_roles_states_and_authors_cannot_be_assigned(api, http, setup):
    clerk, buyer = api.staff("clerk"), api.staff("buyer")
    api.error(http.patch(f"/users/{clerk.id}", json={"role": "admin"}, headers=clerk.headers), 403, "forbidden", "a clerk making themself admin")
    assert api.get("/me", by=clerk)["role"] == "clerk", "the clerk's role must not change"
    body = {"supplier_id": setup["supplier"]["id"], "warehouse_id": setup["warehouse"]["id"], "status": "received", "created_by": clerk.id,
            "received_at": "2001-01-01T00:00:00Z", "total_cost": 1, "lines": [{"product_id": setup["bolt"]["id"], "quantity": 3, "unit_cost": 10}]}
    r = http.post("/purchase-orders", json=body, headers=buyer.headers)
    assert r.status_code == 201, f"server-owned fields are ignored at creation: {api.brief(r)}"
    order = r.json()
    got = (order.get("status"), order.get("created_by"), order.get("received_at"), order.get("total_cost"))
    assert got == ("draft", buyer.id, None, 30), f"the client assigned server-owned order fields: {order}"
    r = api.adjust(setup["warehouse"], setup["nut"], 4, "found", by=clerk, type="receipt", actor_id=buyer.id, purchase_order_id=order["id"])
    assert r.status_code == 201, f"an adjustment with forged fields: {api.brief(r)}"
    move = r.json()
    assert (move.get("type"), move.get("actor_id"), move.get("purchase_order_id")) == ("adjustment", clerk.id, None), f"forged movement fields: {move}"


@pytest.mark.requirement("R7", "R8", "R27")
@pytest.mark.cwe(89)
def test_hostile_text_is_stored_verbatim_and_search_never_widens(api, http, checks):
    marker = api.tag()
    made = [api.product(name=f"{marker} {text}"[:120]) for text in checks.injection_texts]
    for product in made:
        assert api.get(f"/products/{product['id']}")["name"] == product["name"], f"a name is stored verbatim: {product['name']!r}"
    api.product(name="plain widget")
    for q in ("%", "_", "' OR '1'='1", "*", '{"$gt": ""}', f"{marker}%"):
        r = http.get("/products", params={"q": q, "limit": 100}, headers=api.admin.headers)
        assert r.status_code == 200, f"GET /products?q={q!r}: {api.brief(r)}"
        names = [(p.get("sku", ""), p.get("name", "")) for p in r.json().get("items", [])]
        wrong = [n for sku, n in names if q.lower() not in n.lower() and q.lower() not in sku.lower()]
        assert not wrong, f"q={q!r} is a literal substring; it also matched {wrong[:5]}"
    note = "'; UPDATE stock SET on_hand = 1000000;--"
    warehouse = api.warehouse()
    r = api.adjust(warehouse, made[0], 2, "found", note=note)
    assert r.status_code == 201 and r.json().get("note") == note, f"a note is stored verbatim: {api.brief(r)}"
    assert api.on_hand(made[0]) == 2, "the note must not change any stock"


@pytest.mark.requirement("R27")
@pytest.mark.cwe(400)
def test_oversized_and_deeply_nested_bodies_are_refused(api, http, service, checks):
    sku = f"BIG-{api.tag()}"
    problems = checks.hostile_body_problems(service, http.timeout_s, "POST", "/products", api.admin.headers, {"sku": sku, "name": "big"}, "name")
    product = api.product(name="kept")
    problems += checks.hostile_body_problems(service, http.timeout_s, "PATCH", f"/products/{product['id']}", api.admin.headers, {"unit": "box"}, "name")
    assert not problems, "limits on request bodies:\n" + "\n".join(problems)
    assert api.get("/products", q=sku)["items"] == [], "a refused create must create nothing"
    got = api.get(f"/products/{product['id']}")
    assert (got["name"], got["unit"]) == ("kept", product["unit"]), f"a refused PATCH must change nothing: {got}"


@pytest.mark.requirement("R2", "R4")
@pytest.mark.cwe(287)
def test_inactive_and_tampered_tokens_get_401(api, http, checks):
    manager = api.staff("manager")
    problems = checks.token_problems(http, "POST", "/suppliers", manager.token, {"name": "forged " + api.tag()})
    api.ok(http.patch(f"/users/{manager.id}", json={"active": False}, headers=api.admin.headers), 200, "deactivate the manager")
    for method, path, body in (("GET", "/me", None), ("GET", "/products", None), ("POST", "/suppliers", {"name": "inactive " + api.tag()})):
        r = http.request(method, path, json=body, headers=manager.headers)
        if r.status_code != 401:
            problems.append(f"{method} {path} with an inactive user's token: expected 401, got {api.brief(r)}")
    api.ok(http.patch(f"/users/{manager.id}", json={"active": True}, headers=api.admin.headers), 200, "reactivate the manager")
    r = http.get("/me", headers=manager.headers)
    if r.status_code != 401:
        problems.append(f"an old token after reactivation: expected 401, got {api.brief(r)}")
    assert not problems, "token misuse was not refused:\n" + "\n".join(problems)


@pytest.mark.requirement("R9", "R27")
@pytest.mark.cwe(22)
def test_path_traversal_in_ids_gets_404(api, http, service, setup, checks):
    problems = checks.traversal_problems(service, http.timeout_s, "/products/", api.admin.headers)
    problems += checks.traversal_problems(service, http.timeout_s, "/purchase-orders/", api.admin.headers)
    problems += checks.traversal_problems(service, http.timeout_s, "/warehouses/", api.admin.headers, "/stock")
    assert not problems, "ids that climb out of their path must name nothing:\n" + "\n".join(problems)
