"""Failed requests change nothing, also when valid fields travel with the failing one (spec.md: Errors).

"A request that fails changes nothing": each item sends valid changes together with the one
field (or state, or role) that makes the request fail, then reads back that none of the valid
fields was written and no side effect happened (no object, no movement, no stock, no usage that
would block a later deletion).
"""

from __future__ import annotations

import uuid

import pytest

pytestmark = [pytest.mark.tier("base")]

PRODUCT_KEYS = ("sku", "name", "unit", "reorder_level", "active", "on_hand")
ORDER_KEYS = ("supplier_id", "warehouse_id", "status", "notes", "total_cost", "submitted_at", "received_at", "cancelled_at")


def product_state(api, product):
    got = api.get(f"/products/{product['id']}")
    return {k: got.get(k) for k in PRODUCT_KEYS}


def order_state(api, order):
    got = api.get(f"/purchase-orders/{order['id']}")
    lines = [(x.get("product_id"), x.get("quantity"), x.get("unit_cost"), x.get("received_quantity")) for x in got.get("lines", [])]
    return {**{k: got.get(k) for k in ORDER_KEYS}, "lines": lines}


def usernames(api):
    return [u.get("username") for u in api.get("/users")["items"]]


@pytest.mark.requirement("R3", "R25")
@pytest.mark.category("validation")
def test_mixed_user_creation_with_one_invalid_field_creates_nothing(api, http, admin):
    username = f"mixed_{uuid.uuid4().hex[:10]}"
    problems = [
        api.validation_problem(http.post("/users", json={"username": username, "password": "short", "role": "buyer"}, headers=admin.headers),
                               ["password"], "a valid username and role with a 5-character password"),
        api.validation_problem(http.post("/users", json={"username": username, "password": "long-enough-1", "role": "owner"}, headers=admin.headers),
                               ["role"], "a valid username and password with an unknown role"),
    ]
    api.assert_no_problems(problems, "invalid users were not rejected")
    assert username not in usernames(api), "a refused creation must not create the user"
    api.error(http.post("/auth/token", json={"username": username, "password": "long-enough-1"}), 401, "unauthorized", "logging in as a refused user")
    r = http.post("/users", json={"username": username, "password": "long-enough-1", "role": "buyer"}, headers=admin.headers)
    assert r.status_code == 201, f"the username of refused creations is still free: {api.brief(r)}"


@pytest.mark.requirement("R3", "R25")
@pytest.mark.category("state")
def test_mixed_taken_username_changes_nothing(api, http, admin):
    existing = api.staff("buyer")
    r = http.post("/users", json={"username": existing.username, "password": "another-pass-1", "role": "admin"}, headers=admin.headers)
    api.error(r, 409, "conflict", "a taken username with a valid password and role")
    assert usernames(api).count(existing.username) == 1, "the refused creation must not add a second user"
    api.error(http.post("/auth/token", json={"username": existing.username, "password": "another-pass-1"}), 401, "unauthorized", "the refused password must not be set")
    me = api.login(existing.username, existing.password)["user"]
    assert (me.get("id"), me.get("role")) == (existing.id, "buyer"), f"the existing user keeps their role: {me}"


@pytest.mark.requirement("R5", "R25")
@pytest.mark.category("authorization")
def test_mixed_refused_creations_by_other_roles_create_nothing(api, http):
    clerk = api.staff("clerk")
    manager = api.staff("manager")
    marker = api.tag()
    username = f"mixed_{marker.lower()}"
    supplier_name = f"Refused supplier {marker}"
    api.error(http.post("/users", json={"username": username, "password": "long-enough-1", "role": "admin"}, headers=manager.headers), 403, "forbidden", "a manager creating a user")
    api.error(http.post("/products", json={"sku": f"NO-{marker}", "name": "Refused", "unit": "kg", "reorder_level": 3}, headers=clerk.headers), 403, "forbidden", "a clerk creating a product")
    api.error(http.post("/suppliers", json={"name": supplier_name, "email": "x@y.example"}, headers=clerk.headers), 403, "forbidden", "a clerk creating a supplier")
    api.error(http.post("/warehouses", json={"code": f"N{marker}", "name": "Refused"}, headers=clerk.headers), 403, "forbidden", "a clerk creating a warehouse")
    assert username not in usernames(api), "a refused creation made a user"
    assert api.get("/products", q=f"NO-{marker}")["total"] == 0, "a refused creation made a product"
    assert supplier_name not in [s.get("name") for s in api.get("/suppliers")["items"]], "a refused creation made a supplier"
    assert f"N{marker}" not in [w.get("code") for w in api.get("/warehouses")["items"]], "a refused creation made a warehouse"


