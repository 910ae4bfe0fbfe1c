"""Shares, balances and the settlement plan (spec.md: Splitting a bill, Balances and settlements)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]

SPLITS = [
    # (amount, weights in ascending member id order, the spec's shares in that order)
    (1000, [1, 1, 1], [334, 333, 333]),
    (1001, [2, 1], [668, 333]),
    (100, [1, 2, 3], [17, 33, 50]),
    (1, [1, 1, 1], [1, 0, 0]),
    (2, [1, 1, 1], [1, 1, 0]),
    (10, [3, 3, 3], [4, 3, 3]),
    (7, [100, 1], [7, 0]),
    (999, [1, 1, 1, 1], [250, 250, 250, 249]),
    (102, [1, 100], [2, 100]),
    (10_000_000, [100, 100, 1], [4975125, 4975124, 49751]),
    (500, [5], [500]),
]


@pytest.mark.requirement("R6")
@pytest.mark.category("state")
@pytest.mark.parametrize("amount,weights,expected", SPLITS, ids=[f"{a}-by-{'-'.join(map(str, w))}" for a, w, _ in SPLITS])
def test_shares_follow_the_weights_and_the_remainder_rule(api, http, checks, amount, weights, expected):
    project = api.project()
    owers = [api.member(project, f"O{i}", weight=w) for i, w in enumerate(weights)]
    payer = api.member(project, "Payer")
    assert checks.model_shares(amount, dict(enumerate(weights))) == dict(enumerate(expected)), "the oracle's model agrees with the worked split"
    bill = api.bill(project, payer, list(reversed(owers)), amount=amount)  # sent in reverse creation order
    # the ids are the service's (not necessarily ascending in creation order): the model splits by them
    wanted = api.shares(checks.model_shares(amount, {o["id"]: w for o, w in zip(owers, weights)}))
    assert bill.get("shares") == wanted, f"{amount} cents by weights {weights}: expected {wanted}, got {bill.get('shares')}"
    assert bill.get("owers") == sorted(o["id"] for o in owers), f"owers ascending: {bill.get('owers')}"


@pytest.mark.requirement("R6", "R7")
@pytest.mark.category("state")
def test_the_leftover_cent_goes_by_member_id_not_by_order_sent(api, http):
    project = api.project()
    first, second, third = (api.member(project, n) for n in ("P1", "P2", "P3"))
    low, high = sorted((second["id"], third["id"]))
    api.bill(project, first, [high, low], amount=101)
    assert api.balances(project) == {first["id"]: 101, low: -51, high: -50}, "the odd cent goes to the lower id"


@pytest.mark.requirement("R7")
@pytest.mark.category("api_surface")
def test_balances_answer_paid_owed_and_balance_per_member(api, http):
    project = api.project()
    a, b, c = (api.member(project, n) for n in ("Ann", "Bo", "Cat"))
    api.bill(project, a, [a, b, c], amount=900)
    api.bill(project, b, [c], amount=250)
    items = api.balance_items(project)
    got = [(i.get("member_id"), i.get("name"), i.get("active"), i.get("paid_cents"), i.get("owed_cents"), i.get("balance_cents")) for i in items]
    assert got == sorted([(a["id"], "Ann", True, 900, 300, 600), (b["id"], "Bo", True, 250, 300, -50), (c["id"], "Cat", True, 0, 550, -550)]), got


@pytest.mark.requirement("R7")
@pytest.mark.category("state")
def test_a_project_without_bills_has_zero_balances(api, http):
    project = api.project()
    made = [api.member(project) for _ in range(3)]
    assert api.balances(project) == {m["id"]: 0 for m in made}
    assert api.settlements(project) == [], "a settled project has no transfers"


@pytest.mark.requirement("R7")
@pytest.mark.category("state")
def test_balances_add_up_to_zero_with_uneven_splits(api, http):
    project = api.project()
    members = [api.member(project, f"W{i}", weight=w) for i, w in enumerate((1, 2, 3, 7))]
    for amount, payer, owers in ((1001, 0, [0, 1, 2, 3]), (333, 3, [1, 2]), (17, 1, [0, 2, 3]), (9_999_999, 2, [0, 1, 2, 3])):
        api.bill(project, members[payer], [members[i] for i in owers], amount=amount)
    balances = api.balances(project)
    assert sum(balances.values()) == 0, f"balances add up to 0: {balances}"


@pytest.mark.requirement("R7")
@pytest.mark.category("side_effects")
def test_balances_follow_replaced_and_deleted_bills(api, http):
    project, a, b = api.pair("Di", "Ed")
    bill = api.bill(project, a, [b], amount=800)
    assert api.balances(project) == {a["id"]: 800, b["id"]: -800}
    api.ok(api.put_bill(project, bill, api.bill_body(b, [a, b], amount=300)), 200, "replace the bill")
    assert api.balances(project) == {a["id"]: -150, b["id"]: 150}, "the replaced bill counts, the old one not"
    api.delete_bill(project, bill)
    assert api.balances(project) == {a["id"]: 0, b["id"]: 0}, "a deleted bill counts no more"


def make_balances(api, project, targets):
    """Members whose balances are ``targets`` (adding up to 0), made with one-ower bills against the first."""
    members = [api.member(project, f"S{i}") for i in range(len(targets))]
    for member, target in zip(members[1:], targets[1:]):
        if target > 0:
            api.bill(project, member, [members[0]], amount=target)
        elif target < 0:
            api.bill(project, members[0], [member], amount=-target)
    return members


SETTLEMENTS = [
    ("spec-example", [50, -30, -20], [(1, 0, 30), (2, 0, 20)]),
    ("one-debt", [-100, 100], [(0, 1, 100)]),
    ("tied-debtors", [-50, -50, 100], [(0, 2, 50), (1, 2, 50)]),
    ("tied-creditors", [30, 30, -60], [(2, 0, 30), (2, 1, 30)]),
    ("largest-first", [-10, 25, -40, 25], [(2, 1, 25), (2, 3, 15), (0, 3, 10)]),
    ("many", [120, -45, 33, -77, -31], None),
    ("partial-payments", [70, -20, -20, -30], [(3, 0, 30), (1, 0, 20), (2, 0, 20)]),
    ("chain", [1, 2, 3, -6], [(3, 2, 3), (3, 1, 2), (3, 0, 1)]),
]


@pytest.mark.requirement("R8")
@pytest.mark.category("state")
@pytest.mark.parametrize("targets,expected", [(t, e) for _, t, e in SETTLEMENTS], ids=[i for i, _, _ in SETTLEMENTS])
def test_the_settlement_plan_is_the_specified_one(api, http, checks, targets, expected):
    project = api.project()
    members = make_balances(api, project, targets)
    ids = [m["id"] for m in members]
    balances = api.balances(project)
    assert [balances[i] for i in ids] == targets, f"setup: balances {balances}"
    if expected is not None:  # member i of the worked plan has the i-th lowest id
        assert checks.model_settlements(dict(enumerate(targets))) == expected, "the oracle's model agrees with the worked plan"
    model = checks.model_settlements(dict(zip(ids, targets)))  # the service's ids decide the ties
    got = api.settlements(project)
    assert got == model, f"balances {targets}: expected the transfers {model}, got {got}"


@pytest.mark.requirement("R8")
@pytest.mark.category("workflow")
def test_paying_the_plan_settles_the_project(api, http):
    project = api.project()
    members = [api.member(project, f"T{i}", weight=w) for i, w in enumerate((1, 2, 1, 3))]
    api.bill(project, members[0], members, amount=7001)
    api.bill(project, members[2], members[1:], amount=1999)
    plan = api.settlements(project)
    assert plan, "an unsettled project has transfers"
    for source, target, amount in plan:  # a transfer is recorded as a bill: paid by the debtor, owed by the creditor
        api.bill(project, source, [target], amount=amount, description="settle up")
    assert set(api.balances(project).values()) == {0}, "after the plan's transfers every balance is 0"
    assert api.settlements(project) == []
