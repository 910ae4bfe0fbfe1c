"""R2 (evolved) items: balances stay consistent across long sequences, deletions and concurrency."""

from __future__ import annotations

import random
import threading

import pytest
import requests

pytestmark = [pytest.mark.tier("r2")]


class Model:
    """The oracle's own ledger, computed from spec.md's balance rules."""

    def __init__(self) -> None:
        self.accounts: dict[str, int] = {}
        self.envelopes: dict[str, int] = {}

    @property
    def unassigned(self) -> int:
        return sum(self.accounts.values()) - sum(self.envelopes.values())

    def allowed(self, kind: str, amount: int, account: str | None, source: str | None, target: str | None) -> bool:
        if kind == "expense":
            return self.accounts[account] >= amount and self.envelopes[source] >= amount
        if kind == "transfer":
            return (self.envelopes[source] if source else self.unassigned) >= amount
        return True

    def apply(self, kind: str, amount: int, account: str | None, source: str | None, target: str | None, sign: int = 1) -> None:
        amount *= sign
        if kind == "income":
            self.accounts[account] += amount
            if target:
                self.envelopes[target] += amount
        elif kind == "expense":
            self.accounts[account] -= amount
            self.envelopes[source] -= amount
        else:
            if source:
                self.envelopes[source] -= amount
            if target:
                self.envelopes[target] += amount


def observed(api, user, model: Model) -> tuple[dict[str, int], dict[str, int], int]:
    accounts = {a["id"]: a["balance"] for a in api.get(user, "/accounts")["items"]}
    envelopes = {e["id"]: e["balance"] for e in api.get(user, "/envelopes?include_archived=true")["items"]}
    return accounts, envelopes, api.unassigned(user)


@pytest.mark.requirement("R16", "R17", "R18", "R21", "R24", "R25")
@pytest.mark.category("state")
def test_balances_match_a_model_over_a_long_sequence(api, http, alice):
    rng = random.Random(20250301)
    model = Model()
    accounts = [api.account(alice, opening_balance=rng.choice([0, 500, 2_000]))["id"] for _ in range(2)]
    envelopes = [api.envelope(alice)["id"] for _ in range(3)]
    for account_id in accounts:
        model.accounts[account_id] = api.get(alice, f"/accounts/{account_id}")["opening_balance"]
    for envelope_id in envelopes:
        model.envelopes[envelope_id] = 0
    recorded: list[tuple[str, tuple]] = []
    for step in range(40):
        kind = rng.choice(["income", "expense", "transfer", "transfer", "delete"])
        if kind == "delete" and recorded:
            tx_id, spec = recorded.pop(rng.randrange(len(recorded)))
            clone = Model()
            clone.accounts, clone.envelopes = dict(model.accounts), dict(model.envelopes)
            clone.apply(*spec, sign=-1)
            possible = min(clone.accounts.values()) >= 0 and min(clone.envelopes.values()) >= 0 and clone.unassigned >= 0
            r = http.delete(f"/transactions/{tx_id}", headers=alice.headers)
            expected = 204 if possible else 409
            assert r.status_code == expected, f"step {step}: deleting {spec} should answer {expected}: {api.brief(r)}"
            if possible:
                model.apply(*spec, sign=-1)
            else:
                recorded.append((tx_id, spec))
            continue
        if kind == "delete":
            kind = "income"
        amount = rng.choice([50, 120, 300, 800])
        account = rng.choice(accounts) if kind != "transfer" else None
        source = rng.choice(envelopes) if kind == "expense" else rng.choice(envelopes + [None]) if kind == "transfer" else None
        target = rng.choice([e for e in envelopes + [None] if e != source]) if kind != "expense" else None
        if kind == "transfer" and source is None and target is None:
            target = envelopes[0]
        spec = (kind, amount, account, source, target)
        body = {"type": kind, "amount": amount, "date": f"2025-03-{1 + step % 28:02d}"}
        if kind in ("income", "expense"):
            body["account_id"] = account
            body["envelope_id"] = source if kind == "expense" else target
        else:
            body["from_envelope_id"] = source
            body["to_envelope_id"] = target
        r = http.post("/transactions", json=body, headers=alice.headers)
        if model.allowed(*spec):
            assert r.status_code == 201, f"step {step}: {spec} is possible with {model.accounts} {model.envelopes}: {api.brief(r)}"
            model.apply(*spec)
            recorded.append((r.json()["id"], spec))
        else:
            api.error(r, 409, "insufficient_funds", f"step {step}: {spec} exceeds the balances {model.accounts} {model.envelopes}")
    got = observed(api, alice, model)
    assert got == (model.accounts, model.envelopes, model.unassigned), (
        f"balances after 40 steps differ from the ledger:\nexpected {(model.accounts, model.envelopes, model.unassigned)}\ngot      {got}"
    )