@pytest.mark.requirement("R7", "R25")
@pytest.mark.category("validation")
def test_mixed_product_creation_with_one_invalid_field_creates_nothing(api, http, manager):
    sku = f"MIX-{api.tag()}"
    cases = [
        ({"sku": sku, "name": "Valid name", "unit": "kg", "reorder_level": -1}, ["reorder_level"]),
        ({"sku": sku, "name": " ", "unit": "kg", "reorder_level": 5}, ["name"]),
        ({"sku": sku, "name": "Valid name", "unit": "u" * 17, "reorder_level": 5}, ["unit"]),
    ]
    problems = [api.validation_problem(http.post("/products", json=b, headers=manager.headers), f, f"product {str(b)[:80]}") for b, f in cases]
    api.assert_no_problems(problems, "invalid products were not rejected")
    assert api.get("/products", q=sku)["total"] == 0, "a refused creation must not create the product"
    r = http.post("/products", json={"sku": sku, "name": "Valid name"}, headers=manager.headers)
    assert r.status_code == 201, f"the SKU of refused creations is still free: {api.brief(r)}"


@pytest.mark.requirement("R7", "R25")
@pytest.mark.category("state")
def test_mixed_taken_sku_changes_nothing(api, http, manager):
    product = api.product(name="Original", unit="each")
    name = f"Twin {api.tag()}"
    r = http.post("/products", json={"sku": product["sku"], "name": name, "unit": "kg", "reorder_level": 9}, headers=manager.headers)
    api.error(r, 409, "conflict", "a taken SKU with a valid name, unit and reorder_level")
    assert api.get("/products", q=name)["total"] == 0, "the refused creation must not create a product"
    assert product_state(api, product) == {**{k: product.get(k) for k in PRODUCT_KEYS}}, "the refused creation must not change the existing product"


@pytest.mark.requirement("R9", "R25")
@pytest.mark.category("validation")
def test_mixed_product_update_with_one_invalid_field_changes_nothing(api, http, manager):
    product = api.product(name="Keep", unit="box", reorder_level=2)
    before = product_state(api, product)
    cases = [
        ({"name": "Changed", "unit": "kg", "active": False, "reorder_level": 1_000_001}, ["reorder_level"]),
        ({"name": "Changed", "reorder_level": 5, "active": False, "unit": " "}, ["unit"]),
        ({"name": "Changed", "unit": "kg", "reorder_level": 5, "active": "no"}, ["active"]),
        ({"unit": "kg", "reorder_level": 5, "active": False, "name": "n" * 121}, ["name"]),
    ]
    problems = [api.validation_problem(http.patch(f"/products/{product['id']}", json=b, headers=manager.headers), f, f"update {str(b)[:80]}") for b, f in cases]
    api.assert_no_problems(problems, "invalid product updates were not rejected")
    after = product_state(api, product)
    assert after == before, f"a refused update must write none of its valid fields:\nbefore {before}\nafter  {after}"


@pytest.mark.requirement("R5", "R25")
@pytest.mark.category("authorization")
def test_mixed_refused_catalogue_updates_by_other_roles_change_nothing(api, http):
    buyer = api.staff("buyer")
    product = api.product(name="Keep", unit="box", reorder_level=2)
    supplier = api.supplier(email="keep@x.example")
    warehouse = api.warehouse(name="Keep depot")
    before = (product_state(api, product), api.get(f"/suppliers/{supplier['id']}"), api.get(f"/warehouses/{warehouse['id']}"))
    api.error(http.patch(f"/products/{product['id']}", json={"name": "Changed", "unit": "kg", "reorder_level": 5, "active": False}, headers=buyer.headers),
              403, "forbidden", "a buyer changing a product")
    api.error(http.patch(f"/suppliers/{supplier['id']}", json={"name": f"Changed {api.tag()}", "email": "new@x.example"}, headers=buyer.headers),
              403, "forbidden", "a buyer changing a supplier")
    api.error(http.patch(f"/warehouses/{warehouse['id']}", json={"name": "Changed depot"}, headers=buyer.headers), 403, "forbidden", "a buyer renaming a warehouse")
    after = (product_state(api, product), api.get(f"/suppliers/{supplier['id']}"), api.get(f"/warehouses/{warehouse['id']}"))
    assert after == before, f"refused updates must change nothing:\nbefore {before}\nafter  {after}"


