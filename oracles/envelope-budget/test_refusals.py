"""Refusals that change nothing, ids in bodies, guards one condition at a time (issue 35).

spec.md, Errors: "A request that fails changes nothing" (Running: "a request either applies
completely or not at all"). Each transaction type is sent with one field invalid at each
position and the others valid (http/refusals.py), and every state refusal is sent with a body
that is otherwise valid; then the caller's whole budget is read back. Ids in a body: "another
user's account, envelope or transaction simply does not exist for the caller (… `422` naming
the field when its id is sent in a body)" — so does a deleted one, and one of the other kind.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pytest_backendbench.http.refusals import one_invalid_field, unchanged

pytestmark = [pytest.mark.tier("r1"), pytest.mark.category("state")]


def budget(api: Any, user: Any) -> tuple[Any, ...]:
    """Everything of ``user``'s the service answers: accounts, envelopes (archived too), transactions, summary, the month."""
    return (api.get(user, "/accounts")["items"], api.get(user, "/envelopes?include_archived=true")["items"],
            api.tx_ids(user, limit=100), api.summary(user), api.month(user, "2025-03"))


def world(api: Any, user: Any) -> dict[str, Any]:
    """An account of 1,000, of which 400 sit in Groceries, and an empty Rent envelope."""
    account = api.account(user, opening_balance=1_000)
    groceries, rent = api.envelope(user, name="Groceries"), api.envelope(user, name="Rent")
    api.transfer(user, None, groceries, 400, date="2025-03-01")
    return {"account": account, "groceries": groceries, "rent": rent}


BODIES: dict[str, dict[str, str]] = {
    "income": {"type": "income", "account_id": "account", "envelope_id": "rent", "amount": "", "date": "", "memo": ""},
    "expense": {"type": "expense", "account_id": "account", "envelope_id": "groceries", "amount": "", "date": "", "memo": ""},
    "transfer": {"type": "transfer", "from_envelope_id": "groceries", "to_envelope_id": "rent", "amount": "", "date": "", "memo": ""},
}
"""Each type's body in key order; id fields name an entry of ``world``."""
COMMON = {"amount": 150, "date": "2025-03-12", "memo": "valid memo"}
BAD = {"date": ["2025-02-30", "2025-3-12"], "amount": [0, 10.5, "10", True], "memo": ["m" * 201, None],
       "account_id": ["no-such-account", 5], "envelope_id": ["no-such-envelope", 5],
       "from_envelope_id": ["no-such-envelope", 5], "to_envelope_id": ["no-such-envelope", 5]}

CASES = [pytest.param(kind, *case.values, id=f"{kind}-{case.id}")
         for kind, order in BODIES.items() for case in one_invalid_field(order, {f: BAD[f] for f in order if f in BAD})]


def valid_body(kind: str, things: dict[str, Any]) -> dict[str, Any]:
    return {key: (things[value]["id"] if key.endswith("_id") else COMMON.get(key, value)) for key, value in BODIES[kind].items()}


@pytest.mark.requirement("R19", "R27", "R28")
@pytest.mark.parametrize("kind,field,shape", CASES)
def test_a_transaction_with_one_invalid_field_changes_nothing(api, alice, kind, field, shape):
    things = world(api, alice)
    body = {**valid_body(kind, things), field: shape[field]}
    with unchanged(lambda: budget(api, alice), f"a {kind} with an invalid {field}"):
        problem = api.validation_problem(api.post_tx(alice, **body), [field], f"a {kind} whose only invalid field is {field}={shape[field]!r}")
        assert problem is None, problem


# ---------------------------------------------------------------- ids in a body: another user's, a deleted one, the other kind


def bobs(api: Any, bob: Any, kind: str) -> str:
    return str((api.account(bob) if kind == "account" else api.envelope(bob))["id"])


def deleted(api: Any, user: Any, kind: str) -> str:
    made = api.account(user) if kind == "account" else api.envelope(user)
    api.ok(api.http.delete(f"/{kind}s/{made['id']}", headers=user.headers), 204, f"delete the {kind}")
    return str(made["id"])


def other_kind(api: Any, things: dict[str, Any], kind: str) -> str:
    return str(things["groceries" if kind == "account" else "account"]["id"])


FIELDS = {"income.account_id": "account", "income.envelope_id": "envelope", "expense.account_id": "account",
          "expense.envelope_id": "envelope", "transfer.from_envelope_id": "envelope", "transfer.to_envelope_id": "envelope"}


