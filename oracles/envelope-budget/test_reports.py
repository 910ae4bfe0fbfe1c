"""The summary and the monthly report (spec.md: Unassigned money, Monthly report)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R21")
@pytest.mark.category("side_effects")
def test_summary_follows_every_kind_of_transaction(api, http, alice):
    checking = api.account(alice, opening_balance=1_000)
    savings = api.account(alice, kind="savings", opening_balance=500)
    food = api.envelope(alice, name="Food")
    trips = api.envelope(alice, name="Trips")
    api.transfer(alice, None, food, 700)
    api.income(alice, savings, 300, trips)
    api.expense(alice, checking, food, 200)
    api.transfer(alice, food, trips, 100)
    got, summary = api.totals(alice)
    # accounts 800 + 800; envelopes food 400, trips 400; unassigned 1600 - 800
    assert got == (1_600, 800, 800), f"summary after assign, income, expense and transfer: expected (1600, 800, 800), got {summary}"


@pytest.mark.requirement("R26")
@pytest.mark.category("side_effects")
def test_month_report_counts_the_months_transactions(api, http, alice):
    account = api.account(alice, opening_balance=2_000)
    food = api.envelope(alice, name="Food", monthly_budget=500)
    fun = api.envelope(alice, name="Fun", monthly_budget=100)
    api.income(alice, account, 1_000, food, date="2025-06-01")
    api.transfer(alice, None, fun, 300, date="2025-06-02")
    api.expense(alice, account, food, 350, date="2025-06-10")
    api.transfer(alice, food, fun, 50, date="2025-06-11")
    api.expense(alice, account, fun, 150, date="2025-06-30")
    api.expense(alice, account, food, 99, date="2025-07-01")
    api.income(alice, account, 5, date="2025-05-31")
    report = api.month(alice, "2025-06")
    assert (report.get("month"), report.get("income"), report.get("spent")) == ("2025-06", 1_000, 500), (
        f"June: income 1000 and spending 350 + 150: {report}"
    )
    expected = [
        {"envelope_id": food["id"], "name": "Food", "monthly_budget": 500, "assigned": 950, "spent": 350, "remaining": 150, "over_budget": False},
        {"envelope_id": fun["id"], "name": "Fun", "monthly_budget": 100, "assigned": 350, "spent": 150, "remaining": -50, "over_budget": True},
    ]
    rows = [{k: row.get(k) for k in expected[0]} for row in report.get("envelopes", [])]
    assert rows == expected, f"June's envelope rows:\nexpected {expected}\ngot      {rows}"


@pytest.mark.requirement("R26")
@pytest.mark.category("api_surface")
def test_month_without_transactions_lists_every_envelope(api, http, alice):
    a = api.envelope(alice, name="First", monthly_budget=40)
    b = api.envelope(alice, name="Second")
    api.ok(http.patch(f"/envelopes/{b['id']}", json={"archived": True}, headers=alice.headers), 200, "archive an envelope")
    report = api.month(alice, "1999-12")
    assert (report.get("income"), report.get("spent")) == (0, 0), f"an empty month has no income or spending: {report}"
    rows = [(r.get("envelope_id"), r.get("assigned"), r.get("spent"), r.get("remaining"), r.get("over_budget")) for r in report.get("envelopes", [])]
    assert rows == [(a["id"], 0, 0, 40, False), (b["id"], 0, 0, 0, False)], (
        f"every envelope (archived included, oldest first) with zeros; remaining is the monthly budget: {rows}"
    )


@pytest.mark.requirement("R26")
@pytest.mark.category("state")
def test_spending_exactly_the_budget_is_not_over_budget(api, http, alice):
    account = api.account(alice)
    envelope = api.envelope(alice, monthly_budget=200)
    api.income(alice, account, 500, envelope, date="2025-08-01")
    api.expense(alice, account, envelope, 200, date="2025-08-02")
    row = api.month(alice, "2025-08")["envelopes"][0]
    assert (row.get("spent"), row.get("remaining"), row.get("over_budget")) == (200, 0, False), f"spent == budget is not over budget: {row}"
    api.expense(alice, account, envelope, 1, date="2025-08-03")
    row = api.month(alice, "2025-08")["envelopes"][0]
    assert (row.get("spent"), row.get("remaining"), row.get("over_budget")) == (201, -1, True), f"one cent more is over budget: {row}"


@pytest.mark.requirement("R26")
@pytest.mark.category("validation")
@pytest.mark.parametrize("month", ["2025-00", "2025-13", "2025-1", "25-01", "2025-01-01", "march"])
def test_invalid_month_gets_422(api, http, alice, month):
    problem = api.validation_problem(http.get(f"/months/{month}", headers=alice.headers), ["month"], f"GET /months/{month}")
    assert problem is None, problem
