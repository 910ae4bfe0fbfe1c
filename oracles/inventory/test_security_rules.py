"""Security items derived rule by rule from spec.md (issue 24; REVIEW.md "Security rules").

Each item exercises one rule, one role, one refusal condition or one hostile-value path at a
time. Every answer any item of this module receives is also checked for the password or a hash
of it ("No response ever contains a password.").
"""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http.hostile import hostile_findings
from pytest_backendbench.http.secrets import PASSWORD_EDGES, account_findings, long_password, response_secret_findings

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]


@pytest.mark.requirement("R3")
@pytest.mark.cwe(200)
def test_no_user_answer_carries_the_password_or_its_hash(api, http, admin):
    password = long_password()
    username = f"leak_{uuid.uuid4().hex[:10]}"
    found = account_findings(http, {"username": username, "password": password, "role": "clerk"}, {"username": username, "password": password},
                             register_headers=admin.headers)
    users = http.get("/users", headers=admin.headers)
    if users.status_code != 200:
        found.append(f"GET /users: expected 200, got {api.brief(users)[:200]}")
    found += response_secret_findings(users, [password], user_object=True)
    assert not found, "user answers (create, log in, GET /me, 409, 401, GET /users):\n" + "\n".join(found)


@pytest.mark.requirement("R2")
@pytest.mark.cwe(287)
@pytest.mark.parametrize("edge", sorted(PASSWORD_EDGES))
def test_a_password_wrong_only_at_its_edge_gets_401(api, http, admin, edge):
    credentials = {"username": f"edge_{uuid.uuid4().hex[:10]}", "password": long_password()}
    api.ok(http.post("/users", json={**credentials, "role": "clerk"}, headers=admin.headers), 201, "create a user")
    wrong = {**credentials, "password": PASSWORD_EDGES[edge](credentials["password"])}
    api.error(http.post("/auth/token", json=wrong), 401, "unauthorized", f"login with the password {edge}")
    api.ok(http.post("/auth/token", json=credentials), 200, "login with the exact password")


@pytest.mark.requirement("R4")
@pytest.mark.cwe(287)
def test_an_inactive_user_cannot_log_in_with_the_right_password(api, http, admin):
    clerk = api.staff("clerk")
    api.ok(http.patch(f"/users/{clerk.id}", json={"active": False}, headers=admin.headers), 200, "deactivate the clerk")
    api.error(http.post("/auth/token", json={"username": clerk.username, "password": clerk.password}), 401, "unauthorized",
              "login of an inactive user with the right password")


@pytest.mark.requirement("R4")
@pytest.mark.cwe(613)
def test_reactivation_does_not_revive_old_tokens(api, http, admin):
    clerk = api.staff("clerk")
    api.ok(http.patch(f"/users/{clerk.id}", json={"active": False}, headers=admin.headers), 200, "deactivate")
    api.error(http.get("/me", headers=clerk.headers), 401, "unauthorized", "the token of an inactive user")
    api.ok(http.patch(f"/users/{clerk.id}", json={"active": True}, headers=admin.headers), 200, "reactivate")
    api.error(http.get("/me", headers=clerk.headers), 401, "unauthorized", "the old token after reactivation")
    fresh = api.login(clerk.username, clerk.password)
    assert api.ok(http.get("/me", headers={"Authorization": f"Bearer {fresh['token']}"}), 200, "a new login")["id"] == clerk.id


def _denied():
    """(role, method, path template, body) for every action the role table marks "–"."""
    users = [("POST", "/users", {"username": "zz_denied_user", "password": "pw-denied-123", "role": "admin"}), ("GET", "/users", None),
             ("PATCH", "/users/{user}", {"role": "admin"})]
    catalogue = [("POST", "/products", {"sku": "ZZ-DENIED", "name": "Denied"}), ("PATCH", "/products/{product}", {"name": "changed"}),
                 ("DELETE", "/products/{product}", None), ("POST", "/suppliers", {"name": "zz denied supplier"}),
                 ("PATCH", "/suppliers/{supplier}", {"name": "changed"}), ("DELETE", "/suppliers/{supplier}", None),
                 ("POST", "/warehouses", {"code": "ZZDENIED", "name": "Denied"}), ("PATCH", "/warehouses/{warehouse}", {"name": "changed"}),
                 ("DELETE", "/warehouses/{warehouse}", None)]
    receiving = [("POST", "/purchase-orders/{order}/receive", {}), ("POST", "/adjustments", "adjustment")]
    purchasing = [("POST", "/purchase-orders", "order"), ("PATCH", "/purchase-orders/{order}", {"notes": "changed"}),
                  ("POST", "/purchase-orders/{order}/submit", None), ("POST", "/purchase-orders/{order}/cancel", None),
                  ("DELETE", "/purchase-orders/{order}", None)]
    cases = [("manager", *c) for c in users]
    cases += [("buyer", *c) for c in users + catalogue + receiving]
    cases += [("clerk", *c) for c in users + catalogue + purchasing]
    return cases