@pytest.mark.requirement("R17", "R27")
@pytest.mark.category("state")
def test_concurrent_expenses_never_overdraw(api, http, service, alice, checks):
    account, envelope = api.funded(alice, 100)
    statuses: list[int] = []
    lock = threading.Lock()

    def spend() -> None:
        with requests.Session() as session:
            r = session.post(
                f"{service.base_url}/transactions",
                json={"type": "expense", "account_id": account["id"], "envelope_id": envelope["id"], "amount": 30, "date": "2025-03-03"},
                headers=alice.headers,
                timeout=http.timeout_s,
            )
        with lock:
            statuses.append(r.status_code)

    checks.concurrently(lambda _: spend(), [None] * 8, 2 * http.timeout_s)
    assert sorted(statuses) == [201] * 3 + [409] * 5, f"8 concurrent expenses of 30 from 100: exactly 3 fit, got {sorted(statuses)}"
    assert api.balances(alice, account, envelope) == [10, 10], "after three expenses of 30 the balances must be 10"
    assert api.transactions(alice, type="expense")["total"] == 3, "exactly the three accepted expenses are recorded"


@pytest.mark.requirement("R24", "R26", "R22")
@pytest.mark.category("side_effects")
def test_deletions_show_in_lists_and_reports(api, http, alice):
    account = api.account(alice)
    food = api.envelope(alice, name="Food", monthly_budget=300)
    income = api.income(alice, account, 1_000, food, date="2025-10-01")
    first = api.expense(alice, account, food, 120, date="2025-10-05")
    second = api.expense(alice, account, food, 250, date="2025-10-05")
    third = api.expense(alice, account, food, 40, date="2025-10-07")
    assert api.month(alice, "2025-10")["envelopes"][0]["over_budget"] is True, "410 spent of 300 is over budget"
    api.ok(http.delete(f"/transactions/{second['id']}", headers=alice.headers), 204, "delete the 250 expense")
    assert api.tx_ids(alice) == [income["id"], first["id"], third["id"]], "the remaining transactions keep their order"
    report = api.month(alice, "2025-10")
    row = report["envelopes"][0]
    assert (report.get("spent"), row.get("spent"), row.get("remaining"), row.get("over_budget")) == (160, 160, 140, False), (
        f"after the deletion October's spending is 160, under the 300 budget: {report}"
    )
    assert api.balances(alice, account, food) == [840, 840], "the deleted expense's 250 is back"


@pytest.mark.requirement("R8", "R24", "R25")
@pytest.mark.category("workflow")
def test_closing_an_account(api, http, alice):
    old = api.account(alice, name="Old bank", opening_balance=0)
    new = api.account(alice, name="New bank", opening_balance=0)
    bills = api.envelope(alice, name="Bills")
    salary = api.income(alice, old, 900, bills)
    rent = api.expense(alice, old, bills, 700)
    api.error(http.delete(f"/accounts/{old['id']}", headers=alice.headers), 409, "conflict", "closing an account that holds 200 and has transactions")
    api.error(http.delete(f"/transactions/{salary['id']}", headers=alice.headers), 409, "insufficient_funds", "undoing the salary after 700 was spent")
    api.ok(http.delete(f"/transactions/{rent['id']}", headers=alice.headers), 204, "undo the rent payment")
    api.ok(http.delete(f"/transactions/{salary['id']}", headers=alice.headers), 204, "now undo the salary")
    api.ok(http.delete(f"/accounts/{old['id']}", headers=alice.headers), 204, "close the account nothing refers to")
    assert [a["id"] for a in api.get(alice, "/accounts")["items"]] == [new["id"]], "only the new account remains"
    got, summary = api.totals(alice)
    assert got == (0, 0, 0), f"with every transaction undone nothing is left anywhere: {summary}"
    assert api.balance(alice, bills) == 0, "the envelope is empty again"


