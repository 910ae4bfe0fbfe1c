"""Shared setup for the envelope-budget oracle: users, accounts, envelopes, transactions.

Every item registers its own users (unique usernames) and builds its own budget, so items never
depend on each other or on what the shared service already holds. A setup step that does not
answer as the contract says fails the item with a readable message: the candidate is at fault,
not the oracle.
"""

from __future__ import annotations

from typing import Any

import requests

from pytest_backendbench.http.accounts import Account as User
from pytest_backendbench.http.accounts import AccountsApi, api_fixture, leak_checks_fixture, role_fixture
from pytest_backendbench.http.api import unique

DAY = "2025-03-10"


class Api(AccountsApi):
    """Setup and inspection helpers on top of the ``http`` fixture; users register themselves."""

    user = AccountsApi.register

    # ---------------------------------------------------------------- budget objects

    def account(self, user: User, opening_balance: int = 0, **fields: Any) -> dict[str, Any]:
        """A new account of ``user``."""
        body = {"name": fields.pop("name", unique("Account")), "opening_balance": opening_balance, **fields}
        return self.ok(self.http.post("/accounts", json=body, headers=user.headers), 201, "open an account")

    def envelope(self, user: User, name: str | None = None, **fields: Any) -> dict[str, Any]:
        """A new envelope of ``user``."""
        body = {"name": name or unique("Envelope"), **fields}
        return self.ok(self.http.post("/envelopes", json=body, headers=user.headers), 201, "create an envelope")

    def post_tx(self, user: User, **fields: Any) -> requests.Response:
        """POST /transactions with ``fields`` (date defaults to DAY); the raw response."""
        body = {"date": DAY, **fields}
        return self.http.post("/transactions", json=body, headers=user.headers)

    def tx(self, user: User, **fields: Any) -> dict[str, Any]:
        """A transaction that must be accepted."""
        return self.ok(self.post_tx(user, **fields), 201, f"record a transaction {fields}")

    def income(self, user: User, account: dict[str, Any], amount: int, envelope: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
        """Income into ``account`` (assigned to ``envelope`` when given)."""
        fields: dict[str, Any] = {"type": "income", "account_id": account["id"], "amount": amount, **extra}
        if envelope is not None:
            fields["envelope_id"] = envelope["id"]
        return self.tx(user, **fields)

    def expense(self, user: User, account: dict[str, Any], envelope: dict[str, Any], amount: int, **extra: Any) -> dict[str, Any]:
        """Spending from ``envelope`` through ``account``."""
        return self.tx(user, type="expense", account_id=account["id"], envelope_id=envelope["id"], amount=amount, **extra)

    def funded(self, user: User, amount: int) -> tuple[dict[str, Any], dict[str, Any]]:
        """A new account and a new envelope of ``user``, with income of ``amount`` into both (the usual start)."""
        account, envelope = self.account(user), self.envelope(user)
        self.income(user, account, amount, envelope)
        return account, envelope

    def envelopes_a_b(self, user: User, assigned: int) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        """An account opened with 300, envelopes "A" and "B", and ``assigned`` of the unassigned money moved into A."""
        account, a, b = self.account(user, opening_balance=300), self.envelope(user, name="A"), self.envelope(user, name="B")
        self.transfer(user, None, a, assigned)
        return account, a, b

    def transfer(self, user: User, source: dict[str, Any] | None, target: dict[str, Any] | None, amount: int, **extra: Any) -> dict[str, Any]:
        """Move money between envelopes (None = unassigned)."""
        fields: dict[str, Any] = {"type": "transfer", "amount": amount, **extra}
        if source is not None:
            fields["from_envelope_id"] = source["id"]
        if target is not None:
            fields["to_envelope_id"] = target["id"]
        return self.tx(user, **fields)

    # ---------------------------------------------------------------- reading back

    def get(self, user: User, path: str) -> Any:
        """GET a path that must answer 200."""
        return self.ok(self.http.get(path, headers=user.headers), 200, f"read {path}")

    def balance(self, user: User, thing: dict[str, Any]) -> int:
        """The current balance of an account or envelope (by its id prefix-free path)."""
        kind = "accounts" if "kind" in thing else "envelopes"
        return int(self.get(user, f"/{kind}/{thing['id']}")["balance"])

    def summary(self, user: User) -> dict[str, Any]:
        """GET /summary."""
        return dict(self.get(user, "/summary"))

    def totals(self, user: User) -> tuple[tuple[Any, Any, Any], dict[str, Any]]:
        """The summary's (accounts_total, envelopes_total, unassigned), and the summary for messages."""
        summary = self.summary(user)
        return (summary.get("accounts_total"), summary.get("envelopes_total"), summary.get("unassigned")), summary

    def unassigned(self, user: User) -> int:
        """The user's unassigned money."""
        return int(self.summary(user)["unassigned"])

    def transactions(self, user: User, **params: Any) -> dict[str, Any]:
        """One page of the transaction list (the envelope)."""
        response = self.http.get("/transactions", params=params, headers=user.headers)
        return dict(self.ok(response, 200, f"list transactions with {params}"))

    def tx_ids(self, user: User, **params: Any) -> list[str]:
        """Ids of one page of the transaction list."""
        return [t["id"] for t in self.transactions(user, **params)["items"]]

    def month(self, user: User, month: str) -> dict[str, Any]:
        """GET /months/{month}."""
        return dict(self.get(user, f"/months/{month}"))

    def balances(self, user: User, *things: dict[str, Any]) -> list[int]:
        """Balances of several accounts/envelopes, in order."""
        return [self.balance(user, t) for t in things]


api = api_fixture(Api)


alice = role_fixture("alice", lambda api: api.user("alice"), "A fresh user.")


bob = role_fixture("bob", lambda api: api.user("bob"), "Another fresh user, for isolation checks.")


http_response_checks = leak_checks_fixture()
