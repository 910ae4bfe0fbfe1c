"""R2 items: the escalation list, restarts and the whole helpdesk together (spec.md: SLA timers, Running)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r2")]


def near(a, b):
    return a is not None and b is not None and abs((a - b).total_seconds()) <= 1.0


@pytest.mark.requirement("R15")
@pytest.mark.category("workflow")
def test_escalations_are_sorted_by_the_earliest_running_due_time(api, http):
    import datetime as dt

    api.policy("high", 300, 900)
    api.policy("urgent", 60, 120)
    api.policy("low", 3000, 100)
    customer, agent = api.customer(), api.agent()
    high = api.ticket(customer, priority="high")
    urgent = api.ticket(customer, priority="urgent")
    low = api.ticket(customer, priority="low")
    items = api.escalations(agent, customer_id=customer.id)
    assert [t["id"] for t in items] == [urgent["id"], low["id"], high["id"]], f"sorted by escalation_at: {items}"
    expected = {high["id"]: (high, 300), urgent["id"]: (urgent, 60), low["id"]: (low, 100)}
    for item in items:
        ticket, seconds = expected[item["id"]]
        want = api.instant(ticket["created_at"]) + dt.timedelta(seconds=seconds)
        assert near(api.instant(item.get("escalation_at")), want), f"escalation_at is the earliest running due time ({seconds} s): {item}"


@pytest.mark.requirement("R15")
@pytest.mark.category("state")
def test_stopped_timers_leave_the_escalation_list(api, http):
    api.policy("urgent", 60, 120)
    api.no_policy("low")
    customer, agent = api.customer(), api.agent()
    answered = api.ticket(customer, priority="urgent")
    solved = api.ticket(customer, priority="urgent")
    api.ticket(customer, priority="low")
    api.article(agent, answered, body="Hello")
    api.article(agent, solved, body="Fixed")
    api.change(agent, solved, state="solved")
    items = api.escalations(api.admin, customer_id=customer.id)
    assert [t["id"] for t in items] == [answered["id"]], f"only the answered, unsolved ticket has a running timer with a due time: {items}"
    assert near(api.instant(items[0]["escalation_at"]), api.instant(answered["resolution_due_at"])), f"its resolution due time: {items[0]}"


@pytest.mark.requirement("R15")
@pytest.mark.category("authorization")
def test_customers_cannot_list_escalations(api, http):
    customer = api.customer()
    api.error(api.call(customer, "GET", "/api/escalations"), 403, "forbidden", "a customer listing escalations")
    api.error(api.call(customer, "GET", "/api/escalations", params={"customer_id": "x"}), 403, "forbidden", "403 before 422")


@pytest.mark.requirement("R15", "R17")
@pytest.mark.category("validation")
@pytest.mark.parametrize("params", [{"customer_id": "me"}, {"customer_id": "1; DROP TABLE tickets"}, {"limit": "0"}],
                         ids=["word", "sql", "limit-0"])
def test_invalid_escalation_parameters_get_422(api, http, params):
    r = api.call(api.agent(), "GET", "/api/escalations", params=params)
    api.assert_no_problems([api.validation_problem(r, list(params), f"GET /api/escalations {params}")], "escalation parameters")


@pytest.mark.requirement("R16")
@pytest.mark.category("state")
def test_everything_survives_a_restart(api, http, service, checks):
    api.policy("high", 1800, 18_000)
    customer, agent, ticket = api.desk(priority="high")
    api.change(agent, ticket, assignee_id=agent.id)
    api.article(agent, ticket, body="secret note", internal=True)
    api.article(agent, ticket, body="public reply")
    before = api.get(agent, ticket)
    checks.restart(service, http)
    customer, agent = api.login(customer.email, api.PASSWORD), api.login(agent.email, api.PASSWORD)
    after = api.get(agent, ticket)
    keys = ("title", "priority", "state", "customer_id", "assignee_id")
    assert {k: after[k] for k in keys} == {k: before[k] for k in keys}, f"the ticket survives: {before} vs {after}"
    for key in ("created_at", "first_response_at", "first_response_due_at", "resolution_due_at"):
        assert api.instant(after[key]) == api.instant(before[key]), f"{key} survives: {before[key]} vs {after[key]}"
    assert [a["body"] for a in api.articles(customer, ticket)] == ["It smokes.", "public reply"]
    assert [a["body"] for a in api.articles(agent, ticket)] == ["It smokes.", "secret note", "public reply"]
    policies = api.ok(api.call(agent, "GET", "/api/sla"), 200, "GET /api/sla")["items"]
    assert [(p["first_response_s"], p["resolution_s"]) for p in policies if p["priority"] == "high"] == [(1800, 18_000)]
