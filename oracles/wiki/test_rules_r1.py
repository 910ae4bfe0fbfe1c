"""Second-round rules: error precedence, conventions and per-page numbering (spec.md: Errors,
Precedence, Conventions, Pages, Revisions and history)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r1")]


@pytest.mark.requirement("R16")
@pytest.mark.category("api_surface")
def test_wrong_methods_get_405(api, http, service, editor):
    page = api.page(editor)
    s = page["slug"]
    from pytest_backendbench.http.checks import wrong_method_problems

    problems: list[str] = []
    for path, methods in (("/health", ("POST", "DELETE")), ("/me", ("POST", "DELETE")), (f"/pages/{s}/revisions", ("POST", "DELETE")),
                          (f"/pages/{s}/diff", ("POST", "PUT")), (f"/pages/{s}/move", ("GET", "PUT")), ("/auth/login", ("GET",))):
        problems += wrong_method_problems(service, http.timeout_s, path, editor.headers, methods)
    assert not problems, "a path that exists but not with the method:\n" + "\n".join(problems)
    api.unchanged(page, "requests with wrong methods")


@pytest.mark.requirement("R16")
@pytest.mark.category("api_surface")
def test_answers_are_json_and_204_is_empty(api, http, editor, checks):
    page = api.page(editor)
    problems = checks.answer_problems(api.create(editor), 201, "create a page")
    problems += checks.answer_problems(api.call("GET", f"/pages/{page['slug']}"), 200, "read a page")
    problems += checks.answer_problems(api.call("GET", f"/pages/{page['slug']}/diff", **{"from": 1, "to": 1}), 200, "a diff")
    problems += checks.answer_problems(api.put(page, editor, body="x", base_revision=9), 409, "an edit conflict")
    problems += checks.answer_problems(api.delete(page), 204, "delete")
    assert not problems, "\n".join(problems)


@pytest.mark.requirement("R16", "R12")
@pytest.mark.category("authorization")
def test_reader_on_a_protected_page_gets_the_role_403(api, http, reader):
    page = api.page()
    api.ok(api.protect(page), 200, "protect")
    api.error(api.put(page, reader, body=None), 403, "forbidden", "a reader's invalid edit of a protected page")
    api.error(api.revert(page, reader, revision=99), 403, "forbidden", "a reader's revert of a protected page")


@pytest.mark.requirement("R16", "R12")
@pytest.mark.category("authorization")
def test_protection_is_checked_before_validation_for_revert_and_move(api, http, editor):
    page = api.page(editor)
    api.ok(api.protect(page), 200, "protect")
    api.error(api.revert(page, editor, revision="bad"), 403, "forbidden", "an invalid revert of a protected page")
    api.error(api.move(page, "Bad Slug", editor), 403, "forbidden", "an invalid move of a protected page")
    other = api.page()
    api.error(api.move(page, other["slug"], editor), 403, "forbidden", "a move of a protected page onto a taken slug")


@pytest.mark.requirement("R8", "R12")
@pytest.mark.category("state")
def test_admin_gets_edit_conflicts_on_protected_pages_too(api, http):
    page = api.page()
    api.ok(api.protect(page), 200, "protect")
    api.edit(page)
    api.error(api.put(page, api.admin, body="late", base_revision=1), 409, "edit_conflict", "a stale admin edit")


@pytest.mark.requirement("R16", "R13")
@pytest.mark.category("validation")
def test_non_string_new_slug_gets_422(api, http, editor):
    page = api.page(editor)
    problem = api.validation_problem(api.call("POST", f"/pages/{page['slug']}/move", editor, {"new_slug": 42}), ["new_slug"], "a non-string new_slug")
    api.assert_no_problems([problem], "new_slug validation")


@pytest.mark.requirement("R15")
@pytest.mark.category("api_surface")
def test_empty_q_keeps_every_page(api, http):
    page = api.page()
    body = api.search(q="", limit=100)
    everything = api.search(limit=100)
    assert body["total"] == everything["total"] >= 1, f"an empty q keeps every page: {body['total']} vs {everything['total']}"
    tail = api.search(q="", offset=max(0, body["total"] - 20), limit=100)["items"]
    assert page["id"] in {p["id"] for p in tail}, f"the newest page is among the last of the oldest-first list: {tail[-3:]}"


@pytest.mark.requirement("R9", "R10", "R11")
@pytest.mark.category("authorization")
def test_revision_numbers_belong_to_their_page(api, http, editor):
    big, small = api.page(editor, body="secret draft"), api.page(editor, body="small")
    api.edit(big, editor, body="big 2")
    api.edit(big, editor, body="big 3")
    api.error(api.call("GET", f"/pages/{small['slug']}/revisions/3"), 404, "not_found", "revision 3 of a page with one revision (another page has one)")
    api.error(api.diff(small, 1, 2), 404, "not_found", "a diff naming another page's revision number")
    api.assert_no_problems([api.validation_problem(api.revert(small, editor, revision=2), ["revision"], "revert to another page's revision number")], "per-page numbers")
    assert api.get_page(small)["body"] == "small" and api.numbers(small) == [1]


@pytest.mark.requirement("R7", "R9")
@pytest.mark.category("state")
def test_revisions_never_change(api, http, editor):
    page = api.page(editor, title="One", body="first")
    before = api.revision(page, 1)
    api.edit(page, editor, title="Two", body="second")
    api.ok(api.revert(page, editor, revision=1), 200, "revert")
    api.ok(api.move(page, api.slug("moved"), editor), 200, "move")
    page = api.get_page(page["slug"])
    after = api.revision(page["slug"], 1)
    assert {k: after.get(k) for k in ("number", "title", "body", "summary", "author", "created_at")} == {k: before.get(k) for k in ("number", "title", "body", "summary", "author", "created_at")}, (
        f"revision 1 is the same after edits, a revert and a move: {before} vs {after}"
    )


@pytest.mark.requirement("R6", "R16")
@pytest.mark.category("validation")
def test_wrong_types_are_invalid(api, http, editor):
    problems = [
        api.validation_problem(api.create(editor, title=None), ["title"], "a null title"),
        api.validation_problem(api.create(editor, body={"text": "x"}), ["body"], "an object body"),
        api.validation_problem(api.create(editor, summary=None), ["summary"], "a null summary"),
        api.validation_problem(api.create(editor, slug=["a"]), ["slug"], "an array slug"),
    ]
    api.assert_no_problems(problems, "a field of the wrong JSON type is invalid")


@pytest.mark.requirement("R7", "R6")
@pytest.mark.category("validation")
def test_line_limit_counts_line_feeds(api, http, editor):
    ok_body = "\n".join(["x"] * 1000)
    r = api.create(editor, body=ok_body)
    assert r.status_code == 201, f"1,000 lines are allowed: {api.brief(r)}"
    page = r.json()
    problem = api.validation_problem(api.put(page, editor, body=ok_body + "\n", base_revision=1), ["body"], "1,001 lines (a trailing line feed adds an empty line)")
    api.assert_no_problems([problem], "the line limit")
    assert api.get_page(page)["revision"] == 1
