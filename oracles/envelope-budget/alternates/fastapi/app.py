"""Envelope budget — accounts, envelopes, transactions (FastAPI, in-memory)."""
import os
import re
from datetime import date

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from core import (ApiError, bearer_token, check_password, conflict, fmt_ts, hash_password,
                  install_handlers, is_bool, is_int, is_str, json_object, new_id, new_token,
                  next_seq, no_content, not_found, now, page, paging, unauthorized, validation)

app = FastAPI(title="Envelope budget", redirect_slashes=False, docs_url=None, redoc_url=None,
              openapi_url=None)
install_handlers(app)

USERNAME_RE = re.compile(r"[a-z0-9_]{3,32}")
DATE_RE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
MONTH_RE = re.compile(r"[0-9]{4}-(0[1-9]|1[0-2])")
KINDS = ("checking", "savings", "cash")
TYPES = ("income", "expense", "transfer")
MAX_MONEY = 1_000_000_000

users = {}          # id -> user
users_by_name = {}  # username -> id
tokens = {}         # token -> user id
accounts = {}       # id -> account
envelopes = {}      # id -> envelope
transactions = {}   # id -> transaction


def insufficient(message="the change would make a balance negative"):
    return ApiError(409, "insufficient_funds", message)


# ---------------------------------------------------------------- helpers

def non_blank(v, max_len):
    return is_str(v) and 1 <= len(v) <= max_len and v.strip() != ""


def money_ok(v, lo, hi=MAX_MONEY):
    return is_int(v) and lo <= v <= hi


def valid_date(v):
    if not is_str(v):
        return False
    m = DATE_RE.fullmatch(v)
    if not m:
        return False
    try:
        date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return False
    return True


def render_user(u):
    return {"id": u["id"], "username": u["username"], "created_at": fmt_ts(u["created_at"])}


def current_user(request: Request):
    token = bearer_token(request)
    if token is None or token not in tokens:
        raise unauthorized()
    return users[tokens[token]]


def render_account(a):
    return {"id": a["id"], "name": a["name"], "kind": a["kind"],
            "opening_balance": a["opening_balance"], "balance": a["balance"],
            "created_at": fmt_ts(a["created_at"])}


def render_envelope(e):
    return {"id": e["id"], "name": e["name"], "monthly_budget": e["monthly_budget"],
            "balance": e["balance"], "archived": e["archived"],
            "created_at": fmt_ts(e["created_at"])}


TX_FIELDS = ("id", "type", "date", "amount", "account_id", "envelope_id", "from_envelope_id",
             "to_envelope_id", "memo")


def render_tx(t):
    out = {k: t[k] for k in TX_FIELDS}
    out["created_at"] = fmt_ts(t["created_at"])
    return out


def own(store, user, rid, what):
    r = store.get(rid)
    if r is None or r["owner_id"] != user["id"]:
        raise not_found(what + " not found")
    return r


def owned_by(store, user):
    return sorted((r for r in store.values() if r["owner_id"] == user["id"]),
                  key=lambda r: r["seq"])


def unassigned(user):
    acc = sum(a["balance"] for a in accounts.values() if a["owner_id"] == user["id"])
    env = sum(e["balance"] for e in envelopes.values() if e["owner_id"] == user["id"])
    return acc - env


def envelope_ids(t):
    return [x for x in (t["envelope_id"], t["from_envelope_id"], t["to_envelope_id"]) if x]


def name_taken(user, name, except_id=None):
    key = name.lower()
    return any(e["owner_id"] == user["id"] and e["id"] != except_id and e["name"].lower() == key
               for e in envelopes.values())


# ---------------------------------------------------------------- system & users

@app.get("/health")
async def health():
    return {"status": "ok"}


@app.post("/users", status_code=201)
async def register(request: Request):
    body = await json_object(request)
    bad = []
    username = body.get("username")
    password = body.get("password")
    if not is_str(username) or not USERNAME_RE.fullmatch(username):
        bad.append("username")
    if not is_str(password) or not (8 <= len(password) <= 128):
        bad.append("password")
    if bad:
        raise validation(bad)
    if username in users_by_name:
        raise conflict("username is taken")
    salt, digest = hash_password(password)
    user = {"id": new_id(), "username": username, "salt": salt, "digest": digest,
            "created_at": now()}
    users[user["id"]] = user
    users_by_name[username] = user["id"]
    return JSONResponse(render_user(user), status_code=201)


