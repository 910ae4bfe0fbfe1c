"""Inventory — products, suppliers, warehouses, purchase orders, stock (FastAPI, in-memory)."""
import os
import re

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from core import (ApiError, bearer_token, check_password, conflict, fmt_ts, hash_password,
                  install_handlers, is_bool, is_int, is_str, json_object, new_id, new_token,
                  next_seq, not_found, no_content, now, page, paging, unauthorized, validation)

app = FastAPI(title="Inventory", redirect_slashes=False, docs_url=None, redoc_url=None,
              openapi_url=None)
install_handlers(app)

USERNAME_RE = re.compile(r"[a-z0-9_]{3,32}")
SKU_RE = re.compile(r"[A-Z0-9][A-Z0-9-]{2,31}")
CODE_RE = re.compile(r"[A-Z0-9]{2,10}")
EMAIL_RE = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
ROLES = ("admin", "manager", "buyer", "clerk")
ORDER_STATUSES = ("draft", "submitted", "partially_received", "received", "cancelled")
OPEN_STATUSES = ("draft", "submitted", "partially_received")
REASONS = ("damaged", "lost", "found", "returned", "count_correction")
MOVEMENT_TYPES = ("receipt", "adjustment")

ALL = ROLES
ADMIN = ("admin",)
CATALOGUE = ("admin", "manager")
PURCHASING = ("admin", "manager", "buyer")
STOCKKEEPING = ("admin", "manager", "clerk")

users = {}          # id -> user (insertion order = creation order)
users_by_name = {}  # username -> id
tokens = {}         # token -> user id
products = {}       # id -> product
suppliers = {}      # id -> supplier
warehouses = {}     # id -> warehouse
orders = {}         # id -> purchase order
stock = {}          # (product_id, warehouse_id) -> quantity
movements = []      # oldest first


def forbidden(message="your role does not allow this action"):
    return ApiError(403, "forbidden", message)


def invalid_state(message="the purchase order's status does not allow this action"):
    return ApiError(409, "invalid_state", message)


def _bootstrap():
    username = os.environ.get("ADMIN_USERNAME", "root_admin")
    password = os.environ.get("ADMIN_PASSWORD", "inv-bootstrap-7Qk2fZp9")
    salt, digest = hash_password(password)
    u = {"id": new_id(), "username": username, "role": "admin", "active": True,
         "salt": salt, "digest": digest, "created_at": now()}
    users[u["id"]] = u
    users_by_name[username] = u["id"]


_bootstrap()


# ---------------------------------------------------------------- helpers

def non_blank(v, max_len):
    return is_str(v) and 1 <= len(v) <= max_len and v.strip() != ""


def current_user(request: Request, roles=ALL):
    token = bearer_token(request)
    uid = tokens.get(token) if token is not None else None
    user = users.get(uid) if uid else None
    if user is None or not user["active"]:
        raise unauthorized()
    if user["role"] not in roles:
        raise forbidden()
    return user


def query_bool(request: Request, name, bad):
    raw = request.query_params.get(name)
    if raw is None:
        return None
    if raw == "true":
        return True
    if raw == "false":
        return False
    bad.append(name)
    return None


def render_user(u):
    return {"id": u["id"], "username": u["username"], "role": u["role"], "active": u["active"],
            "created_at": fmt_ts(u["created_at"])}


def on_hand(product_id):
    return sum(q for (p, _), q in stock.items() if p == product_id)


def render_product(p):
    return {"id": p["id"], "sku": p["sku"], "name": p["name"], "unit": p["unit"],
            "reorder_level": p["reorder_level"], "active": p["active"],
            "on_hand": on_hand(p["id"]), "created_at": fmt_ts(p["created_at"])}


def render_supplier(s):
    return {"id": s["id"], "name": s["name"], "email": s["email"],
            "created_at": fmt_ts(s["created_at"])}


def render_warehouse(w):
    return {"id": w["id"], "code": w["code"], "name": w["name"],
            "created_at": fmt_ts(w["created_at"])}


def render_order(o):
    return {"id": o["id"], "supplier_id": o["supplier_id"], "warehouse_id": o["warehouse_id"],
            "status": o["status"], "lines": [dict(l) for l in o["lines"]], "notes": o["notes"],
            "total_cost": sum(l["quantity"] * l["unit_cost"] for l in o["lines"]),
            "created_by": o["created_by"], "created_at": fmt_ts(o["created_at"]),
            "submitted_at": fmt_ts(o["submitted_at"]), "received_at": fmt_ts(o["received_at"]),
            "cancelled_at": fmt_ts(o["cancelled_at"])}