DENIED = _denied()


@pytest.mark.requirement("R5", "R25")
@pytest.mark.cwe(863)
@pytest.mark.parametrize(("role", "method", "path", "body"), DENIED, ids=[f"{r}-{m}-{p}" for r, m, p, _ in DENIED])
def test_a_role_gets_403_for_each_action_the_table_denies_it(api, http, admin, setup, role, method, path, body):
    bolt, warehouse, supplier = setup["bolt"], setup["warehouse"], setup["supplier"]
    order = api.order(supplier, warehouse, [(bolt, 5, 100)])
    if "receive" in path:
        api.submit(order)
    victim = api.staff("clerk")
    caller = api.staff(role)
    if body == "adjustment":
        body = {"warehouse_id": warehouse["id"], "product_id": bolt["id"], "quantity": 3, "reason": "found"}
    elif body == "order":
        body = {"supplier_id": supplier["id"], "warehouse_id": warehouse["id"]}
    target = path.format(user=victim.id, product=bolt["id"], supplier=supplier["id"], warehouse=warehouse["id"], order=order["id"])
    api.error(http.request(method, target, json=body, headers=caller.headers), 403, "forbidden", f"{role}: {method} {target}")
    got = api.get(f"/purchase-orders/{order['id']}")
    assert (got["status"], got["notes"], got["lines"][0]["received_quantity"]) == ("submitted" if "receive" in path else "draft", order["notes"], 0)
    assert api.get(f"/products/{bolt['id']}")["name"] == bolt["name"] and api.on_hand(bolt) == 0
    assert api.get(f"/suppliers/{supplier['id']}")["name"] == supplier["name"]
    assert api.get(f"/warehouses/{warehouse['id']}")["name"] == warehouse["name"]
    users = {u["username"]: u for u in api.get("/users")["items"]}
    assert users[victim.username]["role"] == "clerk" and "zz_denied_user" not in users and api.get("/products", q="ZZ-DENIED")["total"] == 0


OTHERS_ORDER = {
    "change": ("PATCH", "", {"notes": "hijacked"}),
    "submit": ("POST", "/submit", None),
    "cancel": ("POST", "/cancel", None),
    "delete": ("DELETE", "", None),
}


@pytest.mark.requirement("R6")
@pytest.mark.cwe(639)
@pytest.mark.parametrize("action", sorted(OTHERS_ORDER))
@pytest.mark.parametrize("owner_role", ["buyer", "manager"])
def test_a_buyer_cannot_act_on_an_order_someone_else_created(api, http, setup, action, owner_role):
    owner, intruder = api.staff(owner_role), api.staff("buyer")
    order = api.order(setup["supplier"], setup["warehouse"], [(setup["bolt"], 2, 50)], by=owner)
    method, suffix, body = OTHERS_ORDER[action]
    api.error(http.request(method, f"/purchase-orders/{order['id']}{suffix}", json=body, headers=intruder.headers), 403, "forbidden",
              f"a buyer's {action} of a {owner_role}'s order")
    got = api.get(f"/purchase-orders/{order['id']}")
    assert (got["status"], got["notes"], got["created_by"]) == ("draft", order["notes"], owner.id), f"the order must be untouched: {got}"
    api.submit(order, by=owner)  # the owner still can


@pytest.mark.requirement("R6", "R25")
@pytest.mark.cwe(203)
def test_the_role_is_decided_before_the_path_and_ownership_before_validation(api, http, setup):
    clerk, buyer, owner = api.staff("clerk"), api.staff("buyer"), api.staff("buyer")
    order = api.order(setup["supplier"], setup["warehouse"], [(setup["bolt"], 2, 50)], by=owner)
    problems = []
    for who, method, path, body, status in (
        (clerk, "PATCH", "/purchase-orders/no-such-order", {"notes": "x"}, 403),
        (clerk, "DELETE", "/products/no-such-product", None, 403),
        (buyer, "POST", "/purchase-orders/no-such-order/receive", {}, 403),
        (buyer, "PATCH", "/users/no-such-user", {"role": "admin"}, 403),
        (buyer, "PATCH", f"/purchase-orders/{order['id']}", {"notes": 5, "lines": "bad"}, 403),
        (buyer, "POST", "/purchase-orders/no-such-order/submit", None, 404),
    ):
        r = http.request(method, path, json=body, headers=who.headers)
        if r.status_code != status:
            problems.append(f"{who.role}: {method} {path} {body}: expected {status}, got {api.brief(r)}")
    assert not problems, "401, 403 for the role, 404, 403 for ownership, then 422:\n" + "\n".join(problems)