@pytest.mark.requirement("R11", "R25")
@pytest.mark.category("validation")
def test_mixed_supplier_creation_with_an_invalid_email_creates_nothing(api, http, manager):
    name = f"Mixed supplier {uuid.uuid4().hex[:8]}"
    problem = api.validation_problem(http.post("/suppliers", json={"name": name, "email": "not-an-email"}, headers=manager.headers), ["email"], "a valid name with an invalid email")
    assert problem is None, problem
    assert name not in [s.get("name") for s in api.get("/suppliers")["items"]], "a refused creation must not create the supplier"
    r = http.post("/suppliers", json={"name": name}, headers=manager.headers)
    assert r.status_code == 201, f"the name of a refused creation is still free: {api.brief(r)}"


@pytest.mark.requirement("R11", "R25")
@pytest.mark.category("state")
def test_mixed_taken_supplier_name_changes_nothing(api, http, manager):
    supplier = api.supplier()
    email = f"mixed-{uuid.uuid4().hex[:8]}@x.example"
    api.error(http.post("/suppliers", json={"name": supplier["name"].upper(), "email": email}, headers=manager.headers), 409, "conflict", "a taken name with a valid email")
    items = api.get("/suppliers")["items"]
    assert email not in [s.get("email") for s in items], "the refused creation must not create a supplier"
    assert next(s for s in items if s["id"] == supplier["id"]).get("email") is None, "the refused creation must not change the existing supplier"


@pytest.mark.requirement("R11", "R25")
@pytest.mark.category("validation")
def test_mixed_supplier_update_with_one_failing_field_changes_nothing(api, http, manager):
    supplier = api.supplier(email="keep@x.example")
    other = api.supplier()
    before = api.get(f"/suppliers/{supplier['id']}")
    problem = api.validation_problem(http.patch(f"/suppliers/{supplier['id']}", json={"name": f"Renamed {api.tag()}", "email": "a@b"}, headers=manager.headers),
                                     ["email"], "a valid new name with an invalid email")
    assert problem is None, problem
    api.error(http.patch(f"/suppliers/{supplier['id']}", json={"name": other["name"].lower(), "email": "new@x.example"}, headers=manager.headers),
              409, "conflict", "another supplier's name with a valid new email")
    after = api.get(f"/suppliers/{supplier['id']}")
    assert after == before, f"refused updates must write none of their valid fields:\nbefore {before}\nafter  {after}"


@pytest.mark.requirement("R12", "R25")
@pytest.mark.category("validation")
def test_mixed_warehouse_creation_that_fails_creates_nothing(api, http, manager):
    code = f"M{api.tag()}"
    problem = api.validation_problem(http.post("/warehouses", json={"code": code, "name": ""}, headers=manager.headers), ["name"], "a valid code with an empty name")
    assert problem is None, problem
    existing = api.warehouse(name="Original depot")
    twin = f"Twin depot {api.tag()}"
    api.error(http.post("/warehouses", json={"code": existing["code"], "name": twin}, headers=manager.headers), 409, "conflict", "a taken code with a valid name")
    items = api.get("/warehouses")["items"]
    assert code not in [w.get("code") for w in items], "the refused creation must not create the warehouse"
    assert twin not in [w.get("name") for w in items], "the refused creation must not create a second warehouse"
    assert next(w for w in items if w["id"] == existing["id"]).get("name") == "Original depot", "the refused creation must not rename the existing warehouse"
    r = http.post("/warehouses", json={"code": code, "name": "Now valid"}, headers=manager.headers)
    assert r.status_code == 201, f"the code of a refused creation is still free: {api.brief(r)}"


