"""Reference implementation of the shop-orders task: a candidate that passes the whole oracle.

Flask with in-memory storage behind one lock. Every handler checks in spec.md's order:
authenticate (401), find what the caller may see (404), role (403), validate (422), state
rules (409), then talk to the payments provider (402/502). The lock is held across provider
calls so that an order is never charged or refunded twice.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import threading
import uuid
from datetime import datetime, timezone
from typing import Any

import requests
from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

app = Flask(__name__)

PAYMENTS_URL = os.environ.get("PAYMENTS_URL", "http://127.0.0.1:9000").rstrip("/")
STAFF_TOKEN = os.environ.get("SHOP_STAFF_TOKEN", "")
PAYMENTS = requests.Session()

LOCK = threading.RLock()
USERS: dict[str, dict[str, Any]] = {}            # user id -> customer (with password hash)
USER_IDS: dict[str, str] = {}                    # username -> user id
TOKENS: dict[str, str] = {}                      # token -> user id
PRODUCTS: dict[str, dict[str, Any]] = {}         # product id -> product (insertion = creation order)
CARTS: dict[str, dict[str, int]] = {}            # user id -> product id -> quantity (first-added order)
ORDERS: dict[str, dict[str, Any]] = {}           # order id -> order (insertion = creation order)
CHECKOUTS: dict[tuple[str, str], tuple[str, str]] = {}  # (user id, key) -> (body fingerprint, order id)

USERNAME = re.compile(r"^[a-z0-9_]{3,32}$")
SKU = re.compile(r"^[A-Z0-9-]{3,32}$")
IDEMPOTENCY_KEY = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
INTEGER = re.compile(r"^-?[0-9]+$")
STATUSES = ("pending", "paid", "shipped", "cancelled", "refunded")
STAFF = {"id": "staff", "staff": True}
MISSING = object()


class ApiError(Exception):
    """An error answer: status, error code, message (and the invalid fields for 422)."""

    def __init__(self, status: int, code: str, message: str, fields: list[str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.fields = fields


def invalid(fields: list[str], message: str = "invalid request") -> ApiError:
    return ApiError(422, "validation_error", message, fields)


def reply(payload: Any, status: int = 200) -> Response:
    return Response(json.dumps(payload), status=status, mimetype="application/json")


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
    code = "not_found" if err.code == 404 else "validation_error" if err.code == 400 else "forbidden"
    body: dict[str, Any] = {"error": code, "message": err.description or err.name}
    if code == "validation_error":
        body["fields"] = []
    return reply(body, err.code or 500)


def stamp() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


# ---------------------------------------------------------------------------- the payments provider


class PaymentsProvider:
    """The two provider calls; a decline is 402, any other failure 502."""

    @staticmethod
    def _post(path: str, body: dict[str, Any]) -> requests.Response:
        try:
            return PAYMENTS.post(PAYMENTS_URL + path, json=body, timeout=10)
        except requests.RequestException as err:
            raise ApiError(502, "payment_unavailable", f"the payments provider could not be reached: {err}") from err

    @classmethod
    def charge(cls, order: dict[str, Any], source: str) -> str:
        body = {
            "amount": order["total"], "currency": "usd", "source": source,
            "description": f"Order {order['id']}", "metadata": {"order_id": order["id"]},
        }
        response = cls._post("/charges", body)
        if response.status_code not in (200, 201):
            raise ApiError(502, "payment_unavailable", f"the payments provider answered {response.status_code}")
        charge = response.json()
        if charge.get("status") != "succeeded":
            raise ApiError(402, "payment_declined", f"the card was declined ({charge.get('failure_code')})")
        return str(charge["id"])

    @classmethod
    def refund(cls, order: dict[str, Any]) -> str:
        response = cls._post("/refunds", {"charge": order["charge_id"], "amount": order["total"]})
        if response.status_code not in (200, 201):
            raise ApiError(502, "payment_unavailable", f"the payments provider answered {response.status_code}")
        return str(response.json()["id"])


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


def json_body() -> dict[str, Any]:
    """The request body as a JSON object, or 422 (called only after the 401/404/403 checks)."""
    raw = request.get_data(cache=True)
    if len(raw) > MAX_BODY_BYTES:
        raise invalid([], "the body is larger than 1 MiB")
    try:
        data = json.loads(raw) if raw else None
    except (ValueError, RecursionError) as err:
        raise invalid([], "the body is not valid JSON") from err
    if nesting_depth(data) > MAX_BODY_DEPTH:
        raise invalid([], f"the body nests deeper than {MAX_BODY_DEPTH} levels")
    if not isinstance(data, dict):
        raise invalid([], "the body must be a JSON object")
    return data


class Validator:
    """Collects every invalid field of one body before answering 422."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.bad: list[str] = []

    def fail(self, name: str) -> None:
        if name not in self.bad:
            self.bad.append(name)

    def text(self, name: str, *, required: bool, max_len: int, min_len: int = 1, non_blank: bool = True,
             pattern: re.Pattern[str] | None = None) -> Any:
        value = self.data.get(name, MISSING)
        if value is MISSING:
            if required:
                self.fail(name)
            return MISSING
        if not isinstance(value, str) or not min_len <= len(value) <= max_len or (non_blank and min_len and not value.strip()):
            self.fail(name)
            return MISSING
        if pattern is not None and not pattern.match(value):
            self.fail(name)
            return MISSING
        return value

    def integer(self, name: str, *, required: bool, low: int, high: int) -> Any:
        value = self.data.get(name, MISSING)
        if value is MISSING:
            if required:
                self.fail(name)
            return MISSING
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            self.fail(name)
            return MISSING
        return value

    def boolean(self, name: str) -> Any:
        value = self.data.get(name, MISSING)
        if value is not MISSING and not isinstance(value, bool):
            self.fail(name)
            return MISSING
        return value

    def check(self) -> None:
        if self.bad:
            raise invalid(self.bad, "invalid fields: " + ", ".join(self.bad))


