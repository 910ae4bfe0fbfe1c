"""Refused requests change nothing, guards one condition at a time, and the body field that names a user (issue 35).

spec.md, Precedence: "A request that fails changes nothing." Every endpoint that takes several
fields is sent its valid body with one field invalid, at each position in turn
(``one_invalid_field``); the state is read back through the API (``unchanged``) and the statement
log must show no write (``db.writes_during``). Refusals for other reasons (a transition, a closed
ticket, a customer's forbidden field) carry valid fields besides the one that refuses them.

Guards: "the first public article by an agent or admin on a `new` ticket sets it to `open`" and
"The first-response timer stops at the first public article by an agent or admin" usually happen
together; a ticket an agent moved out of `new` first separates them. "`first_response_breached`
is true exactly when ... `first_response_at` is `null` and now is past `first_response_due_at`"
names no state: solving or closing an unanswered ticket stops only the resolution timer.

Body reference: "`assignee_id` is `null` (unassigned) or the id of an agent or admin (any other
value is invalid)": a customer's id (the ticket's own customer or another) and an id of no user
are refused like any invalid value. Users are never deleted in this spec, so there is no deleted
id to try, and no field names an entity of another owner.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import requests

from pytest_backendbench.http.refusals import one_invalid_field, unchanged

pytestmark = [pytest.mark.tier("base")]

PASSWORD = "correct horse 42"  # conftest.PASSWORD
FRESH, AGENT, OWNER, OTHER_CUSTOMER, NO_USER = "<fresh email>", "<an agent's id>", "<the ticket's customer's id>", "<another customer's id>", "<no user's id>"
"""Placeholders in the bodies below, replaced when the item runs (ids and emails are the service's)."""

BODIES: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    # endpoint: (requirement, a valid body, bad values per field)
    "register": ("R2", {"email": FRESH, "name": "Val Id", "password": PASSWORD},
                 {"email": ["a b@example.org", 5], "name": ["   ", "n" * 101], "password": ["short", ["p" * 8]]}),
    "create-user": ("R4", {"email": FRESH, "name": "Val Id", "password": PASSWORD, "role": "agent"},
                    {"email": ["nobody.example.org", None], "name": [None], "password": ["p" * 129], "role": ["admin", "root"]}),
    "put-policy": ("R6", {"first_response_s": 700, "resolution_s": 7000},
                   {"first_response_s": [0, 1.5], "resolution_s": [31_536_001, True, "60"]}),
    "create-ticket": ("R7", {"title": "Valid title", "body": "Valid body", "priority": "high"},
                      {"title": [" \t", 5], "body": ["b" * 10_001, None], "priority": ["critical", None]}),
    "patch-ticket": ("R10", {"title": "Renamed", "priority": "high", "state": "pending", "assignee_id": AGENT},
                     {"title": ["t" * 201, None], "priority": ["HIGH"], "state": ["archived", None],
                      "assignee_id": [OWNER, OTHER_CUSTOMER, NO_USER, "1", True]}),
    "add-article": ("R12", {"body": "A valid reply", "internal": False}, {"body": ["  \n", 7], "internal": ["yes", None]}),
}
CASES = [pytest.param(endpoint, *case.values, id=f"{endpoint}-{case.id}", marks=[pytest.mark.requirement(requirement)])
         for endpoint, (requirement, valid, bad) in BODIES.items() for case in one_invalid_field(valid, bad)]


def ticket_state(api: Any, actor: Any, ticket: dict[str, Any]) -> dict[str, Any]:
    """The ticket as ``actor`` reads it, without the breach flags (they follow the clock, not the request)."""
    return {key: value for key, value in api.get(actor, ticket).items() if not key.endswith("_breached")}


Sender = Callable[[dict[str, Any]], requests.Response]
Refusal = tuple[Callable[[], requests.Response], Callable[[], Any], int, str]


def scene(api: Any, endpoint: str) -> tuple[Sender, Callable[[], Any], dict[str, Any]]:
    """What ``endpoint`` acts on: how to send it a body, how to read back what it must not change, the placeholders' values."""
    admin, customer, agent = api.admin, api.customer(), api.agent()
    email = api.fresh_email("v")
    values = {FRESH: email, AGENT: agent.id, OWNER: customer.id, OTHER_CUSTOMER: api.customer().id, NO_USER: api.unknown_ticket_id() + 10_000_000}

    def users() -> Any:
        return api.ok(api.call(admin, "GET", "/api/users", params={"email": email}), 200, "users by the fresh email")["items"]

    if endpoint == "register":
        return (lambda body: api.http.post("/api/auth/register", json=body)), users, values
    if endpoint == "create-user":
        return (lambda body: api.call(admin, "POST", "/api/users", json=body)), users, values
    if endpoint == "put-policy":
        api.policy("low", 111, 2222)
        return ((lambda body: api.call(admin, "PUT", "/api/sla/low", json=body)),
                lambda: api.ok(api.call(admin, "GET", "/api/sla"), 200, "GET /api/sla")["items"], values)
    if endpoint == "create-ticket":
        return (lambda body: api.call(customer, "POST", "/api/tickets", json=body)), lambda: api.tickets(customer), values
    ticket = api.ticket(customer)
    if endpoint == "patch-ticket":
        return (lambda body: api.patch(agent, ticket, **body)), lambda: ticket_state(api, agent, ticket), values
    return ((lambda body: api.post_article(agent, ticket, **body)),
            lambda: (ticket_state(api, agent, ticket), api.articles(agent, ticket)), values)


