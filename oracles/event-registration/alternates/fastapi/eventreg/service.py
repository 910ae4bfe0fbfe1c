"""Database operations; each function runs inside one pooled transaction."""
from typing import Optional

from psycopg import errors
from psycopg.rows import dict_row

from .db import Pool
from .schemas import EventIn, RegistrationIn, parse_starts_at


class Conflict(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


EVENTS_WITH_SEATS = """
    SELECT e.id, e.title, e.starts_at, e.capacity, e.created_at,
           COALESCE(c.n, 0)::int AS taken
    FROM events e
    LEFT JOIN (SELECT event_id, count(*) AS n FROM registrations GROUP BY event_id) c
           ON c.event_id = e.id
"""


class Store:
    def __init__(self, pool: Pool):
        self.pool = pool

    def list_events(self):
        with self.pool.connection() as conn:
            cur = conn.cursor(row_factory=dict_row)
            return cur.execute(EVENTS_WITH_SEATS + " ORDER BY e.starts_at, e.id").fetchall()

    def get_event(self, event_id: int) -> Optional[dict]:
        with self.pool.connection() as conn:
            cur = conn.cursor(row_factory=dict_row)
            return cur.execute(EVENTS_WITH_SEATS + " WHERE e.id = %s", (event_id,)).fetchone()

    def create_event(self, data: EventIn) -> dict:
        with self.pool.connection() as conn:
            cur = conn.cursor(row_factory=dict_row)
            return cur.execute(
                """INSERT INTO events (title, starts_at, capacity)
                   VALUES (%s, %s, %s)
                   RETURNING id, title, starts_at, capacity, created_at, 0 AS taken""",
                (data.title, parse_starts_at(data.starts_at), data.capacity),
            ).fetchone()

    def list_registrations(self, event_id: int) -> Optional[list]:
        with self.pool.connection() as conn:
            cur = conn.cursor(row_factory=dict_row)
            if cur.execute("SELECT id FROM events WHERE id = %s", (event_id,)).fetchone() is None:
                return None
            return cur.execute(
                """SELECT id, event_id, name, email, created_at FROM registrations
                   WHERE event_id = %s ORDER BY id""",
                (event_id,),
            ).fetchall()

    def register(self, event_id: int, data: RegistrationIn) -> Optional[dict]:
        """None when the event does not exist; Conflict on duplicate/full."""
        email = data.email.lower()
        try:
            with self.pool.connection() as conn:
                cur = conn.cursor(row_factory=dict_row)
                # Locking the event row makes count-then-insert atomic per event.
                event = cur.execute(
                    "SELECT capacity FROM events WHERE id = %s FOR UPDATE", (event_id,)
                ).fetchone()
                if event is None:
                    return None
                state = cur.execute(
                    """SELECT count(*) AS taken, COALESCE(bool_or(email = %s), false) AS dup
                       FROM registrations WHERE event_id = %s""",
                    (email, event_id),
                ).fetchone()
                if state["dup"]:
                    raise Conflict("already_registered", "this email is already registered for this event")
                if state["taken"] >= event["capacity"]:
                    raise Conflict("event_full", "this event is full")
                return cur.execute(
                    """INSERT INTO registrations (event_id, name, email, created_at)
                       VALUES (%s, %s, %s, clock_timestamp())
                       RETURNING id, event_id, name, email, created_at""",
                    (event_id, data.name, email),
                ).fetchone()
        except errors.UniqueViolation:
            raise Conflict("already_registered", "this email is already registered for this event") from None

    def cancel(self, registration_id: int) -> bool:
        with self.pool.connection() as conn:
            return conn.execute(
                "DELETE FROM registrations WHERE id = %s RETURNING id", (registration_id,)
            ).fetchone() is not None
