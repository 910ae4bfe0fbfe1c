"""Helpers for the expense-split oracle.

Every item creates its own projects (fresh slugs and passwords), members and bills and looks
only at those: projects are isolated by the spec's access rules, so no item sees another's data,
and every item passes alone, in any order and twice in a row.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import pytest
import requests

from pytest_backendbench.http.accounts import AccountsApi, api_fixture, fresh_password, leak_checks_fixture, restart, task_checks_fixture
from pytest_backendbench.http.checks import table_ids

MEMBER_KEYS = ("id", "name", "weight", "active")
BILL_KEYS = ("id", "payer_id", "amount_cents", "date", "description", "owers", "shares")


def fresh_slug(prefix: str = "p") -> str:
    """A slug no project has: lower-case letters, digits and '-'."""
    return f"{prefix}-{uuid.uuid4().hex[:14]}"


@dataclass
class Project:
    """A project this item created, with a token that opens it."""

    slug: str
    name: str
    password: str
    token: str

    @property
    def auth(self) -> dict[str, str]:
        """The Authorization header of this project's token."""
        return {"Authorization": f"Bearer {self.token}"}

    def path(self, rest: str = "") -> str:
        """``/api/projects/<slug>`` + ``rest``."""
        return f"/api/projects/{self.slug}{rest}"


class Api(AccountsApi):
    """Setup and inspection helpers on top of the ``http`` fixture; a setup step that fails fails the item."""

    errors_carry_message = True
    fresh_slug = staticmethod(fresh_slug)
    fresh_password = staticmethod(fresh_password)

    @staticmethod
    def shares(share_of: dict[int, int]) -> list[dict[str, Any]]:
        """A bill's ``shares`` answer for member id -> cents: in ascending member id order, whatever
        order the service chose its ids in (the spec says only that it chooses them)."""
        return [{"member_id": m, "share_cents": c} for m, c in sorted(share_of.items())]

    @staticmethod
    def doc(value: Any, keys: tuple[str, ...]) -> dict[str, Any]:
        """A member or bill reduced to its documented keys (answers may carry extra fields)."""
        return {k: value.get(k) for k in keys}

    # ---------------------------------------------------------------- projects and tokens

    def create_project(self, **fields: Any) -> requests.Response:
        """POST /api/projects with a valid body (fresh slug and password) overridden by ``fields``."""
        body = {"slug": fresh_slug(), "name": self.unique("Trip", " ", 8), "password": fresh_password(), **fields}
        return self.http.post("/api/projects", json=body)

    def post_token(self, slug: str, password: Any) -> requests.Response:
        """POST /api/projects/{slug}/token with ``{"password": password}``; the raw response."""
        return self.http.post(f"/api/projects/{slug}/token", json={"password": password})

    def token(self, slug: str, password: str) -> str:
        """A new token for the project (must succeed)."""
        answer = self.ok(self.post_token(slug, password), 200, "obtain a token")
        token = answer.get("token") if isinstance(answer, dict) else None
        if not isinstance(token, str) or not token:
            pytest.fail(f"setup step 'obtain a token' answered no token string: {answer!r}", pytrace=False)
        return token

    def project(self, name: str | None = None, password: str | None = None, slug: str | None = None) -> Project:
        """A new project and a token for it (must succeed)."""
        body = {"slug": slug or fresh_slug(), "name": name or self.unique("Trip", " ", 8), "password": password or fresh_password()}
        self.ok(self.http.post("/api/projects", json=body), 201, "create a project")
        return Project(body["slug"], body["name"], body["password"], self.token(body["slug"], body["password"]))

    def get(self, project: Project, rest: str = "", token_of: Project | None = None) -> requests.Response:
        """GET a path of ``project`` with the token of ``token_of`` (default: its own)."""
        return self.http.get(project.path(rest), headers=(token_of or project).auth)

    # ---------------------------------------------------------------- members

    def post_member(self, project: Project, **body: Any) -> requests.Response:
        return self.http.post(project.path("/members"), json=body, headers=project.auth)

    def member(self, project: Project, name: str | None = None, weight: int | None = None) -> dict[str, Any]:
        """A new member (must succeed)."""
        body: dict[str, Any] = {"name": name or self.unique("Ann", " ", 6)}
        if weight is not None:
            body["weight"] = weight
        return dict(self.ok(self.post_member(project, **body), 201, f"add the member {body}"))

    def pair(self, first: str | None = None, second: str | None = None) -> tuple[Project, dict[str, Any], dict[str, Any]]:
        """A new project with two new members (named ``first`` and ``second``): (project, first, second)."""
        project = self.project()
        return project, self.member(project, first), self.member(project, second)

    def members(self, project: Project) -> list[dict[str, Any]]:
        return list(self.ok(self.get(project, "/members"), 200, "list the members")["items"])

    def patch_member(self, project: Project, member: dict[str, Any] | int, **body: Any) -> requests.Response:
        member_id = member if isinstance(member, int) else member["id"]
        return self.http.patch(project.path(f"/members/{member_id}"), json=body, headers=project.auth)

    # ---------------------------------------------------------------- bills

    @staticmethod
    def bill_body(payer: dict[str, Any] | int, owers: list[Any], amount: int = 1000, date: str = "2030-01-15",
                  description: str | None = None) -> dict[str, Any]:
        """A bill body; members may be given as dicts or ids."""
        ident = (lambda m: m if isinstance(m, int) else m["id"])
        return {"payer_id": ident(payer), "amount_cents": amount, "date": date, "description": description or f"Bill {uuid.uuid4().hex[:6]}",
                "owers": [ident(o) for o in owers]}

    def post_bill(self, project: Project, body: Any) -> requests.Response:
        return self.http.post(project.path("/bills"), json=body, headers=project.auth)

    def put_bill(self, project: Project, bill: dict[str, Any] | int, body: Any) -> requests.Response:
        bill_id = bill if isinstance(bill, int) else bill["id"]
        return self.http.put(project.path(f"/bills/{bill_id}"), json=body, headers=project.auth)

    def bill(self, project: Project, payer: Any, owers: list[Any], amount: int = 1000, date: str = "2030-01-15",
             description: str | None = None) -> dict[str, Any]:
        """A new bill (must succeed)."""
        body = self.bill_body(payer, owers, amount, date, description)
        return dict(self.ok(self.post_bill(project, body), 201, f"record the bill {body}"))

    def bills(self, project: Project) -> list[dict[str, Any]]:
        return list(self.ok(self.get(project, "/bills"), 200, "list the bills")["items"])

    def get_bill(self, project: Project, bill: dict[str, Any]) -> dict[str, Any]:
        return dict(self.ok(self.get(project, f"/bills/{bill['id']}"), 200, "read the bill"))

    def delete_bill(self, project: Project, bill: dict[str, Any]) -> None:
        self.ok(self.http.delete(project.path(f"/bills/{bill['id']}"), headers=project.auth), 204, "delete the bill")

    # ---------------------------------------------------------------- balances and settlements

    def balance_items(self, project: Project) -> list[dict[str, Any]]:
        return list(self.ok(self.get(project, "/balances"), 200, "read the balances")["items"])

    def balances(self, project: Project) -> dict[int, int]:
        """member id -> balance_cents."""
        return {int(b["member_id"]): b["balance_cents"] for b in self.balance_items(project)}

    def settlements(self, project: Project) -> list[tuple[int, int, int]]:
        """The settlement plan as (from_id, to_id, amount_cents) in the answered order."""
        items = self.ok(self.get(project, "/settlements"), 200, "read the settlements")["items"]
        return [(t.get("from_id"), t.get("to_id"), t.get("amount_cents")) for t in items]

    def unknown_bill_id(self, project: Project, payer: dict[str, Any]) -> int:
        """A bill id nothing has: one this item deleted."""
        bill = self.bill(project, payer, [payer])
        self.delete_bill(project, bill)
        return int(bill["id"])


