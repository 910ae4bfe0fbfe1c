"""R1 items: SLA due times and timers (spec.md: SLA timers).

Targets an item waits out are 1 second and the item sleeps 2.5 seconds; targets an item must not
reach are an hour. Due times are compared with created_at to within one second, since the spec
allows any fraction of a second in answers.
"""

from __future__ import annotations

import time

import pytest

pytestmark = [pytest.mark.tier("r1")]

LONG, SHORT, WAIT = 3600, 1, 2.5


def offset(api, ticket, key):
    """Seconds from the ticket's created_at to its ``key`` timestamp (None when either is missing)."""
    return api.seconds_between(ticket["created_at"], ticket[key])


def near(value, expected):
    return value is not None and abs(value - expected) <= 1.0


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_due_times_are_created_at_plus_the_policy_targets(api, http):
    api.policy("high", 1800, 86_400)
    customer = api.customer()
    ticket = api.ticket(customer, priority="high")
    assert near(offset(api, ticket, "first_response_due_at"), 1800), f"first_response_due_at = created_at + 1800 s: {ticket}"
    assert near(offset(api, ticket, "resolution_due_at"), 86_400), f"resolution_due_at = created_at + 86400 s: {ticket}"
    assert (ticket["first_response_breached"], ticket["resolution_breached"]) == (False, False), f"nothing is due yet: {ticket}"
    again = api.get(api.agent(), ticket)
    assert api.instant(again["resolution_due_at"]) == api.instant(ticket["resolution_due_at"]), "reading answers the same due time"


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_without_a_policy_due_times_are_null_and_nothing_breaches(api, http):
    api.no_policy("low")
    customer = api.customer()
    ticket = api.ticket(customer, priority="low")
    assert (ticket["first_response_due_at"], ticket["resolution_due_at"]) == (None, None), f"no policy, no due times: {ticket}"
    assert (ticket["first_response_breached"], ticket["resolution_breached"]) == (False, False)


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_later_policy_changes_do_not_move_existing_due_times(api, http):
    api.policy("normal", 900, 9000)
    customer = api.customer()
    ticket = api.ticket(customer)
    api.policy("normal", 60, 120)
    got = api.get(customer, ticket)
    assert near(offset(api, got, "first_response_due_at"), 900) and near(offset(api, got, "resolution_due_at"), 9000), f"due times unchanged: {got}"
    api.no_policy("normal")
    got = api.get(customer, ticket)
    assert near(offset(api, got, "resolution_due_at"), 9000), f"deleting the policy does not clear existing due times: {got}"


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_a_priority_change_recomputes_from_created_at(api, http):
    api.policy("low", 7200, 72_000)
    api.policy("urgent", 600, 6000)
    _customer, agent, ticket = api.desk(priority="low")
    time.sleep(1.2)
    got = api.change(agent, ticket, priority="urgent")
    assert api.instant(got["created_at"]) == api.instant(ticket["created_at"]), "created_at does not change"
    assert near(offset(api, got, "first_response_due_at"), 600) and near(offset(api, got, "resolution_due_at"), 6000), (
        f"due times from created_at and the urgent policy: {got}")


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_a_priority_change_to_one_without_policy_clears_the_due_times(api, http):
    api.policy("high", 600, 6000)
    _customer, agent, ticket = api.desk(priority="high")
    api.no_policy("low")
    got = api.change(agent, ticket, priority="low")
    assert (got["first_response_due_at"], got["resolution_due_at"]) == (None, None), f"low has no policy: {got}"


