"""What the service keeps in PostgreSQL, for data each item made itself (spec.md: Database)."""

from __future__ import annotations

import datetime as dt

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("state")]


def utc(value):
    """A timestamp column's value as an aware instant (`timestamp` columns hold UTC)."""
    return value if value is None or value.tzinfo is not None else value.replace(tzinfo=dt.timezone.utc)


@pytest.mark.requirement("R2", "R16")
@pytest.mark.db_effect("INSERT", table="users")
def test_a_registration_is_a_users_row(api, http, db):
    email = api.fresh_email("Row")
    api.ok(http.post("/api/auth/register", json={"email": email.upper(), "name": "Row Person", "password": api.PASSWORD}), 201, "register")
    rows = db.query("SELECT email, name, role FROM users WHERE lower(email) = %s", (email.lower(),))
    assert [(r["email"], r["name"], r["role"]) for r in rows] == [(email.lower(), "Row Person", "customer")], f"one lower-cased row: {rows}"


@pytest.mark.requirement("R7", "R13", "R16")
@pytest.mark.db_effect("INSERT", table="tickets")
def test_a_ticket_is_a_row_with_its_due_times(api, http, db):
    api.policy("high", 1234, 5678)
    customer = api.customer()
    ticket = api.ticket(customer, priority="high", title="Stored")
    rows = db.query("SELECT * FROM tickets WHERE id = %s", (int(ticket["id"]),))
    assert len(rows) == 1, f"one row: {rows}"
    row = rows[0]
    assert (row["title"], row["priority"], row["state"], row["customer_id"], row["assignee_id"], row["first_response_at"]) == (
        "Stored", "high", "new", customer.id, None, None), f"the row: {row}"
    created = utc(row["created_at"])
    assert abs((utc(row["first_response_due_at"]) - created).total_seconds() - 1234) <= 1, f"first_response_due_at column: {row}"
    assert abs((utc(row["resolution_due_at"]) - created).total_seconds() - 5678) <= 1, f"resolution_due_at column: {row}"


@pytest.mark.requirement("R12", "R16")
@pytest.mark.db_effect("INSERT", table="articles")
def test_articles_are_rows_with_their_internal_flag(api, http, db):
    customer, agent, ticket = api.desk(body="first")
    api.article(agent, ticket, body="hidden", internal=True)
    api.article(agent, ticket, body="shown")
    rows = db.query("SELECT author_id, body, internal FROM articles WHERE ticket_id = %s ORDER BY id", (int(ticket["id"]),))
    assert [(r["author_id"], r["body"], r["internal"]) for r in rows] == [(customer.id, "first", False), (agent.id, "hidden", True), (agent.id, "shown", False)], rows


@pytest.mark.requirement("R10", "R14", "R16")
@pytest.mark.db_effect("UPDATE", table="tickets")
def test_changes_and_the_first_response_reach_the_row(api, http, db):
    _customer, agent, ticket = api.desk()
    api.change(agent, ticket, assignee_id=agent.id, priority="urgent")
    api.article(agent, ticket, body="hello")
    row = db.query("SELECT state, priority, assignee_id, first_response_at FROM tickets WHERE id = %s", (int(ticket["id"]),))[0]
    assert (row["state"], row["priority"], row["assignee_id"]) == ("open", "urgent", agent.id) and row["first_response_at"] is not None, f"{row}"


@pytest.mark.requirement("R6", "R16")
@pytest.mark.db_effect("UPDATE", table="sla_policies")
def test_policies_are_rows(api, http, db):
    api.policy("normal", 42, 420)
    api.policy("normal", 43, 430)
    rows = db.query("SELECT first_response_s, resolution_s FROM sla_policies WHERE priority = 'normal'")
    assert [(r["first_response_s"], r["resolution_s"]) for r in rows] == [(43, 430)], f"one row for normal: {rows}"
    api.ok(api.call(api.admin, "DELETE", "/api/sla/normal"), 204, "delete the normal policy")
    assert db.scalar("SELECT count(*) FROM sla_policies WHERE priority = 'normal'") == 0, "a deleted policy has no row"