def paging(bad: list[str]) -> tuple[int, int]:
    """limit and offset from the query string; ``bad`` holds other invalid parameters (422 naming each)."""
    values = {}
    for name, default, low, high in (("limit", 20, 1, 100), ("offset", 0, 0, None)):
        raw = request.args.get(name)
        if raw is None:
            values[name] = default
            continue
        if not INTEGER.match(raw) or int(raw) < low or (high is not None and int(raw) > high):
            bad.append(name)
            continue
        values[name] = int(raw)
    if bad:
        raise invalid(bad, "invalid query parameters: " + ", ".join(bad))
    return values["limit"], values["offset"]


def page(items: list[dict[str, Any]], limit: int, offset: int) -> dict[str, Any]:
    return {"items": items[offset:offset + limit], "total": len(items), "limit": limit, "offset": offset}


# ---------------------------------------------------------------------------- callers and views


def caller() -> dict[str, Any]:
    """The customer behind the bearer token, or STAFF for the staff token; 401 otherwise."""
    header = request.headers.get("Authorization", "")
    parts = header.split(None, 1)
    if len(parts) != 2 or parts[0].lower() != "bearer":
        raise ApiError(401, "unauthorized", "send Authorization: Bearer <token>")
    token = parts[1].strip()
    if STAFF_TOKEN and secrets.compare_digest(token, STAFF_TOKEN):
        return STAFF
    user_id = TOKENS.get(token)
    if user_id is None or user_id not in USERS:
        raise ApiError(401, "unauthorized", "unknown token")
    return USERS[user_id]


def is_staff(who: dict[str, Any]) -> bool:
    return bool(who.get("staff"))


def staff_only() -> dict[str, Any]:
    who = caller()
    if not is_staff(who):
        raise ApiError(403, "forbidden", "staff only")
    return who


def customer_only() -> dict[str, Any]:
    who = caller()
    if is_staff(who):
        raise ApiError(403, "forbidden", "customers only")
    return who


def find_product(product_id: str) -> dict[str, Any]:
    product = PRODUCTS.get(product_id)
    if product is None:
        raise ApiError(404, "not_found", "product not found")
    return product


def visible_order(who: dict[str, Any], order_id: str) -> dict[str, Any]:
    order = ORDERS.get(order_id)
    if order is None or not (is_staff(who) or order["customer_id"] == who["id"]):
        raise ApiError(404, "not_found", "order not found")
    return order


def user_view(user: dict[str, Any]) -> dict[str, Any]:
    return {k: user[k] for k in ("id", "username", "created_at")}


def line(product: dict[str, Any], quantity: int) -> dict[str, Any]:
    return {"product_id": product["id"], "sku": product["sku"], "name": product["name"],
            "unit_price": product["price"], "quantity": quantity, "line_total": product["price"] * quantity}


def cart_view(user_id: str) -> dict[str, Any]:
    lines = [line(PRODUCTS[pid], qty) for pid, qty in CARTS.get(user_id, {}).items()]
    return {"items": lines, "total": sum(x["line_total"] for x in lines), "currency": "usd"}


def order_view(order: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in order.items() if not k.startswith("_")}


