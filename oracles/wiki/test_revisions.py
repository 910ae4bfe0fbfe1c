"""Edits, edit conflicts, null edits and the history (spec.md: Pages `PUT`, Revisions and history)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R7")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("INSERT", table="revisions")
def test_edit_creates_the_next_revision(api, http, editor):
    page = api.page(editor, body="v1")
    r = api.put(page, editor, body="v2", base_revision=1, summary="typo")
    assert r.status_code == 200, f"an edit on the current revision: {api.brief(r)}"
    got = r.json()
    assert (got.get("revision"), got.get("body"), got.get("title"), got.get("slug")) == (2, "v2", page["title"], page["slug"]), f"the page after the edit (title kept): {got}"
    second = api.revision(page, 2)
    assert (second["body"], second["summary"], second["author"], second["title"]) == ("v2", "typo", editor.username, page["title"]), f"revision 2: {second}"
    assert api.utc(second.get("created_at")), f"created_at in UTC: {second}"
    assert api.revision(page, 1)["body"] == "v1", "revision 1 keeps the old text"


@pytest.mark.requirement("R7")
@pytest.mark.category("state")
def test_revisions_are_numbered_1_2_3_per_page(api, http, editor):
    a, b = api.page(editor), api.page(editor)
    for i in range(3):
        api.edit(a, editor, body=f"a{i}")
    api.edit(b, editor, body="b1")
    assert api.get_page(a)["revision"] == 4 and api.get_page(b)["revision"] == 2, "each page numbers its own revisions"
    assert api.numbers(a) == [4, 3, 2, 1] and api.numbers(b) == [2, 1], "the histories, newest first"


@pytest.mark.requirement("R7")
@pytest.mark.category("state")
def test_edit_can_change_the_title(api, http, editor):
    page = api.page(editor, title="Before")
    after = api.edit(page, editor, body=page["body"], title="After")
    assert (after["title"], after["revision"]) == ("After", 2), f"a title change alone is a new revision: {after}"
    assert api.revision(page, 1)["title"] == "Before" and api.revision(page, 2)["title"] == "After", "each revision keeps its title"


@pytest.mark.requirement("R7")
@pytest.mark.category("state")
def test_null_edit_creates_no_revision(api, http, editor):
    page = api.page(editor, body="same")
    for body in ({"body": "same", "base_revision": 1, "summary": "nothing"}, {"body": "same", "base_revision": 1, "title": page["title"]}):
        r = api.put(page, editor, **body)
        assert r.status_code == 200 and r.json().get("revision") == 1, f"a null edit answers the unchanged page: {api.brief(r)}"
    assert api.numbers(page) == [1], "no revision was created"


@pytest.mark.requirement("R8")
@pytest.mark.category("state")
def test_stale_base_revision_gets_edit_conflict(api, http, editor):
    other = api.user("editor")
    page = api.page(editor, body="base")
    api.ok(api.put(page, other, body="theirs", base_revision=1), 200, "the other editor saves first")
    r = api.put(page, editor, body="mine", base_revision=1)
    body = api.error(r, 409, "edit_conflict", "an edit based on revision 1 after revision 2 exists")
    assert body.get("current_revision") == 2, f"the conflict names the current revision: {body}"
    now = api.get_page(page)
    assert (now["revision"], now["body"]) == (2, "theirs"), f"the conflicting edit changed nothing: {now}"
    assert api.numbers(page) == [2, 1]


@pytest.mark.requirement("R8")
@pytest.mark.category("state")
@pytest.mark.parametrize("base", [3, 99])
def test_base_revision_ahead_of_the_page_is_a_conflict(api, http, editor, base):
    page = api.page(editor)
    api.edit(page, editor)
    body = api.error(api.put(page, editor, body="x", base_revision=base), 409, "edit_conflict", f"base_revision {base} on a page at revision 2")
    assert body.get("current_revision") == 2, f"current_revision: {body}"
    assert api.numbers(page) == [2, 1]


@pytest.mark.requirement("R8", "R7")
@pytest.mark.category("state")
def test_conflict_is_checked_before_a_null_edit(api, http, editor):
    page = api.page(editor, body="one")
    api.edit(page, editor, body="two")
    api.error(api.put(page, editor, body="two", base_revision=1), 409, "edit_conflict", "a stale base whose text equals the current text")


@pytest.mark.requirement("R7", "R16")
@pytest.mark.category("validation")
@pytest.mark.parametrize(
    "field, values",
    [("body", [None, 1, "b" * 20_001, "\n" * 1_000]), ("base_revision", [0, -1, 1.5, "1", True, None]), ("title", ["", "  ", "t" * 201, None, 3]), ("summary", ["s" * 501, None, 1])],
    ids=["body", "base_revision", "title", "summary"],
)
def test_edit_validation(api, http, editor, field, values):
    page = api.page(editor)
    problems = []
    for value in values:
        r = api.put(page, editor, **{"body": "new text", "base_revision": 1, field: value})
        problems.append(api.validation_problem(r, [field], f"{field}={value!r:.30}"))
    api.assert_no_problems(problems, f"invalid {field} values were accepted")
    api.unchanged(page, "invalid edits")


@pytest.mark.requirement("R7", "R16")
@pytest.mark.category("validation")
def test_edit_needs_body_and_base_revision(api, http, editor):
    page = api.page(editor)
    problem = api.validation_problem(api.put(page, editor, title="Only a title"), ["body", "base_revision"], "an edit without body and base_revision")
    api.assert_no_problems([problem], "missing fields")
    api.unchanged(page, "an incomplete edit")


@pytest.mark.requirement("R8", "R16")
@pytest.mark.category("validation")
def test_validation_wins_over_an_edit_conflict(api, http, editor):
    page = api.page(editor)
    api.edit(page, editor)
    r = api.put(page, editor, body="x", base_revision=1, title="")
    api.assert_no_problems([api.validation_problem(r, ["title"], "a stale edit with a blank title")], "422 comes before 409")


@pytest.mark.requirement("R7")
@pytest.mark.category("api_surface")
def test_editing_an_unknown_page_gets_404(api, http, editor):
    api.error(api.put(api.slug("nope"), editor, body="x", base_revision=1), 404, "not_found", "editing a page that does not exist")
    api.error(api.put(api.slug("nope"), editor, body=None), 404, "not_found", "an invalid edit of a page that does not exist: 404 before 422")


@pytest.mark.requirement("R9")
@pytest.mark.category("api_surface")
def test_history_lists_revisions_newest_first(api, http, editor, reader):
    page = api.page(editor, summary="created")
    api.edit(page, api.admin, summary="by admin")
    api.edit(page, editor, summary="by editor", title="Renamed title")
    body = api.history(page, reader)
    items = body["items"]
    got = [(i["number"], i["summary"], i["author"], i["title"]) for i in items]
    assert got == [(3, "by editor", editor.username, "Renamed title"), (2, "by admin", api.admin.username, page["title"]), (1, "created", editor.username, page["title"])], f"history: {got}"
    assert (body["total"], body["limit"], body["offset"]) == (3, 20, 0), f"the envelope: {body}"
    assert all(api.utc(i.get("created_at")) for i in items), f"created_at in UTC: {items}"


@pytest.mark.requirement("R9")
@pytest.mark.category("api_surface")
def test_history_is_paginated(api, http, editor):
    page = api.page(editor)
    for _ in range(4):
        api.edit(page, editor)
    first, second, past = api.history(page, limit=2), api.history(page, limit=2, offset=2), api.history(page, offset=5)
    assert [i["number"] for i in first["items"]] == [5, 4] and [i["number"] for i in second["items"]] == [3, 2], f"pages of the history: {first}, {second}"
    assert first["total"] == 5 and past["items"] == [] and past["total"] == 5, f"total and an offset at total: {first}, {past}"


@pytest.mark.requirement("R9", "R16")
@pytest.mark.category("validation")
def test_history_rejects_invalid_pagination(api, http, editor):
    page = api.page(editor)
    problems = [
        api.validation_problem(api.call("GET", f"/pages/{page['slug']}/revisions", limit=v), ["limit"], f"limit={v!r}") for v in ("0", "101", "x", "")
    ] + [api.validation_problem(api.call("GET", f"/pages/{page['slug']}/revisions", offset=v), ["offset"], f"offset={v!r}") for v in ("-1", "y")]
    api.assert_no_problems(problems, "invalid history parameters were accepted")


@pytest.mark.requirement("R9")
@pytest.mark.category("api_surface")
def test_get_revision_answers_its_body(api, http, reader, editor):
    page = api.page(editor, body="old body")
    api.edit(page, editor, body="new body", summary="rewrite")
    old, new = api.revision(page, 1, reader), api.revision(page, 2, reader)
    assert (old["number"], old["body"], old["author"]) == (1, "old body", editor.username), f"revision 1: {old}"
    assert (new["number"], new["body"], new["summary"]) == (2, "new body", "rewrite"), f"revision 2: {new}"


@pytest.mark.requirement("R9", "R19")
@pytest.mark.category("api_surface")
def test_unknown_revision_numbers_get_404(api, http, reader):
    page = api.page()
    for number in ("2", "0", "-1", "abc", "1.0", "99999999999999999999", "%2A", "1%20OR%201%3D1"):
        r = http.get(f"/pages/{page['slug']}/revisions/{number}", headers=reader.headers)
        api.error(r, 404, "not_found", f"revision {number!r} of a page with one revision")
