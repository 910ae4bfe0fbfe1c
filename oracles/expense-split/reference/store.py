"""PostgreSQL storage for projects, members, bills and shares (psycopg 3, one connection per call)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import psycopg
from psycopg.rows import dict_row
from split import shares

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS projects (
        slug text PRIMARY KEY,
        name text NOT NULL,
        password_hash text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
    )""",
    """CREATE TABLE IF NOT EXISTS members (
        id serial PRIMARY KEY,
        project_slug text NOT NULL REFERENCES projects(slug),
        name text NOT NULL,
        weight integer NOT NULL,
        active boolean NOT NULL DEFAULT true,
        UNIQUE (project_slug, name)
    )""",
    """CREATE TABLE IF NOT EXISTS bills (
        id serial PRIMARY KEY,
        project_slug text NOT NULL REFERENCES projects(slug),
        payer_id integer NOT NULL REFERENCES members(id),
        amount_cents bigint NOT NULL,
        date date NOT NULL,
        description text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    )""",
    """CREATE TABLE IF NOT EXISTS bill_owers (
        bill_id integer NOT NULL REFERENCES bills(id) ON DELETE CASCADE,
        member_id integer NOT NULL REFERENCES members(id),
        share_cents bigint NOT NULL,
        PRIMARY KEY (bill_id, member_id)
    )""",
)

MEMBER_COLUMNS = "id, name, weight, active"
BALANCE_QUERY = """SELECT m.id AS member_id, m.name, m.active,
    COALESCE((SELECT sum(b.amount_cents) FROM bills b WHERE b.payer_id = m.id), 0)::bigint AS paid_cents,
    COALESCE((SELECT sum(o.share_cents) FROM bill_owers o WHERE o.member_id = m.id), 0)::bigint AS owed_cents
    FROM members m WHERE m.project_slug = %s ORDER BY m.id"""