@pytest.mark.requirement("R13", "R14", "R25")
@pytest.mark.category("validation")
def test_mixed_order_creation_with_one_invalid_field_creates_nothing(api, http, manager, buyer):
    supplier, warehouse, product = api.supplier(), api.warehouse(), api.product()
    inactive = api.product()
    api.ok(http.patch(f"/products/{inactive['id']}", json={"active": False}, headers=manager.headers), 200, "deactivate a product")
    line = {"product_id": product["id"], "quantity": 3, "unit_cost": 100}
    cases = [
        ({"supplier_id": supplier["id"], "warehouse_id": warehouse["id"], "lines": [line], "notes": "n" * 1001}, ["notes"]),
        ({"supplier_id": supplier["id"], "warehouse_id": f"ghost-{api.tag()}", "lines": [line], "notes": "ok"}, ["warehouse_id"]),
        ({"supplier_id": supplier["id"], "warehouse_id": warehouse["id"], "notes": "ok",
          "lines": [line, {"product_id": inactive["id"], "quantity": 1, "unit_cost": 1}]}, ["lines"]),
    ]
    problems = [api.validation_problem(http.post("/purchase-orders", json=b, headers=buyer.headers), f, f"order failing on {f}") for b, f in cases]
    api.assert_no_problems(problems, "invalid orders were not rejected")
    assert api.get("/purchase-orders", supplier_id=supplier["id"])["total"] == 0, "a refused creation must not create an order"
    for kind, thing in (("products", product), ("suppliers", supplier), ("warehouses", warehouse)):
        r = http.delete(f"/{kind}/{thing['id']}", headers=manager.headers)
        assert r.status_code == 204, f"no refused order may name the {kind[:-1]} (it must stay deletable): {api.brief(r)}"


@pytest.mark.requirement("R13", "R14", "R16", "R25")
@pytest.mark.category("validation")
def test_mixed_order_update_with_one_invalid_field_changes_nothing(api, http, manager, setup):
    order = api.order(setup["supplier"], setup["warehouse"], [(setup["bolt"], 5, 100)], notes="first")
    before = order_state(api, order)
    other_supplier, other_warehouse, fresh = api.supplier(), api.warehouse(), api.product()
    line = {"product_id": fresh["id"], "quantity": 2, "unit_cost": 7}
    cases = [
        ({"supplier_id": other_supplier["id"], "warehouse_id": other_warehouse["id"], "notes": "changed", "lines": [line, line]}, ["lines"]),
        ({"supplier_id": other_supplier["id"], "warehouse_id": f"ghost-{api.tag()}", "notes": "changed", "lines": [line]}, ["warehouse_id"]),
        ({"supplier_id": f"ghost-{api.tag()}", "warehouse_id": other_warehouse["id"], "notes": "changed", "lines": [line]}, ["supplier_id"]),
        ({"supplier_id": other_supplier["id"], "warehouse_id": other_warehouse["id"], "notes": None, "lines": [line]}, ["notes"]),
    ]
    problems = [api.validation_problem(http.patch(f"/purchase-orders/{order['id']}", json=b, headers=manager.headers), f, f"update failing on {f}") for b, f in cases]
    api.assert_no_problems(problems, "invalid order updates were not rejected")
    after = order_state(api, order)
    assert after == before, f"a refused update must write none of its valid fields:\nbefore {before}\nafter  {after}"
    for kind, thing in (("products", fresh), ("suppliers", other_supplier), ("warehouses", other_warehouse)):
        r = http.delete(f"/{kind}/{thing['id']}", headers=manager.headers)
        assert r.status_code == 204, f"the order must not name the {kind[:-1]} a refused update sent: {api.brief(r)}"


@pytest.mark.requirement("R16", "R6", "R25")
@pytest.mark.category("state")
@pytest.mark.parametrize("refusal", ["submitted", "cancelled", "another-buyer"])
def test_mixed_refused_order_update_changes_nothing(api, http, manager, setup, refusal):
    owner = api.staff("buyer")
    order = api.order(setup["supplier"], setup["warehouse"], [(setup["bolt"], 5, 100)], by=owner, notes="first")
    caller = owner
    if refusal == "another-buyer":
        caller = api.staff("buyer")
    else:
        api.submit(order, owner)
        if refusal == "cancelled":
            api.ok(api.act(order, "cancel", owner), 200, "cancel the order")
    before = order_state(api, order)
    other_supplier, fresh = api.supplier(), api.product()
    body = {"supplier_id": other_supplier["id"], "notes": "late change", "lines": [{"product_id": fresh["id"], "quantity": 2, "unit_cost": 7}]}
    r = http.patch(f"/purchase-orders/{order['id']}", json=body, headers=caller.headers)
    if refusal == "another-buyer":
        api.error(r, 403, "forbidden", "another buyer sending valid changes")
    else:
        api.error(r, 409, "invalid_state", f"valid changes to a {refusal} order")
    after = order_state(api, order)
    assert after == before, f"the refused update must write none of its fields:\nbefore {before}\nafter  {after}"
    r = http.delete(f"/products/{fresh['id']}", headers=manager.headers)
    assert r.status_code == 204, f"the order must not name the product the refused update sent: {api.brief(r)}"