def render_movement(m):
    out = {k: m[k] for k in ("id", "type", "product_id", "warehouse_id", "quantity", "reason",
                             "purchase_order_id", "note", "actor_id")}
    out["created_at"] = fmt_ts(m["created_at"])
    return out


def lookup(store, rid, what):
    r = store.get(rid)
    if r is None:
        raise not_found(what + " not found")
    return r


def record_movement(type_, product_id, warehouse_id, quantity, reason, order_id, note, actor):
    key = (product_id, warehouse_id)
    stock[key] = stock.get(key, 0) + quantity
    m = {"id": new_id(), "type": type_, "product_id": product_id, "warehouse_id": warehouse_id,
         "quantity": quantity, "reason": reason, "purchase_order_id": order_id, "note": note,
         "actor_id": actor["id"], "created_at": now(), "seq": next_seq()}
    movements.append(m)
    return m


# ---------------------------------------------------------------- system & users

@app.get("/health")
async def health():
    return {"status": "ok"}


@app.post("/auth/token")
async def login(request: Request):
    body = await json_object(request)
    bad = [f for f in ("username", "password") if not is_str(body.get(f))]
    if bad:
        raise validation(bad)
    uid = users_by_name.get(body["username"])
    user = users.get(uid) if uid else None
    if user is None or not check_password(body["password"], user["salt"], user["digest"]) \
            or not user["active"]:
        raise unauthorized("wrong credentials or inactive user")
    token = new_token()
    tokens[token] = user["id"]
    return {"token": token, "token_type": "bearer", "user": render_user(user)}


@app.get("/me")
async def me(request: Request):
    return render_user(current_user(request))


@app.post("/users", status_code=201)
async def create_user(request: Request):
    current_user(request, ADMIN)
    body = await json_object(request)
    bad = []
    username, password, role = body.get("username"), body.get("password"), body.get("role")
    if not is_str(username) or not USERNAME_RE.fullmatch(username):
        bad.append("username")
    if not is_str(password) or not (8 <= len(password) <= 128):
        bad.append("password")
    if not is_str(role) or role not in ROLES:
        bad.append("role")
    if bad:
        raise validation(bad)
    if username in users_by_name:
        raise conflict("username is taken")
    salt, digest = hash_password(password)
    u = {"id": new_id(), "username": username, "role": role, "active": True, "salt": salt,
         "digest": digest, "created_at": now()}
    users[u["id"]] = u
    users_by_name[username] = u["id"]
    return JSONResponse(render_user(u), status_code=201)


@app.get("/users")
async def list_users(request: Request):
    current_user(request, ADMIN)
    return {"items": [render_user(u) for u in users.values()]}


@app.patch("/users/{user_id}")
async def update_user(user_id: str, request: Request):
    me_ = current_user(request, ADMIN)
    u = lookup(users, user_id, "user")
    body = await json_object(request)
    bad = []
    if "role" in body and (not is_str(body["role"]) or body["role"] not in ROLES):
        bad.append("role")
    if "active" in body and not is_bool(body["active"]):
        bad.append("active")
    if bad:
        raise validation(bad)
    if u["id"] == me_["id"] and (body.get("role", "admin") != "admin"
                                 or body.get("active", True) is False):
        raise conflict("an admin may not demote or deactivate themselves")
    if "role" in body:
        u["role"] = body["role"]
    if "active" in body:
        if u["active"] and body["active"] is False:
            for t in [t for t, uid in tokens.items() if uid == u["id"]]:
                del tokens[t]
        u["active"] = body["active"]
    return render_user(u)


# ---------------------------------------------------------------- products

def validate_product(body, creating):
    bad = []
    if creating:
        sku = body.get("sku")
        if not is_str(sku) or not SKU_RE.fullmatch(sku):
            bad.append("sku")
    if creating or "name" in body:
        if not non_blank(body.get("name"), 120):
            bad.append("name")
    if "unit" in body and not non_blank(body["unit"], 16):
        bad.append("unit")
    if "reorder_level" in body and not (is_int(body["reorder_level"])
                                        and 0 <= body["reorder_level"] <= 1_000_000):
        bad.append("reorder_level")
    if not creating and "active" in body and not is_bool(body["active"]):
        bad.append("active")
    return bad


