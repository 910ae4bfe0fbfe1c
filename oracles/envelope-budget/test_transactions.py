"""Transactions: income, expenses, transfers, validation and shape (spec.md: Transactions)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R16", "R21")
@pytest.mark.category("state")
def test_income_without_envelope_is_unassigned(api, http, alice):
    account = api.account(alice, opening_balance=100)
    envelope = api.envelope(alice)
    api.income(alice, account, 2_500)
    assert api.balance(alice, account) == 2_600, "income of 2500 into an account holding 100 should make 2600"
    assert api.balance(alice, envelope) == 0, "income without an envelope must not reach any envelope"
    got, summary = api.totals(alice)
    assert got == (2_600, 0, 2_600), f"opening balance and unassigned income are unassigned money: {summary}"


@pytest.mark.requirement("R16")
@pytest.mark.category("state")
def test_income_into_an_envelope(api, http, alice):
    account, envelope = api.funded(alice, 800)
    assert api.balances(alice, account, envelope) == [800, 800], "income assigned to an envelope raises the account and the envelope"
    assert api.unassigned(alice) == 0, "income into an envelope is not unassigned"


@pytest.mark.requirement("R17")
@pytest.mark.category("state")
def test_expense_reduces_account_and_envelope(api, http, alice):
    account, envelope = api.funded(alice, 1_000)
    api.expense(alice, account, envelope, 275)
    assert api.balances(alice, account, envelope) == [725, 725], "spending 275 leaves 725 in both the account and the envelope"
    assert api.unassigned(alice) == 0, "an expense does not change unassigned money"


@pytest.mark.requirement("R17")
@pytest.mark.category("state")
def test_expense_larger_than_the_envelope_gets_409(api, http, alice):
    account = api.account(alice, opening_balance=5_000)
    envelope = api.envelope(alice)
    api.transfer(alice, None, envelope, 300)
    r = api.post_tx(alice, type="expense", account_id=account["id"], envelope_id=envelope["id"], amount=301)
    api.error(r, 409, "insufficient_funds", "spending 301 from an envelope holding 300")
    assert api.balances(alice, account, envelope) == [5_000, 300], "the refused expense changed a balance"
    assert api.transactions(alice, type="expense")["total"] == 0, "the refused expense was recorded"


@pytest.mark.requirement("R17")
@pytest.mark.category("state")
def test_expense_larger_than_the_account_gets_409(api, http, alice):
    poor = api.account(alice, name="Poor", opening_balance=50)
    rich = api.account(alice, name="Rich")
    envelope = api.envelope(alice)
    api.income(alice, rich, 1_000, envelope)
    r = api.post_tx(alice, type="expense", account_id=poor["id"], envelope_id=envelope["id"], amount=80)
    api.error(r, 409, "insufficient_funds", "spending 80 through an account holding 50")
    assert api.balances(alice, poor, rich, envelope) == [50, 1_000, 1_000], "the refused expense changed a balance"


@pytest.mark.requirement("R17")
@pytest.mark.category("state")
def test_spending_a_whole_balance_is_allowed(api, http, alice):
    account, envelope = api.funded(alice, 450)
    r = api.post_tx(alice, type="expense", account_id=account["id"], envelope_id=envelope["id"], amount=450)
    assert r.status_code == 201, f"spending exactly the whole balance: {api.brief(r)}"
    assert api.balances(alice, account, envelope) == [0, 0], "the balances should be exactly 0"


@pytest.mark.requirement("R18")
@pytest.mark.category("state")
def test_transfer_between_envelopes(api, http, alice):
    account = api.account(alice)
    rent = api.envelope(alice, name="Rent")
    fun = api.envelope(alice, name="Fun")
    api.income(alice, account, 1_000, rent)
    api.transfer(alice, rent, fun, 150)
    assert api.balances(alice, rent, fun, account) == [850, 150, 1_000], "a transfer moves money between envelopes, not accounts"
    assert api.unassigned(alice) == 0, "an envelope-to-envelope transfer does not change unassigned money"


@pytest.mark.requirement("R18", "R21")
@pytest.mark.category("state")
def test_transfer_from_unassigned_assigns_money(api, http, alice):
    account = api.account(alice, opening_balance=600)
    envelope = api.envelope(alice)
    api.transfer(alice, None, envelope, 250)
    assert api.balances(alice, envelope, account) == [250, 600], "assigning 250 from unassigned money"
    assert api.unassigned(alice) == 350, "600 unassigned minus 250 assigned leaves 350"


@pytest.mark.requirement("R18", "R21")
@pytest.mark.category("state")
def test_transfer_to_unassigned_returns_money(api, http, alice):
    _account, envelope = api.funded(alice, 400)
    api.tx(alice, type="transfer", from_envelope_id=envelope["id"], to_envelope_id=None, amount=100)
    assert api.balance(alice, envelope) == 300, "returning 100 to unassigned leaves 300 in the envelope"
    assert api.unassigned(alice) == 100, "the returned 100 is unassigned"


@pytest.mark.requirement("R18")
@pytest.mark.category("state")
@pytest.mark.parametrize("source", ["envelope", "unassigned"])
def test_transfer_larger_than_its_source_gets_409(api, http, alice, source):
    account = api.account(alice, opening_balance=100)
    full = api.envelope(alice, name="Full")
    empty = api.envelope(alice, name="Empty")
    api.transfer(alice, None, full, 60)
    body = {"type": "transfer", "to_envelope_id": empty["id"], "amount": 61 if source == "envelope" else 41}
    if source == "envelope":
        body["from_envelope_id"] = full["id"]
    api.error(api.post_tx(alice, **body), 409, "insufficient_funds", f"transferring more than the {source} holds")
    assert api.balances(alice, full, empty, account) == [60, 0, 100], "the refused transfer changed a balance"
    assert api.unassigned(alice) == 40, "the refused transfer changed unassigned money"


@pytest.mark.requirement("R19")
@pytest.mark.category("validation")
@pytest.mark.parametrize("value", [None, "refund", "INCOME", 1, "missing"], ids=["null", "unknown", "upper", "number", "missing"])
def test_invalid_type_lists_only_type(api, http, alice, value):
    account = api.account(alice)
    body = {"date": "not a date", "amount": -3, "account_id": account["id"]}
    if value != "missing":
        body["type"] = value
    r = http.post("/transactions", json=body, headers=alice.headers)
    problem = api.validation_problem(r, ["type"], f"a transaction with type {value!r} (and other invalid fields)")
    assert problem is None, problem


@pytest.mark.requirement("R19", "R28")
@pytest.mark.category("validation")
@pytest.mark.parametrize(
    "field, values",
    [
        ("date", ["2025-02-30", "2025-13-01", "2025-1-05", "05/03/2025", "", None, 20250301]),
        ("amount", [0, -100, 1_000_000_001, 12.5, "100", True, None]),
        ("memo", ["m" * 201, 5, None]),
    ],
    ids=["date", "amount", "memo"],
)
def test_transaction_fields_are_validated(api, http, alice, field, values):
    account = api.account(alice)
    problems = []
    for value in values:
        body = {"type": "income", "account_id": account["id"], "amount": 10, "date": "2025-03-01", field: value}
        problems.append(api.validation_problem(http.post("/transactions", json=body, headers=alice.headers), [field], f"income with {field}={value!r}"))
    api.assert_no_problems(problems, f"invalid {field} values were not rejected as the spec says")
    assert api.balance(alice, account) == 0, "a rejected income reached the account"


@pytest.mark.requirement("R19")
@pytest.mark.category("validation")
def test_every_invalid_field_is_listed(api, http, alice):
    body = {"type": "expense", "date": "2025-02-29", "amount": 0, "memo": 1}
    problem = api.validation_problem(
        http.post("/transactions", json=body, headers=alice.headers),
        ["date", "amount", "memo", "account_id", "envelope_id"],
        "an expense with every field invalid or missing",
    )
    assert problem is None, problem


@pytest.mark.requirement("R19")
@pytest.mark.category("validation")
@pytest.mark.parametrize("case", ["neither-side", "both-null", "same-envelope"])
def test_transfer_needs_two_different_sides(api, http, alice, case):
    api.account(alice, opening_balance=100)
    envelope = api.envelope(alice)
    api.transfer(alice, None, envelope, 50)
    sides = {
        "neither-side": {},
        "both-null": {"from_envelope_id": None, "to_envelope_id": None},
        "same-envelope": {"from_envelope_id": envelope["id"], "to_envelope_id": envelope["id"]},
    }[case]
    r = api.post_tx(alice, type="transfer", amount=10, **sides)
    problem = api.validation_problem(r, ["from_envelope_id", "to_envelope_id"], f"a transfer with {case.replace('-', ' ')}")
    assert problem is None, problem
    assert api.balance(alice, envelope) == 50, "the rejected transfer changed the envelope"


@pytest.mark.requirement("R19", "R15")
@pytest.mark.category("validation")
def test_expense_needs_an_account_and_an_envelope(api, http, alice):
    account = api.account(alice, opening_balance=100)
    envelope = api.envelope(alice)
    cases = [
        ({"envelope_id": envelope["id"]}, ["account_id"]),
        ({"account_id": account["id"]}, ["envelope_id"]),
        ({"account_id": account["id"], "envelope_id": None}, ["envelope_id"]),
        ({"account_id": "no-such-account", "envelope_id": "no-such-envelope"}, ["account_id", "envelope_id"]),
        ({"account_id": 42, "envelope_id": envelope["id"]}, ["account_id"]),
    ]
    problems = [
        api.validation_problem(api.post_tx(alice, type="expense", amount=1, **ids), fields, f"an expense with {ids}") for ids, fields in cases
    ]
    problems.append(api.validation_problem(api.post_tx(alice, type="income", amount=1), ["account_id"], "an income without an account"))
    api.assert_no_problems(problems, "expenses and income without valid ids were not rejected as the spec says")


@pytest.mark.requirement("R20")
@pytest.mark.category("api_surface")
@pytest.mark.parametrize("kind", ["income", "expense", "transfer"])
def test_transaction_shape(api, http, alice, kind):
    account = api.account(alice, opening_balance=500)
    envelope = api.envelope(alice)
    api.transfer(alice, None, envelope, 300)
    body = {
        "income": {"type": "income", "account_id": account["id"], "amount": 70},
        "expense": {"type": "expense", "account_id": account["id"], "envelope_id": envelope["id"], "amount": 70},
        "transfer": {"type": "transfer", "from_envelope_id": envelope["id"], "amount": 70},
    }[kind]
    r = api.post_tx(alice, date="2025-04-30", **body)
    assert r.status_code == 201, f"recording a {kind}: {api.brief(r)}"
    tx = r.json()
    expected = {
        "type": kind, "date": "2025-04-30", "amount": 70, "memo": "",
        "account_id": body.get("account_id"), "envelope_id": body.get("envelope_id"),
        "from_envelope_id": body.get("from_envelope_id"), "to_envelope_id": body.get("to_envelope_id"),
    }
    got = {k: tx.get(k, "<missing>") for k in expected}
    assert got == expected, f"a {kind}: fields that do not apply are null and memo defaults to '': expected {expected}, got {got}"
    fetched = api.get(alice, f"/transactions/{tx['id']}")
    assert {k: fetched.get(k, "<missing>") for k in expected} == expected, f"GET /transactions/{{id}} answers the same transaction: {fetched}"


@pytest.mark.requirement("R20")
@pytest.mark.category("api_surface")
def test_id_fields_of_another_type_are_ignored(api, http, alice):
    account, a, b = api.envelopes_a_b(alice, 100)
    tx = api.tx(alice, type="transfer", from_envelope_id=a["id"], to_envelope_id=b["id"], amount=40,
                account_id=account["id"], envelope_id=a["id"], memo="move")
    got = {k: tx.get(k) for k in ("account_id", "envelope_id", "from_envelope_id", "to_envelope_id", "memo")}
    expected = {"account_id": None, "envelope_id": None, "from_envelope_id": a["id"], "to_envelope_id": b["id"], "memo": "move"}
    assert got == expected, f"account_id and envelope_id on a transfer are ignored and stored as null: {got}"
    assert api.balances(alice, account, a, b) == [300, 60, 40], "the ignored fields must have no effect on balances"
    income = api.tx(alice, type="income", account_id=account["id"], amount=5, from_envelope_id=b["id"], to_envelope_id="junk")
    assert (income.get("from_envelope_id"), income.get("to_envelope_id")) == (None, None), f"transfer fields on an income are ignored: {income}"
