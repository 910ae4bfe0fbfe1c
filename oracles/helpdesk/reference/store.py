"""PostgreSQL storage for the helpdesk (psycopg 3, one connection per call, row locks for tickets)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import psycopg
from psycopg.rows import dict_row

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS users (
        id serial PRIMARY KEY,
        email text NOT NULL UNIQUE,
        name text NOT NULL,
        role text NOT NULL CHECK (role IN ('admin', 'agent', 'customer')),
        password_hash text NOT NULL,
        created_at timestamptz NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS sla_policies (
        priority text PRIMARY KEY,
        first_response_s integer NOT NULL,
        resolution_s integer NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS tickets (
        id serial PRIMARY KEY,
        title text NOT NULL,
        priority text NOT NULL,
        state text NOT NULL,
        customer_id integer NOT NULL REFERENCES users(id),
        assignee_id integer REFERENCES users(id),
        created_at timestamptz NOT NULL,
        first_response_at timestamptz,
        first_response_due_at timestamptz,
        resolution_due_at timestamptz
    )""",
    """CREATE TABLE IF NOT EXISTS articles (
        id serial PRIMARY KEY,
        ticket_id integer NOT NULL REFERENCES tickets(id),
        author_id integer NOT NULL REFERENCES users(id),
        body text NOT NULL,
        internal boolean NOT NULL,
        created_at timestamptz NOT NULL
    )""",
)

PRIORITIES = ("low", "normal", "high", "urgent")
USER_COLUMNS = "id, email, name, role, created_at"
TICKET_COLUMNS = (
    "id, title, priority, state, customer_id, assignee_id, created_at, first_response_at, first_response_due_at, resolution_due_at"
)
STOPPED = "('solved', 'closed')"
FIRST_RUNNING = "(first_response_at IS NULL AND first_response_due_at IS NOT NULL)"
RESOLUTION_RUNNING = f"(state NOT IN {STOPPED} AND resolution_due_at IS NOT NULL)"
BREACHED = f"(({FIRST_RUNNING} AND first_response_due_at < %(now)s) OR ({RESOLUTION_RUNNING} AND resolution_due_at < %(now)s))"
ESCALATION_AT = (
    f"LEAST(CASE WHEN {FIRST_RUNNING} THEN first_response_due_at END, CASE WHEN {RESOLUTION_RUNNING} THEN resolution_due_at END)"
)


class Taken(Exception):
    """The email belongs to another user."""


class Closed(Exception):
    """The ticket is closed: no new articles."""


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def migrate(url: str) -> None:
    """Create the tables unless they exist."""
    with psycopg.connect(url) as conn:
        conn.execute("SELECT pg_advisory_xact_lock(7301)")
        for statement in SCHEMA:
            conn.execute(statement)