@pytest.mark.requirement("R12", "R25", "R24")
@pytest.mark.category("workflow")
def test_archived_envelope_history_is_frozen_until_unarchived(api, http, alice):
    account = api.account(alice)
    gifts = api.envelope(alice, name="Gifts")
    api.income(alice, account, 60, gifts)
    purchase = api.expense(alice, account, gifts, 60)
    api.ok(http.patch(f"/envelopes/{gifts['id']}", json={"archived": True}, headers=alice.headers), 200, "archive the empty envelope")
    api.error(http.delete(f"/transactions/{purchase['id']}", headers=alice.headers), 409, "conflict", "undoing a purchase of an archived envelope")
    api.ok(http.patch(f"/envelopes/{gifts['id']}", json={"archived": False}, headers=alice.headers), 200, "un-archive the envelope")
    api.ok(http.delete(f"/transactions/{purchase['id']}", headers=alice.headers), 204, "undo the purchase")
    assert api.balances(alice, account, gifts) == [60, 60], "the purchase's 60 is back in the account and the envelope"
    api.error(http.patch(f"/envelopes/{gifts['id']}", json={"archived": True}, headers=alice.headers), 409, "conflict", "archiving again while it holds 60")


@pytest.mark.requirement("R9", "R26")
@pytest.mark.category("side_effects")
def test_envelope_changes_show_in_the_monthly_report(api, http, alice):
    account = api.account(alice)
    envelope = api.envelope(alice, name="Dining", monthly_budget=100)
    api.income(alice, account, 500, envelope, date="2025-11-01")
    api.expense(alice, account, envelope, 150, date="2025-11-02")
    row = api.month(alice, "2025-11")["envelopes"][0]
    assert (row.get("name"), row.get("remaining"), row.get("over_budget")) == ("Dining", -50, True), f"before the change: {row}"
    api.ok(http.patch(f"/envelopes/{envelope['id']}", json={"name": "Eating out", "monthly_budget": 400}, headers=alice.headers), 200, "rename and re-budget")
    row = api.month(alice, "2025-11")["envelopes"][0]
    expected = ("Eating out", 400, 500, 150, 250, False)
    got = (row.get("name"), row.get("monthly_budget"), row.get("assigned"), row.get("spent"), row.get("remaining"), row.get("over_budget"))
    assert got == expected, f"the report uses the envelope's current name and budget: expected {expected}, got {got}"


@pytest.mark.requirement("R14", "R21", "R15")
@pytest.mark.category("authorization")
def test_two_users_interleaving_stay_separate(api, http, alice, bob):
    mine = api.account(alice, opening_balance=1_000)
    theirs = api.account(bob, opening_balance=50)
    my_envelope = api.envelope(alice, name="Shared name")
    their_envelope = api.envelope(bob, name="Shared name")
    api.transfer(alice, None, my_envelope, 400)
    api.transfer(bob, None, their_envelope, 50)
    r = api.post_tx(bob, type="transfer", from_envelope_id=my_envelope["id"], to_envelope_id=their_envelope["id"], amount=100)
    problem = api.validation_problem(r, ["from_envelope_id"], "bob moving money out of alice's envelope")
    assert problem is None, problem
    api.expense(bob, theirs, their_envelope, 50)
    alice_summary = api.summary(alice)
    bob_summary = api.summary(bob)
    assert (alice_summary.get("accounts_total"), alice_summary.get("envelopes_total"), alice_summary.get("unassigned")) == (1_000, 400, 600), (
        f"alice's totals must ignore bob's activity: {alice_summary}"
    )
    assert (bob_summary.get("accounts_total"), bob_summary.get("envelopes_total"), bob_summary.get("unassigned")) == (0, 0, 0), (
        f"bob spent everything he had: {bob_summary}"
    )
    assert api.balances(alice, mine, my_envelope) == [1_000, 400], "alice's account or envelope was touched by bob's requests"
