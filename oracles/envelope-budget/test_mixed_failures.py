"""Failed requests change nothing, also when valid fields travel with the failing one.

spec.md, Errors: "A request that fails changes nothing." (and Running: "a request either applies
completely or not at all"). Each item sends a request whose other fields are all valid beside
the ONE that makes it fail (422, 409, 404 or 401), then reads the budget back (the object, the
lists, /summary, /months, the transaction list, login) and checks that none of the valid fields
was written and nothing was created.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

pytestmark = [pytest.mark.tier("r2")]


def name(prefix: str) -> str:
    """A fresh account or envelope name (envelope names are unique per user, case-insensitively)."""
    return f"{prefix} {uuid.uuid4().hex[:8]}"


def snapshot(api: Any, user: Any, month: str = "2025-03") -> dict[str, Any]:
    """Everything a failed request must leave as it was: accounts, envelopes, transactions, totals, a month."""
    accounts = api.get(user, "/accounts")["items"]
    envelopes = api.get(user, "/envelopes?include_archived=true")["items"]
    keys = ("id", "name", "kind", "opening_balance", "balance", "monthly_budget", "archived")
    report = api.month(user, month)
    return {
        "accounts": [{k: a.get(k) for k in keys if k in a} for a in accounts],
        "envelopes": [{k: e.get(k) for k in keys if k in e} for e in envelopes],
        "transactions": api.tx_ids(user, limit=100),
        "summary": {k: api.summary(user).get(k) for k in ("accounts_total", "envelopes_total", "unassigned")},
        "month": {"income": report.get("income"), "spent": report.get("spent"),
                  "envelopes": [{k: row.get(k) for k in ("envelope_id", "name", "monthly_budget", "assigned", "spent")} for row in report.get("envelopes", [])]},
    }


def same_problem(before: dict[str, Any], after: dict[str, Any], what: str) -> str | None:
    """Why ``after`` differs from ``before`` (named by part), or None."""
    changed = [part for part in before if before[part] != after[part]]
    if not changed:
        return None
    return f"{what} changed {', '.join(changed)}:\n" + "\n".join(f"  {p}: before {before[p]}\n  {p}: after  {after[p]}" for p in changed)


# ---------------------------------------------------------------- POST /users


@pytest.mark.requirement("R2", "R27")
@pytest.mark.category("validation")
@pytest.mark.parametrize("password", ["seven77", "p" * 129, None, 12345678], ids=["too-short", "too-long", "null", "number"])
def test_mixed_registration_with_an_invalid_password_creates_no_user(api, http, password):
    username = f"mixreg_{uuid.uuid4().hex[:12]}"
    r = http.post("/users", json={"username": username, "password": password})
    problem = api.validation_problem(r, ["password"], f"registering a valid username with password={str(password)[:12]!r}")
    assert problem is None, problem
    r = http.post("/users", json={"username": username, "password": "a valid password"})
    assert r.status_code == 201, f"the username must still be free after the rejected registration: {api.brief(r)}"


@pytest.mark.requirement("R2", "R27")
@pytest.mark.category("state")
def test_mixed_registration_with_a_taken_username_keeps_the_first_user(api, http, alice):
    me = api.get(alice, "/me")
    api.error(http.post("/users", json={"username": alice.username, "password": "a different valid password"}), 409, "conflict", "registering a taken username with a new valid password")
    api.error(http.post("/auth/token", json={"username": alice.username, "password": "a different valid password"}), 401, "unauthorized",
              "logging in with the password the 409 must not have stored")
    r = http.post("/auth/token", json={"username": alice.username, "password": alice.password})
    assert r.status_code == 200 and r.json().get("user", {}).get("id") == me.get("id"), f"the first user's password must still log in as that user: {api.brief(r)}"


# ---------------------------------------------------------------- POST /accounts, PATCH /accounts/{id}

INVALID_ACCOUNT = {"name": "   ", "kind": "credit", "opening_balance": 10.5}


@pytest.mark.requirement("R5", "R27")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field", list(INVALID_ACCOUNT), ids=list(INVALID_ACCOUNT))
def test_mixed_account_creation_with_one_invalid_field_creates_nothing(api, http, alice, field):
    before = snapshot(api, alice)
    body = {"name": name("Savings"), "kind": "savings", "opening_balance": 5_000, field: INVALID_ACCOUNT[field]}
    problem = api.validation_problem(http.post("/accounts", json=body, headers=alice.headers), [field], f"an account whose only invalid field is {field}")
    assert problem is None, problem
    problem = same_problem(before, snapshot(api, alice), f"an account rejected for {field}")
    assert problem is None, problem


@pytest.mark.requirement("R7", "R27")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field", ["name", "kind"])
def test_mixed_account_update_with_one_invalid_field_changes_nothing(api, http, alice, field):
    account = api.account(alice, opening_balance=300, name="Keep", kind="checking")
    before = snapshot(api, alice)
    body = {"name": "Renamed", "kind": "cash", "opening_balance": 9_999, field: INVALID_ACCOUNT[field]}
    problem = api.validation_problem(http.patch(f"/accounts/{account['id']}", json=body, headers=alice.headers), [field], f"an account update whose only invalid field is {field}")
    assert problem is None, problem
    problem = same_problem(before, snapshot(api, alice), f"an account update rejected for {field}")
    assert problem is None, problem


@pytest.mark.requirement("R14", "R27")
@pytest.mark.category("authorization")
def test_mixed_account_update_of_another_users_or_an_unknown_account_changes_nothing(api, http, alice, bob):
    account = api.account(alice, opening_balance=70, name="Private", kind="savings")
    before = snapshot(api, alice)
    for body in ({"name": "Stolen", "kind": "cash"}, {"name": "Stolen", "kind": "credit"}):
        api.error(http.patch(f"/accounts/{account['id']}", json=body, headers=bob.headers), 404, "not_found", f"bob updating alice's account with {body} (404 before 422)")
    api.error(http.patch(f"/accounts/unknown-{uuid.uuid4().hex}", json={"name": "Stolen", "kind": "cash"}, headers=alice.headers), 404, "not_found",
              "a valid update of an account id that names nothing")
    problem = same_problem(before, snapshot(api, alice), "updates answered 404")
    assert problem is None, problem
    assert api.get(bob, "/accounts")["items"] == [], "bob's refused updates must not give him an account"


# ---------------------------------------------------------------- POST /envelopes, PATCH /envelopes/{id}

INVALID_ENVELOPE = {"name": "", "monthly_budget": -1, "archived": "yes"}


@pytest.mark.requirement("R9", "R27")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field", ["name", "monthly_budget"])
def test_mixed_envelope_creation_with_one_invalid_field_creates_nothing(api, http, alice, field):
    before = snapshot(api, alice)
    wanted = name("Holiday")
    body = {"name": wanted, "monthly_budget": 500, field: INVALID_ENVELOPE[field]}
    problem = api.validation_problem(http.post("/envelopes", json=body, headers=alice.headers), [field], f"an envelope whose only invalid field is {field}")
    assert problem is None, problem
    problem = same_problem(before, snapshot(api, alice), f"an envelope rejected for {field}")
    assert problem is None, problem
    if field != "name":
        r = http.post("/envelopes", json={"name": wanted.upper()}, headers=alice.headers)
        assert r.status_code == 201, f"the name of a rejected envelope must still be free: {api.brief(r)}"


@pytest.mark.requirement("R10", "R27")
@pytest.mark.category("state")
def test_mixed_envelope_creation_with_a_taken_name_creates_nothing(api, http, alice):
    api.envelope(alice, name="Groceries", monthly_budget=100)
    before = snapshot(api, alice)
    api.error(http.post("/envelopes", json={"name": "GROCERIES", "monthly_budget": 999}, headers=alice.headers), 409, "conflict",
              "an envelope with a taken name (other case) and a valid budget")
    problem = same_problem(before, snapshot(api, alice), "an envelope refused with 409")
    assert problem is None, problem


@pytest.mark.requirement("R9", "R27")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field", list(INVALID_ENVELOPE), ids=list(INVALID_ENVELOPE))
def test_mixed_envelope_update_with_one_invalid_field_changes_nothing(api, http, alice, field):
    envelope = api.envelope(alice, name="Stable", monthly_budget=10)
    before = snapshot(api, alice)
    wanted = name("Renamed")
    body = {"name": wanted, "monthly_budget": 77, "archived": True, field: INVALID_ENVELOPE[field]}
    problem = api.validation_problem(http.patch(f"/envelopes/{envelope['id']}", json=body, headers=alice.headers), [field], f"an envelope update whose only invalid field is {field}")
    assert problem is None, problem
    problem = same_problem(before, snapshot(api, alice), f"an envelope update rejected for {field}")
    assert problem is None, problem
    assert [e["id"] for e in api.get(alice, "/envelopes")["items"]] == [envelope["id"]], "the envelope must still be listed as not archived"
    if field != "name":
        r = http.post("/envelopes", json={"name": wanted}, headers=alice.headers)
        assert r.status_code == 201, f"the name of a rejected rename must still be free: {api.brief(r)}"


@pytest.mark.requirement("R10", "R12", "R27")
@pytest.mark.category("state")
@pytest.mark.parametrize("rule", ["archive-with-money", "rename-onto-taken"])
def test_mixed_envelope_update_refused_with_409_changes_nothing(api, http, alice, rule):
    account = api.account(alice, opening_balance=100)
    envelope = api.envelope(alice, name="Full", monthly_budget=10)
    api.envelope(alice, name="Gifts")
    if rule == "archive-with-money":
        api.transfer(alice, None, envelope, 40)
        body = {"name": name("Elsewhere"), "monthly_budget": 55, "archived": True}
    else:
        body = {"name": "gifts", "monthly_budget": 55, "archived": True}
    before = snapshot(api, alice)
    api.error(http.patch(f"/envelopes/{envelope['id']}", json=body, headers=alice.headers), 409, "conflict", f"an envelope update refused by {rule} (other fields valid)")
    problem = same_problem(before, snapshot(api, alice), f"an update refused by {rule}")
    assert problem is None, problem
    assert envelope["id"] in [e["id"] for e in api.get(alice, "/envelopes")["items"]], "the envelope must still be listed as not archived"
    assert api.balance(alice, account) == 100, "the account must be untouched"
    if rule == "archive-with-money":
        r = http.post("/envelopes", json={"name": body["name"]}, headers=alice.headers)
        assert r.status_code == 201, f"the name of the refused rename must still be free: {api.brief(r)}"


@pytest.mark.requirement("R14", "R27")
@pytest.mark.category("authorization")
def test_mixed_envelope_update_of_another_users_envelope_changes_nothing(api, http, alice, bob):
    envelope = api.envelope(alice, name="Mine", monthly_budget=20)
    before = snapshot(api, alice)
    for body in ({"name": "Stolen", "monthly_budget": 5, "archived": True}, {"name": "Stolen", "monthly_budget": -5, "archived": True}):
        api.error(http.patch(f"/envelopes/{envelope['id']}", json=body, headers=bob.headers), 404, "not_found", f"bob updating alice's envelope with {body} (404 before 422)")
    problem = same_problem(before, snapshot(api, alice), "updates answered 404")
    assert problem is None, problem
    assert api.get(bob, "/envelopes?include_archived=true")["items"] == [], "bob's refused updates must not give him an envelope"


# ---------------------------------------------------------------- POST /transactions

INVALID_TX = {
    "expense-date": ("expense", "date", "2025-02-30"),
    "expense-memo": ("expense", "memo", "m" * 201),
    "expense-amount": ("expense", "amount", 10.5),
    "income-envelope": ("income", "envelope_id", "no-such-envelope"),
    "income-date": ("income", "date", "2025-3-12"),
    "transfer-to": ("transfer", "to_envelope_id", "no-such-envelope"),
    "transfer-amount": ("transfer", "amount", 1_000_000_001),
}


@pytest.mark.requirement("R19", "R27")
@pytest.mark.category("validation")
@pytest.mark.parametrize("case", list(INVALID_TX), ids=list(INVALID_TX))
def test_mixed_transaction_with_one_invalid_field_records_nothing(api, http, alice, case):
    account = api.account(alice, opening_balance=1_000)
    groceries = api.envelope(alice, name="Groceries", monthly_budget=300)
    rent = api.envelope(alice, name="Rent")
    api.transfer(alice, None, groceries, 400, date="2025-03-01")
    kind, field, value = INVALID_TX[case]
    bodies = {
        "expense": {"type": "expense", "account_id": account["id"], "envelope_id": groceries["id"], "amount": 150, "date": "2025-03-12", "memo": "weekly shop"},
        "income": {"type": "income", "account_id": account["id"], "envelope_id": rent["id"], "amount": 900, "date": "2025-03-12", "memo": "salary"},
        "transfer": {"type": "transfer", "from_envelope_id": groceries["id"], "to_envelope_id": rent["id"], "amount": 50, "date": "2025-03-12", "memo": "move"},
    }
    body = {**bodies[kind], field: value}
    before = snapshot(api, alice)
    problem = api.validation_problem(http.post("/transactions", json=body, headers=alice.headers), [field], f"a {kind} whose only invalid field is {field}")
    assert problem is None, problem
    problem = same_problem(before, snapshot(api, alice), f"a {kind} rejected for {field}")
    assert problem is None, problem


# ---------------------------------------------------------------- every mutating endpoint without a valid token


@pytest.mark.requirement("R4", "R27")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer never-issued-token"}], ids=["missing", "unknown-token"])
def test_mixed_valid_requests_without_a_valid_token_change_nothing(api, http, alice, headers):
    account = api.account(alice, opening_balance=500, name="Wallet")
    spare = api.account(alice, name="Spare")
    envelope = api.envelope(alice, name="Food", monthly_budget=50)
    unused = api.envelope(alice, name="Unused")
    tx = api.transfer(alice, None, envelope, 100, date="2025-03-02")
    before = snapshot(api, alice)
    calls = [
        ("POST", "/accounts", {"name": "New account", "kind": "cash", "opening_balance": 1_000}),
        ("PATCH", f"/accounts/{account['id']}", {"name": "Renamed", "kind": "savings"}),
        ("DELETE", f"/accounts/{spare['id']}", None),
        ("POST", "/envelopes", {"name": "New envelope", "monthly_budget": 10}),
        ("PATCH", f"/envelopes/{unused['id']}", {"name": "Renamed", "monthly_budget": 99, "archived": True}),
        ("DELETE", f"/envelopes/{unused['id']}", None),
        ("POST", "/transactions", {"type": "expense", "account_id": account["id"], "envelope_id": envelope["id"], "amount": 10, "date": "2025-03-03"}),
        ("DELETE", f"/transactions/{tx['id']}", None),
    ]
    for method, path, body in calls:
        api.error(http.request(method, path, json=body, headers=headers), 401, "unauthorized", f"a valid {method} {path} with {headers or 'no Authorization'}")
    problem = same_problem(before, snapshot(api, alice), "requests answered 401")
    assert problem is None, problem
