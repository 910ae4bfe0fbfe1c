"""The worked examples spec.md gives, each an item of its own and checked exactly (issue 35).

The three refused deletions of spec.md (Transactions, `DELETE`) are
`test_deletion.py::test_impossible_undo_gets_409[*]`, and `2025-02-30` is sent by
`test_mixed_failures.py` and `test_transactions.py`; the examples left are here.
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R19", "R28")
@pytest.mark.category("validation")
@pytest.mark.parametrize("amount", [10.5, "10", True], ids=["10.5", "string-10", "true"])
def test_example_amounts_that_are_not_integers_are_invalid(api, alice, amount):
    """Conventions, Money: "A request amount that is not an integer (`10.5`, `"10"`, `true`) is invalid"."""
    account = api.account(alice)
    problem = api.validation_problem(api.post_tx(alice, type="income", account_id=account["id"], amount=amount), ["amount"], f"amount {amount!r}")
    assert problem is None, problem
    assert api.balance(alice, account) == 0, "the refused income reached the account"


@pytest.mark.requirement("R10")
@pytest.mark.category("state")
def test_example_rent_and_rent_clash(api, http, alice):
    """Envelopes: "`Rent` and `rent` clash"."""
    api.envelope(alice, name="Rent")
    api.error(http.post("/envelopes", json={"name": "rent"}, headers=alice.headers), 409, "conflict", "creating 'rent' next to 'Rent'")
    assert [e["name"] for e in api.get(alice, "/envelopes?include_archived=true")["items"]] == ["Rent"]
