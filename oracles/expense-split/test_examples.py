"""The spec's own worked examples, each an item checked exactly (issue 35).

spec.md "Splitting a bill": "Example: 1000 cents, owers 3 (weight 1), 5 (weight 1), 9 (weight 1):
shares 334, 333, 333. Example: 1001 cents, owers 4 (weight 2) and 7 (weight 1): 667 + 333 = 1000,
one cent left: 668 and 333." "Balances and settlements": "Example: balances A +50, B -30, C -20
(A < B < C by id): B pays A 30, then C pays A 20." The service chooses its ids, so the members
take the examples' roles in the order of the ids it answered (the lowest id is the example's
lowest), and the weights are set after the ids are known.
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r1"), pytest.mark.category("state")]

SPLIT_EXAMPLES = [
    # (amount, weights of the owers in ascending id order, the example's shares in that order)
    pytest.param(1000, [1, 1, 1], [334, 333, 333], id="1000-by-three-equal"),
    pytest.param(1001, [2, 1], [668, 333], id="1001-by-2-and-1"),
]


def members_by_id(api, project, count):
    """``count`` new members, in ascending id order (the service's ids)."""
    return sorted((api.member(project, f"Ex{i}") for i in range(count)), key=lambda m: m["id"])


@pytest.mark.requirement("R6")
@pytest.mark.parametrize("amount,weights,shares", SPLIT_EXAMPLES)
def test_the_split_examples(api, http, amount, weights, shares):
    project = api.project()
    payer = api.member(project, "Payer")
    owers = members_by_id(api, project, len(weights))
    for ower, weight in zip(owers, weights):
        if weight != 1:
            api.ok(api.patch_member(project, ower, weight=weight), 200, f"weight {weight}")
    bill = api.bill(project, payer, owers, amount=amount)
    expected = [{"member_id": o["id"], "share_cents": s} for o, s in zip(owers, shares)]
    assert bill.get("shares") == expected, f"spec example: {amount} cents by weights {weights} is {shares}; got {bill.get('shares')}"
    assert [api.balances(project)[o["id"]] for o in owers] == [-s for s in shares], "the balances follow the example's shares"


@pytest.mark.requirement("R7", "R8")
def test_the_settlement_example(api, http):
    project = api.project()
    a, b, c = members_by_id(api, project, 3)
    api.bill(project, a, [b], amount=30)
    api.bill(project, a, [c], amount=20)
    assert api.balances(project) == {a["id"]: 50, b["id"]: -30, c["id"]: -20}, "setup: A +50, B -30, C -20"
    assert api.settlements(project) == [(b["id"], a["id"], 30), (c["id"], a["id"], 20)], "spec example: B pays A 30, then C pays A 20"
