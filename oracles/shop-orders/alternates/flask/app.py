"""Shop orders: catalogue, carts, idempotent checkout, payments and refunds through a provider.

Flask, in-memory state. Run with `python app.py` (PORT, PAYMENTS_URL, SHOP_STAFF_TOKEN env).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import threading
import urllib.error
import urllib.request
from datetime import datetime, timezone

from flask import Flask, Response, request
from werkzeug.exceptions import RequestEntityTooLarge

MAX_BODY = 1024 * 1024
MAX_DEPTH = 32

app = Flask(__name__)
app.config["MAX_CONTENT_LENGTH"] = MAX_BODY

PAYMENTS_URL = os.environ.get("PAYMENTS_URL", "http://localhost:9000").rstrip("/")
PAYMENTS_API_KEY = os.environ.get("PAYMENTS_API_KEY")
STAFF_TOKEN = os.environ.get("SHOP_STAFF_TOKEN", "staff-7f3c9d2e41b8")
PROVIDER_TIMEOUT = float(os.environ.get("PAYMENTS_TIMEOUT", "10"))

USERNAME_RE = re.compile(r"[a-z0-9_]{3,32}")
SKU_RE = re.compile(r"[A-Z0-9-]{3,32}")
IDEM_KEY_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
INT_QUERY_RE = re.compile(r"[+-]?[0-9]+(\.0*)?")
STATUSES = ("pending", "paid", "shipped", "cancelled", "refunded")


# --------------------------------------------------------------------------- errors / JSON

class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, fields: list[str] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.fields = status, code, message, fields


def json_response(payload, status: int = 200) -> Response:
    return Response(json.dumps(payload), status=status, mimetype="application/json")


@app.errorhandler(ApiError)
def handle_api_error(err: ApiError):
    body = {"error": err.code, "message": err.message}
    if err.status == 422:
        seen: list[str] = []
        for f in err.fields or []:
            if f not in seen:
                seen.append(f)
        body["fields"] = seen
    return json_response(body, err.status)


@app.errorhandler(RequestEntityTooLarge)
def handle_413(_err):
    return json_response({"error": "validation_error", "message": "request body larger than 1 MiB", "fields": []}, 413)


@app.errorhandler(404)
def handle_404(_err):
    return json_response({"error": "not_found", "message": "no such endpoint"}, 404)


@app.errorhandler(405)
def handle_405(_err):
    return json_response({"error": "method_not_allowed", "message": "method not allowed"}, 405)


@app.errorhandler(500)
def handle_500(_err):
    return json_response({"error": "internal_error", "message": "internal server error"}, 500)


def not_found(what: str = "not found") -> ApiError:
    return ApiError(404, "not_found", what)


def forbidden(message: str = "your role may not do this") -> ApiError:
    return ApiError(403, "forbidden", message)


def validation(fields: list[str], message: str = "validation failed") -> ApiError:
    return ApiError(422, "validation_error", message, fields)


def conflict(code: str, message: str) -> ApiError:
    return ApiError(409, code, message)


def _reject_constant(value: str):
    raise ValueError(f"invalid JSON constant {value}")


def too_deep(value) -> bool:
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            if depth > MAX_DEPTH:
                return True
            children = node.values() if isinstance(node, dict) else node
            stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def json_body() -> dict:
    if request.content_length is not None and request.content_length > MAX_BODY:
        raise RequestEntityTooLarge()
    raw = request.get_data(cache=True)
    if len(raw) > MAX_BODY:
        raise RequestEntityTooLarge()
    try:
        body = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except RecursionError:
        raise validation([], "body is nested too deeply")
    except (ValueError, UnicodeDecodeError):
        raise validation([], "body must be a JSON object")
    if not isinstance(body, dict):
        raise validation([], "body must be a JSON object")
    if too_deep(body):
        raise validation([], "body is nested more than 32 levels deep")
    return body


def is_int(value) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and value.is_integer()


def int_in(value, low: int, high: int) -> bool:
    return is_int(value) and low <= value <= high


def non_blank_text(value, max_len: int) -> bool:
    return isinstance(value, str) and 1 <= len(value) <= max_len and value.strip() != ""


def now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def pagination(errors: list[str]) -> tuple[int, int]:
    def one(name: str, default: int, low: int, high: int | None) -> int:
        raw = request.args.get(name)
        if raw is None:
            return default
        if not INT_QUERY_RE.fullmatch(raw):
            errors.append(name)
            return default
        value = int(float(raw)) if "." in raw else int(raw)
        if value < low or (high is not None and value > high):
            errors.append(name)
            return default
        return value

    return one("limit", 20, 1, 100), one("offset", 0, 0, None)


def page(items: list, limit: int, offset: int) -> dict:
    return {"items": items[offset:offset + limit], "total": len(items), "limit": limit, "offset": offset}


# --------------------------------------------------------------------------- state

class State:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.users: dict[str, dict] = {}
        self.users_by_name: dict[str, str] = {}
        self.tokens: dict[str, str] = {}
        self.products: dict[str, dict] = {}
        self.skus: dict[str, str] = {}
        self.carts: dict[str, dict[str, int]] = {}     # customer id -> {product id: quantity} (insertion order)
        self.orders: dict[str, dict] = {}
        self.idempotency: dict[tuple[str, str], tuple[str, str]] = {}  # (customer, key) -> (fingerprint, order id)
        self.order_locks: dict[str, threading.Lock] = {}
        self.seq = 0

    def next_seq(self) -> int:
        with self.lock:
            self.seq += 1
            return self.seq

    def order_lock(self, order_id: str) -> threading.Lock:
        with self.lock:
            lock = self.order_locks.get(order_id)
            if lock is None:
                lock = self.order_locks[order_id] = threading.Lock()
            return lock


S = State()


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


def hash_password(password: str, salt: str) -> str:
    return hashlib.sha256((salt + "\0" + password).encode("utf-8")).hexdigest()


def public_user(user: dict) -> dict:
    return {"id": user["id"], "username": user["username"], "created_at": user["created_at"]}


PRODUCT_FIELDS = ("id", "sku", "name", "description", "price", "currency", "stock", "active", "created_at")
ORDER_FIELDS = ("id", "customer_id", "status", "total", "currency", "shipping_address", "charge_id",
                "refund_id", "created_at", "paid_at", "shipped_at", "cancelled_at")


def public_product(p: dict) -> dict:
    return {k: p[k] for k in PRODUCT_FIELDS}


def public_order(o: dict) -> dict:
    out = {k: o[k] for k in ORDER_FIELDS}
    out["items"] = [dict(line) for line in o["items"]]
    return out


class Caller:
    def __init__(self, user: dict | None) -> None:
        self.user = user
        self.is_staff = user is None
        self.id = user["id"] if user else None


def caller() -> Caller:
    header = request.headers.get("Authorization", "")
    parts = header.split(None, 1)
    if len(parts) != 2 or parts[0].lower() != "bearer" or not parts[1].strip():
        raise ApiError(401, "unauthorized", "missing or malformed bearer token")
    token = parts[1].strip()
    if STAFF_TOKEN and secrets.compare_digest(token.encode(), STAFF_TOKEN.encode()):
        return Caller(None)
    with S.lock:
        user_id = S.tokens.get(token)
        if user_id is None:
            raise ApiError(401, "unauthorized", "unknown bearer token")
        return Caller(S.users[user_id])


def customer_only(c: Caller) -> None:
    if c.is_staff:
        raise forbidden("staff may not do this (customers only)")


def staff_only(c: Caller) -> None:
    if not c.is_staff:
        raise forbidden("staff only")


# --------------------------------------------------------------------------- payments provider

class ProviderResult:
    def __init__(self, status: int | None, payload) -> None:
        self.status, self.payload = status, payload


def provider_post(path: str, body: dict) -> ProviderResult:
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if PAYMENTS_API_KEY:
        headers["Authorization"] = f"Bearer {PAYMENTS_API_KEY}"
    req = urllib.request.Request(PAYMENTS_URL + path, data=json.dumps(body).encode("utf-8"), method="POST",
                                 headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=PROVIDER_TIMEOUT) as resp:
            status, raw = resp.status, resp.read()
    except urllib.error.HTTPError as err:
        status = err.code
        try:
            raw = err.read()
        except Exception:  # noqa: BLE001
            raw = b""
    except Exception:  # noqa: BLE001 - unreachable, timeout, reset
        return ProviderResult(None, None)
    try:
        payload = json.loads(raw) if raw else None
    except ValueError:
        payload = None
    return ProviderResult(status, payload)


def unavailable() -> ApiError:
    return ApiError(502, "payment_unavailable", "the payments provider failed or could not be reached")


# --------------------------------------------------------------------------- system & users

@app.get("/health")
def health():
    return json_response({"status": "ok"})


@app.post("/users")
def register():
    body = json_body()
    errors = []
    username, password = body.get("username"), body.get("password")
    if not isinstance(username, str) or not USERNAME_RE.fullmatch(username):
        errors.append("username")
    if not isinstance(password, str) or not 8 <= len(password) <= 128:
        errors.append("password")
    if errors:
        raise validation(errors)
    with S.lock:
        if username in S.users_by_name:
            raise conflict("conflict", "username is taken")
        salt = secrets.token_hex(8)
        user = {"id": new_id("usr"), "username": username, "created_at": now_iso(),
                "_salt": salt, "_hash": hash_password(password, salt)}
        S.users[user["id"]] = user
        S.users_by_name[username] = user["id"]
        S.carts[user["id"]] = {}
    return json_response(public_user(user), 201)


@app.post("/auth/token")
def login():
    body = json_body()
    errors = [f for f in ("username", "password") if not isinstance(body.get(f), str)]
    if errors:
        raise validation(errors)
    with S.lock:
        user_id = S.users_by_name.get(body["username"])
        user = S.users.get(user_id) if user_id else None
        if user is None or not secrets.compare_digest(hash_password(body["password"], user["_salt"]), user["_hash"]):
            raise ApiError(401, "unauthorized", "wrong username or password")
        token = secrets.token_urlsafe(32)
        S.tokens[token] = user["id"]
    return json_response({"token": token, "token_type": "bearer", "user": public_user(user)})


# --------------------------------------------------------------------------- products

def validate_product_fields(body: dict, errors: list[str], creating: bool) -> dict:
    values = {}
    checks = (
        ("name", lambda v: non_blank_text(v, 100)),
        ("description", lambda v: isinstance(v, str) and len(v) <= 1000),
        ("price", lambda v: int_in(v, 1, 1_000_000)),
        ("stock", lambda v: int_in(v, 0, 100_000)),
        ("active", lambda v: isinstance(v, bool)),
    )
    if creating:
        sku = body.get("sku")
        if not isinstance(sku, str) or not SKU_RE.fullmatch(sku):
            errors.append("sku")
        else:
            values["sku"] = sku
    for name, ok in checks:
        if name not in body:
            if creating and name in ("name", "price"):
                errors.append(name)
            continue
        if not ok(body[name]):
            errors.append(name)
        else:
            v = body[name]
            values[name] = int(v) if name in ("price", "stock") else v
    return values


@app.post("/products")
def create_product():
    c = caller()
    staff_only(c)
    body = json_body()
    errors: list[str] = []
    values = validate_product_fields(body, errors, creating=True)
    if errors:
        raise validation(errors)
    with S.lock:
        if values["sku"] in S.skus:
            raise conflict("conflict", "another product has this SKU")
        p = {"id": new_id("prd"), "sku": values["sku"], "name": values["name"],
             "description": values.get("description", ""), "price": values["price"], "currency": "usd",
             "stock": values.get("stock", 0), "active": values.get("active", True), "created_at": now_iso(),
             "_seq": S.next_seq()}
        S.products[p["id"]] = p
        S.skus[p["sku"]] = p["id"]
        out = public_product(p)
    return json_response(out, 201)


@app.get("/products")
def list_products():
    errors: list[str] = []
    limit, offset = pagination(errors)
    if errors:
        raise validation(errors)
    with S.lock:
        items = [public_product(p) for p in sorted(S.products.values(), key=lambda p: p["_seq"]) if p["active"]]
    return json_response(page(items, limit, offset))


@app.get("/products/<path:product_id>")
def read_product(product_id):
    with S.lock:
        p = S.products.get(product_id)
        if p is None:
            raise not_found("no such product")
        return json_response(public_product(p))


@app.patch("/products/<path:product_id>")
def update_product(product_id):
    c = caller()
    with S.lock:
        exists = product_id in S.products
    if not exists:
        raise not_found("no such product")
    staff_only(c)
    body = json_body()
    errors: list[str] = []
    values = validate_product_fields(body, errors, creating=False)
    if errors:
        raise validation(errors)
    with S.lock:
        p = S.products.get(product_id)
        if p is None:
            raise not_found("no such product")
        p.update(values)
        out = public_product(p)
    return json_response(out)


# --------------------------------------------------------------------------- cart

def cart_view(customer_id: str) -> dict:
    lines = []
    for pid, qty in S.carts.get(customer_id, {}).items():
        p = S.products[pid]
        lines.append({"product_id": pid, "sku": p["sku"], "name": p["name"], "unit_price": p["price"],
                      "quantity": qty, "line_total": p["price"] * qty})
    return {"items": lines, "total": sum(line["line_total"] for line in lines), "currency": "usd"}


@app.get("/cart")
def get_cart():
    c = caller()
    customer_only(c)
    with S.lock:
        return json_response(cart_view(c.id))


@app.put("/cart/items/<path:product_id>")
def put_cart_item(product_id):
    c = caller()
    with S.lock:
        exists = product_id in S.products
    if not exists:
        raise not_found("no such product")
    customer_only(c)
    body = json_body()
    qty = body.get("quantity")
    if not int_in(qty, 1, 99):
        raise validation(["quantity"])
    qty = int(qty)
    with S.lock:
        p = S.products.get(product_id)
        if p is None:
            raise not_found("no such product")
        if not p["active"]:
            raise conflict("product_unavailable", "the product is inactive")
        if qty > p["stock"]:
            raise conflict("insufficient_stock", "more units than the product has in stock")
        S.carts.setdefault(c.id, {})[product_id] = qty
        return json_response(cart_view(c.id))


@app.delete("/cart/items/<path:product_id>")
def delete_cart_item(product_id):
    c = caller()
    if c.is_staff:
        with S.lock:
            exists = product_id in S.products
        if not exists:
            raise not_found("no such product")
        raise forbidden("staff have no cart")
    with S.lock:
        cart = S.carts.setdefault(c.id, {})
        if product_id not in cart:
            raise not_found("this product is not in your cart")
        del cart[product_id]
        return json_response(cart_view(c.id))


# --------------------------------------------------------------------------- orders

def visible_order(order_id: str, c: Caller) -> dict:
    with S.lock:
        o = S.orders.get(order_id)
    if o is None or (not c.is_staff and o["customer_id"] != c.id):
        raise not_found("no such order")
    return o


@app.post("/orders")
def checkout():
    c = caller()
    customer_only(c)
    errors: list[str] = []
    key = request.headers.get("Idempotency-Key")
    if key is None or not IDEM_KEY_RE.fullmatch(key):
        errors.append("Idempotency-Key")
    try:
        body = json_body()
    except ApiError as err:
        if err.status != 422:
            raise
        raise validation(errors + (err.fields or []), err.message)
    address = body.get("shipping_address")
    if not non_blank_text(address, 300):
        errors.append("shipping_address")
    if errors:
        raise validation(errors)
    fingerprint = json.dumps({"shipping_address": address})
    with S.lock:
        known = S.idempotency.get((c.id, key))
        if known is not None:
            if known[0] != fingerprint:
                raise conflict("idempotency_conflict", "this Idempotency-Key was used with a different body")
            return json_response(public_order(S.orders[known[1]]), 200)
        cart = S.carts.setdefault(c.id, {})
        if not cart:
            raise conflict("cart_empty", "the cart is empty")
        products = [(S.products[pid], qty) for pid, qty in cart.items()]
        if any(not p["active"] for p, _ in products):
            raise conflict("product_unavailable", "a product in the cart is inactive")
        if any(qty > p["stock"] for p, qty in products):
            raise conflict("insufficient_stock", "a line exceeds the product's stock")
        lines = [{"product_id": p["id"], "sku": p["sku"], "name": p["name"], "unit_price": p["price"],
                  "quantity": qty, "line_total": p["price"] * qty} for p, qty in products]
        for p, qty in products:
            p["stock"] -= qty
        o = {"id": new_id("ord"), "customer_id": c.id, "status": "pending", "items": lines,
             "total": sum(line["line_total"] for line in lines), "currency": "usd", "shipping_address": address,
             "charge_id": None, "refund_id": None, "created_at": now_iso(), "paid_at": None,
             "shipped_at": None, "cancelled_at": None, "_seq": S.next_seq()}
        S.orders[o["id"]] = o
        S.idempotency[(c.id, key)] = (fingerprint, o["id"])
        cart.clear()
        return json_response(public_order(o), 201)


@app.get("/orders")
def list_orders():
    c = caller()
    errors: list[str] = []
    status = request.args.get("status")
    if status is not None and status not in STATUSES:
        errors.append("status")
    limit, offset = pagination(errors)
    if errors:
        raise validation(errors)
    with S.lock:
        items = [public_order(o) for o in sorted(S.orders.values(), key=lambda o: -o["_seq"])
                 if (c.is_staff or o["customer_id"] == c.id) and (status is None or o["status"] == status)]
    return json_response(page(items, limit, offset))


@app.get("/orders/<path:order_id>")
def read_order(order_id):
    c = caller()
    o = visible_order(order_id, c)
    with S.lock:
        return json_response(public_order(o))


@app.post("/orders/<order_id>/pay")
def pay_order(order_id):
    c = caller()
    o = visible_order(order_id, c)
    customer_only(c)
    body = json_body()
    source = body.get("payment_source")
    if not non_blank_text(source, 100):
        raise validation(["payment_source"])
    with S.order_lock(order_id):
        with S.lock:
            if o["status"] != "pending":
                raise conflict("invalid_state", f"a {o['status']} order cannot be paid")
            amount = o["total"]
        result = provider_post("/charges", {"amount": amount, "currency": "usd", "source": source,
                                            "description": f"Order {o['id']}", "metadata": {"order_id": o["id"]}})
        charge = result.payload if isinstance(result.payload, dict) else {}
        if result.status == 402 or (result.status is not None and 200 <= result.status < 300
                                    and charge.get("status") == "declined"):
            raise ApiError(402, "payment_declined", "the payment was declined"
                           + (f" ({charge.get('failure_code')})" if charge.get("failure_code") else ""))
        if (result.status is None or not 200 <= result.status < 300 or charge.get("status") != "succeeded"
                or not isinstance(charge.get("id"), str) or not charge["id"]):
            raise unavailable()
        with S.lock:
            o["status"] = "paid"
            o["charge_id"] = charge["id"]
            o["paid_at"] = now_iso()
            return json_response(public_order(o))


@app.post("/orders/<order_id>/ship")
def ship_order(order_id):
    c = caller()
    o = visible_order(order_id, c)
    staff_only(c)
    with S.order_lock(order_id):
        with S.lock:
            if o["status"] != "paid":
                raise conflict("invalid_state", f"a {o['status']} order cannot be shipped")
            o["status"] = "shipped"
            o["shipped_at"] = now_iso()
            return json_response(public_order(o))


def restore_stock(o: dict) -> None:
    for line in o["items"]:
        p = S.products.get(line["product_id"])
        if p is not None:
            p["stock"] += line["quantity"]


@app.post("/orders/<order_id>/cancel")
def cancel_order(order_id):
    c = caller()
    o = visible_order(order_id, c)
    with S.order_lock(order_id):
        with S.lock:
            status = o["status"]
            if status == "pending":
                o["status"] = "cancelled"
                o["cancelled_at"] = now_iso()
                restore_stock(o)
                return json_response(public_order(o))
            if status != "paid":
                raise conflict("invalid_state", f"a {status} order cannot be cancelled")
            charge_id, amount = o["charge_id"], o["total"]
        result = provider_post("/refunds", {"charge": charge_id, "amount": amount})
        refund = result.payload if isinstance(result.payload, dict) else {}
        if (result.status is None or not 200 <= result.status < 300 or not isinstance(refund.get("id"), str)
                or not refund["id"]):
            raise unavailable()
        with S.lock:
            o["status"] = "refunded"
            o["refund_id"] = refund["id"]
            o["cancelled_at"] = now_iso()
            restore_stock(o)
            return json_response(public_order(o))


# --------------------------------------------------------------------------- main

def main() -> None:
    port = int(os.environ.get("PORT", "8000"))
    try:
        from waitress import serve
    except ImportError:
        app.run(host="0.0.0.0", port=port, threaded=True)
        return
    serve(app, host="0.0.0.0", port=port, threads=16, ident=None, max_request_body_size=64 * MAX_BODY)


if __name__ == "__main__":
    main()