@app.post("/auth/token")
async def login(request: Request):
    body = await json_object(request)
    bad = [f for f in ("username", "password") if not is_str(body.get(f))]
    if bad:
        raise validation(bad)
    uid = users_by_name.get(body["username"])
    user = users.get(uid) if uid else None
    if user is None or not check_password(body["password"], user["salt"], user["digest"]):
        raise unauthorized("wrong username or password")
    token = new_token()
    tokens[token] = user["id"]
    return {"token": token, "token_type": "bearer", "user": render_user(user)}


@app.get("/me")
async def me(request: Request):
    return render_user(current_user(request))


# ---------------------------------------------------------------- accounts

@app.post("/accounts", status_code=201)
async def create_account(request: Request):
    user = current_user(request)
    body = await json_object(request)
    bad = []
    if not non_blank(body.get("name"), 60):
        bad.append("name")
    kind = body.get("kind", "checking")
    if not is_str(kind) or kind not in KINDS:
        bad.append("kind")
    opening = body.get("opening_balance", 0)
    if not money_ok(opening, 0):
        bad.append("opening_balance")
    if bad:
        raise validation(bad)
    a = {"id": new_id(), "owner_id": user["id"], "name": body["name"], "kind": kind,
         "opening_balance": opening, "balance": opening, "created_at": now(), "seq": next_seq()}
    accounts[a["id"]] = a
    return JSONResponse(render_account(a), status_code=201)


@app.get("/accounts")
async def list_accounts(request: Request):
    user = current_user(request)
    return {"items": [render_account(a) for a in owned_by(accounts, user)]}


@app.get("/accounts/{account_id}")
async def get_account(account_id: str, request: Request):
    user = current_user(request)
    return render_account(own(accounts, user, account_id, "account"))


@app.patch("/accounts/{account_id}")
async def update_account(account_id: str, request: Request):
    user = current_user(request)
    a = own(accounts, user, account_id, "account")
    body = await json_object(request)
    bad = []
    if "name" in body and not non_blank(body["name"], 60):
        bad.append("name")
    if "kind" in body and (not is_str(body["kind"]) or body["kind"] not in KINDS):
        bad.append("kind")
    if bad:
        raise validation(bad)
    for k in ("name", "kind"):
        if k in body:
            a[k] = body[k]
    return render_account(a)


@app.delete("/accounts/{account_id}", status_code=204)
async def delete_account(account_id: str, request: Request):
    user = current_user(request)
    a = own(accounts, user, account_id, "account")
    if any(t["account_id"] == a["id"] for t in transactions.values()):
        raise conflict("transactions refer to this account")
    if a["balance"] != 0:
        raise conflict("the account's balance is not 0")
    del accounts[a["id"]]
    return no_content()


# ---------------------------------------------------------------- envelopes

@app.post("/envelopes", status_code=201)
async def create_envelope(request: Request):
    user = current_user(request)
    body = await json_object(request)
    bad = []
    name = body.get("name")
    if not non_blank(name, 60):
        bad.append("name")
    budget = body.get("monthly_budget", 0)
    if not money_ok(budget, 0):
        bad.append("monthly_budget")
    if bad:
        raise validation(bad)
    if name_taken(user, name):
        raise conflict("an envelope with this name exists")
    e = {"id": new_id(), "owner_id": user["id"], "name": name, "monthly_budget": budget,
         "balance": 0, "archived": False, "created_at": now(), "seq": next_seq()}
    envelopes[e["id"]] = e
    return JSONResponse(render_envelope(e), status_code=201)


@app.get("/envelopes")
async def list_envelopes(request: Request):
    user = current_user(request)
    raw = request.query_params.get("include_archived")
    if raw is not None and raw not in ("true", "false"):
        raise validation(["include_archived"])
    include = raw == "true"
    return {"items": [render_envelope(e) for e in owned_by(envelopes, user)
                      if include or not e["archived"]]}


@app.get("/envelopes/{envelope_id}")
async def get_envelope(envelope_id: str, request: Request):
    user = current_user(request)
    return render_envelope(own(envelopes, user, envelope_id, "envelope"))


