"""PostgreSQL storage for users, pages, revisions and redirects (psycopg 3, one connection per call).

Every change that reads then writes a page locks the page's row first (SELECT ... FOR UPDATE),
so two concurrent edits of one page cannot both build on the same base revision.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import dict_row

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS users (
        id serial PRIMARY KEY,
        username text NOT NULL UNIQUE,
        password_hash text NOT NULL,
        role text NOT NULL CHECK (role IN ('reader', 'editor', 'admin')),
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    )""",
    """CREATE TABLE IF NOT EXISTS pages (
        id serial PRIMARY KEY,
        slug text NOT NULL UNIQUE,
        title text NOT NULL,
        protected boolean NOT NULL DEFAULT false,
        current_revision integer NOT NULL DEFAULT 1,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    )""",
    """CREATE TABLE IF NOT EXISTS revisions (
        id serial PRIMARY KEY,
        page_id integer NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
        number integer NOT NULL,
        title text NOT NULL,
        body text NOT NULL,
        summary text NOT NULL,
        author_id integer NOT NULL REFERENCES users(id),
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        UNIQUE (page_id, number)
    )""",
    """CREATE TABLE IF NOT EXISTS redirects (
        slug text PRIMARY KEY,
        page_id integer NOT NULL REFERENCES pages(id) ON DELETE CASCADE
    )""",
)

PAGE = """SELECT p.id, p.slug, p.title, r.body, p.protected, p.current_revision AS revision, p.created_at
    FROM pages p JOIN revisions r ON r.page_id = p.id AND r.number = p.current_revision"""

Conn = psycopg.Connection[dict[str, Any]]


class SlugTaken(Exception):
    """A page already has the slug."""


class EditConflict(Exception):
    """The edit's base revision is not the page's current revision."""

    def __init__(self, current: int) -> None:
        super().__init__(current)
        self.current = current


def migrate(url: str, admin: str, admin_hash: str) -> None:
    """Create the tables unless they exist, and the bootstrap administrator unless it exists."""
    with psycopg.connect(url) as conn:
        conn.execute("SELECT pg_advisory_xact_lock(7401)")  # two starting processes must not race on DDL
        for statement in SCHEMA:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO users (username, password_hash, role) VALUES (%s, %s, 'admin') ON CONFLICT (username) DO NOTHING",
            (admin, admin_hash),
        )