@pytest.mark.requirement("R14")
@pytest.mark.category("state")
def test_the_first_public_agent_article_sets_first_response_at_once(api, http):
    api.policy("normal", LONG, LONG)
    customer, agent, ticket = api.desk()
    api.article(agent, ticket, body="note", internal=True)
    api.article(customer, ticket, body="hello?")
    assert api.get(agent, ticket)["first_response_at"] is None, "internal notes and customer articles do not stop the timer"
    reply = api.article(agent, ticket, body="Hi!")
    got = api.get(customer, ticket)
    assert api.instant(got["first_response_at"]) is not None and abs(api.seconds_between(reply["created_at"], got["first_response_at"])) <= 1.0, (
        f"first_response_at is the reply's created_at: reply {reply['created_at']}, ticket {got['first_response_at']}")
    time.sleep(1.1)
    api.article(api.agent(), ticket, body="A second answer")
    again = api.get(agent, ticket)["first_response_at"]
    assert api.instant(again) == api.instant(got["first_response_at"]), f"first_response_at never changes again: {got['first_response_at']} then {again}"


@pytest.mark.requirement("R14")
@pytest.mark.category("workflow")
def test_an_unanswered_ticket_breaches_its_first_response(api, http):
    api.policy("urgent", SHORT, LONG)
    customer, agent, ticket = api.desk(priority="urgent")
    api.article(agent, ticket, body="note", internal=True)
    time.sleep(WAIT)
    got = api.get(agent, ticket)
    assert (got["first_response_breached"], got["resolution_breached"]) == (True, False), f"first response past due, resolution not: {got}"
    api.article(agent, ticket, body="Sorry for the wait")
    got = api.get(customer, ticket)
    assert got["first_response_breached"] is False, f"a stopped timer is not breached (even when stopped late): {got}"


@pytest.mark.requirement("R14")
@pytest.mark.category("workflow")
def test_an_answered_ticket_does_not_breach_its_first_response(api, http):
    api.policy("urgent", 2, LONG)
    _customer, agent, ticket = api.desk(priority="urgent")
    api.article(agent, ticket, body="Right away")
    time.sleep(WAIT)
    assert api.get(agent, ticket)["first_response_breached"] is False


@pytest.mark.requirement("R14")
@pytest.mark.category("workflow")
def test_the_resolution_timer_stops_while_solved_and_runs_again_when_reopened(api, http):
    api.policy("high", LONG, SHORT)
    customer, agent, ticket = api.desk(priority="high")
    time.sleep(WAIT)
    assert api.get(agent, ticket)["resolution_breached"] is True, "past resolution_due_at and still new"
    assert api.change(agent, ticket, state="solved")["resolution_breached"] is False, "solved stops the resolution timer"
    api.article(customer, ticket, body="Not fixed")
    got = api.get(agent, ticket)
    assert (got["state"], got["resolution_breached"]) == ("open", True), f"reopened against the same due time: {got}"
    assert api.change(agent, ticket, state="closed")["resolution_breached"] is False, "closed stops it"


@pytest.mark.requirement("R14")
@pytest.mark.category("workflow")
def test_pending_pauses_nothing(api, http):
    api.policy("low", SHORT, SHORT)
    customer, agent, ticket = api.desk(priority="low")
    api.change(agent, ticket, state="pending")
    time.sleep(WAIT)
    got = api.get(customer, ticket)
    assert (got["state"], got["first_response_breached"], got["resolution_breached"]) == ("pending", True, True), f"pending pauses nothing: {got}"


@pytest.mark.requirement("R9", "R14")
@pytest.mark.category("workflow")
def test_the_breached_filter_follows_the_flags(api, http):
    api.policy("urgent", SHORT, LONG)
    api.policy("normal", LONG, LONG)
    customer, agent = api.customer(), api.agent()
    late = api.ticket(customer, priority="urgent")
    answered = api.ticket(customer, priority="urgent")
    calm = api.ticket(customer, priority="normal")
    api.article(agent, answered, body="Done")
    time.sleep(WAIT)
    assert api.ids(agent, customer_id=customer.id, breached="true") == [late["id"]]
    assert api.ids(agent, customer_id=customer.id, breached="false") == [answered["id"], calm["id"]]
    assert api.ids(customer, breached="true") == [late["id"]], "customers may filter their own tickets too"