api = api_fixture(Api)


# ---------------------------------------------------------------- the spec's computations, as the items' model


def model_shares(amount: int, weights: dict[int, int]) -> dict[int, int]:
    """spec.md "Splitting a bill": floor shares, the leftover cents one each by ascending member id."""
    total = sum(weights.values())
    ordered = sorted(weights)
    result = {m: amount * weights[m] // total for m in ordered}
    for m in ordered[: amount - sum(result.values())]:
        result[m] += 1
    return result


def model_settlements(balances: dict[int, int]) -> list[tuple[int, int, int]]:
    """spec.md "Balances and settlements": lowest debtor pays highest creditor, ties by lower id."""
    left = {m: b for m, b in balances.items() if b}
    plan = []
    while left:
        debtor = min(left, key=lambda m: (left[m], m))
        creditor = min(left, key=lambda m: (-left[m], m))
        amount = min(-left[debtor], left[creditor])
        plan.append((debtor, creditor, amount))
        left[debtor] += amount
        left[creditor] -= amount
        left = {m: b for m, b in left.items() if b}
    return plan


# hostile path ids: beside the shared ones, a fraction and a word
checks = task_checks_fixture(restart=restart, task_ids=table_ids("bills", "1.5", "abc"), model_shares=model_shares, model_settlements=model_settlements)


http_response_checks = leak_checks_fixture()