class PgStore:
    """Users, pages, revisions and redirects in PostgreSQL."""

    def __init__(self, url: str) -> None:
        self.url = url

    def _connect(self) -> Conn:
        return psycopg.connect(self.url, row_factory=dict_row)

    # ---------------------------------------------------------------- users

    def user_by_name(self, username: str) -> dict[str, Any] | None:
        with self._connect() as conn:
            return conn.execute("SELECT * FROM users WHERE username = %s", (username,)).fetchone()

    def user(self, user_id: int) -> dict[str, Any] | None:
        with self._connect() as conn:
            return conn.execute("SELECT * FROM users WHERE id = %s", (user_id,)).fetchone()

    def create_user(self, username: str, password_hash: str, role: str) -> dict[str, Any] | None:
        """The new user, or None when the username is taken."""
        with self._connect() as conn:
            return conn.execute(
                "INSERT INTO users (username, password_hash, role) VALUES (%s, %s, %s) ON CONFLICT (username) DO NOTHING RETURNING *",
                (username, password_hash, role),
            ).fetchone()

    def users(self) -> list[dict[str, Any]]:
        with self._connect() as conn:
            return conn.execute("SELECT * FROM users ORDER BY id").fetchall()

    # ---------------------------------------------------------------- pages

    @staticmethod
    def _page(conn: Conn, page_id: int) -> dict[str, Any]:
        row = conn.execute(PAGE + " WHERE p.id = %s", (page_id,)).fetchone()
        assert row is not None
        return row

    def _locked(self, conn: Conn, page_id: int) -> dict[str, Any]:
        """The page, its row locked until the transaction ends (lock first, then read the current revision)."""
        conn.execute("SELECT id FROM pages WHERE id = %s FOR UPDATE", (page_id,))
        return self._page(conn, page_id)

    def page(self, slug: str) -> dict[str, Any] | None:
        """The page whose current slug is ``slug`` (redirects not followed)."""
        with self._connect() as conn:
            return conn.execute(PAGE + " WHERE p.slug = %s", (slug,)).fetchone()

    def redirect_target(self, slug: str) -> dict[str, Any] | None:
        """The page a redirect at ``slug`` points to."""
        with self._connect() as conn:
            return conn.execute(PAGE + " JOIN redirects d ON d.page_id = p.id WHERE d.slug = %s", (slug,)).fetchone()

    def create_page(self, slug: str, title: str, body: str, summary: str, author_id: int) -> dict[str, Any]:
        with self._connect() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (slug,))
            if conn.execute("SELECT 1 FROM pages WHERE slug = %s", (slug,)).fetchone():
                raise SlugTaken()
            conn.execute("DELETE FROM redirects WHERE slug = %s", (slug,))
            page_id = conn.execute("INSERT INTO pages (slug, title) VALUES (%s, %s) RETURNING id", (slug, title)).fetchone()["id"]
            conn.execute(
                "INSERT INTO revisions (page_id, number, title, body, summary, author_id) VALUES (%s, 1, %s, %s, %s, %s)",
                (page_id, title, body, summary, author_id),
            )
            return self._page(conn, page_id)

    def search(self, q: str, limit: int, offset: int) -> tuple[int, list[dict[str, Any]]]:
        """Pages whose title contains ``q`` literally (ignoring case), oldest first."""
        where, params = ("WHERE strpos(lower(title), lower(%s)) > 0", [q]) if q else ("", [])
        with self._connect() as conn:
            total = conn.execute(f"SELECT count(*) AS n FROM pages {where}", params).fetchone()["n"]
            rows = conn.execute(
                f"SELECT id, slug, title, protected, current_revision AS revision FROM pages {where} ORDER BY id LIMIT %s OFFSET %s",
                [*params, limit, offset],
            ).fetchall()
            return int(total), rows

    def edit(self, page_id: int, base: int, title: str, body: str, summary: str, author_id: int) -> dict[str, Any]:
        """The page after the edit (a null edit changes nothing); EditConflict for a stale base."""
        with self._connect() as conn:
            current = self._locked(conn, page_id)
            if current["revision"] != base:
                raise EditConflict(current["revision"])
            return self._save(conn, current, title, body, summary, author_id)

    def revert(self, page_id: int, number: int, summary: str, author_id: int) -> dict[str, Any] | None:
        """The page after reverting to revision ``number``; None when the page has no such revision."""
        with self._connect() as conn:
            current = self._locked(conn, page_id)
            old = conn.execute("SELECT title, body FROM revisions WHERE page_id = %s AND number = %s", (page_id, number)).fetchone()
            if old is None:
                return None
            return self._save(conn, current, old["title"], old["body"], summary, author_id)

    def _save(self, conn: Conn, current: dict[str, Any], title: str, body: str, summary: str, author_id: int) -> dict[str, Any]:
        if current["title"] == title and current["body"] == body:
            return current
        number = current["revision"] + 1
        conn.execute(
            "INSERT INTO revisions (page_id, number, title, body, summary, author_id) VALUES (%s, %s, %s, %s, %s, %s)",
            (current["id"], number, title, body, summary, author_id),
        )
        conn.execute("UPDATE pages SET title = %s, current_revision = %s WHERE id = %s", (title, number, current["id"]))
        return self._page(conn, current["id"])

    def has_revision(self, page_id: int, number: int) -> bool:
        with self._connect() as conn:
            return conn.execute("SELECT 1 FROM revisions WHERE page_id = %s AND number = %s", (page_id, number)).fetchone() is not None

    def protect(self, page_id: int, protected: bool) -> dict[str, Any]:
        with self._connect() as conn:
            conn.execute("UPDATE pages SET protected = %s WHERE id = %s", (protected, page_id))
            return self._page(conn, page_id)

    def move(self, page_id: int, new_slug: str) -> dict[str, Any]:
        """The page under ``new_slug``; its old slug becomes a redirect. SlugTaken when a page has it."""
        with self._connect() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (new_slug,))
            page = conn.execute("SELECT slug FROM pages WHERE id = %s FOR UPDATE", (page_id,)).fetchone()
            assert page is not None
            if conn.execute("SELECT 1 FROM pages WHERE slug = %s", (new_slug,)).fetchone():
                raise SlugTaken()
            conn.execute("DELETE FROM redirects WHERE slug = %s", (new_slug,))
            conn.execute("UPDATE pages SET slug = %s WHERE id = %s", (new_slug, page_id))
            conn.execute("INSERT INTO redirects (slug, page_id) VALUES (%s, %s)", (page["slug"], page_id))
            return self._page(conn, page_id)

    def delete(self, page_id: int) -> None:
        with self._connect() as conn:
            conn.execute("DELETE FROM pages WHERE id = %s", (page_id,))  # revisions and redirects cascade

    # ---------------------------------------------------------------- revisions

    def revisions(self, page_id: int, limit: int, offset: int) -> tuple[int, list[dict[str, Any]]]:
        """The page's revisions newest first, with their authors' usernames."""
        with self._connect() as conn:
            total = conn.execute("SELECT count(*) AS n FROM revisions WHERE page_id = %s", (page_id,)).fetchone()["n"]
            rows = conn.execute(
                """SELECT r.number, r.title, r.summary, u.username AS author, r.created_at FROM revisions r
                   JOIN users u ON u.id = r.author_id WHERE r.page_id = %s ORDER BY r.number DESC LIMIT %s OFFSET %s""",
                (page_id, limit, offset),
            ).fetchall()
            return int(total), rows

    def revision(self, page_id: int, number: int) -> dict[str, Any] | None:
        with self._connect() as conn:
            return conn.execute(
                """SELECT r.number, r.title, r.body, r.summary, u.username AS author, r.created_at FROM revisions r
                   JOIN users u ON u.id = r.author_id WHERE r.page_id = %s AND r.number = %s""",
                (page_id, number),
            ).fetchone()