class PgStore:
    """Users, SLA policies, tickets and articles in PostgreSQL."""

    def __init__(self, url: str) -> None:
        self.url = url

    def _connect(self) -> psycopg.Connection[dict[str, Any]]:
        return psycopg.connect(self.url, row_factory=dict_row)

    # ---------------------------------------------------------------- users

    def create_user(self, email: str, name: str, role: str, password_hash: str) -> dict[str, Any]:
        with self._connect() as conn:
            row = conn.execute(
                f"INSERT INTO users (email, name, role, password_hash, created_at) VALUES (%s, %s, %s, %s, %s) "
                f"ON CONFLICT (email) DO NOTHING RETURNING {USER_COLUMNS}",
                (email, name, role, password_hash, now()),
            ).fetchone()
            if row is None:
                raise Taken()
            return row

    def user_by_email(self, email: str) -> dict[str, Any] | None:
        with self._connect() as conn:
            return conn.execute(f"SELECT {USER_COLUMNS}, password_hash FROM users WHERE email = %s", (email,)).fetchone()

    def user(self, user_id: int) -> dict[str, Any] | None:
        with self._connect() as conn:
            return conn.execute(f"SELECT {USER_COLUMNS} FROM users WHERE id = %s", (user_id,)).fetchone()

    def users(self, role: str | None, email: str | None, limit: int, offset: int) -> list[dict[str, Any]]:
        where, params = ["TRUE"], {"limit": limit, "offset": offset}
        if role is not None:
            where.append("role = %(role)s")
            params["role"] = role
        if email is not None:
            where.append("email = %(email)s")
            params["email"] = email
        with self._connect() as conn:
            return conn.execute(
                f"SELECT {USER_COLUMNS} FROM users WHERE {' AND '.join(where)} ORDER BY id LIMIT %(limit)s OFFSET %(offset)s", params
            ).fetchall()

    # ---------------------------------------------------------------- SLA policies

    def put_policy(self, priority: str, first_response_s: int, resolution_s: int) -> dict[str, Any]:
        with self._connect() as conn:
            return conn.execute(
                "INSERT INTO sla_policies (priority, first_response_s, resolution_s) VALUES (%s, %s, %s) "
                "ON CONFLICT (priority) DO UPDATE SET first_response_s = EXCLUDED.first_response_s, resolution_s = EXCLUDED.resolution_s "
                "RETURNING priority, first_response_s, resolution_s",
                (priority, first_response_s, resolution_s),
            ).fetchone()

    def policies(self) -> list[dict[str, Any]]:
        with self._connect() as conn:
            rows = conn.execute("SELECT priority, first_response_s, resolution_s FROM sla_policies").fetchall()
        return sorted(rows, key=lambda r: PRIORITIES.index(r["priority"]))

    def delete_policy(self, priority: str) -> bool:
        with self._connect() as conn:
            return conn.execute("DELETE FROM sla_policies WHERE priority = %s", (priority,)).rowcount > 0

    @staticmethod
    def _due(conn: psycopg.Connection[dict[str, Any]], priority: str, created_at: dt.datetime) -> tuple[Any, Any]:
        policy = conn.execute("SELECT first_response_s, resolution_s FROM sla_policies WHERE priority = %s", (priority,)).fetchone()
        if policy is None:
            return None, None
        return created_at + dt.timedelta(seconds=policy["first_response_s"]), created_at + dt.timedelta(seconds=policy["resolution_s"])

    # ---------------------------------------------------------------- tickets

    def create_ticket(self, customer_id: int, title: str, body: str, priority: str) -> dict[str, Any]:
        created_at = now()
        with self._connect() as conn:
            first_due, resolution_due = self._due(conn, priority, created_at)
            ticket = conn.execute(
                f"INSERT INTO tickets (title, priority, state, customer_id, created_at, first_response_due_at, resolution_due_at) "
                f"VALUES (%s, %s, 'new', %s, %s, %s, %s) RETURNING {TICKET_COLUMNS}",
                (title, priority, customer_id, created_at, first_due, resolution_due),
            ).fetchone()
            conn.execute(
                "INSERT INTO articles (ticket_id, author_id, body, internal, created_at) VALUES (%s, %s, %s, FALSE, %s)",
                (ticket["id"], customer_id, body, created_at),
            )
            return ticket

    def ticket(self, ticket_id: int) -> dict[str, Any] | None:
        with self._connect() as conn:
            return conn.execute(f"SELECT {TICKET_COLUMNS} FROM tickets WHERE id = %s", (ticket_id,)).fetchone()

    def tickets(self, filters: dict[str, Any], limit: int, offset: int) -> tuple[list[dict[str, Any]], int]:
        """Tickets matching ``filters`` (column -> value; ``breached`` -> bool; ``assignee_id`` None for unassigned)."""
        where, params = ["TRUE"], {"limit": limit, "offset": offset, "now": now()}
        for column in ("state", "priority", "customer_id"):
            if column in filters:
                where.append(f"{column} = %({column})s")
                params[column] = filters[column]
        if "assignee_id" in filters:
            if filters["assignee_id"] is None:
                where.append("assignee_id IS NULL")
            else:
                where.append("assignee_id = %(assignee_id)s")
                params["assignee_id"] = filters["assignee_id"]
        if "breached" in filters:
            where.append(BREACHED if filters["breached"] else f"NOT {BREACHED}")
        clause = " AND ".join(where)
        with self._connect() as conn:
            total = conn.execute(f"SELECT count(*) AS n FROM tickets WHERE {clause}", params).fetchone()["n"]
            rows = conn.execute(
                f"SELECT {TICKET_COLUMNS} FROM tickets WHERE {clause} ORDER BY id LIMIT %(limit)s OFFSET %(offset)s", params
            ).fetchall()
        return rows, total

    def escalations(self, customer_id: int | None, limit: int, offset: int) -> list[dict[str, Any]]:
        params: dict[str, Any] = {"limit": limit, "offset": offset, "customer_id": customer_id}
        mine = "" if customer_id is None else "AND customer_id = %(customer_id)s"
        with self._connect() as conn:
            return conn.execute(
                f"SELECT * FROM (SELECT {TICKET_COLUMNS}, {ESCALATION_AT} AS escalation_at FROM tickets WHERE TRUE {mine}) t "
                f"WHERE escalation_at IS NOT NULL ORDER BY escalation_at, id LIMIT %(limit)s OFFSET %(offset)s",
                params,
            ).fetchall()

    def update_ticket(self, ticket_id: int, check: Any) -> dict[str, Any] | None:
        """Lock the ticket, let ``check(ticket, conn)`` answer the changes (or raise), apply them."""
        with self._connect() as conn:
            ticket = conn.execute(f"SELECT {TICKET_COLUMNS} FROM tickets WHERE id = %s FOR UPDATE", (ticket_id,)).fetchone()
            if ticket is None:
                return None
            changes = check(ticket, conn)
            if "priority" in changes and changes["priority"] != ticket["priority"]:
                changes["first_response_due_at"], changes["resolution_due_at"] = self._due(conn, changes["priority"], ticket["created_at"])
            if not changes:
                return ticket
            sets = ", ".join(f"{column} = %({column})s" for column in changes)
            return conn.execute(f"UPDATE tickets SET {sets} WHERE id = %(id)s RETURNING {TICKET_COLUMNS}", {**changes, "id": ticket_id}).fetchone()

    # ---------------------------------------------------------------- articles

    def add_article(self, ticket_id: int, author: dict[str, Any], body: str, internal: bool) -> dict[str, Any]:
        created_at = now()
        with self._connect() as conn:
            ticket = conn.execute("SELECT state, first_response_at FROM tickets WHERE id = %s FOR UPDATE", (ticket_id,)).fetchone()
            if ticket["state"] == "closed":
                raise Closed()
            article = conn.execute(
                "INSERT INTO articles (ticket_id, author_id, body, internal, created_at) VALUES (%s, %s, %s, %s, %s) "
                "RETURNING id, ticket_id, author_id, body, internal, created_at",
                (ticket_id, author["id"], body, internal, created_at),
            ).fetchone()
            state, first_response_at = ticket["state"], ticket["first_response_at"]
            if author["role"] in ("agent", "admin") and not internal:
                first_response_at = first_response_at or created_at
                state = "open" if state == "new" else state
            elif author["role"] == "customer" and state in ("pending", "solved"):
                state = "open"
            conn.execute("UPDATE tickets SET state = %s, first_response_at = %s WHERE id = %s", (state, first_response_at, ticket_id))
            return article

    def articles(self, ticket_id: int, with_internal: bool) -> list[dict[str, Any]]:
        hide = "" if with_internal else "AND NOT internal"
        with self._connect() as conn:
            return conn.execute(
                f"SELECT id, ticket_id, author_id, body, internal, created_at FROM articles WHERE ticket_id = %s {hide} ORDER BY id", (ticket_id,)
            ).fetchall()
