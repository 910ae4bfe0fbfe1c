"""PostgreSQL storage for owners, forms, questions and responses (psycopg 3, one connection per call)."""

from __future__ import annotations

import json
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS owners (
        id serial PRIMARY KEY,
        email text NOT NULL UNIQUE,
        password_hash text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    )""",
    """CREATE TABLE IF NOT EXISTS forms (
        id serial PRIMARY KEY,
        owner_id integer NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
        title text NOT NULL,
        slug text NOT NULL UNIQUE,
        status text NOT NULL DEFAULT 'draft',
        response_limit integer,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    )""",
    """CREATE TABLE IF NOT EXISTS questions (
        id serial PRIMARY KEY,
        form_id integer NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
        position integer NOT NULL,
        type text NOT NULL,
        title text NOT NULL,
        required boolean NOT NULL,
        settings jsonb NOT NULL DEFAULT '{}'
    )""",
    """CREATE TABLE IF NOT EXISTS responses (
        id serial PRIMARY KEY,
        form_id integer NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
        answers jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    )""",
)

FORM_COLUMNS = """f.id, f.owner_id, f.title, f.slug, f.status, f.response_limit, f.created_at,
    (SELECT count(*) FROM responses r WHERE r.form_id = f.id)::int AS response_count"""


class Taken(Exception):
    """The email is already registered."""


class Closed(Exception):
    """The form is closed."""


class LimitReached(Exception):
    """The form already has response_limit responses."""


def migrate(url: str) -> None:
    """Create the tables unless they exist."""
    with psycopg.connect(url) as conn:
        for statement in SCHEMA:
            conn.execute(statement)


class PgStore:
    """Everything the service keeps, in PostgreSQL."""

    def __init__(self, url: str) -> None:
        self.url = url

    def _connect(self) -> psycopg.Connection[dict[str, Any]]:
        return psycopg.connect(self.url, row_factory=dict_row)

    # ---------------------------------------------------------------- owners

    def create_owner(self, email: str, password_hash: str) -> dict[str, Any]:
        with self._connect() as conn:
            try:
                return dict(conn.execute(
                    "INSERT INTO owners (email, password_hash) VALUES (%s, %s) RETURNING id, email, created_at", (email, password_hash)
                ).fetchone() or {})
            except psycopg.errors.UniqueViolation:
                raise Taken() from None

    def owner_by_email(self, email: str) -> dict[str, Any] | None:
        with self._connect() as conn:
            return conn.execute("SELECT id, email, password_hash, created_at FROM owners WHERE email = %s", (email,)).fetchone()

    def owner(self, owner_id: int) -> dict[str, Any] | None:
        with self._connect() as conn:
            return conn.execute("SELECT id, email, created_at FROM owners WHERE id = %s", (owner_id,)).fetchone()

    # ---------------------------------------------------------------- forms and questions

    def create_form(self, owner_id: int, title: str, slug: str, response_limit: int | None) -> dict[str, Any]:
        with self._connect() as conn:
            row = conn.execute(
                "INSERT INTO forms (owner_id, title, slug, response_limit) VALUES (%s, %s, %s, %s) RETURNING id",
                (owner_id, title, slug, response_limit),
            ).fetchone()
        return self.form(int(row["id"])) or {}

    def form(self, form_id: int) -> dict[str, Any] | None:
        with self._connect() as conn:
            form = conn.execute(f"SELECT {FORM_COLUMNS} FROM forms f WHERE f.id = %s", (form_id,)).fetchone()
            return self._with_questions(conn, form)

    def form_by_slug(self, slug: str) -> dict[str, Any] | None:
        with self._connect() as conn:
            form = conn.execute(f"SELECT {FORM_COLUMNS} FROM forms f WHERE f.slug = %s", (slug,)).fetchone()
            return self._with_questions(conn, form)

    def _with_questions(self, conn: psycopg.Connection[dict[str, Any]], form: dict[str, Any] | None) -> dict[str, Any] | None:
        if form is None:
            return None
        rows = conn.execute(
            "SELECT id, position, type, title, required, settings FROM questions WHERE form_id = %s ORDER BY position", (form["id"],)
        ).fetchall()
        return {**form, "questions": [dict(r) for r in rows]}

    def forms_of(self, owner_id: int) -> list[dict[str, Any]]:
        with self._connect() as conn:
            rows = conn.execute(f"SELECT {FORM_COLUMNS} FROM forms f WHERE f.owner_id = %s ORDER BY f.created_at, f.id", (owner_id,)).fetchall()
            return [self._with_questions(conn, r) or {} for r in rows]

    def delete_form(self, form_id: int) -> None:
        with self._connect() as conn:
            conn.execute("DELETE FROM forms WHERE id = %s", (form_id,))

    def set_status(self, form_id: int, expected: str, status: str) -> bool:
        with self._connect() as conn:
            return conn.execute("UPDATE forms SET status = %s WHERE id = %s AND status = %s", (status, form_id, expected)).rowcount > 0

    def add_question(self, form_id: int, qtype: str, title: str, required: bool, settings: dict[str, Any]) -> dict[str, Any] | None:
        """Append a question; None when the form is no longer a draft."""
        with self._connect() as conn:
            form = conn.execute("SELECT status FROM forms WHERE id = %s FOR UPDATE", (form_id,)).fetchone()
            if form is None or form["status"] != "draft":
                return None
            position = conn.execute("SELECT count(*) AS n FROM questions WHERE form_id = %s", (form_id,)).fetchone()["n"] + 1
            return dict(conn.execute(
                "INSERT INTO questions (form_id, position, type, title, required, settings) VALUES (%s, %s, %s, %s, %s, %s)"
                " RETURNING id, position, type, title, required, settings",
                (form_id, position, qtype, title, required, Jsonb(settings)),
            ).fetchone() or {})

    def delete_question(self, form_id: int, question_id: int) -> str:
        """'deleted', 'missing' or 'not_draft'."""
        with self._connect() as conn:
            form = conn.execute("SELECT status FROM forms WHERE id = %s FOR UPDATE", (form_id,)).fetchone()
            if form is None:
                return "missing"
            if form["status"] != "draft":
                return "not_draft"
            gone = conn.execute("DELETE FROM questions WHERE id = %s AND form_id = %s RETURNING position", (question_id, form_id)).fetchone()
            if gone is None:
                return "missing"
            conn.execute("UPDATE questions SET position = position - 1 WHERE form_id = %s AND position > %s", (form_id, gone["position"]))
            return "deleted"

    # ---------------------------------------------------------------- responses

    def submit(self, form_id: int, answers: dict[str, Any]) -> dict[str, Any]:
        """Store a response unless the form closed or reached its limit meanwhile (the form row is locked)."""
        with self._connect() as conn:
            form = conn.execute("SELECT status, response_limit FROM forms WHERE id = %s FOR UPDATE", (form_id,)).fetchone()
            if form is None or form["status"] != "published":
                raise Closed()
            if form["response_limit"] is not None:
                count = conn.execute("SELECT count(*) AS n FROM responses WHERE form_id = %s", (form_id,)).fetchone()["n"]
                if count >= form["response_limit"]:
                    raise LimitReached()
            return dict(conn.execute(
                "INSERT INTO responses (form_id, answers) VALUES (%s, %s) RETURNING id, created_at", (form_id, Jsonb(answers))
            ).fetchone() or {})

    def responses(self, form_id: int) -> list[dict[str, Any]]:
        with self._connect() as conn:
            rows = conn.execute("SELECT id, answers, created_at FROM responses WHERE form_id = %s ORDER BY id", (form_id,)).fetchall()
        return [{**r, "answers": r["answers"] if isinstance(r["answers"], dict) else json.loads(r["answers"])} for r in rows]