@pytest.mark.requirement("R4")
@pytest.mark.cwe(269)
@pytest.mark.parametrize("change", [{"role": "manager"}, {"role": "clerk"}, {"active": False}, {"role": "buyer", "active": True}],
                         ids=["to-manager", "to-clerk", "deactivate", "to-buyer-staying-active"])
def test_an_admin_cannot_demote_or_deactivate_themselves(api, http, admin, change):
    second = api.staff("admin")
    api.error(http.patch(f"/users/{second.id}", json=change, headers=second.headers), 409, "conflict", f"an admin's own PATCH {change}")
    me = api.ok(http.get("/me", headers=second.headers), 200, "the admin still works")
    assert (me["role"], me["active"]) == ("admin", True)
    api.ok(http.post("/users", json={"username": f"made_{uuid.uuid4().hex[:8]}", "password": "pw-12345678", "role": "clerk"},
                     headers=second.headers), 201, "the admin still manages users")


@pytest.mark.requirement("R4", "R5")
@pytest.mark.cwe(269)
def test_a_role_change_applies_to_the_next_request(api, http, admin, setup):
    manager = api.staff("manager")
    api.ok(http.patch(f"/users/{manager.id}", json={"role": "clerk"}, headers=admin.headers), 200, "demote the manager to clerk")
    api.error(http.post("/products", json={"sku": f"DEM-{api.tag()}", "name": "Demoted"}, headers=manager.headers), 403, "forbidden",
              "the demoted user's next product creation")
    clerk = api.staff("clerk")
    api.ok(http.patch(f"/users/{clerk.id}", json={"role": "manager"}, headers=admin.headers), 200, "promote a clerk")
    api.ok(http.post("/products", json={"sku": f"PRO-{api.tag()}", "name": "Promoted"}, headers=clerk.headers), 201, "the promoted user's next request")


@pytest.mark.requirement("R8", "R27")
@pytest.mark.cwe(943)
def test_the_product_search_is_a_literal_case_insensitive_substring(api, http):
    stem = api.tag()
    percent, digits, under = (api.product(name=f"{stem} 100% cotton"), api.product(name=f"{stem} 1000 cotton"), api.product(name=f"{stem} a_b"))
    problems = []
    for q, expected in ((f"{stem} 100%", [percent]), (f"{stem} 10_0", []), (f"{stem} 1%0", []), (f"{stem} a_b".lower(), [under]),
                        (f"{stem} axb", []), (f"{stem} 1.*", []), (f"{stem} 100% COTTON", [percent]), (f"{stem}%cotton", [])):
        r = http.get("/products", params={"q": q, "limit": 100}, headers=api.admin.headers)
        got = sorted(p.get("id") for p in r.json().get("items", [])) if r.status_code == 200 else r.status_code
        if got != sorted(p["id"] for p in expected):
            problems.append(f"GET /products?q={q!r}: expected {[p['name'] for p in expected]}, got {api.brief(r)[:200]}")
    assert not problems, "q is a case-insensitive substring, matched literally:\n" + "\n".join(problems)
    assert digits["id"] in [p["id"] for p in api.get("/products", q=f"{stem} 1000")["items"]]


@pytest.mark.requirement("R11", "R27")
@pytest.mark.cwe(943)
def test_supplier_names_clash_only_when_equal_ignoring_case(api, http):
    stem = f"Acme {uuid.uuid4().hex[:8]}"
    api.supplier(name=stem)
    problems = []
    for name in (stem[:-1] + "%", stem[:-1] + "_", "%" + stem[1:], "_" + stem[1:], stem.replace(" ", "%"), stem + ".*", stem[:-2] + ".*"):
        r = http.post("/suppliers", json={"name": name}, headers=api.admin.headers)
        if r.status_code != 201:
            problems.append(f"supplier {name!r} beside {stem!r}: expected 201 (the names differ), got {api.brief(r)}")
    assert not problems, "supplier names are compared as text (ignoring case), never as patterns:\n" + "\n".join(problems)
    api.error(http.post("/suppliers", json={"name": stem.upper()}, headers=api.admin.headers), 409, "conflict", "the same name in upper case")


