"""Deleting transactions undoes them, unless the undo is impossible (spec.md: Transactions)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R24")
@pytest.mark.category("side_effects")
def test_deleting_income_undoes_it(api, http, alice):
    account = api.account(alice, opening_balance=100)
    envelope = api.envelope(alice)
    tx = api.income(alice, account, 400, envelope)
    r = http.delete(f"/transactions/{tx['id']}", headers=alice.headers)
    assert r.status_code == 204, f"deleting an income nothing was spent from: {api.brief(r)}"
    assert api.balances(alice, account, envelope) == [100, 0], "the income's 400 must leave the account and the envelope"
    api.error(http.get(f"/transactions/{tx['id']}", headers=alice.headers), 404, "not_found", "reading a deleted transaction")
    assert api.transactions(alice)["total"] == 0, "the deleted transaction is still listed"


@pytest.mark.requirement("R24")
@pytest.mark.category("side_effects")
def test_deleting_an_expense_gives_the_money_back(api, http, alice):
    account, envelope = api.funded(alice, 500)
    expense = api.expense(alice, account, envelope, 180)
    api.ok(http.delete(f"/transactions/{expense['id']}", headers=alice.headers), 204, "delete an expense")
    assert api.balances(alice, account, envelope) == [500, 500], "the expense's 180 must return to the account and the envelope"


@pytest.mark.requirement("R24", "R21")
@pytest.mark.category("side_effects")
def test_deleting_a_transfer_moves_the_money_back(api, http, alice):
    api.account(alice, opening_balance=1_000)
    a = api.envelope(alice, name="A")
    b = api.envelope(alice, name="B")
    assign = api.transfer(alice, None, a, 600)
    move = api.transfer(alice, a, b, 250)
    api.ok(http.delete(f"/transactions/{move['id']}", headers=alice.headers), 204, "delete an envelope-to-envelope transfer")
    assert api.balances(alice, a, b) == [600, 0], "undoing the transfer returns 250 from B to A"
    api.ok(http.delete(f"/transactions/{assign['id']}", headers=alice.headers), 204, "delete an assignment from unassigned money")
    assert api.balance(alice, a) == 0 and api.unassigned(alice) == 1_000, "undoing the assignment makes the 600 unassigned again"


@pytest.mark.requirement("R25")
@pytest.mark.category("state")
@pytest.mark.parametrize("case", ["income-already-spent", "transfer-already-spent", "unassigned-already-assigned"])
def test_impossible_undo_gets_409(api, http, alice, case):
    account = api.account(alice)
    envelope = api.envelope(alice, name="Spent")
    other = api.envelope(alice, name="Other")
    if case == "income-already-spent":
        victim = api.income(alice, account, 100, envelope)
        api.expense(alice, account, envelope, 60)
    elif case == "transfer-already-spent":
        api.income(alice, account, 100, other)
        victim = api.transfer(alice, other, envelope, 50)
        api.expense(alice, account, envelope, 20)
    else:
        victim = api.income(alice, account, 100)
        api.transfer(alice, None, envelope, 30)
    before = (api.balances(alice, account, envelope, other), api.unassigned(alice))
    r = http.delete(f"/transactions/{victim['id']}", headers=alice.headers)
    api.error(r, 409, "insufficient_funds", f"deleting a transaction whose undo would go negative ({case.replace('-', ' ')})")
    after = (api.balances(alice, account, envelope, other), api.unassigned(alice))
    assert after == before, f"the refused deletion changed balances: before {before}, after {after}"
    api.get(alice, f"/transactions/{victim['id']}")


@pytest.mark.requirement("R25", "R12")
@pytest.mark.category("state")
def test_deleting_a_transaction_of_an_archived_envelope_gets_409(api, http, alice):
    account, envelope = api.funded(alice, 90)
    expense = api.expense(alice, account, envelope, 90)
    api.ok(http.patch(f"/envelopes/{envelope['id']}", json={"archived": True}, headers=alice.headers), 200, "archive the emptied envelope")
    api.error(http.delete(f"/transactions/{expense['id']}", headers=alice.headers), 409, "conflict", "deleting an expense of an archived envelope")
    assert api.balances(alice, account, envelope) == [0, 0], "the refused deletion changed a balance"
