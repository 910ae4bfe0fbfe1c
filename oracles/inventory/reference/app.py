"""Reference implementation of the inventory task: a candidate that passes the whole oracle.

Flask with in-memory storage behind one lock. Handlers check in spec.md's order: authenticate
(401), the role that may never act (403), existence of the path's resource (404), a buyer's
ownership of the order (403), validation (422), then state rules (409). Stock lives per
(product, warehouse) and changes only together with a recorded movement.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import threading
import uuid
from datetime import datetime, timezone
from typing import Any

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

app = Flask(__name__)

LOCK = threading.RLock()
USERS: dict[str, dict[str, Any]] = {}        # user id -> user (with salt and hash), creation order
USER_IDS: dict[str, str] = {}                # username -> user id
TOKENS: dict[str, str] = {}                  # token -> user id
PRODUCTS: dict[str, dict[str, Any]] = {}
SUPPLIERS: dict[str, dict[str, Any]] = {}
WAREHOUSES: dict[str, dict[str, Any]] = {}
ORDERS: dict[str, dict[str, Any]] = {}       # creation order
STOCK: dict[tuple[str, str], int] = {}       # (product id, warehouse id) -> on hand
MOVEMENTS: list[dict[str, Any]] = []         # oldest first

USERNAME = re.compile(r"^[a-z0-9_]{3,32}$")
SKU = re.compile(r"^[A-Z0-9][A-Z0-9-]{2,31}$")
CODE = re.compile(r"^[A-Z0-9]{2,10}$")
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
INTEGER = re.compile(r"^-?[0-9]+$")
ROLES = ("admin", "manager", "buyer", "clerk")
STATUSES = ("draft", "submitted", "partially_received", "received", "cancelled")
OPEN = ("draft", "submitted", "partially_received")
REASONS = {"damaged": -1, "lost": -1, "found": 1, "returned": 1, "count_correction": 0}
ADMINS = ("admin",)
CATALOG = ("admin", "manager")
PURCHASERS = ("admin", "manager", "buyer")
RECEIVERS = ("admin", "manager", "clerk")
MISSING = object()


class ApiError(Exception):
    """An error answer: status, error code, message (and the invalid fields for 422)."""

    def __init__(self, status: int, code: str, message: str, fields: list[str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.fields = fields


def unauthorized(message: str = "authentication required") -> ApiError:
    return ApiError(401, "unauthorized", message)


def forbidden(message: str) -> ApiError:
    return ApiError(403, "forbidden", message)


def not_found(what: str) -> ApiError:
    return ApiError(404, "not_found", f"{what} not found")


def conflict(message: str, code: str = "conflict") -> ApiError:
    return ApiError(409, code, message)


def invalid(fields: list[str], message: str = "invalid request") -> ApiError:
    return ApiError(422, "validation_error", message, fields)


def reply(payload: Any, status: int = 200) -> Response:
    return Response(json.dumps(payload), status=status, mimetype="application/json")


def no_content() -> Response:
    return Response(status=204)


@app.errorhandler(ApiError)
def handle_api_error(err: ApiError) -> Response:
    body: dict[str, Any] = {"error": err.code, "message": err.message}
    if err.fields is not None:
        body["fields"] = err.fields
    return reply(body, err.status)


@app.errorhandler(HTTPException)
def handle_http_error(err: HTTPException) -> Response:
    status = err.code or 500
    if status == 405 or status >= 500:  # spec.md, Errors: the codes the table does not list
        return reply({"error": "method_not_allowed" if status == 405 else "internal_error", "message": err.description or err.name}, status)
    code = "not_found" if err.code == 404 else "validation_error"
    body: dict[str, Any] = {"error": code, "message": err.description or err.name}
    if code == "validation_error":
        body["fields"] = []
    return reply(body, err.code or 500)


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


# ---------------------------------------------------------------------------- requests



MAX_BODY_BYTES = 1_048_576
MAX_BODY_DEPTH = 32


def nesting_depth(value: Any) -> int:
    """How deeply objects and arrays nest in a parsed body (iterative: no recursion limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def json_body(allow_empty: bool = False) -> dict[str, Any]:
    raw = request.get_data(cache=True)
    if len(raw) > MAX_BODY_BYTES:
        raise invalid([], "the body is larger than 1 MiB")
    if allow_empty and not raw.strip():
        return {}
    try:
        data = json.loads(raw) if raw else None
    except (ValueError, RecursionError) as err:
        raise invalid([], "the body is not valid JSON") from err
    if nesting_depth(data) > MAX_BODY_DEPTH:
        raise invalid([], f"the body nests deeper than {MAX_BODY_DEPTH} levels")
    if not isinstance(data, dict):
        raise invalid([], "the body must be a JSON object")
    return data


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class Validator:
    """Collects every invalid field of one body before answering 422."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.bad: list[str] = []

    def fail(self, name: str) -> None:
        if name not in self.bad:
            self.bad.append(name)

    def text(self, name: str, *, required: bool, max_len: int, min_len: int = 1, non_blank: bool = False,
             pattern: re.Pattern[str] | None = None, choices: tuple[str, ...] | None = None) -> Any:
        value = self.data.get(name, MISSING)
        if value is MISSING:
            if required:
                self.fail(name)
            return MISSING
        if (not isinstance(value, str) or (choices is not None and value not in choices)
                or not min_len <= len(value) <= max_len or (non_blank and not value.strip())
                or (pattern is not None and not pattern.match(value))):
            self.fail(name)
            return MISSING
        return value

    def integer(self, name: str, *, required: bool, low: int, high: int) -> Any:
        value = self.data.get(name, MISSING)
        if value is MISSING:
            if required:
                self.fail(name)
            return MISSING
        if not is_int(value) or not low <= value <= high:
            self.fail(name)
            return MISSING
        return value

    def boolean(self, name: str) -> Any:
        value = self.data.get(name, MISSING)
        if value is not MISSING and not isinstance(value, bool):
            self.fail(name)
            return MISSING
        return value

    def ref(self, name: str, table: dict[str, Any], *, required: bool) -> Any:
        value = self.data.get(name, MISSING)
        if value is MISSING:
            if required:
                self.fail(name)
            return MISSING
        if not isinstance(value, str) or value not in table:
            self.fail(name)
            return MISSING
        return value

    def check(self) -> None:
        if self.bad:
            raise invalid(self.bad, "invalid fields: " + ", ".join(self.bad))


def query_flags(*names: str, choices: dict[str, tuple[str, ...]] | None = None) -> tuple[dict[str, Any], int, int]:
    """Boolean (or enumerated) query parameters plus limit/offset; 422 naming every invalid one."""
    bad: list[str] = []
    values: dict[str, Any] = {}
    for name in names:
        raw = request.args.get(name)
        if raw is not None and raw not in ("true", "false"):
            bad.append(name)
        values[name] = None if raw is None else raw == "true"
    for name, allowed in (choices or {}).items():
        raw = request.args.get(name)
        if raw is not None and raw not in allowed:
            bad.append(name)
        values[name] = raw
    paging = {}
    for name, default, low, high in (("limit", 20, 1, 100), ("offset", 0, 0, None)):
        raw = request.args.get(name)
        if raw is None:
            paging[name] = default
        elif not INTEGER.match(raw) or int(raw) < low or (high is not None and int(raw) > high):
            bad.append(name)
        else:
            paging[name] = int(raw)
    if bad:
        raise invalid(bad, "invalid query parameters: " + ", ".join(bad))
    return values, paging["limit"], paging["offset"]


def page(items: list[Any], limit: int, offset: int) -> dict[str, Any]:
    return {"items": items[offset:offset + limit], "total": len(items), "limit": limit, "offset": offset}


# ---------------------------------------------------------------------------- auth


def hash_password(password: str, salt: str) -> str:
    return hashlib.sha256((salt + password).encode()).hexdigest()


def add_user(username: str, password: str, role: str) -> dict[str, Any]:
    salt = secrets.token_hex(8)
    user = {"id": new_id("u"), "username": username, "role": role, "active": True, "created_at": now(),
            "salt": salt, "password_hash": hash_password(password, salt)}
    USERS[user["id"]] = user
    USER_IDS[username] = user["id"]
    return user


def caller(*roles: str) -> dict[str, Any]:
    """The authenticated, active user (401) whose role is one of ``roles`` (403)."""
    parts = request.headers.get("Authorization", "").split(None, 1)
    if len(parts) != 2 or parts[0].lower() != "bearer":
        raise unauthorized("send Authorization: Bearer <token>")
    user = USERS.get(TOKENS.get(parts[1].strip(), ""))
    if user is None or not user["active"]:
        raise unauthorized("unknown token or inactive user")
    if roles and user["role"] not in roles:
        raise forbidden(f"the {user['role']} role may not do this")
    return user


def user_view(user: dict[str, Any]) -> dict[str, Any]:
    return {k: user[k] for k in ("id", "username", "role", "active", "created_at")}


# ---------------------------------------------------------------------------- views and lookups


def on_hand(product_id: str) -> int:
    return sum(q for (p, _), q in STOCK.items() if p == product_id)


def product_view(product: dict[str, Any]) -> dict[str, Any]:
    view = {k: product[k] for k in ("id", "sku", "name", "unit", "reorder_level", "active", "created_at")}
    view["on_hand"] = on_hand(product["id"])
    return view


def order_view(order: dict[str, Any]) -> dict[str, Any]:
    view = {k: order[k] for k in ("id", "supplier_id", "warehouse_id", "status", "notes", "created_by",
                                  "created_at", "submitted_at", "received_at", "cancelled_at")}
    view["lines"] = [dict(line) for line in order["lines"]]
    view["total_cost"] = sum(line["quantity"] * line["unit_cost"] for line in order["lines"])
    return view


def find(table: dict[str, dict[str, Any]], item_id: str, what: str) -> dict[str, Any]:
    item = table.get(item_id)
    if item is None:
        raise not_found(what)
    return item


def owned_order(user: dict[str, Any], order_id: str) -> dict[str, Any]:
    """The order (404), which a buyer may only touch when they created it (403)."""
    order = find(ORDERS, order_id, "purchase order")
    if user["role"] == "buyer" and order["created_by"] != user["id"]:
        raise forbidden("buyers may only act on their own purchase orders")
    return order


def record(kind: str, product_id: str, warehouse_id: str, quantity: int, actor: dict[str, Any], *,
           reason: str | None = None, order_id: str | None = None, note: str = "") -> dict[str, Any]:
    STOCK[(product_id, warehouse_id)] = STOCK.get((product_id, warehouse_id), 0) + quantity
    movement = {"id": new_id("mv"), "type": kind, "product_id": product_id, "warehouse_id": warehouse_id,
                "quantity": quantity, "reason": reason, "purchase_order_id": order_id, "note": note,
                "actor_id": actor["id"], "created_at": now()}
    MOVEMENTS.append(movement)
    return movement


def order_lines(value: Any) -> list[dict[str, Any]] | None:
    """Validated purchase order lines, or None when invalid."""
    if not isinstance(value, list) or len(value) > 50:
        return None
    seen = set()
    lines = []
    for line in value:
        if not isinstance(line, dict):
            return None
        product_id, quantity, cost = line.get("product_id"), line.get("quantity"), line.get("unit_cost")
        if not isinstance(product_id, str) or product_id not in PRODUCTS or not PRODUCTS[product_id]["active"] or product_id in seen:
            return None
        if not is_int(quantity) or not 1 <= quantity <= 1_000_000 or not is_int(cost) or not 0 <= cost <= 100_000_000:
            return None
        seen.add(product_id)
        lines.append({"product_id": product_id, "quantity": quantity, "unit_cost": cost, "received_quantity": 0})
    return lines


# ---------------------------------------------------------------------------- system and users


@app.get("/health")
def health() -> Response:
    return reply({"status": "ok"})


@app.post("/auth/token")
def login() -> Response:
    v = Validator(json_body())
    username = v.text("username", required=True, min_len=0, max_len=10_000)
    password = v.text("password", required=True, min_len=0, max_len=10_000)
    v.check()
    with LOCK:
        user = USERS.get(USER_IDS.get(username, ""))
        if user is None or not hmac.compare_digest(hash_password(password, user["salt"]), user["password_hash"]) or not user["active"]:
            raise unauthorized("wrong username or password, or inactive user")
        token = secrets.token_urlsafe(32)
        TOKENS[token] = user["id"]
        return reply({"token": token, "token_type": "bearer", "user": user_view(user)})


@app.get("/me")
def me() -> Response:
    with LOCK:
        return reply(user_view(caller()))


@app.get("/users")
def list_users() -> Response:
    with LOCK:
        caller(*ADMINS)
        return reply({"items": [user_view(u) for u in USERS.values()]})


@app.post("/users")
def create_user() -> Response:
    with LOCK:
        caller(*ADMINS)
        v = Validator(json_body())
        username = v.text("username", required=True, min_len=3, max_len=32, pattern=USERNAME)
        password = v.text("password", required=True, min_len=8, max_len=128)
        role = v.text("role", required=True, max_len=16, choices=ROLES)
        v.check()
        if username in USER_IDS:
            raise conflict("username taken")
        return reply(user_view(add_user(username, password, role)), 201)


@app.patch("/users/<user_id>")
def update_user(user_id: str) -> Response:
    with LOCK:
        me_ = caller(*ADMINS)
        user = find(USERS, user_id, "user")
        v = Validator(json_body())
        role = v.text("role", required=False, max_len=16, choices=ROLES)
        active = v.boolean("active")
        v.check()
        if user["id"] == me_["id"] and ((role is not MISSING and role != "admin") or active is False):
            raise conflict("admins may not demote or deactivate themselves")
        if role is not MISSING:
            user["role"] = role
        if active is not MISSING:
            if not active:
                for token in [t for t, uid in TOKENS.items() if uid == user["id"]]:
                    del TOKENS[token]
            user["active"] = active
        return reply(user_view(user))


# ---------------------------------------------------------------------------- products


@app.get("/products")
def list_products() -> Response:
    with LOCK:
        caller()
        flags, limit, offset = query_flags("active", "low_stock")
        q = (request.args.get("q") or "").lower()
        items = []
        for product in sorted(PRODUCTS.values(), key=lambda p: p["sku"]):
            view = product_view(product)
            if q and q not in product["sku"].lower() and q not in product["name"].lower():
                continue
            if flags["active"] is not None and product["active"] != flags["active"]:
                continue
            if flags["low_stock"] is not None and (view["on_hand"] < product["reorder_level"]) != flags["low_stock"]:
                continue
            items.append(view)
        return reply(page(items, limit, offset))


@app.post("/products")
def create_product() -> Response:
    with LOCK:
        caller(*CATALOG)
        v = Validator(json_body())
        sku = v.text("sku", required=True, max_len=32, pattern=SKU)
        name = v.text("name", required=True, max_len=120, non_blank=True)
        unit = v.text("unit", required=False, max_len=16, non_blank=True)
        reorder = v.integer("reorder_level", required=False, low=0, high=1_000_000)
        v.check()
        if any(p["sku"] == sku for p in PRODUCTS.values()):
            raise conflict("sku taken")
        product = {"id": new_id("p"), "sku": sku, "name": name, "unit": "each" if unit is MISSING else unit,
                   "reorder_level": 0 if reorder is MISSING else reorder, "active": True, "created_at": now()}
        PRODUCTS[product["id"]] = product
        return reply(product_view(product), 201)


@app.get("/products/<product_id>")
def get_product(product_id: str) -> Response:
    with LOCK:
        caller()
        return reply(product_view(find(PRODUCTS, product_id, "product")))


@app.patch("/products/<product_id>")
def update_product(product_id: str) -> Response:
    with LOCK:
        caller(*CATALOG)
        product = find(PRODUCTS, product_id, "product")
        v = Validator(json_body())
        name = v.text("name", required=False, max_len=120, non_blank=True)
        unit = v.text("unit", required=False, max_len=16, non_blank=True)
        reorder = v.integer("reorder_level", required=False, low=0, high=1_000_000)
        active = v.boolean("active")
        v.check()
        for key, value in (("name", name), ("unit", unit), ("reorder_level", reorder), ("active", active)):
            if value is not MISSING:
                product[key] = value
        return reply(product_view(product))


@app.delete("/products/<product_id>")
def delete_product(product_id: str) -> Response:
    with LOCK:
        caller(*CATALOG)
        find(PRODUCTS, product_id, "product")
        if any(m["product_id"] == product_id for m in MOVEMENTS) or any(
                line["product_id"] == product_id for o in ORDERS.values() for line in o["lines"]):
            raise conflict("the product has movements or is on a purchase order")
        del PRODUCTS[product_id]
        return no_content()


@app.get("/products/<product_id>/stock")
def product_stock(product_id: str) -> Response:
    with LOCK:
        caller()
        find(PRODUCTS, product_id, "product")
        rows = [{"warehouse_id": w, "code": WAREHOUSES[w]["code"], "on_hand": q}
                for (p, w), q in STOCK.items() if p == product_id and q != 0 and w in WAREHOUSES]
        rows.sort(key=lambda r: r["code"])
        return reply({"product_id": product_id, "on_hand": on_hand(product_id), "warehouses": rows})


# ---------------------------------------------------------------------------- suppliers


def supplier_name_taken(name: str, except_id: str | None = None) -> bool:
    return any(s["name"].casefold() == name.casefold() and s["id"] != except_id for s in SUPPLIERS.values())


def supplier_email(v: Validator) -> Any:
    value = v.data.get("email", MISSING)
    if value is MISSING or value is None:
        return value
    if not isinstance(value, str) or len(value) > 254 or not EMAIL.match(value):
        v.fail("email")
        return MISSING
    return value


@app.get("/suppliers")
def list_suppliers() -> Response:
    with LOCK:
        caller()
        return reply({"items": list(SUPPLIERS.values())})


@app.post("/suppliers")
def create_supplier() -> Response:
    with LOCK:
        caller(*CATALOG)
        v = Validator(json_body())
        name = v.text("name", required=True, max_len=120, non_blank=True)
        email = supplier_email(v)
        v.check()
        if supplier_name_taken(name):
            raise conflict("supplier name taken")
        supplier = {"id": new_id("s"), "name": name, "email": None if email is MISSING else email, "created_at": now()}
        SUPPLIERS[supplier["id"]] = supplier
        return reply(supplier, 201)


@app.get("/suppliers/<supplier_id>")
def get_supplier(supplier_id: str) -> Response:
    with LOCK:
        caller()
        return reply(find(SUPPLIERS, supplier_id, "supplier"))


@app.patch("/suppliers/<supplier_id>")
def update_supplier(supplier_id: str) -> Response:
    with LOCK:
        caller(*CATALOG)
        supplier = find(SUPPLIERS, supplier_id, "supplier")
        v = Validator(json_body())
        name = v.text("name", required=False, max_len=120, non_blank=True)
        email = supplier_email(v)
        v.check()
        if name is not MISSING and supplier_name_taken(name, except_id=supplier_id):
            raise conflict("supplier name taken")
        if name is not MISSING:
            supplier["name"] = name
        if email is not MISSING:
            supplier["email"] = email
        return reply(supplier)


@app.delete("/suppliers/<supplier_id>")
def delete_supplier(supplier_id: str) -> Response:
    with LOCK:
        caller(*CATALOG)
        find(SUPPLIERS, supplier_id, "supplier")
        if any(o["supplier_id"] == supplier_id for o in ORDERS.values()):
            raise conflict("purchase orders name this supplier")
        del SUPPLIERS[supplier_id]
        return no_content()


# ---------------------------------------------------------------------------- warehouses


@app.get("/warehouses")
def list_warehouses() -> Response:
    with LOCK:
        caller()
        return reply({"items": sorted(WAREHOUSES.values(), key=lambda w: w["code"])})


@app.post("/warehouses")
def create_warehouse() -> Response:
    with LOCK:
        caller(*CATALOG)
        v = Validator(json_body())
        code = v.text("code", required=True, max_len=10, pattern=CODE)
        name = v.text("name", required=True, max_len=120, non_blank=True)
        v.check()
        if any(w["code"] == code for w in WAREHOUSES.values()):
            raise conflict("warehouse code taken")
        warehouse = {"id": new_id("w"), "code": code, "name": name, "created_at": now()}
        WAREHOUSES[warehouse["id"]] = warehouse
        return reply(warehouse, 201)


@app.get("/warehouses/<warehouse_id>")
def get_warehouse(warehouse_id: str) -> Response:
    with LOCK:
        caller()
        return reply(find(WAREHOUSES, warehouse_id, "warehouse"))


@app.patch("/warehouses/<warehouse_id>")
def update_warehouse(warehouse_id: str) -> Response:
    with LOCK:
        caller(*CATALOG)
        warehouse = find(WAREHOUSES, warehouse_id, "warehouse")
        v = Validator(json_body())
        name = v.text("name", required=False, max_len=120, non_blank=True)
        v.check()
        if name is not MISSING:
            warehouse["name"] = name
        return reply(warehouse)


@app.delete("/warehouses/<warehouse_id>")
def delete_warehouse(warehouse_id: str) -> Response:
    with LOCK:
        caller(*CATALOG)
        find(WAREHOUSES, warehouse_id, "warehouse")
        if any(q != 0 for (_, w), q in STOCK.items() if w == warehouse_id):
            raise conflict("the warehouse holds stock")
        if any(o["warehouse_id"] == warehouse_id and o["status"] in OPEN for o in ORDERS.values()):
            raise conflict("open purchase orders are destined for this warehouse")
        del WAREHOUSES[warehouse_id]
        return no_content()


@app.get("/warehouses/<warehouse_id>/stock")
def warehouse_stock(warehouse_id: str) -> Response:
    with LOCK:
        caller()
        find(WAREHOUSES, warehouse_id, "warehouse")
        rows = [{"product_id": p, "sku": PRODUCTS[p]["sku"], "on_hand": q}
                for (p, w), q in STOCK.items() if w == warehouse_id and q != 0 and p in PRODUCTS]
        rows.sort(key=lambda r: r["sku"])
        return reply({"warehouse_id": warehouse_id, "items": rows})


# ---------------------------------------------------------------------------- purchase orders


@app.get("/purchase-orders")
def list_orders() -> Response:
    with LOCK:
        caller()
        values, limit, offset = query_flags(choices={"status": STATUSES})
        supplier_id = request.args.get("supplier_id")
        warehouse_id = request.args.get("warehouse_id")
        items = [order_view(o) for o in reversed(list(ORDERS.values()))
                 if (values["status"] is None or o["status"] == values["status"])
                 and (supplier_id is None or o["supplier_id"] == supplier_id)
                 and (warehouse_id is None or o["warehouse_id"] == warehouse_id)]
        return reply(page(items, limit, offset))


@app.post("/purchase-orders")
def create_order() -> Response:
    with LOCK:
        user = caller(*PURCHASERS)
        data = json_body()
        v = Validator(data)
        supplier_id = v.ref("supplier_id", SUPPLIERS, required=True)
        warehouse_id = v.ref("warehouse_id", WAREHOUSES, required=True)
        lines = order_lines(data.get("lines", []))
        if lines is None:
            v.fail("lines")
        notes = v.text("notes", required=False, min_len=0, max_len=1000)
        v.check()
        order = {"id": new_id("po"), "supplier_id": supplier_id, "warehouse_id": warehouse_id, "status": "draft",
                 "lines": lines, "notes": "" if notes is MISSING else notes, "created_by": user["id"],
                 "created_at": now(), "submitted_at": None, "received_at": None, "cancelled_at": None}
        ORDERS[order["id"]] = order
        return reply(order_view(order), 201)


@app.get("/purchase-orders/<order_id>")
def get_order(order_id: str) -> Response:
    with LOCK:
        caller()
        return reply(order_view(find(ORDERS, order_id, "purchase order")))


@app.patch("/purchase-orders/<order_id>")
def update_order(order_id: str) -> Response:
    with LOCK:
        user = caller(*PURCHASERS)
        order = owned_order(user, order_id)
        data = json_body()
        v = Validator(data)
        supplier_id = v.ref("supplier_id", SUPPLIERS, required=False)
        warehouse_id = v.ref("warehouse_id", WAREHOUSES, required=False)
        lines: Any = MISSING
        if "lines" in data:
            lines = order_lines(data["lines"])
            if lines is None:
                v.fail("lines")
        notes = v.text("notes", required=False, min_len=0, max_len=1000)
        v.check()
        if order["status"] != "draft":
            raise conflict("only drafts can be changed", "invalid_state")
        for key, value in (("supplier_id", supplier_id), ("warehouse_id", warehouse_id), ("lines", lines), ("notes", notes)):
            if value is not MISSING and value is not None:
                order[key] = value
        return reply(order_view(order))


@app.delete("/purchase-orders/<order_id>")
def delete_order(order_id: str) -> Response:
    with LOCK:
        user = caller(*PURCHASERS)
        order = owned_order(user, order_id)
        if order["status"] != "draft":
            raise conflict("only drafts can be deleted", "invalid_state")
        del ORDERS[order_id]
        return no_content()


@app.post("/purchase-orders/<order_id>/submit")
def submit_order(order_id: str) -> Response:
    with LOCK:
        user = caller(*PURCHASERS)
        order = owned_order(user, order_id)
        if order["status"] != "draft":
            raise conflict("only drafts can be submitted", "invalid_state")
        if not order["lines"]:
            raise conflict("an order without lines cannot be submitted", "invalid_state")
        order["status"] = "submitted"
        order["submitted_at"] = now()
        return reply(order_view(order))


@app.post("/purchase-orders/<order_id>/cancel")
def cancel_order(order_id: str) -> Response:
    with LOCK:
        user = caller(*PURCHASERS)
        order = owned_order(user, order_id)
        if order["status"] not in ("draft", "submitted"):
            raise conflict("only drafts and submitted orders can be cancelled", "invalid_state")
        order["status"] = "cancelled"
        order["cancelled_at"] = now()
        return reply(order_view(order))


@app.post("/purchase-orders/<order_id>/receive")
def receive_order(order_id: str) -> Response:
    with LOCK:
        user = caller(*RECEIVERS)
        order = find(ORDERS, order_id, "purchase order")
        data = json_body(allow_empty=True)
        by_product = {line["product_id"]: line for line in order["lines"]}
        delivery: list[tuple[dict[str, Any], int]] = []
        if "lines" in data:
            value = data["lines"]
            ok = isinstance(value, list) and len(value) >= 1
            seen = set()
            for item in value if ok else []:
                product_id = item.get("product_id") if isinstance(item, dict) else None
                quantity = item.get("quantity") if isinstance(item, dict) else None
                if not isinstance(product_id, str) or product_id not in by_product or product_id in seen or not is_int(quantity) or quantity < 1:
                    ok = False
                    break
                seen.add(product_id)
                delivery.append((by_product[product_id], quantity))
            if not ok:
                raise invalid(["lines"], "invalid receipt lines")
        if order["status"] not in ("submitted", "partially_received"):
            raise conflict("only submitted orders can receive goods", "invalid_state")
        if "lines" not in data:
            delivery = [(line, line["quantity"] - line["received_quantity"]) for line in order["lines"]
                        if line["quantity"] > line["received_quantity"]]
        if any(quantity > line["quantity"] - line["received_quantity"] for line, quantity in delivery):
            raise conflict("more than remains to be received", "over_receipt")
        for line, quantity in delivery:
            line["received_quantity"] += quantity
            record("receipt", line["product_id"], order["warehouse_id"], quantity, user, order_id=order_id)
        if all(line["received_quantity"] == line["quantity"] for line in order["lines"]):
            order["status"] = "received"
            order["received_at"] = now()
        else:
            order["status"] = "partially_received"
        return reply(order_view(order))


# ---------------------------------------------------------------------------- adjustments and movements


@app.post("/adjustments")
def create_adjustment() -> Response:
    with LOCK:
        user = caller(*RECEIVERS)
        v = Validator(json_body())
        warehouse_id = v.ref("warehouse_id", WAREHOUSES, required=True)
        product_id = v.ref("product_id", PRODUCTS, required=True)
        quantity = v.integer("quantity", required=True, low=-1_000_000, high=1_000_000)
        if quantity == 0:
            v.fail("quantity")
        reason = v.text("reason", required=True, max_len=32, choices=tuple(REASONS))
        note = v.text("note", required=False, min_len=0, max_len=500)
        if quantity is not MISSING and reason is not MISSING and REASONS[reason] * quantity < 0:
            v.fail("quantity")
        v.check()
        if STOCK.get((product_id, warehouse_id), 0) + quantity < 0:
            raise conflict("stock would become negative", "insufficient_stock")
        movement = record("adjustment", product_id, warehouse_id, quantity, user, reason=reason,
                          note="" if note is MISSING else note)
        return reply(movement, 201)


@app.get("/movements")
def list_movements() -> Response:
    with LOCK:
        caller()
        values, limit, offset = query_flags(choices={"type": ("receipt", "adjustment")})
        product_id = request.args.get("product_id")
        warehouse_id = request.args.get("warehouse_id")
        items = [m for m in reversed(MOVEMENTS)
                 if (values["type"] is None or m["type"] == values["type"])
                 and (product_id is None or m["product_id"] == product_id)
                 and (warehouse_id is None or m["warehouse_id"] == warehouse_id)]
        return reply(page(items, limit, offset))


def seed() -> None:
    username = os.environ.get("ADMIN_USERNAME", "admin")
    password = os.environ.get("ADMIN_PASSWORD", "change-me-now")
    add_user(username, password, "admin")


seed()

if __name__ == "__main__":
    app.run(host="0.0.0.0", port=int(os.environ.get("PORT", "8000")), threaded=True)