@app.post("/products", status_code=201)
async def create_product(request: Request):
    current_user(request, CATALOGUE)
    body = await json_object(request)
    bad = validate_product(body, True)
    if bad:
        raise validation(bad)
    if any(p["sku"] == body["sku"] for p in products.values()):
        raise conflict("SKU is taken")
    p = {"id": new_id(), "sku": body["sku"], "name": body["name"],
         "unit": body.get("unit", "each"), "reorder_level": body.get("reorder_level", 0),
         "active": True, "created_at": now()}
    products[p["id"]] = p
    return JSONResponse(render_product(p), status_code=201)


@app.get("/products")
async def list_products(request: Request):
    current_user(request)
    bad = []
    limit, offset = paging(request, bad)
    active = query_bool(request, "active", bad)
    low = query_bool(request, "low_stock", bad)
    if bad:
        raise validation(bad)
    q = request.query_params.get("q")
    items = []
    for p in products.values():
        if q is not None and q.lower() not in p["sku"].lower() and q.lower() not in p["name"].lower():
            continue
        if active is not None and p["active"] != active:
            continue
        if low is not None and (on_hand(p["id"]) < p["reorder_level"]) != low:
            continue
        items.append(p)
    items.sort(key=lambda p: p["sku"])
    return page(items, limit, offset, render_product)


@app.get("/products/{product_id}")
async def get_product(product_id: str, request: Request):
    current_user(request)
    return render_product(lookup(products, product_id, "product"))


@app.patch("/products/{product_id}")
async def update_product(product_id: str, request: Request):
    current_user(request, CATALOGUE)
    p = lookup(products, product_id, "product")
    body = await json_object(request)
    bad = validate_product(body, False)
    if bad:
        raise validation(bad)
    for k in ("name", "unit", "reorder_level", "active"):
        if k in body:
            p[k] = body[k]
    return render_product(p)


@app.delete("/products/{product_id}", status_code=204)
async def delete_product(product_id: str, request: Request):
    current_user(request, CATALOGUE)
    p = lookup(products, product_id, "product")
    if any(m["product_id"] == p["id"] for m in movements):
        raise conflict("the product has stock movements")
    if any(l["product_id"] == p["id"] for o in orders.values() for l in o["lines"]):
        raise conflict("a purchase order names the product")
    del products[p["id"]]
    for key in [k for k in stock if k[0] == p["id"]]:
        del stock[key]
    return no_content()


@app.get("/products/{product_id}/stock")
async def product_stock(product_id: str, request: Request):
    current_user(request)
    p = lookup(products, product_id, "product")
    rows = []
    for (pid, wid), qty in stock.items():
        if pid == p["id"] and qty != 0 and wid in warehouses:
            rows.append({"warehouse_id": wid, "code": warehouses[wid]["code"], "on_hand": qty})
    rows.sort(key=lambda r: r["code"])
    return {"product_id": p["id"], "on_hand": on_hand(p["id"]), "warehouses": rows}


# ---------------------------------------------------------------- suppliers

def supplier_name_taken(name, except_id=None):
    key = name.lower()
    return any(s["id"] != except_id and s["name"].lower() == key for s in suppliers.values())


def valid_email(v):
    return v is None or (is_str(v) and len(v) <= 254 and EMAIL_RE.fullmatch(v) is not None)


@app.post("/suppliers", status_code=201)
async def create_supplier(request: Request):
    current_user(request, CATALOGUE)
    body = await json_object(request)
    bad = []
    if not non_blank(body.get("name"), 120):
        bad.append("name")
    if not valid_email(body.get("email")):
        bad.append("email")
    if bad:
        raise validation(bad)
    if supplier_name_taken(body["name"]):
        raise conflict("supplier name is taken")
    s = {"id": new_id(), "name": body["name"], "email": body.get("email"), "created_at": now()}
    suppliers[s["id"]] = s
    return JSONResponse(render_supplier(s), status_code=201)


@app.get("/suppliers")
async def list_suppliers(request: Request):
    current_user(request)
    return {"items": [render_supplier(s) for s in suppliers.values()]}


