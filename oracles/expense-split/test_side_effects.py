"""What one request does to the rest of the project: balances, plans, other bills, other members, other projects.

spec.md: "`paid_cents` is the sum of the amounts of the bills the member paid, `owed_cents` the sum
of the member's shares"; the settlement plan is computed "from the balances"; "A deleted bill is
deleted from `bills` together with its `bill_owers` rows".
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("side_effects")]


@pytest.mark.requirement("R5", "R7")
def test_a_new_bill_moves_only_its_members_balances(api, http):
    project, other = api.project(), api.project()
    a, b, c = (api.member(project, n) for n in ("Al", "Bo", "Cy"))
    stranger = api.member(other, "Al")
    api.bill(other, stranger, [stranger], amount=100)
    api.bill(project, a, [b], amount=700)
    assert api.balances(project) == {a["id"]: 700, b["id"]: -700, c["id"]: 0}, "Cy took no part"
    assert api.balance_items(other)[0]["paid_cents"] == 100 and api.balances(other) == {stranger["id"]: 0}, "another project is untouched"


@pytest.mark.requirement("R5", "R6")
def test_deleting_or_replacing_a_bill_leaves_the_other_bills_alone(api, http):
    project = api.project()
    a, b, c = (api.member(project) for _ in range(3))
    kept = api.bill(project, a, [a, b, c], amount=1000, date="2030-01-01")
    replaced = api.bill(project, b, [a, c], amount=301, date="2030-01-02")
    gone = api.bill(project, c, [b], amount=50, date="2030-01-03")
    api.ok(api.put_bill(project, replaced, api.bill_body(b, [b], amount=5)), 200, "replace one bill")
    api.delete_bill(project, gone)
    keys = ("id", "payer_id", "amount_cents", "date", "description", "owers", "shares")
    assert api.doc(api.get_bill(project, kept), keys) == api.doc(kept, keys), "the untouched bill keeps its shares"
    assert [x["id"] for x in api.bills(project)] == [replaced["id"], kept["id"]]


@pytest.mark.requirement("R4", "R7")
def test_a_rename_shows_in_the_balances(api, http):
    project = api.project()
    a = api.member(project, "Old name")
    api.bill(project, a, [a], amount=10)
    api.ok(api.patch_member(project, a, name="New name"), 200, "rename")
    assert [i["name"] for i in api.balance_items(project)] == ["New name"]


@pytest.mark.requirement("R4", "R7", "R8")
def test_deactivating_keeps_the_member_in_balances_and_out_of_the_plan(api, http):
    project = api.project()
    a, b, idle = api.member(project), api.member(project), api.member(project)
    api.bill(project, a, [b], amount=200)
    api.ok(api.patch_member(project, idle, active=False), 200, "deactivate the idle member")
    items = api.balance_items(project)
    assert [(i["member_id"], i["active"], i["balance_cents"]) for i in items] == sorted([(a["id"], True, 200), (b["id"], True, -200), (idle["id"], False, 0)])
    assert api.settlements(project) == [(b["id"], a["id"], 200)], "a zero balance takes no part in the plan"


@pytest.mark.requirement("R7", "R8")
def test_the_plan_follows_every_change(api, http):
    project = api.project()
    a, b, c = (api.member(project) for _ in range(3))
    first = api.bill(project, a, [b, c], amount=600)
    low, high = sorted((b["id"], c["id"]))  # tied debtors: the lower member id pays first
    assert api.settlements(project) == [(low, a["id"], 300), (high, a["id"], 300)]
    api.bill(project, c, [a], amount=300)
    assert api.settlements(project) == [(b["id"], a["id"], 300)], "c's debt is paid by the new bill"
    api.delete_bill(project, first)
    assert api.settlements(project) == [(a["id"], c["id"], 300)], "without the first bill a owes c"


@pytest.mark.requirement("R4", "R6")
def test_a_member_added_later_is_in_no_earlier_bill(api, http):
    project, a, b = api.pair()
    bill = api.bill(project, a, [a, b], amount=1000)
    late = api.member(project, weight=5)
    assert api.get_bill(project, bill)["owers"] == sorted([a["id"], b["id"]]), "a new member joins no existing bill"
    assert api.balances(project)[late["id"]] == 0
