"""R1 items: the state transition table, states moved by articles, and the stated error precedence.

spec.md: "A `PATCH` may change the state only along these transitions; any other target gets
`409 invalid_transition` (a `state` equal to the current state changes nothing and is not an
error)", the transition table, "the first public article by an agent or admin on a `new` ticket
sets it to `open`; a customer's article on a `pending` or `solved` ticket sets it to `open`.
Internal notes never change the state." and "Precedence ... `401`, `404`, `403`, `422`, `409`".
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r1")]

STATES = ["new", "open", "pending", "solved", "closed"]
ALLOWED = {
    "new": {"open", "pending", "solved", "closed"},
    "open": {"pending", "solved", "closed"},
    "pending": {"open", "solved", "closed"},
    "solved": {"open", "closed"},
    "closed": set(),
}
PAIRS = [(a, b) for a in STATES for b in STATES if a != b]


def in_state(api, agent, customer, state):
    """A fresh ticket of ``customer`` brought to ``state`` by ``agent`` through allowed transitions."""
    ticket = api.ticket(customer)
    if state != "new":
        assert api.change(agent, ticket, state=state)["state"] == state
    return ticket


@pytest.mark.requirement("R11")
@pytest.mark.category("state")
@pytest.mark.parametrize("source, target", PAIRS, ids=[f"{a}-to-{b}" for a, b in PAIRS])
def test_the_transition_table(api, http, source, target):
    customer, agent = api.customer(), api.agent()
    ticket = in_state(api, agent, customer, source)
    r = api.patch(agent, ticket, state=target)
    if target in ALLOWED[source]:
        assert r.status_code == 200 and r.json().get("state") == target, f"{source} -> {target} is allowed: {api.brief(r)}"
        assert api.get(customer, ticket)["state"] == target
    else:
        api.error(r, 409, "invalid_transition", f"{source} -> {target} is not in the table")
        assert api.get(agent, ticket)["state"] == source, "a refused transition changes nothing"


@pytest.mark.requirement("R11")
@pytest.mark.category("state")
def test_the_current_state_is_a_no_op_even_when_closed(api, http):
    customer, agent = api.customer(), api.agent()
    problems = []
    for state in STATES:
        ticket = in_state(api, agent, customer, state)
        r = api.patch(agent, ticket, state=state, title=f"Still {state}")
        if r.status_code != 200 or r.json().get("state") != state or r.json().get("title") != f"Still {state}":
            problems.append(f"{state} -> {state}: expected 200 with the title changed, got {api.brief(r)}")
    assert not problems, "a state equal to the current state is not an error:\n" + "\n".join(problems)


@pytest.mark.requirement("R11", "R12")
@pytest.mark.category("side_effects")
def test_the_first_public_agent_article_opens_a_new_ticket(api, http):
    customer, agent, ticket = api.desk()
    api.article(agent, ticket, body="Internal only", internal=True)
    assert api.get(agent, ticket)["state"] == "new", "an internal note changes no state"
    api.article(customer, ticket, body="Any news?")
    assert api.get(agent, ticket)["state"] == "new", "a customer article on a new ticket keeps it new"
    api.article(agent, ticket, body="On it")
    assert api.get(customer, ticket)["state"] == "open", "the first public agent article sets a new ticket open"


@pytest.mark.requirement("R11", "R12")
@pytest.mark.category("side_effects")
def test_an_admin_reply_opens_a_new_ticket_too(api, http):
    customer = api.customer()
    ticket = api.ticket(customer)
    api.article(api.admin, ticket)
    assert api.get(customer, ticket)["state"] == "open"


@pytest.mark.requirement("R11")
@pytest.mark.category("side_effects")
@pytest.mark.parametrize("state", ["pending", "solved"])
def test_a_customer_article_reopens_a_pending_or_solved_ticket(api, http, state):
    customer, agent = api.customer(), api.agent()
    ticket = in_state(api, agent, customer, state)
    api.article(agent, ticket, body="note", internal=True)
    api.article(agent, ticket, body="public answer")
    assert api.get(agent, ticket)["state"] == state, f"agent articles do not move a {state} ticket"
    api.article(customer, ticket, body="It is still broken")
    assert api.get(agent, ticket)["state"] == "open", f"a customer article sets a {state} ticket open"


@pytest.mark.requirement("R11", "R12")
@pytest.mark.category("state")
def test_articles_on_a_closed_ticket_get_409(api, http, db):
    customer, agent = api.customer(), api.agent()
    ticket = in_state(api, agent, customer, "closed")
    for actor, internal in ((customer, False), (agent, False), (agent, True)):
        api.error(api.post_article(actor, ticket, body="Hello?", internal=internal), 409, "ticket_closed", f"an article on a closed ticket (internal {internal})")
    assert len(api.articles(agent, ticket)) == 1 and api.get(agent, ticket)["state"] == "closed", "nothing changed"
    assert db.scalar("SELECT count(*) FROM articles WHERE ticket_id = %s", (int(ticket["id"]),)) == 1


@pytest.mark.requirement("R11", "R17")
@pytest.mark.category("validation")
def test_422_comes_before_409_on_a_closed_ticket(api, http):
    customer, agent = api.customer(), api.agent()
    ticket = in_state(api, agent, customer, "closed")
    api.assert_no_problems([api.validation_problem(api.patch(agent, ticket, state="bogus"), ["state"], "an unknown state on a closed ticket"),
                            api.validation_problem(api.post_article(agent, ticket, body=" "), ["body"], "a blank article on a closed ticket")],
                           "422 wins over 409")


@pytest.mark.requirement("R8", "R10", "R17")
@pytest.mark.category("authorization")
def test_404_comes_before_403_and_401_before_everything(api, http):
    alice, bob = api.customer(), api.customer()
    theirs = api.ticket(bob)
    api.error(api.patch(alice, theirs, state="closed"), 404, "not_found", "a customer changing the state of another's ticket")
    api.error(api.post_article(alice, theirs, body="x", internal=True), 404, "not_found", "a customer's internal note on another's ticket")
    api.error(http.patch(f"/api/tickets/{theirs['id']}", json={"state": "bogus"}), 401, "unauthorized", "no token and an invalid body")
    api.error(api.call(alice, "PUT", "/api/sla/nonsense", json={}), 404, "not_found", "a customer on an unknown priority")
    api.error(api.call(alice, "PUT", "/api/sla/low", json={}), 403, "forbidden", "403 before 422 for a customer")
    assert api.get(bob, theirs)["state"] == "new"


@pytest.mark.requirement("R10", "R11")
@pytest.mark.category("workflow")
def test_a_ticket_lives_through_a_whole_conversation(api, http):
    customer, agent, ticket = api.desk(priority="high")
    api.change(agent, ticket, assignee_id=agent.id)
    api.article(agent, ticket, body="Can you send a screenshot?")
    assert api.change(agent, ticket, state="pending")["state"] == "pending"
    api.article(customer, ticket, body="Here it is")
    assert api.get(agent, ticket)["state"] == "open"
    assert api.change(agent, ticket, state="solved")["state"] == "solved"
    api.article(customer, ticket, body="Broken again")
    assert api.change(agent, ticket, state="closed")["state"] == "closed"
    api.error(api.patch(agent, ticket, state="open"), 409, "invalid_transition", "closed is final")
    bodies = [a["body"] for a in api.articles(customer, ticket)]
    assert bodies == ["It smokes.", "Can you send a screenshot?", "Here it is", "Broken again"], f"the conversation in order: {bodies}"
    assert api.ids(agent, customer_id=customer.id, state="closed", assignee_id=agent.id) == [ticket["id"]]