@app.get("/suppliers/{supplier_id}")
async def get_supplier(supplier_id: str, request: Request):
    current_user(request)
    return render_supplier(lookup(suppliers, supplier_id, "supplier"))


@app.patch("/suppliers/{supplier_id}")
async def update_supplier(supplier_id: str, request: Request):
    current_user(request, CATALOGUE)
    s = lookup(suppliers, supplier_id, "supplier")
    body = await json_object(request)
    bad = []
    if "name" in body and not non_blank(body["name"], 120):
        bad.append("name")
    if "email" in body and not valid_email(body["email"]):
        bad.append("email")
    if bad:
        raise validation(bad)
    if "name" in body and supplier_name_taken(body["name"], s["id"]):
        raise conflict("supplier name is taken")
    for k in ("name", "email"):
        if k in body:
            s[k] = body[k]
    return render_supplier(s)


@app.delete("/suppliers/{supplier_id}", status_code=204)
async def delete_supplier(supplier_id: str, request: Request):
    current_user(request, CATALOGUE)
    s = lookup(suppliers, supplier_id, "supplier")
    if any(o["supplier_id"] == s["id"] for o in orders.values()):
        raise conflict("a purchase order names the supplier")
    del suppliers[s["id"]]
    return no_content()


# ---------------------------------------------------------------- warehouses

@app.post("/warehouses", status_code=201)
async def create_warehouse(request: Request):
    current_user(request, CATALOGUE)
    body = await json_object(request)
    bad = []
    code = body.get("code")
    if not is_str(code) or not CODE_RE.fullmatch(code):
        bad.append("code")
    if not non_blank(body.get("name"), 120):
        bad.append("name")
    if bad:
        raise validation(bad)
    if any(w["code"] == code for w in warehouses.values()):
        raise conflict("warehouse code is taken")
    w = {"id": new_id(), "code": code, "name": body["name"], "created_at": now()}
    warehouses[w["id"]] = w
    return JSONResponse(render_warehouse(w), status_code=201)


@app.get("/warehouses")
async def list_warehouses(request: Request):
    current_user(request)
    return {"items": [render_warehouse(w)
                      for w in sorted(warehouses.values(), key=lambda w: w["code"])]}


@app.get("/warehouses/{warehouse_id}")
async def get_warehouse(warehouse_id: str, request: Request):
    current_user(request)
    return render_warehouse(lookup(warehouses, warehouse_id, "warehouse"))


@app.patch("/warehouses/{warehouse_id}")
async def update_warehouse(warehouse_id: str, request: Request):
    current_user(request, CATALOGUE)
    w = lookup(warehouses, warehouse_id, "warehouse")
    body = await json_object(request)
    if "name" in body and not non_blank(body["name"], 120):
        raise validation(["name"])
    if "name" in body:
        w["name"] = body["name"]
    return render_warehouse(w)


@app.delete("/warehouses/{warehouse_id}", status_code=204)
async def delete_warehouse(warehouse_id: str, request: Request):
    current_user(request, CATALOGUE)
    w = lookup(warehouses, warehouse_id, "warehouse")
    if any(wid == w["id"] and q != 0 for (_, wid), q in stock.items()):
        raise conflict("the warehouse holds stock")
    if any(o["warehouse_id"] == w["id"] and o["status"] in OPEN_STATUSES
           for o in orders.values()):
        raise conflict("an open purchase order is destined for the warehouse")
    del warehouses[w["id"]]
    return no_content()


@app.get("/warehouses/{warehouse_id}/stock")
async def warehouse_stock(warehouse_id: str, request: Request):
    current_user(request)
    w = lookup(warehouses, warehouse_id, "warehouse")
    rows = []
    for (pid, wid), qty in stock.items():
        if wid == w["id"] and qty != 0 and pid in products:
            rows.append({"product_id": pid, "sku": products[pid]["sku"], "on_hand": qty})
    rows.sort(key=lambda r: r["sku"])
    return {"warehouse_id": w["id"], "items": rows}


# ---------------------------------------------------------------- purchase orders

def valid_order_lines(v):
    if not isinstance(v, list) or len(v) > 50:
        return False
    seen = set()
    for l in v:
        if not isinstance(l, dict):
            return False
        pid = l.get("product_id")
        if not is_str(pid) or pid not in products or not products[pid]["active"] or pid in seen:
            return False
        seen.add(pid)
        q, c = l.get("quantity"), l.get("unit_cost")
        if not (is_int(q) and 1 <= q <= 1_000_000):
            return False
        if not (is_int(c) and 0 <= c <= 100_000_000):
            return False
    return True


