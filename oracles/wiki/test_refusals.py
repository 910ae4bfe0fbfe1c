"""Refusals that change nothing, guards condition by condition, and revision numbers in a body (issue 35).

spec.md, Errors: "A request that fails changes nothing"; Running: "a request either applies
completely or not at all". Every body with several fields is sent with one field bad at a time
(each position, the others valid), then read back from outside and from the statement log. The
edit conflict is "base_revision is not the page's current revision" even when that revision's
text equals the current one; a null edit needs the title and the body equal; a revert names
"a number that names no revision of the page".
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_backendbench.http.refusals import one_invalid_field, refused_unchanged, unchanged

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("validation")]

PAGE_CASES = one_invalid_field(
    {"slug": "", "title": "Release notes", "body": "one\ntwo", "summary": "first draft"},
    {"slug": ["Bad Slug", "a" * 101, 5], "title": ["", "   ", "x" * 201], "body": ["x" * 20001, "\n" * 1000, None], "summary": ["s" * 501, None]},
)
EDIT_CASES = one_invalid_field(
    {"body": "changed\ntext", "base_revision": 0, "title": "New title", "summary": "why"},
    {"body": ["x" * 20001, None], "base_revision": [-1, "1", 1.5, True], "title": ["", "x" * 201, None], "summary": ["s" * 501, 7]},
)
REVERT_CASES = one_invalid_field({"revision": 1, "summary": "back"}, {"revision": [99, 0, "1", None], "summary": ["s" * 501, None]})
VALID_USER = {"username": "", "password": "long enough secret", "role": "editor"}
USER_CASES = one_invalid_field(
    VALID_USER,
    {"username": ["ab", "Bad Name", 5], "password": ["short", "x" * 129, None], "role": ["owner", None]},
)


def page_state(api: Any, slug: str) -> tuple[Any, ...]:
    """What a refused change to the page at ``slug`` must leave as it was: the page and its history."""
    page = api.call("GET", f"/pages/{slug}")
    return page.status_code, page.json() if page.status_code == 200 else None, api.numbers(slug) if page.status_code == 200 else None


@pytest.mark.requirement("R6", "R16")
@pytest.mark.parametrize("field,body", PAGE_CASES)
def test_a_refused_page_is_not_created(api, http, db, editor, field, body):
    body = {**body, "slug": body["slug"] or api.slug()}
    where = body["slug"] if field != "slug" else api.slug()
    with unchanged(lambda: page_state(api, where), f"POST /pages with only {field} invalid"), db.writes_during(f"POST /pages with {field} invalid") as writes:
        problem = api.validation_problem(api.call("POST", "/pages", editor, body), [field], f"a page with only {field} invalid")
    assert problem is None, problem
    writes.assert_none()


@pytest.mark.requirement("R7", "R16")
@pytest.mark.parametrize("field,body", EDIT_CASES)
def test_a_refused_edit_changes_nothing(api, http, db, editor, field, body):
    page = api.page(editor)
    body = {**body, "base_revision": body["base_revision"] or page["revision"]}
    refused_unchanged(api, lambda: api.put(page, editor, **body), lambda: page_state(api, page["slug"]), f"an edit with only {field} invalid", fields=[field], db=db)


@pytest.mark.requirement("R11", "R16")
@pytest.mark.parametrize("field,body", REVERT_CASES)
def test_a_refused_revert_changes_nothing(api, http, db, editor, field, body):
    page = api.page(editor)
    api.edit(page, editor)
    refused_unchanged(api, lambda: api.revert(page, editor, **body), lambda: page_state(api, page["slug"]), f"a revert with only {field} invalid", fields=[field], db=db)


@pytest.mark.requirement("R4", "R16")
@pytest.mark.parametrize("field,body", USER_CASES)
def test_a_refused_user_is_not_created(api, http, db, admin, field, body):
    body = {**body, "username": body["username"] or api.staff_username("editor")}
    users = lambda: api.ok(api.call("GET", "/users", admin), 200, "list the users")
    refused_unchanged(api, lambda: api.call("POST", "/users", admin, body), users, f"a user with only {field} invalid", fields=[field], db=db)
    if field != "username":
        api.ok(api.call("POST", "/users", admin, {**body, field: VALID_USER[field]}), 201, "the same username is free afterwards")


def elsewhere(api: Any, editor: Any, where: str) -> dict[str, Any]:
    """A page at revision 2 whose revision 4 is only another page's, or only a deleted page's at its slug."""
    other = api.page(editor)
    for _ in range(3):
        api.edit(other, editor)
    if where == "deleted-page-at-this-slug":
        api.ok(api.delete(other), 204, "delete the page at revision 4")
        page = api.page(editor, slug=other["slug"])
    else:
        page = api.page(editor)
    api.edit(page, editor)
    return page


@pytest.mark.requirement("R11", "R10")
@pytest.mark.parametrize("where", ["another-page", "deleted-page-at-this-slug"])
@pytest.mark.parametrize("request_kind", ["revert", "diff"])
def test_a_revision_number_of_another_page_names_nothing(api, http, db, editor, where, request_kind):
    page, number = elsewhere(api, editor, where), 4
    with unchanged(lambda: page_state(api, page["slug"]), f"{request_kind} naming revision {number} of {where}"), \
            db.writes_during(f"{request_kind} naming a revision of {where}") as writes:
        if request_kind == "revert":
            problem = api.validation_problem(api.revert(page, editor, revision=number), ["revision"], f"revert to revision {number} of {where}")
            assert problem is None, problem
        else:
            api.error(api.diff(page, 1, number), 404, "not_found", f"a diff to revision {number} of {where}")
    writes.assert_none()


@pytest.mark.requirement("R8")
@pytest.mark.category("state")
def test_a_stale_base_is_a_conflict_even_when_its_text_is_current(api, http, db, editor):
    page = api.page(editor, body="original")
    api.edit(page, editor, body="changed")
    api.ok(api.revert(page, editor, revision=1), 200, "revert to revision 1 (its text is current again, as revision 3)")
    with unchanged(lambda: page_state(api, page["slug"]), "an edit based on revision 1 of a page at revision 3"), db.writes_during("a stale edit") as writes:
        body = api.error(api.put(page, editor, body="mine", base_revision=1), 409, "edit_conflict", "base_revision 1 while the page is at 3")
    assert body.get("current_revision") == 3, f"the conflict carries current_revision 3: {body}"
    writes.assert_none()


# (what changes, how): a change of the title alone or of the body alone is no null edit, for an edit and a revert
NOT_NULL = [
    ("edit", {"title": "Other title"}),
    ("edit", {"body": "other body"}),
    ("revert", {"title": "Other title"}),
    ("revert", {"body": "other body"}),
]


@pytest.mark.requirement("R7", "R11")
@pytest.mark.category("state")
@pytest.mark.parametrize("how,change", NOT_NULL, ids=[f"{h}-{next(iter(c))}-only" for h, c in NOT_NULL])
def test_a_change_of_title_or_body_alone_is_a_new_revision(api, http, editor, how, change):
    page = api.page(editor, title="Same title", body="same body")
    if how == "edit":
        after = api.ok(api.put(page, editor, **{"title": "Same title", "body": "same body", "base_revision": 1, **change}), 200, f"an edit changing only {change}")
        want = {"title": "Same title", "body": "same body", **change}
    else:
        api.edit(page, editor, **{"title": "Same title", "body": "same body", **change})
        after = api.ok(api.revert(page, editor, revision=1), 200, f"a revert changing only back {change}")
        want = {"title": "Same title", "body": "same body"}
    assert after.get("revision") == (2 if how == "edit" else 3), f"a new revision: {after}"
    assert {k: after.get(k) for k in want} == want, f"the page holds the new text: {after}"
    assert api.numbers(page) == ([2, 1] if how == "edit" else [3, 2, 1]), "the history has the new revision"
