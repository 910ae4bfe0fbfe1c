"""Tickets (spec.md: Tickets): creation, visibility, lists and filters, PATCH by agents and customers."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]

TICKET_KEYS = ("id", "title", "priority", "state", "customer_id", "assignee_id", "created_at", "first_response_at",
               "first_response_due_at", "resolution_due_at", "first_response_breached", "resolution_breached")


@pytest.mark.requirement("R7")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("INSERT", table="tickets")
def test_a_customer_creates_a_new_unassigned_normal_ticket(api, http):
    customer = api.customer()
    ticket = api.ticket(customer, title="VPN is down", body="Since this morning.")
    assert all(k in ticket for k in TICKET_KEYS), f"a ticket has {TICKET_KEYS}: {ticket}"
    assert (ticket["title"], ticket["priority"], ticket["state"], ticket["customer_id"], ticket["assignee_id"]) == (
        "VPN is down", "normal", "new", customer.id, None), f"a new ticket: {ticket}"
    assert ticket["first_response_at"] is None and api.instant(ticket["created_at"]) is not None, f"timestamps: {ticket}"


@pytest.mark.requirement("R7")
@pytest.mark.category("side_effects")
@pytest.mark.db_effect("INSERT", table="articles")
def test_the_body_becomes_the_first_public_article(api, http):
    customer = api.customer()
    ticket = api.ticket(customer, body="First words\nwith a second line")
    for actor in (customer, api.agent()):
        items = api.articles(actor, ticket)
        assert [(a["body"], a["internal"], a["author_id"], a["ticket_id"]) for a in items] == [("First words\nwith a second line", False, customer.id, ticket["id"])], (
            f"one public article by the customer: {items}")


@pytest.mark.requirement("R7")
@pytest.mark.category("api_surface")
@pytest.mark.parametrize("priority", ["low", "normal", "high", "urgent"])
def test_every_priority_can_be_chosen(api, http, priority):
    customer = api.customer()
    assert api.ticket(customer, priority=priority)["priority"] == priority


TICKET_INVALID = [
    ("blank-title", {"title": " \t"}, ["title"]),
    ("title-201", {"title": "t" * 201}, ["title"]),
    ("blank-body", {"body": "   "}, ["body"]),
    ("body-10001", {"body": "b" * 10_001}, ["body"]),
    ("unknown-priority", {"priority": "critical"}, ["priority"]),
    ("null-priority", {"priority": None}, ["priority"]),
    ("wrong-types", {"title": 5, "body": ["b"]}, ["title", "body"]),
    ("all-missing", {"title": None, "body": None}, ["title", "body"]),
]


@pytest.mark.requirement("R7")
@pytest.mark.category("validation")
@pytest.mark.parametrize("case, fields_sent, fields", TICKET_INVALID, ids=[c[0] for c in TICKET_INVALID])
def test_invalid_tickets_get_422_naming_each_field(api, http, case, fields_sent, fields):
    customer = api.customer()
    body = {"title": "Fine", "body": "Fine", **fields_sent}
    if case == "all-missing":
        body = {}
    r = api.call(customer, "POST", "/api/tickets", json=body)
    api.assert_no_problems([api.validation_problem(r, fields, f"create a ticket {case}")], "ticket validation")
    assert api.tickets(customer)["total"] == 0, "a refused ticket was stored"


@pytest.mark.requirement("R7")
@pytest.mark.category("validation")
def test_ticket_limits_are_inclusive(api, http):
    customer = api.customer()
    ticket = api.ticket(customer, title="t" * 200, body="b" * 10_000)
    assert len(ticket["title"]) == 200 and len(api.articles(customer, ticket)[0]["body"]) == 10_000


@pytest.mark.requirement("R7")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("role", ["agent", "admin"])
def test_only_customers_create_tickets(api, http, db, role):
    actor = api.agent() if role == "agent" else api.admin
    title = api.unique("Staff ticket")
    api.error(api.call(actor, "POST", "/api/tickets", json={"title": title, "body": "b"}), 403, "forbidden", f"an {role} creating a ticket")
    api.error(api.call(actor, "POST", "/api/tickets", json={"title": " ", "body": "b"}), 403, "forbidden", "403 comes before 422")
    assert db.scalar("SELECT count(*) FROM tickets WHERE title = %s", (title,)) == 0, "nothing was stored"


@pytest.mark.requirement("R8")
@pytest.mark.category("api_surface")
def test_owner_agents_and_admins_read_a_ticket(api, http):
    customer = api.customer()
    ticket = api.ticket(customer)
    for actor in (customer, api.agent(), api.admin):
        got = api.get(actor, ticket)
        assert (got["id"], got["title"], got["customer_id"]) == (ticket["id"], ticket["title"], customer.id), f"the ticket: {got}"


@pytest.mark.requirement("R8")
@pytest.mark.category("authorization")
def test_a_customer_lists_only_own_tickets(api, http):
    alice, bob = api.customer(), api.customer()
    mine = [api.ticket(alice)["id"], api.ticket(alice)["id"]]
    api.ticket(bob)
    listed = api.tickets(alice)
    assert [t["id"] for t in listed["items"]] == mine and listed["total"] == 2, f"alice's two tickets by id: {listed}"
    assert api.ids(alice, customer_id=bob.id) == [], "a customer filtering by another customer sees nothing"


@pytest.mark.requirement("R8", "R9")
@pytest.mark.category("api_surface")
def test_agents_list_every_ticket_by_id_with_total(api, http):
    customer = api.customer()
    made = [api.ticket(customer)["id"] for _ in range(3)]
    listed = api.tickets(api.agent(), customer_id=customer.id)
    assert [t["id"] for t in listed["items"]] == made and listed["total"] == 3, f"the customer's three tickets by id: {listed}"


@pytest.mark.requirement("R9")
@pytest.mark.category("api_surface")
def test_limit_and_offset_page_the_list_and_total_counts_all(api, http):
    customer = api.customer()
    made = [api.ticket(customer)["id"] for _ in range(5)]
    page = api.tickets(customer, limit=2, offset=1)
    assert [t["id"] for t in page["items"]] == made[1:3] and page["total"] == 5, f"limit 2 offset 1: {page}"
    assert api.tickets(customer, offset=5)["items"] == [], "an offset past the end gives nothing"


@pytest.mark.requirement("R9")
@pytest.mark.category("state")
def test_state_priority_and_assignee_filters_combine(api, http):
    customer, agent = api.customer(), api.agent()
    a = api.ticket(customer, priority="high")
    b = api.ticket(customer, priority="high")
    c = api.ticket(customer, priority="low")
    api.change(agent, a, state="open", assignee_id=agent.id)
    api.change(agent, c, state="open")
    assert api.ids(agent, customer_id=customer.id, state="open") == [a["id"], c["id"]]
    assert api.ids(agent, customer_id=customer.id, state="open", priority="high") == [a["id"]]
    assert api.ids(agent, customer_id=customer.id, assignee_id=agent.id) == [a["id"]]
    assert api.ids(agent, customer_id=customer.id, assignee_id="none") == [b["id"], c["id"]]
    assert api.ids(agent, customer_id=customer.id, state="new", priority="low") == []


LIST_INVALID = [{"state": "reopened"}, {"priority": "HIGH"}, {"customer_id": "abc"}, {"assignee_id": "nobody"}, {"breached": "yes"},
                {"limit": "0"}, {"limit": "101"}, {"limit": "ten"}, {"offset": "-1"}, {"customer_id": "1 OR 1=1"}]


@pytest.mark.requirement("R9", "R17")
@pytest.mark.category("validation")
@pytest.mark.parametrize("params", LIST_INVALID, ids=["-".join(f"{k}={v}" for k, v in p.items()) for p in LIST_INVALID])
def test_invalid_list_parameters_get_422(api, http, params):
    r = api.call(api.agent(), "GET", "/api/tickets", params=params)
    api.assert_no_problems([api.validation_problem(r, list(params), f"GET /api/tickets {params}")], "list parameters")


@pytest.mark.requirement("R8")
@pytest.mark.category("api_surface")
def test_an_unknown_ticket_gets_404(api, http):
    missing = api.unknown_ticket_id()
    agent = api.agent()
    for method, path in (("GET", f"/api/tickets/{missing}"), ("PATCH", f"/api/tickets/{missing}"), ("GET", f"/api/tickets/{missing}/articles"),
                         ("POST", f"/api/tickets/{missing}/articles")):
        api.error(api.call(agent, method, path, json={"body": "x", "title": "x"}), 404, "not_found", f"{method} {path}")


# ---------------------------------------------------------------- PATCH


@pytest.mark.requirement("R10")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("UPDATE", table="tickets")
def test_agents_change_title_priority_and_assignee(api, http):
    customer, agent, other = api.customer(), api.agent(), api.agent()
    ticket = api.ticket(customer)
    got = api.change(agent, ticket, title="Renamed", priority="urgent", assignee_id=other.id)
    assert (got["title"], got["priority"], got["assignee_id"], got["state"]) == ("Renamed", "urgent", other.id, "new"), f"changed: {got}"
    again = api.get(customer, ticket)
    assert (again["title"], again["priority"], again["assignee_id"]) == ("Renamed", "urgent", other.id), f"the customer sees the changes: {again}"


@pytest.mark.requirement("R10")
@pytest.mark.category("state")
def test_admins_may_be_assigned_and_null_unassigns(api, http):
    _customer, agent, ticket = api.desk()
    assert api.change(agent, ticket, assignee_id=api.admin.id)["assignee_id"] == api.admin.id
    assert api.change(api.admin, ticket, assignee_id=None)["assignee_id"] is None
    assert api.get(agent, ticket)["assignee_id"] is None


@pytest.mark.requirement("R10")
@pytest.mark.category("validation")
@pytest.mark.parametrize("who", ["customer", "unknown", "string", "boolean"])
def test_only_agents_and_admins_can_be_assignees(api, http, who):
    customer, agent, ticket = api.desk()
    value = {"customer": customer.id, "unknown": api.unknown_ticket_id() + 10_000_000, "string": str(agent.id), "boolean": True}[who]
    r = api.patch(agent, ticket, assignee_id=value)
    api.assert_no_problems([api.validation_problem(r, ["assignee_id"], f"assignee_id {value!r}")], "assignee validation")
    assert api.get(agent, ticket)["assignee_id"] is None, "a refused PATCH changes nothing"


PATCH_INVALID = [("blank-title", {"title": " "}, ["title"]), ("unknown-state", {"state": "archived"}, ["state"]),
                 ("unknown-priority", {"priority": "p1"}, ["priority"]), ("null-title-and-state", {"title": None, "state": None}, ["title", "state"])]


@pytest.mark.requirement("R10")
@pytest.mark.category("validation")
@pytest.mark.parametrize("case, body, fields", PATCH_INVALID, ids=[c[0] for c in PATCH_INVALID])
def test_invalid_patches_get_422_and_change_nothing(api, http, case, body, fields):
    _customer, agent, ticket = api.desk()
    r = api.patch(agent, ticket, **body, assignee_id=agent.id)
    api.assert_no_problems([api.validation_problem(r, fields, f"PATCH {case}")], "PATCH validation")
    got = api.get(agent, ticket)
    assert (got["title"], got["state"], got["priority"], got["assignee_id"]) == (ticket["title"], "new", "normal", None), f"unchanged: {got}"


@pytest.mark.requirement("R10")
@pytest.mark.category("authorization")
def test_a_customer_may_rename_an_own_ticket(api, http):
    customer = api.customer()
    ticket = api.ticket(customer)
    assert api.change(customer, ticket, title="Better title")["title"] == "Better title"
    assert api.get(api.agent(), ticket)["title"] == "Better title"


@pytest.mark.requirement("R10")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("field", ["priority", "state", "assignee_id"])
def test_a_customer_changing_more_than_the_title_gets_403(api, http, field):
    customer, agent, ticket = api.desk(priority="low")
    value = {"priority": "urgent", "state": "closed", "assignee_id": agent.id}[field]
    api.error(api.patch(customer, ticket, title="Sneaky", **{field: value}), 403, "forbidden", f"a customer sending {field}")
    got = api.get(agent, ticket)
    assert (got["title"], got["priority"], got["state"], got["assignee_id"]) == (ticket["title"], "low", "new", None), f"nothing changed: {got}"