@pytest.mark.requirement("R19", "R25")
@pytest.mark.category("validation")
def test_mixed_delivery_with_one_invalid_line_records_nothing(api, http, setup):
    clerk = api.staff("clerk")
    outsider = api.product()
    order = api.submit(api.order(setup["supplier"], setup["warehouse"], [(setup["bolt"], 5, 1), (setup["nut"], 5, 1)]))
    before = order_state(api, order)
    bolt = {"product_id": setup["bolt"]["id"], "quantity": 2}
    cases = [
        [bolt, {"product_id": setup["nut"]["id"], "quantity": 0}],
        [bolt, {"product_id": outsider["id"], "quantity": 1}],
        [bolt, {"product_id": setup["nut"]["id"], "quantity": 1}, {"product_id": setup["bolt"]["id"], "quantity": 1}],
        [bolt, {"product_id": setup["nut"]["id"], "quantity": "1"}],
    ]
    problems = [api.validation_problem(api.act(order, "receive", clerk, lines=lines), ["lines"], f"a delivery with a valid bolt line and {lines[1:]}") for lines in cases]
    api.assert_no_problems(problems, "invalid deliveries were not rejected")
    after = order_state(api, order)
    assert after == before, f"a refused delivery must record nothing, not even its valid line:\nbefore {before}\nafter  {after}"
    assert api.movements(warehouse_id=setup["warehouse"]["id"]) == [], "a refused delivery must not record movements"
    assert (api.stock_in(setup["warehouse"], setup["bolt"]), api.on_hand(setup["bolt"])) == (0, 0), "a refused delivery changed stock"


@pytest.mark.requirement("R18", "R19", "R25")
@pytest.mark.category("state")
@pytest.mark.parametrize("status", ["draft", "cancelled"])
def test_mixed_valid_delivery_in_a_refusing_state_records_nothing(api, http, setup, status):
    order = api.order(setup["supplier"], setup["warehouse"], [(setup["bolt"], 5, 1), (setup["nut"], 5, 1)])
    if status == "cancelled":
        api.submit(order)
        api.ok(api.act(order, "cancel"), 200, "cancel the order")
    before = order_state(api, order)
    r = api.act(order, "receive", lines=[{"product_id": setup["bolt"]["id"], "quantity": 2}, {"product_id": setup["nut"]["id"], "quantity": 5}])
    api.error(r, 409, "invalid_state", f"a valid delivery for a {status} order")
    assert order_state(api, order) == before, "the refused delivery changed the order"
    assert api.movements(warehouse_id=setup["warehouse"]["id"]) == [], "a refused delivery must not record movements"
    assert api.on_hand(setup["bolt"]) == 0 and api.on_hand(setup["nut"]) == 0, "a refused delivery changed stock"


@pytest.mark.requirement("R21", "R25")
@pytest.mark.category("validation")
def test_mixed_adjustment_with_one_invalid_field_records_nothing(api, http, manager):
    warehouse, product = api.warehouse(), api.product()
    valid = {"warehouse_id": warehouse["id"], "product_id": product["id"], "quantity": 3, "reason": "found", "note": "counted"}
    cases = [
        ({**valid, "note": "n" * 501}, ["note"]),
        ({**valid, "reason": "gift"}, ["reason"]),
        ({**valid, "warehouse_id": f"ghost-{api.tag()}"}, ["warehouse_id"]),
        ({**valid, "quantity": 1_000_001}, ["quantity"]),
    ]
    problems = [api.validation_problem(http.post("/adjustments", json=b, headers=manager.headers), f, f"adjustment failing on {f}") for b, f in cases]
    api.assert_no_problems(problems, "invalid adjustments were not rejected")
    assert api.movements(product_id=product["id"]) == [], "a refused adjustment must not record a movement"
    assert api.on_hand(product) == 0 and api.stock_in(warehouse, product) == 0, "a refused adjustment changed stock"
    r = http.delete(f"/products/{product['id']}", headers=manager.headers)
    assert r.status_code == 204, f"a product that never had a movement stays deletable: {api.brief(r)}"