def restock(order: dict[str, Any]) -> None:
    for item in order["items"]:
        PRODUCTS[item["product_id"]]["stock"] += item["quantity"]


def hash_password(password: str, salt: str) -> str:
    return hashlib.sha256((salt + password).encode()).hexdigest()


# ---------------------------------------------------------------------------- routes: users


@app.get("/health")
def health() -> Response:
    return reply({"status": "ok"})


@app.post("/users")
def register() -> Response:
    with LOCK:
        data = json_body()
        v = Validator(data)
        username = v.text("username", required=True, max_len=32, pattern=USERNAME)
        password = data.get("password", MISSING)
        if not isinstance(password, str) or not 8 <= len(password) <= 128:
            v.fail("password")
        v.check()
        if username in USER_IDS:
            raise ApiError(409, "conflict", "username already registered")
        salt = secrets.token_hex(8)
        user = {"id": new_id("u"), "username": username, "created_at": stamp(), "_salt": salt, "_hash": hash_password(password, salt)}
        USERS[user["id"]] = user
        USER_IDS[username] = user["id"]
        return reply(user_view(user), 201)


@app.post("/auth/token")
def login() -> Response:
    with LOCK:
        data = json_body()
        bad = [name for name in ("username", "password") if not isinstance(data.get(name), str)]
        if bad:
            raise invalid(bad, "username and password are required strings")
        user = USERS.get(USER_IDS.get(data["username"], ""))
        if user is None or hash_password(data["password"], user["_salt"]) != user["_hash"]:
            raise ApiError(401, "unauthorized", "wrong username or password")
        token = secrets.token_urlsafe(24)
        TOKENS[token] = user["id"]
        return reply({"token": token, "token_type": "bearer", "user": user_view(user)})


# ---------------------------------------------------------------------------- routes: products


@app.post("/products")
def create_product() -> Response:
    with LOCK:
        staff_only()
        data = json_body()
        v = Validator(data)
        sku = v.text("sku", required=True, max_len=32, pattern=SKU)
        name = v.text("name", required=True, max_len=100)
        description = v.text("description", required=False, max_len=1000, min_len=0, non_blank=False)
        price = v.integer("price", required=True, low=1, high=1_000_000)
        stock = v.integer("stock", required=False, low=0, high=100_000)
        active = v.boolean("active")
        v.check()
        if any(p["sku"] == sku for p in PRODUCTS.values()):
            raise ApiError(409, "conflict", "another product has this SKU")
        product = {
            "id": new_id("p"), "sku": sku, "name": name, "description": "" if description is MISSING else description,
            "price": price, "currency": "usd", "stock": 0 if stock is MISSING else stock,
            "active": True if active is MISSING else active, "created_at": stamp(),
        }
        PRODUCTS[product["id"]] = product
        return reply(product, 201)


@app.get("/products")
def list_products() -> Response:
    with LOCK:
        limit, offset = paging([])
        return reply(page([p for p in PRODUCTS.values() if p["active"]], limit, offset))


@app.get("/products/<product_id>")
def get_product(product_id: str) -> Response:
    with LOCK:
        return reply(find_product(product_id))


@app.patch("/products/<product_id>")
def update_product(product_id: str) -> Response:
    with LOCK:
        staff_only()
        product = find_product(product_id)
        data = json_body()
        v = Validator(data)
        changes = {
            "name": v.text("name", required=False, max_len=100),
            "description": v.text("description", required=False, max_len=1000, min_len=0, non_blank=False),
            "price": v.integer("price", required=False, low=1, high=1_000_000),
            "stock": v.integer("stock", required=False, low=0, high=100_000),
            "active": v.boolean("active"),
        }
        v.check()
        product.update({k: value for k, value in changes.items() if value is not MISSING})
        return reply(product)


# ---------------------------------------------------------------------------- routes: cart


@app.get("/cart")
def get_cart() -> Response:
    with LOCK:
        return reply(cart_view(customer_only()["id"]))


@app.put("/cart/items/<product_id>")
def set_cart_item(product_id: str) -> Response:
    with LOCK:
        user = customer_only()
        product = find_product(product_id)
        v = Validator(json_body())
        quantity = v.integer("quantity", required=True, low=1, high=99)
        v.check()
        if not product["active"]:
            raise ApiError(409, "product_unavailable", "the product is not for sale")
        if quantity > product["stock"]:
            raise ApiError(409, "insufficient_stock", f"only {product['stock']} in stock")
        CARTS.setdefault(user["id"], {})[product_id] = quantity
        return reply(cart_view(user["id"]))


