"""What the service keeps in PostgreSQL and what each request writes there, for rows this item
made itself (spec.md: Database; Pages; Moving; Revisions and history)."""

from __future__ import annotations

import datetime as dt

import pytest

pytestmark = [pytest.mark.tier("base")]


def revision_rows(db, page_id: int) -> list[tuple]:
    rows = db.query("SELECT number, title, body, summary, author_id FROM revisions WHERE page_id = %s ORDER BY number", (page_id,))
    return [(r["number"], r["title"], r["body"], r["summary"], r["author_id"]) for r in rows]


@pytest.mark.requirement("R7", "R17")
@pytest.mark.category("side_effects")
@pytest.mark.db_effect("INSERT", table="revisions")
def test_each_edit_writes_one_revision_row_with_its_author(api, http, db, editor):
    page = api.page(editor, title="T", body="one", summary="s1")
    admin = api.admin
    api.edit(page, admin, body="two", summary="s2")
    assert revision_rows(db, page["id"]) == [(1, "T", "one", "s1", editor.id), (2, "T", "two", "s2", admin.id)], f"rows of revisions: {revision_rows(db, page['id'])}"
    stamps = [r["created_at"] for r in db.query("SELECT created_at FROM revisions WHERE page_id = %s ORDER BY number", (page["id"],))]
    assert all(isinstance(s, dt.datetime) for s in stamps) and stamps[0] <= stamps[1], f"created_at timestamps in order: {stamps}"


@pytest.mark.requirement("R7", "R17")
@pytest.mark.category("side_effects")
def test_pages_row_holds_the_current_slug_title_and_protection(api, http, db, editor):
    page = api.page(editor, title="Before")
    api.edit(page, editor, title="After")
    new = api.slug("moved")
    api.ok(api.move(page, new, editor), 200, "move")
    api.ok(api.protect(new), 200, "protect")
    row = db.query("SELECT slug, title, protected FROM pages WHERE id = %s", (page["id"],))
    assert [(r["slug"], r["title"], r["protected"]) for r in row] == [(new, "After", True)], f"the pages row: {row}"


@pytest.mark.requirement("R8", "R12", "R13", "R16")
@pytest.mark.category("side_effects")
def test_refused_and_null_requests_write_no_revision(api, http, db, editor, reader):
    page = api.page(editor, body="same")
    api.put(page, editor, body="same", base_revision=1)  # null edit
    api.put(page, editor, body="other", base_revision=5)  # conflict
    api.put(page, reader, body="other", base_revision=1)  # forbidden
    api.put(page, editor, body="other", base_revision=1, title="")  # invalid
    api.revert(page, editor, revision=1)  # current content
    api.ok(api.protect(page), 200, "protect")
    api.ok(api.move(page, api.slug("moved")), 200, "move")
    assert db.scalar("SELECT count(*) FROM revisions WHERE page_id = %s", (page["id"],)) == 1, f"only revision 1: {revision_rows(db, page['id'])}"


@pytest.mark.requirement("R11", "R17")
@pytest.mark.category("side_effects")
def test_revert_writes_a_new_row_and_keeps_the_old_ones(api, http, db, editor):
    page = api.page(editor, title="A", body="good")
    api.edit(page, editor, title="B", body="bad", summary="oops")
    api.ok(api.revert(page, api.admin, revision=1), 200, "revert")
    assert revision_rows(db, page["id"]) == [(1, "A", "good", "", editor.id), (2, "B", "bad", "oops", editor.id), (3, "A", "good", "Reverted to revision 1", api.admin.id)]


@pytest.mark.requirement("R14", "R17")
@pytest.mark.category("side_effects")
@pytest.mark.db_effect("DELETE", table="pages")
def test_delete_removes_the_rows(api, http, db):
    page = api.page()
    api.edit(page)
    api.ok(api.delete(page), 204, "delete")
    assert db.scalar("SELECT count(*) FROM pages WHERE id = %s", (page["id"],)) == 0, "the pages row is gone"
    assert db.scalar("SELECT count(*) FROM revisions WHERE page_id = %s", (page["id"],)) == 0, "its revisions rows are gone"


@pytest.mark.requirement("R4", "R17")
@pytest.mark.category("state")
def test_users_are_rows_with_their_roles(api, http, db):
    made = [api.user(role) for role in ("reader", "editor", "admin")]
    rows = db.query("SELECT id, username, role FROM users WHERE id = ANY(%s) ORDER BY id", ([u.id for u in made],))
    assert [(r["id"], r["username"], r["role"]) for r in rows] == [(u.id, u.username, u.role) for u in made], f"rows of users: {rows}"


@pytest.mark.requirement("R17")
@pytest.mark.category("state")
@pytest.mark.db_effect("SELECT", table="pages")
def test_page_rows_match_the_api(api, http, db, editor):
    """A page is what its rows say (spec.md: Database)."""
    page = api.page(editor, title="Row title", body="row body")
    stored = db.query("SELECT p.slug, p.title, r.body FROM pages p JOIN revisions r ON r.page_id = p.id WHERE p.id = %s", (page["id"],))
    assert [(r["slug"], r["title"], r["body"]) for r in stored] == [(page["slug"], "Row title", "row body")], f"the rows: {stored}"
    assert api.get_page(page)["title"] == "Row title"
