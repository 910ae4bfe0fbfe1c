"""What the service keeps in PostgreSQL, for data each item made itself (spec.md: Database)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("state")]


@pytest.mark.requirement("R2", "R13")
def test_owners_are_rows_with_lower_cased_emails(api, http, db):
    local = api.fresh_email().split("@")[0]
    made = api.ok(api.register(f"Ow.{local}@Example.COM"), 201, "register")
    rows = db.query("SELECT id, email FROM owners WHERE id = %s", (int(made["id"]),))
    assert [(r["id"], r["email"]) for r in rows] == [(made["id"], f"ow.{local}@example.com")], f"one owner row, email lower-cased: {rows}"


@pytest.mark.requirement("R5", "R6", "R13")
def test_forms_and_questions_are_rows(api, http, db):
    built = api.build(publish=False, response_limit=7)
    form = db.query("SELECT owner_id, title, slug, status, response_limit FROM forms WHERE id = %s", (built.id,))
    assert [dict(r) for r in form] == [{"owner_id": built.owner.id, "title": built.form["title"], "slug": built.slug, "status": "draft", "response_limit": 7}], f"the form row: {form}"
    rows = db.query("SELECT id, position, type, title, required FROM questions WHERE form_id = %s ORDER BY position", (built.id,))
    assert [(r["position"], r["type"], r["title"], r["required"]) for r in rows] == [
        (1, "short_text", "Your name", True), (2, "number", "Guests", False), (3, "single_choice", "Main course", True), (4, "multiple_choice", "Extras", False),
    ], f"one question row each, in position order: {rows}"


@pytest.mark.requirement("R7", "R13")
def test_the_status_column_follows_the_lifecycle(api, http, db):
    built = api.build()
    assert db.scalar("SELECT status FROM forms WHERE id = %s", (built.id,)) == "published"
    api.close(built)
    assert db.scalar("SELECT status FROM forms WHERE id = %s", (built.id,)) == "closed"


@pytest.mark.requirement("R8", "R13")
@pytest.mark.db_effect("INSERT", table="responses")
def test_responses_are_rows_and_refusals_add_none(api, http, db):
    built = api.build(response_limit=2)
    made = [api.answer(built, api.valid(built)) for _ in range(2)]
    api.submit(built, api.valid(built))  # refused: the limit
    api.submit(built, {"Guests": 99})  # refused: invalid
    rows = db.query("SELECT id FROM responses WHERE form_id = %s ORDER BY id", (built.id,))
    assert [r["id"] for r in rows] == [m["id"] for m in made], f"one row per accepted response: {rows}"


@pytest.mark.requirement("R5", "R13")
@pytest.mark.category("side_effects")
def test_deleting_a_form_deletes_its_rows(api, http, db):
    built = api.build()
    api.answer(built, api.valid(built))
    api.ok(api.delete(built.owner, f"/api/forms/{built.id}"), 204, "delete the form")
    counts = [db.scalar(f"SELECT count(*) FROM {table} WHERE {column} = %s", (built.id,)) for table, column in (("forms", "id"), ("questions", "form_id"), ("responses", "form_id"))]
    assert counts == [0, 0, 0], f"no forms, questions or responses rows left for the form: {counts}"


@pytest.mark.requirement("R6", "R13")
def test_positions_in_the_table_are_renumbered(api, http, db):
    built = api.build(publish=False)
    api.ok(api.delete(built.owner, f"/api/forms/{built.id}/questions/{built.qids['Your name']}"), 204, "delete the first question")
    rows = db.query("SELECT title, position FROM questions WHERE form_id = %s ORDER BY position", (built.id,))
    assert [(r["title"], r["position"]) for r in rows] == [("Guests", 1), ("Main course", 2), ("Extras", 3)], f"{rows}"
