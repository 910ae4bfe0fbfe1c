"""Reference implementation of the envelope-budget task: a candidate that passes the whole oracle.

Flask with in-memory storage behind one lock. Balances are kept as running totals that every
transaction (and every deletion of one) updates under the lock, so a request applies
completely or not at all. Checks follow spec.md's precedence: authenticate (401), find the
caller's resource in the path (404), validate (422), then state rules (409 conflict before
409 insufficient_funds).
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
from datetime import date, datetime, timezone
from typing import Any

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

app = Flask(__name__)

LOCK = threading.RLock()
USERS: dict[str, dict[str, Any]] = {}          # user id -> user (with salt and password hash)
USER_IDS: dict[str, str] = {}                  # username -> user id
TOKENS: dict[str, str] = {}                    # token -> user id
ACCOUNTS: dict[str, dict[str, Any]] = {}       # account id -> account (insertion = creation order)
ENVELOPES: dict[str, dict[str, Any]] = {}      # envelope id -> envelope (insertion = creation order)
TRANSACTIONS: dict[str, dict[str, Any]] = {}   # transaction id -> transaction (insertion = creation order)

USERNAME = re.compile(r"^[a-z0-9_]{3,32}$")
DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
MONTH = re.compile(r"^[0-9]{4}-(0[1-9]|1[0-2])$")
INTEGER = re.compile(r"^-?[0-9]+$")
KINDS = ("checking", "savings", "cash")
TYPES = ("income", "expense", "transfer")
MAX_AMOUNT = 1_000_000_000
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


def not_found(what: str) -> ApiError:
    return ApiError(404, "not_found", f"{what} not found")


def conflict(message: str) -> ApiError:
    return ApiError(409, "conflict", message)


def insufficient(message: str) -> ApiError:
    return ApiError(409, "insufficient_funds", message)


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


def json_body() -> dict[str, Any]:
    """The request body as a JSON object, or 422."""
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
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            self.fail(name)
            return MISSING
        return value

    def boolean(self, name: str) -> Any:
        value = self.data.get(name, MISSING)
        if value is MISSING:
            return MISSING
        if not isinstance(value, bool):
            self.fail(name)
            return MISSING
        return value

    def check(self) -> None:
        if self.bad:
            raise invalid(self.bad, "invalid fields: " + ", ".join(self.bad))


def valid_date(value: Any) -> bool:
    if not isinstance(value, str) or not DATE.match(value):
        return False
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


def paging(extra_bad: list[str]) -> tuple[int, int]:
    """limit and offset from the query string (422 naming each invalid one, with extra_bad)."""
    bad = list(extra_bad)
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


# ---------------------------------------------------------------------------- lookups


def current_user() -> dict[str, Any]:
    header = request.headers.get("Authorization", "")
    parts = header.split(None, 1)
    if len(parts) != 2 or parts[0].lower() != "bearer":
        raise unauthorized("send Authorization: Bearer <token>")
    user_id = TOKENS.get(parts[1].strip())
    if user_id is None or user_id not in USERS:
        raise unauthorized("unknown token")
    return USERS[user_id]


def own(table: dict[str, dict[str, Any]], user: dict[str, Any], item_id: str, what: str) -> dict[str, Any]:
    item = table.get(item_id)
    if item is None or item["owner_id"] != user["id"]:
        raise not_found(what)
    return item


def hash_password(password: str, salt: str) -> str:
    return hashlib.sha256((salt + password).encode()).hexdigest()


def unassigned(user_id: str) -> int:
    accounts = sum(a["balance"] for a in ACCOUNTS.values() if a["owner_id"] == user_id)
    envelopes = sum(e["balance"] for e in ENVELOPES.values() if e["owner_id"] == user_id)
    return accounts - envelopes


def referenced(kind: str, item_id: str) -> bool:
    fields = ("account_id",) if kind == "account" else ("envelope_id", "from_envelope_id", "to_envelope_id")
    return any(t[f] == item_id for t in TRANSACTIONS.values() for f in fields)


# ---------------------------------------------------------------------------- views


def user_view(user: dict[str, Any]) -> dict[str, Any]:
    return {k: user[k] for k in ("id", "username", "created_at")}


def account_view(account: dict[str, Any]) -> dict[str, Any]:
    return {k: account[k] for k in ("id", "name", "kind", "opening_balance", "balance", "created_at")}


def envelope_view(envelope: dict[str, Any]) -> dict[str, Any]:
    return {k: envelope[k] for k in ("id", "name", "monthly_budget", "balance", "archived", "created_at")}


TRANSACTION_FIELDS = ("id", "type", "date", "amount", "account_id", "envelope_id", "from_envelope_id",
                      "to_envelope_id", "memo", "created_at")


def transaction_view(tx: dict[str, Any]) -> dict[str, Any]:
    return {k: tx[k] for k in TRANSACTION_FIELDS}


# ---------------------------------------------------------------------------- system and users


@app.get("/health")
def health() -> Response:
    return reply({"status": "ok"})


@app.post("/users")
def register() -> Response:
    v = Validator(json_body())
    username = v.text("username", required=True, min_len=3, max_len=32, pattern=USERNAME)
    password = v.text("password", required=True, min_len=8, max_len=128)
    v.check()
    with LOCK:
        if username in USER_IDS:
            raise conflict("username already taken")
        salt = secrets.token_hex(8)
        user = {"id": new_id("u"), "username": username, "created_at": now(), "salt": salt,
                "password_hash": hash_password(password, salt)}
        USERS[user["id"]] = user
        USER_IDS[username] = user["id"]
        return reply(user_view(user), 201)


@app.post("/auth/token")
def login() -> Response:
    v = Validator(json_body())
    username = v.text("username", required=True, min_len=0, max_len=10_000)
    password = v.text("password", required=True, min_len=0, max_len=10_000)
    v.check()
    with LOCK:
        user = USERS.get(USER_IDS.get(username, ""))
        if user is None or not hmac.compare_digest(hash_password(password, user["salt"]), user["password_hash"]):
            raise unauthorized("wrong username or password")
        token = secrets.token_urlsafe(32)
        TOKENS[token] = user["id"]
        return reply({"token": token, "token_type": "bearer", "user": user_view(user)})


@app.get("/me")
def me() -> Response:
    with LOCK:
        return reply(user_view(current_user()))


# ---------------------------------------------------------------------------- accounts


@app.get("/accounts")
def list_accounts() -> Response:
    with LOCK:
        user = current_user()
        return reply({"items": [account_view(a) for a in ACCOUNTS.values() if a["owner_id"] == user["id"]]})


@app.post("/accounts")
def create_account() -> Response:
    with LOCK:
        user = current_user()
        v = Validator(json_body())
        name = v.text("name", required=True, max_len=60, non_blank=True)
        kind = v.text("kind", required=False, max_len=16, choices=KINDS)
        opening = v.integer("opening_balance", required=False, low=0, high=MAX_AMOUNT)
        v.check()
        opening = 0 if opening is MISSING else opening
        account = {"id": new_id("acc"), "owner_id": user["id"], "name": name,
                   "kind": "checking" if kind is MISSING else kind, "opening_balance": opening,
                   "balance": opening, "created_at": now()}
        ACCOUNTS[account["id"]] = account
        return reply(account_view(account), 201)


@app.get("/accounts/<account_id>")
def get_account(account_id: str) -> Response:
    with LOCK:
        user = current_user()
        return reply(account_view(own(ACCOUNTS, user, account_id, "account")))


@app.patch("/accounts/<account_id>")
def update_account(account_id: str) -> Response:
    with LOCK:
        user = current_user()
        account = own(ACCOUNTS, user, account_id, "account")
        v = Validator(json_body())
        name = v.text("name", required=False, max_len=60, non_blank=True)
        kind = v.text("kind", required=False, max_len=16, choices=KINDS)
        v.check()
        if name is not MISSING:
            account["name"] = name
        if kind is not MISSING:
            account["kind"] = kind
        return reply(account_view(account))


@app.delete("/accounts/<account_id>")
def delete_account(account_id: str) -> Response:
    with LOCK:
        user = current_user()
        account = own(ACCOUNTS, user, account_id, "account")
        if referenced("account", account_id):
            raise conflict("transactions refer to this account")
        if account["balance"] != 0:
            raise conflict("the account's balance is not 0")
        del ACCOUNTS[account_id]
        return no_content()


# ---------------------------------------------------------------------------- envelopes


def name_taken(user_id: str, name: str, except_id: str | None = None) -> bool:
    folded = name.casefold()
    return any(e["owner_id"] == user_id and e["id"] != except_id and e["name"].casefold() == folded
               for e in ENVELOPES.values())


@app.get("/envelopes")
def list_envelopes() -> Response:
    with LOCK:
        user = current_user()
        flag = request.args.get("include_archived", "false")
        if flag not in ("true", "false"):
            raise invalid(["include_archived"], "include_archived must be true or false")
        items = [envelope_view(e) for e in ENVELOPES.values()
                 if e["owner_id"] == user["id"] and (flag == "true" or not e["archived"])]
        return reply({"items": items})


@app.post("/envelopes")
def create_envelope() -> Response:
    with LOCK:
        user = current_user()
        v = Validator(json_body())
        name = v.text("name", required=True, max_len=60, non_blank=True)
        budget = v.integer("monthly_budget", required=False, low=0, high=MAX_AMOUNT)
        v.check()
        if name_taken(user["id"], name):
            raise conflict("an envelope with this name exists")
        envelope = {"id": new_id("env"), "owner_id": user["id"], "name": name,
                    "monthly_budget": 0 if budget is MISSING else budget, "balance": 0,
                    "archived": False, "created_at": now()}
        ENVELOPES[envelope["id"]] = envelope
        return reply(envelope_view(envelope), 201)


@app.get("/envelopes/<envelope_id>")
def get_envelope(envelope_id: str) -> Response:
    with LOCK:
        user = current_user()
        return reply(envelope_view(own(ENVELOPES, user, envelope_id, "envelope")))


@app.patch("/envelopes/<envelope_id>")
def update_envelope(envelope_id: str) -> Response:
    with LOCK:
        user = current_user()
        envelope = own(ENVELOPES, user, envelope_id, "envelope")
        v = Validator(json_body())
        name = v.text("name", required=False, max_len=60, non_blank=True)
        budget = v.integer("monthly_budget", required=False, low=0, high=MAX_AMOUNT)
        archived = v.boolean("archived")
        v.check()
        if name is not MISSING and name_taken(user["id"], name, except_id=envelope_id):
            raise conflict("an envelope with this name exists")
        if archived is True and envelope["balance"] != 0:
            raise conflict("only an envelope with balance 0 can be archived")
        if name is not MISSING:
            envelope["name"] = name
        if budget is not MISSING:
            envelope["monthly_budget"] = budget
        if archived is not MISSING:
            envelope["archived"] = archived
        return reply(envelope_view(envelope))


@app.delete("/envelopes/<envelope_id>")
def delete_envelope(envelope_id: str) -> Response:
    with LOCK:
        user = current_user()
        own(ENVELOPES, user, envelope_id, "envelope")
        if referenced("envelope", envelope_id):
            raise conflict("transactions refer to this envelope")
        del ENVELOPES[envelope_id]
        return no_content()


# ---------------------------------------------------------------------------- transactions


def effects(tx: dict[str, Any], sign: int) -> tuple[dict[str, int], dict[str, int], int]:
    """Balance deltas of applying (sign=1) or undoing (sign=-1) a transaction.

    Returns (account id -> delta, envelope id -> delta, unassigned delta).
    """
    amount = tx["amount"] * sign
    accounts: dict[str, int] = {}
    envelopes: dict[str, int] = {}
    free = 0
    if tx["type"] == "income":
        accounts[tx["account_id"]] = amount
        if tx["envelope_id"] is not None:
            envelopes[tx["envelope_id"]] = amount
        else:
            free += amount
    elif tx["type"] == "expense":
        accounts[tx["account_id"]] = -amount
        envelopes[tx["envelope_id"]] = -amount
    else:
        if tx["from_envelope_id"] is not None:
            envelopes[tx["from_envelope_id"]] = -amount
        else:
            free -= amount
        if tx["to_envelope_id"] is not None:
            envelopes[tx["to_envelope_id"]] = envelopes.get(tx["to_envelope_id"], 0) + amount
        else:
            free += amount
    return accounts, envelopes, free


def apply(tx: dict[str, Any], sign: int, user_id: str) -> None:
    """Apply or undo a transaction: 409 conflict/insufficient_funds, else update every balance."""
    accounts, envelopes, free = effects(tx, sign)
    if any(ENVELOPES[e]["archived"] for e in envelopes):
        raise conflict("an archived envelope's balance cannot change")
    short = [a for a, d in accounts.items() if ACCOUNTS[a]["balance"] + d < 0]
    short += [e for e, d in envelopes.items() if ENVELOPES[e]["balance"] + d < 0]
    if short or unassigned(user_id) + free < 0:
        raise insufficient("a balance would become negative")
    for a, d in accounts.items():
        ACCOUNTS[a]["balance"] += d
    for e, d in envelopes.items():
        ENVELOPES[e]["balance"] += d


def owned_ref(user_id: str, table: dict[str, dict[str, Any]], value: Any) -> bool:
    return isinstance(value, str) and value in table and table[value]["owner_id"] == user_id


@app.post("/transactions")
def create_transaction() -> Response:
    with LOCK:
        user = current_user()
        data = json_body()
        kind = data.get("type", MISSING)
        if not isinstance(kind, str) or kind not in TYPES:
            raise invalid(["type"], "type must be income, expense or transfer")
        v = Validator(data)
        tx_date = data.get("date", MISSING)
        if not valid_date(tx_date):
            v.fail("date")
        amount = v.integer("amount", required=True, low=1, high=MAX_AMOUNT)
        memo = v.text("memo", required=False, min_len=0, max_len=200)
        tx = {"account_id": None, "envelope_id": None, "from_envelope_id": None, "to_envelope_id": None}
        if kind in ("income", "expense"):
            account_id = data.get("account_id", MISSING)
            if not owned_ref(user["id"], ACCOUNTS, account_id):
                v.fail("account_id")
            else:
                tx["account_id"] = account_id
            envelope_id = data.get("envelope_id", MISSING)
            if kind == "income" and envelope_id in (MISSING, None):
                pass
            elif not owned_ref(user["id"], ENVELOPES, envelope_id):
                v.fail("envelope_id")
            else:
                tx["envelope_id"] = envelope_id
        else:
            sides = {}
            for side in ("from_envelope_id", "to_envelope_id"):
                value = data.get(side, MISSING)
                if value in (MISSING, None):
                    continue
                sides[side] = value
                if not owned_ref(user["id"], ENVELOPES, value):
                    v.fail(side)
                else:
                    tx[side] = value
            if not sides or (len(sides) == 2 and sides["from_envelope_id"] == sides["to_envelope_id"]):
                v.fail("from_envelope_id")
                v.fail("to_envelope_id")
        v.check()
        tx.update({"id": new_id("tx"), "owner_id": user["id"], "type": kind, "date": tx_date, "amount": amount,
                   "memo": "" if memo is MISSING else memo, "created_at": now()})
        apply(tx, 1, user["id"])
        TRANSACTIONS[tx["id"]] = tx
        return reply(transaction_view(tx), 201)


@app.get("/transactions")
def list_transactions() -> Response:
    with LOCK:
        user = current_user()
        bad = []
        kind = request.args.get("type")
        if kind is not None and kind not in TYPES:
            bad.append("type")
        month = request.args.get("month")
        if month is not None and not MONTH.match(month):
            bad.append("month")
        limit, offset = paging(bad)
        account_id = request.args.get("account_id")
        envelope_id = request.args.get("envelope_id")
        matches = []
        for tx in TRANSACTIONS.values():
            if tx["owner_id"] != user["id"]:
                continue
            if kind is not None and tx["type"] != kind:
                continue
            if month is not None and not tx["date"].startswith(month + "-"):
                continue
            if account_id is not None and tx["account_id"] != account_id:
                continue
            if envelope_id is not None and envelope_id not in (tx["envelope_id"], tx["from_envelope_id"], tx["to_envelope_id"]):
                continue
            matches.append(tx)
        matches.sort(key=lambda t: t["date"])  # stable: creation order within a date
        items = [transaction_view(t) for t in matches[offset:offset + limit]]
        return reply({"items": items, "total": len(matches), "limit": limit, "offset": offset})


@app.get("/transactions/<transaction_id>")
def get_transaction(transaction_id: str) -> Response:
    with LOCK:
        user = current_user()
        return reply(transaction_view(own(TRANSACTIONS, user, transaction_id, "transaction")))


@app.delete("/transactions/<transaction_id>")
def delete_transaction(transaction_id: str) -> Response:
    with LOCK:
        user = current_user()
        tx = own(TRANSACTIONS, user, transaction_id, "transaction")
        apply(tx, -1, user["id"])
        del TRANSACTIONS[transaction_id]
        return no_content()


# ---------------------------------------------------------------------------- reports


@app.get("/summary")
def summary() -> Response:
    with LOCK:
        user = current_user()
        accounts = sum(a["balance"] for a in ACCOUNTS.values() if a["owner_id"] == user["id"])
        envelopes = sum(e["balance"] for e in ENVELOPES.values() if e["owner_id"] == user["id"])
        return reply({"accounts_total": accounts, "envelopes_total": envelopes, "unassigned": accounts - envelopes})


@app.get("/months/<month>")
def month_report(month: str) -> Response:
    with LOCK:
        user = current_user()
        if not MONTH.match(month):
            raise invalid(["month"], "month must be YYYY-MM")
        txs = [t for t in TRANSACTIONS.values() if t["owner_id"] == user["id"] and t["date"].startswith(month + "-")]
        rows = []
        for e in ENVELOPES.values():
            if e["owner_id"] != user["id"]:
                continue
            assigned = sum(t["amount"] for t in txs if t["type"] == "income" and t["envelope_id"] == e["id"])
            assigned += sum(t["amount"] for t in txs if t["type"] == "transfer" and t["to_envelope_id"] == e["id"])
            assigned -= sum(t["amount"] for t in txs if t["type"] == "transfer" and t["from_envelope_id"] == e["id"])
            spent = sum(t["amount"] for t in txs if t["type"] == "expense" and t["envelope_id"] == e["id"])
            rows.append({"envelope_id": e["id"], "name": e["name"], "monthly_budget": e["monthly_budget"],
                         "assigned": assigned, "spent": spent, "remaining": e["monthly_budget"] - spent,
                         "over_budget": spent > e["monthly_budget"]})
        return reply({
            "month": month,
            "income": sum(t["amount"] for t in txs if t["type"] == "income"),
            "spent": sum(t["amount"] for t in txs if t["type"] == "expense"),
            "envelopes": rows,
        })


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=int(os.environ.get("PORT", "8000")), threaded=True)