@app.patch("/envelopes/{envelope_id}")
async def update_envelope(envelope_id: str, request: Request):
    user = current_user(request)
    e = own(envelopes, user, envelope_id, "envelope")
    body = await json_object(request)
    bad = []
    if "name" in body and not non_blank(body["name"], 60):
        bad.append("name")
    if "monthly_budget" in body and not money_ok(body["monthly_budget"], 0):
        bad.append("monthly_budget")
    if "archived" in body and not is_bool(body["archived"]):
        bad.append("archived")
    if bad:
        raise validation(bad)
    if "name" in body and name_taken(user, body["name"], e["id"]):
        raise conflict("an envelope with this name exists")
    if body.get("archived") is True and e["balance"] != 0:
        raise conflict("an envelope can only be archived with a balance of 0")
    for k in ("name", "monthly_budget", "archived"):
        if k in body:
            e[k] = body[k]
    return render_envelope(e)


@app.delete("/envelopes/{envelope_id}", status_code=204)
async def delete_envelope(envelope_id: str, request: Request):
    user = current_user(request)
    e = own(envelopes, user, envelope_id, "envelope")
    if any(e["id"] in envelope_ids(t) for t in transactions.values()):
        raise conflict("transactions refer to this envelope")
    del envelopes[e["id"]]
    return no_content()


# ---------------------------------------------------------------- transactions

def own_ref(store, user, value):
    """The caller's account/envelope named by value, or None."""
    if not is_str(value):
        return None
    r = store.get(value)
    if r is None or r["owner_id"] != user["id"]:
        return None
    return r


@app.post("/transactions", status_code=201)
async def create_transaction(request: Request):
    user = current_user(request)
    body = await json_object(request)
    type_ = body.get("type")
    if not is_str(type_) or type_ not in TYPES:
        raise validation(["type"], "type must be income, expense or transfer")
    bad = []
    if not valid_date(body.get("date")):
        bad.append("date")
    amount = body.get("amount")
    if not money_ok(amount, 1):
        bad.append("amount")
    memo = body.get("memo", "")
    if not is_str(memo) or len(memo) > 200:
        bad.append("memo")
    account = envelope = from_env = to_env = None
    if type_ in ("income", "expense"):
        account = own_ref(accounts, user, body.get("account_id"))
        if account is None:
            bad.append("account_id")
        if type_ == "income":
            if body.get("envelope_id") is not None:
                envelope = own_ref(envelopes, user, body["envelope_id"])
                if envelope is None:
                    bad.append("envelope_id")
        else:
            envelope = own_ref(envelopes, user, body.get("envelope_id"))
            if envelope is None:
                bad.append("envelope_id")
    else:
        f, t = body.get("from_envelope_id"), body.get("to_envelope_id")
        if f is None and t is None:
            bad += ["from_envelope_id", "to_envelope_id"]
        elif f is not None and t is not None and f == t:
            bad += ["from_envelope_id", "to_envelope_id"]
        else:
            if f is not None:
                from_env = own_ref(envelopes, user, f)
                if from_env is None:
                    bad.append("from_envelope_id")
            if t is not None:
                to_env = own_ref(envelopes, user, t)
                if to_env is None:
                    bad.append("to_envelope_id")
    if bad:
        raise validation(bad)
    if any(e is not None and e["archived"] for e in (envelope, from_env, to_env)):
        raise conflict("the transaction names an archived envelope")
    if type_ == "expense":
        if account["balance"] < amount or envelope["balance"] < amount:
            raise insufficient()
    elif type_ == "transfer":
        available = from_env["balance"] if from_env is not None else unassigned(user)
        if available < amount:
            raise insufficient()
    # apply
    if type_ == "income":
        account["balance"] += amount
        if envelope is not None:
            envelope["balance"] += amount
    elif type_ == "expense":
        account["balance"] -= amount
        envelope["balance"] -= amount
    else:
        if from_env is not None:
            from_env["balance"] -= amount
        if to_env is not None:
            to_env["balance"] += amount
    tx = {"id": new_id(), "owner_id": user["id"], "type": type_, "date": body["date"],
          "amount": amount, "account_id": account["id"] if account else None,
          "envelope_id": envelope["id"] if envelope else None,
          "from_envelope_id": from_env["id"] if from_env else None,
          "to_envelope_id": to_env["id"] if to_env else None,
          "memo": memo, "created_at": now(), "seq": next_seq()}
    transactions[tx["id"]] = tx
    return JSONResponse(render_tx(tx), status_code=201)


