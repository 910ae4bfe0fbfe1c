"""Privacy of budgets: another user's data does not exist for the caller (spec.md: Errors, Users)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("authorization")]


@pytest.mark.requirement("R14")
def test_another_users_account_is_not_found(api, http, alice, bob):
    account = api.account(alice, opening_balance=70, name="Private")
    for method, body in (("GET", None), ("PATCH", {"name": "Stolen"}), ("DELETE", None)):
        r = http.request(method, f"/accounts/{account['id']}", json=body, headers=bob.headers)
        api.error(r, 404, "not_found", f"{method} on another user's account")
    got = api.get(alice, f"/accounts/{account['id']}")
    assert (got.get("name"), got.get("balance")) == ("Private", 70), f"another user changed the account: {got}"


@pytest.mark.requirement("R14")
def test_another_users_envelope_is_not_found(api, http, alice, bob):
    envelope = api.envelope(alice, name="Mine")
    for method, body in (("GET", None), ("PATCH", {"archived": True}), ("DELETE", None)):
        r = http.request(method, f"/envelopes/{envelope['id']}", json=body, headers=bob.headers)
        api.error(r, 404, "not_found", f"{method} on another user's envelope")
    got = api.get(alice, f"/envelopes/{envelope['id']}")
    assert (got.get("name"), got.get("archived")) == ("Mine", False), f"another user changed the envelope: {got}"


@pytest.mark.requirement("R14")
def test_another_users_transaction_is_not_found(api, http, alice, bob):
    account = api.account(alice)
    tx = api.income(alice, account, 90)
    for method in ("GET", "DELETE"):
        api.error(http.request(method, f"/transactions/{tx['id']}", headers=bob.headers), 404, "not_found", f"{method} on another user's transaction")
    assert api.balance(alice, account) == 90, "another user's DELETE undid the income"


@pytest.mark.requirement("R14")
def test_unknown_ids_are_not_found(api, http, alice):
    for path in ("/accounts/no-such-account", "/envelopes/no-such-envelope", "/transactions/no-such-transaction"):
        api.error(http.get(path, headers=alice.headers), 404, "not_found", f"GET {path}")


@pytest.mark.requirement("R14", "R6")
def test_lists_contain_only_the_callers_data(api, http, alice, bob):
    mine = api.account(alice, name="Alice account")
    api.income(alice, mine, 10)
    api.envelope(alice, name="Alice envelope")
    theirs = api.account(bob, name="Bob account")
    bob_envelope = api.envelope(bob, name="Bob envelope")
    bob_tx = api.income(bob, theirs, 20, bob_envelope)
    assert [a["id"] for a in api.get(bob, "/accounts")["items"]] == [theirs["id"]], "bob's account list contains other users' accounts"
    assert [e["id"] for e in api.get(bob, "/envelopes?include_archived=true")["items"]] == [bob_envelope["id"]], (
        "bob's envelope list contains other users' envelopes"
    )
    page = api.transactions(bob)
    assert [t["id"] for t in page["items"]] == [bob_tx["id"]] and page["total"] == 1, f"bob's transactions contain other users' data: {page}"


@pytest.mark.requirement("R14", "R21", "R26")
def test_reports_contain_only_the_callers_data(api, http, alice, bob):
    account = api.account(alice, opening_balance=1_000)
    envelope = api.envelope(alice, name="Food")
    api.income(alice, account, 500, envelope, date="2025-05-02")
    api.account(bob, opening_balance=7)
    got, summary = api.totals(bob)
    assert got == (7, 0, 7), f"bob's summary must count only bob's account (7, 0, 7): {summary}"
    report = api.month(bob, "2025-05")
    assert (report.get("income"), report.get("spent"), report.get("envelopes")) == (0, 0, []), f"bob's report must not show alice's data: {report}"


@pytest.mark.requirement("R15")
@pytest.mark.parametrize("field", ["account_id", "envelope_id", "from_envelope_id", "to_envelope_id"])
def test_another_users_ids_in_a_transaction_get_422(api, http, alice, bob, field):
    account = api.account(alice, opening_balance=500)
    envelope = api.envelope(alice)
    api.transfer(alice, None, envelope, 200)
    foreign_account = api.account(bob, opening_balance=500)
    foreign_envelope = api.envelope(bob)
    api.transfer(bob, None, foreign_envelope, 200)
    bodies = {
        "account_id": {"type": "expense", "account_id": foreign_account["id"], "envelope_id": envelope["id"], "amount": 5},
        "envelope_id": {"type": "expense", "account_id": account["id"], "envelope_id": foreign_envelope["id"], "amount": 5},
        "from_envelope_id": {"type": "transfer", "from_envelope_id": foreign_envelope["id"], "to_envelope_id": envelope["id"], "amount": 5},
        "to_envelope_id": {"type": "transfer", "from_envelope_id": envelope["id"], "to_envelope_id": foreign_envelope["id"], "amount": 5},
    }
    problem = api.validation_problem(api.post_tx(alice, **bodies[field]), [field], f"alice naming bob's {field.replace('_id', '')}")
    assert problem is None, problem
    assert api.balances(bob, foreign_account, foreign_envelope) == [500, 200], "bob's balances changed through alice's request"
    assert api.balances(alice, account, envelope) == [500, 200], "alice's balances changed through a rejected request"