def validate_order(body, creating):
    bad = []
    if creating or "supplier_id" in body:
        if not is_str(body.get("supplier_id")) or body["supplier_id"] not in suppliers:
            bad.append("supplier_id")
    if creating or "warehouse_id" in body:
        if not is_str(body.get("warehouse_id")) or body["warehouse_id"] not in warehouses:
            bad.append("warehouse_id")
    if "lines" in body and not valid_order_lines(body["lines"]):
        bad.append("lines")
    if "notes" in body and (not is_str(body["notes"]) or len(body["notes"]) > 1000):
        bad.append("notes")
    return bad


def order_lines(v):
    return [{"product_id": l["product_id"], "quantity": l["quantity"],
             "unit_cost": l["unit_cost"], "received_quantity": 0} for l in v]


def own_order(user, order_id):
    """404 for an unknown order, then 403 for a buyer acting on someone else's order."""
    o = lookup(orders, order_id, "purchase order")
    if user["role"] == "buyer" and o["created_by"] != user["id"]:
        raise forbidden("buyers may only act on their own purchase orders")
    return o


@app.post("/purchase-orders", status_code=201)
async def create_order(request: Request):
    user = current_user(request, PURCHASING)
    body = await json_object(request)
    bad = validate_order(body, True)
    if bad:
        raise validation(bad)
    o = {"id": new_id(), "supplier_id": body["supplier_id"], "warehouse_id": body["warehouse_id"],
         "status": "draft", "lines": order_lines(body.get("lines", [])),
         "notes": body.get("notes", ""), "created_by": user["id"], "created_at": now(),
         "submitted_at": None, "received_at": None, "cancelled_at": None, "seq": next_seq()}
    orders[o["id"]] = o
    return JSONResponse(render_order(o), status_code=201)


@app.get("/purchase-orders")
async def list_orders(request: Request):
    current_user(request)
    bad = []
    limit, offset = paging(request, bad)
    qp = request.query_params
    status = qp.get("status")
    if status is not None and status not in ORDER_STATUSES:
        bad.append("status")
    if bad:
        raise validation(bad)
    items = [o for o in orders.values()
             if (status is None or o["status"] == status)
             and (qp.get("supplier_id") is None or o["supplier_id"] == qp.get("supplier_id"))
             and (qp.get("warehouse_id") is None or o["warehouse_id"] == qp.get("warehouse_id"))]
    items.sort(key=lambda o: o["seq"], reverse=True)
    return page(items, limit, offset, render_order)


@app.get("/purchase-orders/{order_id}")
async def get_order(order_id: str, request: Request):
    current_user(request)
    return render_order(lookup(orders, order_id, "purchase order"))


@app.patch("/purchase-orders/{order_id}")
async def update_order(order_id: str, request: Request):
    user = current_user(request, PURCHASING)
    o = own_order(user, order_id)
    body = await json_object(request)
    bad = validate_order(body, False)
    if bad:
        raise validation(bad)
    if o["status"] != "draft":
        raise invalid_state("only a draft can be changed")
    for k in ("supplier_id", "warehouse_id", "notes"):
        if k in body:
            o[k] = body[k]
    if "lines" in body:
        o["lines"] = order_lines(body["lines"])
    return render_order(o)


@app.delete("/purchase-orders/{order_id}", status_code=204)
async def delete_order(order_id: str, request: Request):
    user = current_user(request, PURCHASING)
    o = own_order(user, order_id)
    if o["status"] != "draft":
        raise invalid_state("only a draft can be deleted")
    del orders[o["id"]]
    return no_content()


@app.post("/purchase-orders/{order_id}/submit")
async def submit_order(order_id: str, request: Request):
    user = current_user(request, PURCHASING)
    o = own_order(user, order_id)
    if o["status"] != "draft":
        raise invalid_state("only a draft can be submitted")
    if not o["lines"]:
        raise invalid_state("an order without lines cannot be submitted")
    o["status"] = "submitted"
    o["submitted_at"] = now()
    return render_order(o)


