"""Shared setup for the timesheets oracle: users and teams, catalogue, entries, weeks.

Entries and weeks belong to users, so every item records time only as users it creates itself
(never as the bootstrap administrator, whose weeks every item shares); customers are global, so
their names are unique per item. Lists are filtered to the item's own data; no item asserts
global counts. Dates are fixed (week 2026-W10 by default): a fresh user has nothing anywhere.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import pytest
import requests

from pytest_backendbench.http.accounts import Account as Staff
from pytest_backendbench.http.accounts import AccountsApi, admin_fixture, api_fixture, leak_checks_fixture, staff_fixtures

MONDAY = date(2026, 3, 2)   # 2026-W10
WEEK = "2026-W10"


def day(offset: int = 0) -> str:
    """A date ``offset`` days after Monday 2026-03-02 (week 2026-W10)."""
    return (MONDAY + timedelta(days=offset)).isoformat()


def week_of(value: str) -> str:
    """The ISO week of a date, as spec.md writes it."""
    year, week, _ = date.fromisoformat(value).isocalendar()
    return f"{year:04d}-W{week:02d}"


@dataclass
class Work:
    """A customer, a project and an activity of it, all active."""

    customer: dict[str, Any]
    project: dict[str, Any]
    activity: dict[str, Any]


class Api(AccountsApi):
    """Setup and inspection helpers on top of the ``http`` fixture."""

    staff_username = staticmethod(lambda role: f"{role[:3]}_{uuid.uuid4().hex[:12]}")

    day = staticmethod(day)
    week_of = staticmethod(week_of)

    # ---------------------------------------------------------------- users

    def staff(self, role: str = "employee", manager: Staff | None = None) -> Staff:
        """A new user with ``role`` (in ``manager``'s team when given), logged in."""
        return super().staff(role, **({"manager_id": manager.id} if manager else {}))

    def team(self, size: int = 1) -> tuple[Staff, list[Staff]]:
        """A new manager and ``size`` employees in their team."""
        manager = self.staff("manager")
        return manager, [self.staff("employee", manager) for _ in range(size)]

    def patch_user(self, user: Staff, **fields: Any) -> dict[str, Any]:
        """PATCH /users/{id} by the bootstrap admin (must succeed)."""
        return dict(self.ok(self.http.patch(f"/users/{user.id}", json=fields, headers=self.admin.headers), 200, f"change user {fields}"))

    # ---------------------------------------------------------------- catalogue

    def customer(self, **fields: Any) -> dict[str, Any]:
        """A new customer (unique name)."""
        body = {"name": f"Customer {uuid.uuid4().hex[:12]}", **fields}
        return dict(self.ok(self.http.post("/customers", json=body, headers=self.admin.headers), 201, "create a customer"))

    def project(self, customer: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
        """A new project (of a new customer unless one is given)."""
        body = {"customer_id": (customer or self.customer())["id"], "name": f"Project {uuid.uuid4().hex[:8]}", **fields}
        return dict(self.ok(self.http.post("/projects", json=body, headers=self.admin.headers), 201, "create a project"))

    def activity(self, project: dict[str, Any], **fields: Any) -> dict[str, Any]:
        """A new activity of ``project``."""
        body = {"project_id": project["id"], "name": f"Activity {uuid.uuid4().hex[:8]}", **fields}
        return dict(self.ok(self.http.post("/activities", json=body, headers=self.admin.headers), 201, "create an activity"))

    def work(self, **project_fields: Any) -> Work:
        """A new customer, project and activity."""
        customer = self.customer()
        project = self.project(customer, **project_fields)
        return Work(customer, project, self.activity(project))

    def set_active(self, kind: str, item: dict[str, Any], active: bool) -> None:
        """PATCH /{kind}/{id} with active (must succeed)."""
        self.ok(self.http.patch(f"/{kind}/{item['id']}", json={"active": active}, headers=self.admin.headers), 200, f"set {kind} active={active}")

    def get(self, path: str, by: Staff | None = None, **params: Any) -> Any:
        """GET that must answer 200."""
        return self.ok(self.http.get(path, params=params or None, headers=(by or self.admin).headers), 200, f"read {path}")

    # ---------------------------------------------------------------- entries

    def post_entry(self, by: Staff, work: Work, when: str | None = None, start: str | None = None, end: str | None = None,
                   duration: int | None = None, **fields: Any) -> requests.Response:
        """POST /entries (times when ``start``/``end`` are given, else ``duration`` or 60 minutes); the raw response."""
        body: dict[str, Any] = {"project_id": work.project["id"], "activity_id": work.activity["id"], "date": when or day()}
        if start is not None or end is not None:
            body.update({k: v for k, v in (("start", start), ("end", end)) if v is not None})
        else:
            body["duration_minutes"] = 60 if duration is None else duration
        body.update(fields)
        return self.http.post("/entries", json=body, headers=by.headers)

    def entry(self, by: Staff, work: Work, when: str | None = None, start: str | None = None, end: str | None = None,
              duration: int | None = None, **fields: Any) -> dict[str, Any]:
        """A new entry (must succeed)."""
        return dict(self.ok(self.post_entry(by, work, when, start, end, duration, **fields), 201, "record an entry"))

    def entries(self, by: Staff, **params: Any) -> list[dict[str, Any]]:
        """GET /entries (first 100) with the filters."""
        return list(self.get("/entries", by=by, limit=100, **params)["items"])

    # ---------------------------------------------------------------- weeks

    def sheet_path(self, user: Staff, week: str = WEEK, action: str = "") -> str:
        return f"/timesheets/{user.id}/{week}" + (f"/{action}" if action else "")

    def act(self, user: Staff, action: str, by: Staff, week: str = WEEK, **body: Any) -> requests.Response:
        """POST /timesheets/{user}/{week}/{action} as ``by``; the raw response."""
        return self.http.post(self.sheet_path(user, week, action), json=body if body else None, headers=by.headers)

    def sheet(self, user: Staff, week: str = WEEK, by: Staff | None = None) -> dict[str, Any]:
        """The user's timesheet of ``week``."""
        return dict(self.get(self.sheet_path(user, week), by=by or user))

    def submitted(self, user: Staff, week: str = WEEK) -> dict[str, Any]:
        """Submit the user's week (must succeed)."""
        return dict(self.ok(self.act(user, "submit", user, week), 200, f"submit {week}"))

    def report(self, by: Staff, group_by: str = "project", first: str | None = None, last: str | None = None, **params: Any) -> dict[str, Any]:
        """GET /reports/summary (must succeed); default range: week 2026-W10."""
        return dict(self.get("/reports/summary", by=by, **{"from": first or day(0), "to": last or day(6), "group_by": group_by, **params}))


api = api_fixture(Api)
admin = admin_fixture
(employee,) = staff_fixtures("employee")


@pytest.fixture
def work(api: Api) -> Work:
    """A fresh customer, project and activity."""
    return api.work()


http_response_checks = leak_checks_fixture()