@pytest.mark.requirement("R15", "R24", "R27")
@pytest.mark.cwe(89)
def test_hostile_filter_values_match_nothing_or_get_422(api, http, setup):
    api.stocked(setup["warehouse"], setup["bolt"], 4)
    api.order(setup["supplier"], setup["warehouse"], [(setup["bolt"], 1, 1)])
    problems = []
    for value in ("' OR '1'='1", "x' OR 'x'='x' --", "%", "_", "*", ".*", '{"$ne": null}'):
        for path, param in (("/purchase-orders", "supplier_id"), ("/purchase-orders", "warehouse_id"), ("/movements", "product_id"), ("/movements", "warehouse_id")):
            r = http.get(path, params={param: value}, headers=api.admin.headers)
            if r.status_code != 200 or r.json().get("total") != 0:
                problems.append(f"GET {path}?{param}={value!r}: expected 200 matching nothing, got {api.brief(r)[:200]}")
        for path, param in (("/purchase-orders", "status"), ("/movements", "type"), ("/products", "active"), ("/products", "low_stock")):
            r = http.get(path, params={param: value}, headers=api.admin.headers)
            if why := api.validation_problem(r, [param], f"GET {path}?{param}={value!r}"):
                problems.append(why)
    assert not problems, "id filters match literally; enumerations and booleans are validated:\n" + "\n".join(problems)


WRONG_SIGN = {"damaged": 2, "lost": 1, "found": -1, "returned": -3}


@pytest.mark.requirement("R21", "R22")
@pytest.mark.cwe(20)
@pytest.mark.parametrize("reason", sorted(WRONG_SIGN))
def test_an_adjustment_of_the_wrong_sign_for_its_reason_gets_422(api, http, setup, reason):
    warehouse, bolt = setup["warehouse"], setup["bolt"]
    api.stocked(warehouse, bolt, 5)
    r = api.adjust(warehouse, bolt, WRONG_SIGN[reason], reason)
    assert not (why := api.validation_problem(r, ["quantity"], f"{reason} with quantity {WRONG_SIGN[reason]}")), why
    assert api.stock_in(warehouse, bolt) == 5 and len(api.movements(product_id=bolt["id"])) == 1


@pytest.mark.requirement("R19", "R20")
@pytest.mark.cwe(841)
@pytest.mark.parametrize("over", ["single-line", "second-of-two-lines", "after-a-partial-delivery"])
def test_an_over_receipt_records_nothing_of_the_delivery(api, http, setup, over):
    bolt, nut, warehouse = setup["bolt"], setup["nut"], setup["warehouse"]
    order = api.order(setup["supplier"], warehouse, [(bolt, 5, 10), (nut, 3, 10)])
    api.submit(order)
    if over == "after-a-partial-delivery":
        api.receive(order, lines=[(bolt, 4)])
        lines = [(bolt, 2)]
    elif over == "single-line":
        lines = [(bolt, 6)]
    else:
        lines = [(bolt, 5), (nut, 4)]
    body = {"lines": [{"product_id": p["id"], "quantity": q} for p, q in lines]}
    before = api.get(f"/purchase-orders/{order['id']}")
    api.error(api.act(order, "receive", **body), 409, "over_receipt", f"receiving {over}")
    after = api.get(f"/purchase-orders/{order['id']}")
    assert (after["status"], after["lines"]) == (before["status"], before["lines"]), f"nothing of the delivery is recorded: {after}"
    assert api.stock_in(warehouse, bolt) == (4 if over == "after-a-partial-delivery" else 0) and api.stock_in(warehouse, nut) == 0


@pytest.mark.requirement("R7", "R11", "R13", "R21", "R27")
@pytest.mark.cwe(116)
def test_hostile_text_is_stored_and_answered_verbatim(api, http, setup):
    headers = api.admin.headers
    found = hostile_findings(lambda body: http.post("/products", json={**body, "sku": f"H-{api.tag()}"}, headers=headers), {"name": "n", "unit": "u"},
                             verbatim=["name", "unit"], accepted=[201], values=[v[:16] for v in ("x' OR '1'='1", "x%_%", "<b>x</b>", "x\\", '{"$gt": ""}')],
                             fields=["unit"])
    found += hostile_findings(lambda body: http.post("/products", json={**body, "sku": f"H-{api.tag()}"}, headers=headers), {"name": "n"},
                              verbatim=["name"], accepted=[201])
    found += hostile_findings(lambda body: http.post("/suppliers", json={"name": f"{body['name']} {uuid.uuid4().hex[:6]}"}, headers=headers),
                              {"name": "s"}, accepted=[201])
    found += hostile_findings(lambda body: http.post("/purchase-orders", json=body, headers=headers),
                              {"supplier_id": setup["supplier"]["id"], "warehouse_id": setup["warehouse"]["id"], "notes": "n"},
                              fields=["notes"], verbatim=["notes"], accepted=[201])
    found += hostile_findings(lambda body: http.post("/adjustments", json=body, headers=headers),
                              {"warehouse_id": setup["warehouse"]["id"], "product_id": setup["bolt"]["id"], "quantity": 1, "reason": "found", "note": "n"},
                              fields=["note"], verbatim=["note"], accepted=[201])
    assert not found, "text is stored and answered exactly as sent:\n" + "\n".join(found)