@app.post("/purchase-orders/{order_id}/cancel")
async def cancel_order(order_id: str, request: Request):
    user = current_user(request, PURCHASING)
    o = own_order(user, order_id)
    if o["status"] not in ("draft", "submitted"):
        raise invalid_state("only a draft or submitted order can be cancelled")
    o["status"] = "cancelled"
    o["cancelled_at"] = now()
    return render_order(o)


@app.post("/purchase-orders/{order_id}/receive")
async def receive_order(order_id: str, request: Request):
    user = current_user(request, STOCKKEEPING)
    o = lookup(orders, order_id, "purchase order")
    raw = await request.body()
    body = {} if raw.strip() == b"" else await json_object(request)
    by_product = {l["product_id"]: l for l in o["lines"]}
    delivery = None
    if "lines" in body:
        v = body["lines"]
        ok = isinstance(v, list) and len(v) >= 1
        seen = set()
        if ok:
            for l in v:
                if not isinstance(l, dict):
                    ok = False
                    break
                pid, q = l.get("product_id"), l.get("quantity")
                if not is_str(pid) or pid not in by_product or pid in seen or \
                        not (is_int(q) and q >= 1):
                    ok = False
                    break
                seen.add(pid)
        if not ok:
            raise validation(["lines"])
        delivery = [(l["product_id"], l["quantity"]) for l in v]
    if o["status"] not in ("submitted", "partially_received"):
        raise invalid_state("only submitted or partially received orders can receive goods")
    if delivery is None:
        delivery = [(l["product_id"], l["quantity"] - l["received_quantity"]) for l in o["lines"]
                    if l["quantity"] > l["received_quantity"]]
    for pid, q in delivery:
        line = by_product[pid]
        if q > line["quantity"] - line["received_quantity"]:
            raise ApiError(409, "over_receipt", "more than remains of a line was delivered")
    for pid, q in delivery:
        by_product[pid]["received_quantity"] += q
        record_movement("receipt", pid, o["warehouse_id"], q, None, o["id"], "", user)
    if all(l["received_quantity"] >= l["quantity"] for l in o["lines"]):
        o["status"] = "received"
        o["received_at"] = now()
    else:
        o["status"] = "partially_received"
    return render_order(o)


# ---------------------------------------------------------------- adjustments & movements

@app.post("/adjustments", status_code=201)
async def create_adjustment(request: Request):
    user = current_user(request, STOCKKEEPING)
    body = await json_object(request)
    bad = []
    wid, pid = body.get("warehouse_id"), body.get("product_id")
    if not is_str(wid) or wid not in warehouses:
        bad.append("warehouse_id")
    if not is_str(pid) or pid not in products:
        bad.append("product_id")
    q = body.get("quantity")
    reason = body.get("reason")
    reason_ok = is_str(reason) and reason in REASONS
    q_ok = is_int(q) and q != 0 and -1_000_000 <= q <= 1_000_000
    if q_ok and reason_ok:
        if reason in ("damaged", "lost") and q > 0:
            q_ok = False
        if reason in ("found", "returned") and q < 0:
            q_ok = False
    if not q_ok:
        bad.append("quantity")
    if not reason_ok:
        bad.append("reason")
    note = body.get("note", "")
    if not is_str(note) or len(note) > 500:
        bad.append("note")
    if bad:
        raise validation(bad)
    if stock.get((pid, wid), 0) + q < 0:
        raise ApiError(409, "insufficient_stock", "the adjustment would make stock negative")
    m = record_movement("adjustment", pid, wid, q, reason, None, note, user)
    return JSONResponse(render_movement(m), status_code=201)


@app.get("/movements")
async def list_movements(request: Request):
    current_user(request)
    bad = []
    limit, offset = paging(request, bad)
    qp = request.query_params
    type_ = qp.get("type")
    if type_ is not None and type_ not in MOVEMENT_TYPES:
        bad.append("type")
    if bad:
        raise validation(bad)
    items = [m for m in reversed(movements)
             if (type_ is None or m["type"] == type_)
             and (qp.get("product_id") is None or m["product_id"] == qp.get("product_id"))
             and (qp.get("warehouse_id") is None or m["warehouse_id"] == qp.get("warehouse_id"))]
    return page(items, limit, offset, render_movement)


if __name__ == "__main__":
    uvicorn.run(app, host="0.0.0.0", port=int(os.environ.get("PORT", "8000")),
                log_level="warning", access_log=False)
