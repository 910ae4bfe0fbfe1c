"""Helpers for the helpdesk oracle.

Users, tickets and SLA policies are global in this service, so every item registers its own
customers (fresh emails), creates its own agents through the bootstrap admin and looks only at
its own tickets (lists are filtered by the item's own customer_id). SLA policies are one per
priority and shared: an item that depends on a policy sets it (or deletes it) right before it
creates the tickets that use it, and due times are fixed when a ticket is created, so items do
not depend on each other. The bootstrap admin's credentials are those task.yaml promises.
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from dataclasses import dataclass
from typing import Any

import requests

from pytest_backendbench.http.accounts import AccountsApi, Bearer, api_fixture, leak_checks_fixture, restart, task_checks_fixture
from pytest_backendbench.http.api import brief
from pytest_backendbench.http.checks import injection_texts, table_ids
from pytest_backendbench.http.timestamps import instant

TICKET_KEYS = ("id", "title", "priority", "state", "customer_id", "assignee_id", "created_at", "first_response_at",
               "first_response_due_at", "resolution_due_at", "first_response_breached", "resolution_breached")
USER_KEYS = ("id", "email", "name", "role", "created_at")
ARTICLE_KEYS = ("id", "ticket_id", "author_id", "body", "internal", "created_at")
PASSWORD = "correct horse 42"
LONG = 3600
"""A target (seconds) no item outlives: a timer with it is never breached during an item."""
SHORT = 1
"""A target (seconds) an item waits out (``BREACH_WAIT``) to see a breach."""
BREACH_WAIT = 2.5


def fresh_email(prefix: str = "u") -> str:
    """A fresh lower-case email address."""
    return f"{prefix}.{uuid.uuid4().hex[:12]}@example.org"


def seconds_between(start: Any, end: Any) -> float | None:
    """``end - start`` in seconds for two timestamps of an answer, or None when either is not one."""
    a, b = instant(start), instant(end)
    return None if a is None or b is None else (b - a).total_seconds()


@dataclass
class Actor(Bearer):
    """A logged-in user the oracle calls with."""

    id: int
    email: str
    role: str
    token: str


class Api(AccountsApi):
    """Setup and inspection helpers on top of the ``http`` fixture; a setup step that fails fails the item."""

    fresh_email = staticmethod(fresh_email)
    credential_keys, errors_carry_message = ("ADMIN_EMAIL", "ADMIN_PASSWORD"), True
    admin_credentials = AccountsApi.bootstrap_credentials
    instant = staticmethod(instant)
    PASSWORD, USER_KEYS, TICKET_KEYS, ARTICLE_KEYS = PASSWORD, USER_KEYS, TICKET_KEYS, ARTICLE_KEYS
    LONG, SHORT, BREACH_WAIT = LONG, SHORT, BREACH_WAIT
    seconds_between = staticmethod(seconds_between)

    # ---------------------------------------------------------------- answers

    def call(self, actor: Actor | None, method: str, path: str, **kwargs: Any) -> requests.Response:
        """One request as ``actor`` (None: without a token)."""
        headers = dict(kwargs.pop("headers", {}) or {})
        if actor is not None:
            headers.update(actor.headers)
        return self.http.request(method, path, headers=headers, **kwargs)

    # ---------------------------------------------------------------- accounts

    def login(self, email: str, password: str) -> Actor:
        """POST /api/auth/login (must succeed)."""
        got = self.ok(self.http.post("/api/auth/login", json={"email": email, "password": password}), 200, f"log in as {email}")
        user = got["user"]
        return Actor(int(user["id"]), str(user["email"]), str(user["role"]), str(got["token"]))

    @property
    def admin(self) -> Actor:
        """The bootstrap admin, logged in once per item."""
        if self._admin is None:
            self._admin = self.login(*self.bootstrap_credentials())
        return self._admin

    def customer(self, name: str = "Casey Customer", password: str = PASSWORD) -> Actor:
        """A newly registered, logged-in customer."""
        email = fresh_email("c")
        self.ok(self.http.post("/api/auth/register", json={"email": email, "name": name, "password": password}), 201, "register a customer")
        return self.login(email, password)

    def agent(self, name: str = "Alex Agent", password: str = PASSWORD) -> Actor:
        """A new agent made by the bootstrap admin, logged in."""
        email = fresh_email("a")
        body = {"email": email, "name": name, "password": password, "role": "agent"}
        self.ok(self.call(self.admin, "POST", "/api/users", json=body), 201, "create an agent")
        return self.login(email, password)

    # ---------------------------------------------------------------- SLA policies

    def policy(self, priority: str, first_response_s: int, resolution_s: int) -> dict[str, Any]:
        """PUT /api/sla/{priority} as the admin (must succeed)."""
        body = {"first_response_s": first_response_s, "resolution_s": resolution_s}
        return dict(self.ok(self.call(self.admin, "PUT", f"/api/sla/{priority}", json=body), 200, f"set the {priority} policy"))

    def no_policy(self, priority: str) -> None:
        """Make sure ``priority`` has no policy."""
        r = self.call(self.admin, "DELETE", f"/api/sla/{priority}")
        assert r.status_code in (204, 404), f"setup: delete the {priority} policy: {brief(r)}"

    # ---------------------------------------------------------------- tickets and articles

    def post_ticket(self, customer: Actor, **fields: Any) -> requests.Response:
        """POST /api/tickets with a valid body overridden by ``fields``; the raw response."""
        body = {"title": f"Printer on fire {uuid.uuid4().hex[:6]}", "body": "It smokes.", **fields}
        return self.call(customer, "POST", "/api/tickets", json=body)

    def ticket(self, customer: Actor, **fields: Any) -> dict[str, Any]:
        """A new ticket of ``customer`` (must succeed)."""
        return dict(self.ok(self.post_ticket(customer, **fields), 201, "create a ticket"))

    def desk(self, **ticket_fields: Any) -> tuple[Actor, Actor, dict[str, Any]]:
        """A new customer, a new agent and a new ticket of the customer's (``ticket_fields``): (customer, agent, ticket)."""
        customer, agent = self.customer(), self.agent()
        return customer, agent, self.ticket(customer, **ticket_fields)

    def get(self, actor: Actor, ticket: dict[str, Any]) -> dict[str, Any]:
        """GET /api/tickets/{id} as ``actor`` (must succeed)."""
        return dict(self.ok(self.call(actor, "GET", f"/api/tickets/{ticket['id']}"), 200, "read the ticket"))

    def patch(self, actor: Actor, ticket: dict[str, Any], **fields: Any) -> requests.Response:
        """PATCH /api/tickets/{id} as ``actor``; the raw response."""
        return self.call(actor, "PATCH", f"/api/tickets/{ticket['id']}", json=fields)

    def change(self, actor: Actor, ticket: dict[str, Any], **fields: Any) -> dict[str, Any]:
        """PATCH /api/tickets/{id} (must succeed)."""
        return dict(self.ok(self.patch(actor, ticket, **fields), 200, f"change the ticket: {fields}"))

    def post_article(self, actor: Actor, ticket: dict[str, Any], **fields: Any) -> requests.Response:
        """POST /api/tickets/{id}/articles with exactly ``fields``; the raw response."""
        return self.call(actor, "POST", f"/api/tickets/{ticket['id']}/articles", json=fields)

    def article(self, actor: Actor, ticket: dict[str, Any], body: str = "Thanks, looking into it.", **fields: Any) -> dict[str, Any]:
        """A new article (must succeed)."""
        return dict(self.ok(self.post_article(actor, ticket, body=body, **fields), 201, "add an article"))

    def articles(self, actor: Actor, ticket: dict[str, Any]) -> list[dict[str, Any]]:
        """GET /api/tickets/{id}/articles items as ``actor`` (must succeed)."""
        return list(self.ok(self.call(actor, "GET", f"/api/tickets/{ticket['id']}/articles"), 200, "list the articles")["items"])

    def tickets(self, actor: Actor, **params: Any) -> dict[str, Any]:
        """GET /api/tickets as ``actor`` with ``params`` (must succeed); the whole answer."""
        return dict(self.ok(self.call(actor, "GET", "/api/tickets", params=params), 200, f"list tickets {params}"))

    def ids(self, actor: Actor, **params: Any) -> list[int]:
        """The ids GET /api/tickets answers as ``actor`` with ``params``, in its order."""
        return [int(t["id"]) for t in self.tickets(actor, **params)["items"]]

    def escalations(self, actor: Actor, **params: Any) -> list[dict[str, Any]]:
        """GET /api/escalations items (must succeed)."""
        return list(self.ok(self.call(actor, "GET", "/api/escalations", params=params), 200, "list escalations")["items"])

    def unknown_ticket_id(self) -> int:
        """A ticket id no ticket has: far above every id there is."""
        customer = self.customer()
        return int(self.ticket(customer)["id"]) + 1_000_000

    @staticmethod
    def wait_past(moment: Any, margin: float = 1.0) -> None:
        """Sleep until ``margin`` seconds after the timestamp ``moment`` (at most ``BREACH_WAIT`` plus margin)."""
        target = instant(moment)
        assert target is not None, f"expected a timestamp, got {moment!r}"
        left = (target - dt.datetime.now(dt.timezone.utc)).total_seconds() + margin
        time.sleep(min(max(left, 0.0), BREACH_WAIT + margin))


api = api_fixture(Api)


checks = task_checks_fixture(restart=restart, injection_texts=injection_texts("tickets"), task_ids=table_ids("tickets"))


http_response_checks = leak_checks_fixture(env_passwords=("ADMIN_PASSWORD",))