@pytest.mark.requirement("R14", "R15", "R27")
@pytest.mark.parametrize("source", ["another-users", "deleted", "other-kind"])
@pytest.mark.parametrize("where", list(FIELDS))
def test_an_id_the_caller_cannot_name_in_a_body_gets_422(api, alice, bob, where, source):
    things = world(api, alice)
    kind, field = where.split(".")
    wanted = FIELDS[where]
    ids: dict[str, Callable[[], str]] = {"another-users": lambda: bobs(api, bob, wanted), "deleted": lambda: deleted(api, alice, wanted),
                                         "other-kind": lambda: other_kind(api, things, wanted)}
    body = {**valid_body(kind, things), field: ids[source]()}
    with unchanged(lambda: (budget(api, alice), budget(api, bob)), f"a {kind} naming {source.replace('-', ' ')} {wanted} as {field}"):
        problem = api.validation_problem(api.post_tx(alice, **body), [field], f"a {kind} whose {field} is {source.replace('-', ' ')} {wanted}")
        assert problem is None, problem


# ---------------------------------------------------------------- refusals for the state, and guards one condition at a time


def short_envelope(api: Any, user: Any, things: dict[str, Any]) -> dict[str, Any]:
    return {"type": "expense", "account_id": things["account"]["id"], "envelope_id": things["groceries"]["id"], "amount": 401}


def short_account(api: Any, user: Any, things: dict[str, Any]) -> dict[str, Any]:
    poor = api.account(user, opening_balance=0)
    api.income(user, poor, 50)
    return {"type": "expense", "account_id": poor["id"], "envelope_id": things["groceries"]["id"], "amount": 60}


def short_source(api: Any, user: Any, things: dict[str, Any]) -> dict[str, Any]:
    return {"type": "transfer", "from_envelope_id": things["groceries"]["id"], "to_envelope_id": things["rent"]["id"], "amount": 401}


def short_unassigned(api: Any, user: Any, things: dict[str, Any]) -> dict[str, Any]:
    return {"type": "transfer", "to_envelope_id": things["rent"]["id"], "amount": 601}


def archived_target(api: Any, user: Any, things: dict[str, Any]) -> dict[str, Any]:
    api.ok(api.http.patch(f"/envelopes/{things['rent']['id']}", json={"archived": True}, headers=user.headers), 200, "archive Rent")
    return {"type": "income", "account_id": things["account"]["id"], "envelope_id": things["rent"]["id"], "amount": 10}


STATE_REFUSALS = {"expense-envelope-short": (short_envelope, "insufficient_funds"), "expense-account-short": (short_account, "insufficient_funds"),
                  "transfer-source-short": (short_source, "insufficient_funds"), "transfer-unassigned-short": (short_unassigned, "insufficient_funds"),
                  "income-into-archived": (archived_target, "conflict")}


@pytest.mark.requirement("R12", "R17", "R18", "R27")
@pytest.mark.parametrize("case", list(STATE_REFUSALS))
def test_a_transaction_refused_for_the_state_changes_nothing(api, alice, case):
    things = world(api, alice)
    setup, code = STATE_REFUSALS[case]
    body = {"date": "2025-03-12", "memo": "valid memo", **setup(api, alice, things)}
    with unchanged(lambda: budget(api, alice), f"a transaction refused with {code} ({case})"):
        api.error(api.post_tx(alice, **body), 409, code, f"{case}: every field valid, the state refuses it")


@pytest.mark.requirement("R18", "R21")
def test_a_transfer_from_unassigned_needs_unassigned_money_not_account_money(api, alice):
    """Unassigned money normally sits in the accounts: here the account holds 100, all of it in an envelope, so nothing is unassigned."""
    account, envelope, spare = api.account(alice), api.envelope(alice, name="Full"), api.envelope(alice, name="Spare")
    api.income(alice, account, 100, envelope)
    assert (api.balance(alice, account), api.unassigned(alice)) == (100, 0)
    with unchanged(lambda: budget(api, alice), "a transfer of unassigned money that is all in an envelope"):
        r = api.post_tx(alice, type="transfer", to_envelope_id=spare["id"], amount=50)
        api.error(r, 409, "insufficient_funds", "assigning 50 when the account's 100 is all in an envelope")
    api.transfer(alice, envelope, None, 50)
    api.transfer(alice, None, spare, 50)
    assert api.balances(alice, account, envelope, spare) == [100, 50, 50] and api.unassigned(alice) == 0
