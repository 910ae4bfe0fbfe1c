"""Articles (spec.md: Articles): replies, internal notes, who may write and who may read them."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]

ARTICLE_KEYS = ("id", "ticket_id", "author_id", "body", "internal", "created_at")


@pytest.mark.requirement("R12")
@pytest.mark.category("api_surface")
def test_an_agent_reply_answers_the_article_public_by_default(api, http):
    _customer, agent, ticket = api.desk()
    made = api.article(agent, ticket, body="We are on it.")
    assert all(k in made for k in ARTICLE_KEYS), f"an article has {ARTICLE_KEYS}: {made}"
    assert (made["ticket_id"], made["author_id"], made["body"], made["internal"]) == (ticket["id"], agent.id, "We are on it.", False), f"{made}"


@pytest.mark.requirement("R12")
@pytest.mark.category("api_surface")
def test_articles_are_listed_in_creation_order(api, http):
    customer, agent, ticket = api.desk(body="one")
    for actor, body in ((agent, "two"), (customer, "three"), (agent, "four")):
        api.article(actor, ticket, body=body)
    assert [a["body"] for a in api.articles(agent, ticket)] == ["one", "two", "three", "four"]
    assert [a["body"] for a in api.articles(customer, ticket)] == ["one", "two", "three", "four"]


@pytest.mark.requirement("R12")
@pytest.mark.category("state")
def test_agents_see_internal_notes_and_customers_do_not(api, http):
    customer, agent, ticket = api.desk(body="Help")
    note = api.article(agent, ticket, body="customer is on the old plan", internal=True)
    reply = api.article(agent, ticket, body="Please upgrade")
    assert note["internal"] is True
    assert [a["id"] for a in api.articles(agent, ticket)][1:] == [note["id"], reply["id"]], "agents see every article"
    assert [a["body"] for a in api.articles(customer, ticket)] == ["Help", "Please upgrade"], "customers never see internal notes"
    assert [a["body"] for a in api.articles(api.admin, ticket)] == ["Help", "customer is on the old plan", "Please upgrade"]


@pytest.mark.requirement("R12")
@pytest.mark.category("authorization")
def test_a_customer_writes_public_articles_on_own_tickets(api, http):
    customer = api.customer()
    ticket = api.ticket(customer)
    made = api.article(customer, ticket, body="More detail", internal=False)
    assert (made["author_id"], made["internal"]) == (customer.id, False)


ARTICLE_INVALID = [("blank", {"body": "  \n"}, ["body"]), ("too-long", {"body": "x" * 10_001}, ["body"]),
                   ("internal-string", {"body": "ok", "internal": "yes"}, ["internal"]), ("missing-body", {}, ["body"]),
                   ("wrong-types", {"body": 7, "internal": 1}, ["body", "internal"])]


@pytest.mark.requirement("R12")
@pytest.mark.category("validation")
@pytest.mark.parametrize("case, body, fields", ARTICLE_INVALID, ids=[c[0] for c in ARTICLE_INVALID])
def test_invalid_articles_get_422(api, http, case, body, fields):
    _customer, agent, ticket = api.desk()
    r = api.call(agent, "POST", f"/api/tickets/{ticket['id']}/articles", json=body)
    api.assert_no_problems([api.validation_problem(r, fields, f"article {case}")], "article validation")
    got = api.get(agent, ticket)
    assert len(api.articles(agent, ticket)) == 1 and got["state"] == "new" and got["first_response_at"] is None, "a refused article changes nothing"


@pytest.mark.requirement("R12")
@pytest.mark.category("validation")
def test_a_10000_character_article_is_valid(api, http):
    customer = api.customer()
    ticket = api.ticket(customer)
    assert len(api.article(api.agent(), ticket, body="y" * 10_000)["body"]) == 10_000