@app.get("/transactions")
async def list_transactions(request: Request):
    user = current_user(request)
    bad = []
    limit, offset = paging(request, bad)
    q = request.query_params
    type_ = q.get("type")
    if type_ is not None and type_ not in TYPES:
        bad.append("type")
    month = q.get("month")
    if month is not None and not MONTH_RE.fullmatch(month):
        bad.append("month")
    if bad:
        raise validation(bad)
    account_id = q.get("account_id")
    envelope_id = q.get("envelope_id")
    items = [t for t in transactions.values() if t["owner_id"] == user["id"]]
    if type_ is not None:
        items = [t for t in items if t["type"] == type_]
    if account_id is not None:
        items = [t for t in items if t["account_id"] == account_id]
    if envelope_id is not None:
        items = [t for t in items if envelope_id in envelope_ids(t)]
    if month is not None:
        items = [t for t in items if t["date"][:7] == month]
    items.sort(key=lambda t: (t["date"], t["seq"]))
    return page(items, limit, offset, render_tx)


@app.get("/transactions/{transaction_id}")
async def get_transaction(transaction_id: str, request: Request):
    user = current_user(request)
    return render_tx(own(transactions, user, transaction_id, "transaction"))


@app.delete("/transactions/{transaction_id}", status_code=204)
async def delete_transaction(transaction_id: str, request: Request):
    user = current_user(request)
    t = own(transactions, user, transaction_id, "transaction")
    named = [envelopes[i] for i in envelope_ids(t) if i in envelopes]
    if any(e["archived"] for e in named):
        raise conflict("the transaction names an archived envelope")
    amount = t["amount"]
    acc = accounts.get(t["account_id"]) if t["account_id"] else None
    env = envelopes.get(t["envelope_id"]) if t["envelope_id"] else None
    if t["type"] == "income":
        if acc["balance"] < amount:
            raise insufficient()
        if env is not None:
            if env["balance"] < amount:
                raise insufficient()
        elif unassigned(user) < amount:
            raise insufficient()
        acc["balance"] -= amount
        if env is not None:
            env["balance"] -= amount
    elif t["type"] == "expense":
        acc["balance"] += amount
        env["balance"] += amount
    else:
        f = envelopes.get(t["from_envelope_id"]) if t["from_envelope_id"] else None
        to = envelopes.get(t["to_envelope_id"]) if t["to_envelope_id"] else None
        available = to["balance"] if to is not None else unassigned(user)
        if available < amount:
            raise insufficient()
        if to is not None:
            to["balance"] -= amount
        if f is not None:
            f["balance"] += amount
    del transactions[t["id"]]
    return no_content()


# ---------------------------------------------------------------- reports

@app.get("/summary")
async def summary(request: Request):
    user = current_user(request)
    acc = sum(a["balance"] for a in accounts.values() if a["owner_id"] == user["id"])
    env = sum(e["balance"] for e in envelopes.values() if e["owner_id"] == user["id"])
    return {"accounts_total": acc, "envelopes_total": env, "unassigned": acc - env}


@app.get("/months/{month}")
async def month_report(month: str, request: Request):
    user = current_user(request)
    if not MONTH_RE.fullmatch(month):
        raise validation(["month"])
    txs = [t for t in transactions.values()
           if t["owner_id"] == user["id"] and t["date"][:7] == month]
    income = sum(t["amount"] for t in txs if t["type"] == "income")
    spent = sum(t["amount"] for t in txs if t["type"] == "expense")
    rows = []
    for e in owned_by(envelopes, user):
        assigned = 0
        e_spent = 0
        for t in txs:
            if t["type"] == "income" and t["envelope_id"] == e["id"]:
                assigned += t["amount"]
            elif t["type"] == "transfer":
                if t["to_envelope_id"] == e["id"]:
                    assigned += t["amount"]
                if t["from_envelope_id"] == e["id"]:
                    assigned -= t["amount"]
            elif t["type"] == "expense" and t["envelope_id"] == e["id"]:
                e_spent += t["amount"]
        rows.append({"envelope_id": e["id"], "name": e["name"],
                     "monthly_budget": e["monthly_budget"], "assigned": assigned,
                     "spent": e_spent, "remaining": e["monthly_budget"] - e_spent,
                     "over_budget": e_spent > e["monthly_budget"]})
    return {"month": month, "income": income, "spent": spent, "envelopes": rows}


if __name__ == "__main__":
    uvicorn.run(app, host="0.0.0.0", port=int(os.environ.get("PORT", "8000")),
                log_level="warning", access_log=False)