@pytest.mark.category("validation")
@pytest.mark.parametrize("endpoint, field, body", CASES)
def test_one_invalid_field_anywhere_in_the_body_changes_nothing(api, http, db, endpoint, field, body):
    send, read, values = scene(api, endpoint)
    sent = {key: values.get(value, value) if isinstance(value, str) else value for key, value in body.items()}
    with unchanged(read, f"{endpoint} with {field} invalid"), db.writes_during(f"{endpoint} with {field} invalid") as writes:
        r = send(sent)
    api.assert_no_problems([api.validation_problem(r, [field], f"{endpoint} with only {field} invalid: {sent}")], "one invalid field")
    writes.assert_none()


def refused_transition(api: Any, source: str, target: str) -> Refusal:
    customer, agent, other = api.customer(), api.agent(), api.agent()
    ticket = api.ticket(customer)
    api.change(agent, ticket, state=source)
    body = {"title": "Renamed on the way", "priority": "urgent", "state": target, "assignee_id": other.id}
    return (lambda: api.patch(agent, ticket, **body)), lambda: ticket_state(api, agent, ticket), 409, "invalid_transition"


def refused_article(api: Any, internal: bool) -> Refusal:
    customer, agent = api.customer(), api.agent()
    ticket = api.ticket(customer)
    author = customer if internal else agent
    if not internal:
        api.change(agent, ticket, state="closed")
    return ((lambda: api.post_article(author, ticket, body="A valid body", internal=internal)),
            lambda: (ticket_state(api, agent, ticket), api.articles(agent, ticket)), 403 if internal else 409, "forbidden" if internal else "ticket_closed")


def refused_customer_patch(api: Any, field: str) -> Refusal:
    customer, agent = api.customer(), api.agent()
    ticket = api.ticket(customer)
    value = {"priority": "urgent", "state": "closed", "assignee_id": agent.id}[field]
    return (lambda: api.patch(customer, ticket, title="A valid new title", **{field: value})), lambda: ticket_state(api, agent, ticket), 403, "forbidden"


REFUSALS = {
    "transition-open-to-new": (("R10", "R11"), lambda api: refused_transition(api, "open", "new")),
    "transition-solved-to-pending": (("R10", "R11"), lambda api: refused_transition(api, "solved", "pending")),
    "transition-closed-to-open": (("R10", "R11"), lambda api: refused_transition(api, "closed", "open")),
    "article-on-a-closed-ticket": (("R12",), lambda api: refused_article(api, internal=False)),
    "customer-internal-note": (("R12",), lambda api: refused_article(api, internal=True)),
    "customer-title-and-state": (("R10",), lambda api: refused_customer_patch(api, "state")),
    "customer-title-and-assignee": (("R10",), lambda api: refused_customer_patch(api, "assignee_id")),
}


@pytest.mark.category("state")
@pytest.mark.parametrize("case", [pytest.param(name, id=name, marks=[pytest.mark.requirement(*reqs)]) for name, (reqs, _) in REFUSALS.items()])
def test_a_request_refused_with_valid_fields_changes_nothing(api, http, db, case):
    send, read, status, code = REFUSALS[case][1](api)
    with unchanged(read, case), db.writes_during(case) as writes:
        r = send()
    api.error(r, status, code, f"{case}, every other field valid")
    writes.assert_none()


@pytest.mark.requirement("R11", "R14")
@pytest.mark.category("state")
@pytest.mark.parametrize("state", ["open", "pending"])
def test_the_first_agent_answer_stops_the_timer_of_a_ticket_no_longer_new(api, http, state):
    customer, agent = api.customer(), api.agent()
    ticket = api.ticket(customer)
    api.change(agent, ticket, state=state)
    reply = api.article(agent, ticket, body="Here is the answer")
    got = api.get(customer, ticket)
    assert got["state"] == state, f"only a new ticket is opened by the first agent answer; a {state} ticket stays {state}: {got}"
    gap = api.seconds_between(reply["created_at"], got["first_response_at"])
    assert gap is not None and abs(gap) <= 1.0, (
        f"the first public agent article stops the timer whatever the state: reply {reply['created_at']}, first_response_at {got['first_response_at']}")


@pytest.mark.requirement("R14", "R15")
@pytest.mark.category("workflow")
def test_solving_or_closing_an_unanswered_ticket_leaves_its_first_response_timer_running(api, http):
    api.policy("high", api.SHORT, api.LONG)
    customer, agent = api.customer(), api.agent()
    solved, closed = api.ticket(customer, priority="high"), api.ticket(customer, priority="high")
    api.change(agent, solved, state="solved")
    api.change(agent, closed, state="closed")
    api.wait_past(closed["first_response_due_at"])
    for ticket, state in ((solved, "solved"), (closed, "closed")):
        got = api.get(agent, ticket)
        assert (got["state"], got["first_response_breached"], got["resolution_breached"]) == (state, True, False), (
            f"a {state} ticket no agent answered: its first response is breached, its resolution timer stopped: {got}")
    listed = [(t["id"], api.instant(t["escalation_at"])) for t in api.escalations(agent, customer_id=customer.id)]
    expected = sorted((t["id"], api.instant(t["first_response_due_at"])) for t in (solved, closed))
    assert sorted(listed) == expected, f"both escalate at their first-response due time (the one running timer): {listed}"