class Conflict(Exception):
    """A refusal with a 409 code (slug_taken, member_exists, balance_not_zero)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


class Invalid(Exception):
    """Body fields that name members the bill may not use (422)."""

    def __init__(self, fields: list[str]) -> None:
        super().__init__(", ".join(fields))
        self.fields = fields


def migrate(url: str) -> None:
    """Create the tables unless they exist."""
    with psycopg.connect(url) as conn:
        for statement in SCHEMA:
            conn.execute(statement)


class PgStore:
    """The whole state of the service, in PostgreSQL."""

    def __init__(self, url: str) -> None:
        self.url = url

    def _connect(self) -> psycopg.Connection[dict[str, Any]]:
        return psycopg.connect(self.url, row_factory=dict_row)

    # ---------------------------------------------------------------- projects

    def create_project(self, slug: str, name: str, password_hash: str) -> dict[str, Any]:
        with self._connect() as conn:
            row = conn.execute(
                "INSERT INTO projects (slug, name, password_hash) VALUES (%s, %s, %s) ON CONFLICT (slug) DO NOTHING "
                "RETURNING slug, name, created_at", (slug, name, password_hash),
            ).fetchone()
            if row is None:
                raise Conflict("slug_taken", "a project with this slug exists")
            return row

    def project(self, slug: str) -> dict[str, Any] | None:
        with self._connect() as conn:
            return conn.execute("SELECT slug, name, created_at FROM projects WHERE slug = %s", (slug,)).fetchone()

    def password_hash(self, slug: str) -> str | None:
        with self._connect() as conn:
            row = conn.execute("SELECT password_hash FROM projects WHERE slug = %s", (slug,)).fetchone()
            return None if row is None else str(row["password_hash"])

    # ---------------------------------------------------------------- members

    def members(self, slug: str) -> list[dict[str, Any]]:
        with self._connect() as conn:
            return conn.execute(f"SELECT {MEMBER_COLUMNS} FROM members WHERE project_slug = %s ORDER BY id", (slug,)).fetchall()

    def active_member_ids(self, slug: str) -> set[int]:
        with self._connect() as conn:
            return {row["id"] for row in conn.execute("SELECT id FROM members WHERE project_slug = %s AND active", (slug,)).fetchall()}

    def create_member(self, slug: str, name: str, weight: int) -> dict[str, Any]:
        with self._connect() as conn:
            row = conn.execute(
                f"INSERT INTO members (project_slug, name, weight, active) VALUES (%s, %s, %s, true) "
                f"ON CONFLICT (project_slug, name) DO NOTHING RETURNING {MEMBER_COLUMNS}", (slug, name, weight),
            ).fetchone()
            if row is None:
                raise Conflict("member_exists", "another member of the project has this name")
            return row

    def member(self, slug: str, member_id: int) -> dict[str, Any] | None:
        with self._connect() as conn:
            return conn.execute(f"SELECT {MEMBER_COLUMNS} FROM members WHERE id = %s AND project_slug = %s", (member_id, slug)).fetchone()

    def update_member(self, slug: str, member_id: int, changes: dict[str, Any]) -> dict[str, Any] | None:
        """The member after ``changes``; None when unknown; Conflict when renamed onto a name or deactivated owing."""
        with self._connect() as conn:
            current = conn.execute(
                f"SELECT {MEMBER_COLUMNS} FROM members WHERE id = %s AND project_slug = %s FOR UPDATE", (member_id, slug)
            ).fetchone()
            if current is None:
                return None
            if "name" in changes and changes["name"] != current["name"]:
                taken = conn.execute("SELECT 1 FROM members WHERE project_slug = %s AND name = %s", (slug, changes["name"])).fetchone()
                if taken is not None:
                    raise Conflict("member_exists", "another member of the project has this name")
            if changes.get("active") is False and current["active"]:
                balance = self._balance(conn, member_id)
                if balance != 0:
                    raise Conflict("balance_not_zero", "only a member whose balance is 0 can be deactivated")
            merged = {**current, **changes}
            return conn.execute(
                f"UPDATE members SET name = %s, weight = %s, active = %s WHERE id = %s RETURNING {MEMBER_COLUMNS}",
                (merged["name"], merged["weight"], merged["active"], member_id),
            ).fetchone()

    @staticmethod
    def _balance(conn: psycopg.Connection[dict[str, Any]], member_id: int) -> int:
        paid = conn.execute("SELECT COALESCE(sum(amount_cents), 0)::bigint AS n FROM bills WHERE payer_id = %s", (member_id,)).fetchone()
        owed = conn.execute("SELECT COALESCE(sum(share_cents), 0)::bigint AS n FROM bill_owers WHERE member_id = %s", (member_id,)).fetchone()
        return int(paid["n"]) - int(owed["n"])

    # ---------------------------------------------------------------- bills

    def _bill(self, conn: psycopg.Connection[dict[str, Any]], slug: str, bill_id: int) -> dict[str, Any] | None:
        bill = conn.execute(
            "SELECT id, payer_id, amount_cents, date, description, created_at FROM bills WHERE id = %s AND project_slug = %s", (bill_id, slug)
        ).fetchone()
        if bill is None:
            return None
        owers = conn.execute("SELECT member_id, share_cents FROM bill_owers WHERE bill_id = %s ORDER BY member_id", (bill_id,)).fetchall()
        return {**bill, "shares": [{"member_id": o["member_id"], "share_cents": int(o["share_cents"])} for o in owers]}

    def bill(self, slug: str, bill_id: int) -> dict[str, Any] | None:
        with self._connect() as conn:
            return self._bill(conn, slug, bill_id)

    def bills(self, slug: str) -> list[dict[str, Any]]:
        with self._connect() as conn:
            ids = conn.execute("SELECT id FROM bills WHERE project_slug = %s ORDER BY date DESC, id DESC", (slug,)).fetchall()
            return [bill for row in ids if (bill := self._bill(conn, slug, row["id"])) is not None]

    def _weights(self, conn: psycopg.Connection[dict[str, Any]], slug: str, payer_id: int, owers: list[int]) -> dict[int, int]:
        """The owers' current weights, locking the members; Invalid when payer or owers are not active members here."""
        wanted = sorted({payer_id, *owers})
        rows = conn.execute(
            "SELECT id, weight FROM members WHERE project_slug = %s AND active AND id = ANY(%s) ORDER BY id FOR SHARE", (slug, wanted)
        ).fetchall()
        usable = {row["id"]: row["weight"] for row in rows}
        fields = []
        if payer_id not in usable:
            fields.append("payer_id")
        if any(o not in usable for o in owers):
            fields.append("owers")
        if fields:
            raise Invalid(fields)
        return {o: usable[o] for o in owers}

    def _write_owers(self, conn: psycopg.Connection[dict[str, Any]], bill_id: int, amount: int, weights: dict[int, int]) -> None:
        for member_id, share in shares(amount, weights).items():
            conn.execute("INSERT INTO bill_owers (bill_id, member_id, share_cents) VALUES (%s, %s, %s)", (bill_id, member_id, share))

    def create_bill(self, slug: str, payer_id: int, amount: int, date: dt.date, description: str, owers: list[int]) -> dict[str, Any]:
        with self._connect() as conn:
            weights = self._weights(conn, slug, payer_id, owers)
            row = conn.execute(
                "INSERT INTO bills (project_slug, payer_id, amount_cents, date, description) VALUES (%s, %s, %s, %s, %s) RETURNING id",
                (slug, payer_id, amount, date, description),
            ).fetchone()
            self._write_owers(conn, row["id"], amount, weights)
            bill = self._bill(conn, slug, row["id"])
            assert bill is not None
            return bill

    def replace_bill(self, slug: str, bill_id: int, payer_id: int, amount: int, date: dt.date, description: str,
                     owers: list[int]) -> dict[str, Any] | None:
        with self._connect() as conn:
            weights = self._weights(conn, slug, payer_id, owers)
            updated = conn.execute(
                "UPDATE bills SET payer_id = %s, amount_cents = %s, date = %s, description = %s WHERE id = %s AND project_slug = %s",
                (payer_id, amount, date, description, bill_id, slug),
            ).rowcount
            if updated == 0:
                return None
            conn.execute("DELETE FROM bill_owers WHERE bill_id = %s", (bill_id,))
            self._write_owers(conn, bill_id, amount, weights)
            bill = self._bill(conn, slug, bill_id)
            assert bill is not None
            return bill

    def delete_bill(self, slug: str, bill_id: int) -> bool:
        with self._connect() as conn:
            conn.execute("DELETE FROM bill_owers WHERE bill_id IN (SELECT id FROM bills WHERE id = %s AND project_slug = %s)", (bill_id, slug))
            return conn.execute("DELETE FROM bills WHERE id = %s AND project_slug = %s", (bill_id, slug)).rowcount > 0

    # ---------------------------------------------------------------- balances

    def balances(self, slug: str) -> list[dict[str, Any]]:
        with self._connect() as conn:
            rows = conn.execute(BALANCE_QUERY, (slug,)).fetchall()
        return [{**r, "paid_cents": int(r["paid_cents"]), "owed_cents": int(r["owed_cents"]),
                 "balance_cents": int(r["paid_cents"]) - int(r["owed_cents"])} for r in rows]