@app.delete("/cart/items/<product_id>")
def remove_cart_item(product_id: str) -> Response:
    with LOCK:
        user = customer_only()
        cart = CARTS.get(user["id"], {})
        if product_id not in cart:
            raise ApiError(404, "not_found", "the product is not in your cart")
        del cart[product_id]
        return reply(cart_view(user["id"]))


# ---------------------------------------------------------------------------- routes: orders


@app.post("/orders")
def checkout() -> Response:
    with LOCK:
        user = customer_only()
        data = json_body()
        v = Validator(data)
        key = request.headers.get("Idempotency-Key")
        if key is None or not IDEMPOTENCY_KEY.match(key):
            v.fail("Idempotency-Key")
        address = v.text("shipping_address", required=True, max_len=300)
        v.check()
        fingerprint = json.dumps({"shipping_address": address})
        seen = CHECKOUTS.get((user["id"], key))  # type: ignore[arg-type]
        if seen is not None:
            if seen[0] != fingerprint:
                raise ApiError(409, "idempotency_conflict", "this Idempotency-Key was used with a different body")
            return reply(order_view(ORDERS[seen[1]]), 200)
        cart = CARTS.get(user["id"], {})
        if not cart:
            raise ApiError(409, "cart_empty", "the cart is empty")
        if any(not PRODUCTS[pid]["active"] for pid in cart):
            raise ApiError(409, "product_unavailable", "a product in the cart is no longer for sale")
        if any(qty > PRODUCTS[pid]["stock"] for pid, qty in cart.items()):
            raise ApiError(409, "insufficient_stock", "a product in the cart does not have enough stock")
        items = [line(PRODUCTS[pid], qty) for pid, qty in cart.items()]
        order = {
            "id": new_id("o"), "customer_id": user["id"], "status": "pending", "items": items,
            "total": sum(x["line_total"] for x in items), "currency": "usd", "shipping_address": address,
            "charge_id": None, "refund_id": None, "created_at": stamp(), "paid_at": None, "shipped_at": None,
            "cancelled_at": None,
        }
        for pid, qty in cart.items():
            PRODUCTS[pid]["stock"] -= qty
        CARTS[user["id"]] = {}
        ORDERS[order["id"]] = order
        CHECKOUTS[(user["id"], key)] = (fingerprint, order["id"])  # type: ignore[index]
        return reply(order_view(order), 201)


@app.get("/orders")
def list_orders() -> Response:
    with LOCK:
        who = caller()
        status = request.args.get("status")
        limit, offset = paging(["status"] if status is not None and status not in STATUSES else [])
        items = [o for o in ORDERS.values() if (is_staff(who) or o["customer_id"] == who["id"]) and status in (None, o["status"])]
        return reply(page([order_view(o) for o in reversed(items)], limit, offset))


@app.get("/orders/<order_id>")
def get_order(order_id: str) -> Response:
    with LOCK:
        return reply(order_view(visible_order(caller(), order_id)))


@app.post("/orders/<order_id>/pay")
def pay(order_id: str) -> Response:
    with LOCK:
        who = caller()
        order = visible_order(who, order_id)
        if is_staff(who):
            raise ApiError(403, "forbidden", "only the order's customer pays")
        v = Validator(json_body())
        source = v.text("payment_source", required=True, max_len=100)
        v.check()
        if order["status"] != "pending":
            raise ApiError(409, "invalid_state", f"a {order['status']} order cannot be paid")
        order["charge_id"] = PaymentsProvider.charge(order, source)
        order.update(status="paid", paid_at=stamp())
        return reply(order_view(order))


@app.post("/orders/<order_id>/ship")
def ship(order_id: str) -> Response:
    with LOCK:
        who = caller()
        order = visible_order(who, order_id)
        if not is_staff(who):
            raise ApiError(403, "forbidden", "only staff ship orders")
        if order["status"] != "paid":
            raise ApiError(409, "invalid_state", f"a {order['status']} order cannot be shipped")
        order.update(status="shipped", shipped_at=stamp())
        return reply(order_view(order))


@app.post("/orders/<order_id>/cancel")
def cancel(order_id: str) -> Response:
    with LOCK:
        order = visible_order(caller(), order_id)
        if order["status"] == "pending":
            order.update(status="cancelled", cancelled_at=stamp())
        elif order["status"] == "paid":
            order["refund_id"] = PaymentsProvider.refund(order)
            order.update(status="refunded", cancelled_at=stamp())
        else:
            raise ApiError(409, "invalid_state", f"a {order['status']} order cannot be cancelled")
        restock(order)
        return reply(order_view(order))


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=int(os.environ.get("PORT", "8000")), threaded=True)
