"""Protection, deletion, moves and redirects, and who may do them (spec.md: Pages, Moving, Users... and roles)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R12")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("UPDATE", table="pages")
def test_admin_protects_and_unprotects(api, http):
    page = api.page()
    got = api.ok(api.protect(page, True), 200, "protect")
    assert (got["protected"], got["revision"]) == (True, 1), f"protected, no revision: {got}"
    assert api.get_page(page)["protected"] is True
    got = api.ok(api.protect(page, False), 200, "unprotect")
    assert got["protected"] is False and api.numbers(page) == [1], f"unprotected: {got}"


@pytest.mark.requirement("R12")
@pytest.mark.category("authorization")
def test_editors_cannot_change_a_protected_page(api, http, editor):
    page = api.page(editor, body="stable")
    api.ok(api.protect(page), 200, "protect")
    page = api.get_page(page)
    api.error(api.put(page, editor, body="changed", base_revision=1), 403, "forbidden", "an editor editing a protected page")
    api.error(api.revert(page, editor, revision=1), 403, "forbidden", "an editor reverting a protected page")
    api.error(api.move(page, api.slug("moved"), editor), 403, "forbidden", "an editor moving a protected page")
    api.unchanged(page, "refused changes of a protected page")


@pytest.mark.requirement("R12")
@pytest.mark.category("authorization")
def test_admins_still_change_a_protected_page(api, http, editor):
    page = api.page(editor, body="v1")
    api.ok(api.protect(page), 200, "protect")
    edited = api.ok(api.put(page, api.admin, body="v2", base_revision=1), 200, "an admin edits a protected page")
    assert edited["revision"] == 2 and edited["protected"] is True
    api.ok(api.revert(page, api.admin, revision=1), 200, "an admin reverts a protected page")
    new = api.slug("moved")
    moved = api.ok(api.move(page, new), 200, "an admin moves a protected page")
    assert (moved["slug"], moved["protected"], moved["revision"]) == (new, True, 3), f"protection stays with the page: {moved}"


@pytest.mark.requirement("R12")
@pytest.mark.category("authorization")
def test_editor_may_edit_again_after_unprotection(api, http, editor):
    page = api.page(editor)
    api.ok(api.protect(page), 200, "protect")
    api.ok(api.protect(page, False), 200, "unprotect")
    assert api.edit(page, editor)["revision"] == 2


@pytest.mark.requirement("R5", "R12")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("role", ["reader", "editor"])
def test_only_admins_protect_and_delete(api, http, role):
    user = api.user(role)
    page = api.page()
    api.error(api.protect(page, True, by=user), 403, "forbidden", f"a {role} protecting")
    api.error(api.delete(page, by=user), 403, "forbidden", f"a {role} deleting")
    api.unchanged(page, f"a {role}'s refused protection and deletion")


@pytest.mark.requirement("R5")
@pytest.mark.category("authorization")
def test_readers_only_read(api, http, reader):
    page = api.page()
    api.error(api.create(reader), 403, "forbidden", "a reader creating a page")
    api.error(api.put(page, reader, body="x", base_revision=1), 403, "forbidden", "a reader editing")
    api.error(api.revert(page, reader, revision=1), 403, "forbidden", "a reader reverting")
    api.error(api.move(page, api.slug(), reader), 403, "forbidden", "a reader moving")
    api.unchanged(page, "a reader's refused changes")
    assert api.get_page(page, reader)["id"] == page["id"] and api.history(page, reader)["total"] == 1, "readers read pages and histories"


@pytest.mark.requirement("R5", "R16")
@pytest.mark.category("authorization")
def test_role_is_decided_before_the_page_is_looked_up(api, http, reader, editor):
    missing = api.slug("missing")
    api.error(api.put(missing, reader, body=None), 403, "forbidden", "a reader editing a missing page with an invalid body")
    api.error(api.delete(missing, by=editor), 403, "forbidden", "an editor deleting a missing page")
    api.error(api.protect(missing, "yes", by=reader), 403, "forbidden", "a reader protecting a missing page")
    api.error(api.create(reader, slug="Bad Slug"), 403, "forbidden", "a reader creating an invalid page")


@pytest.mark.requirement("R12", "R16")
@pytest.mark.category("validation")
def test_protection_validation_and_precedence(api, http, editor):
    page = api.page()
    problems = [api.validation_problem(api.protect(page, v), ["protected"], f"protected={v!r}") for v in ("true", 1, None)]
    problems.append(api.validation_problem(api.call("PUT", f"/pages/{page['slug']}/protection", body={}), ["protected"], "no protected"))
    api.assert_no_problems(problems, "invalid protection values were accepted")
    api.error(api.protect(api.slug("missing"), "bad"), 404, "not_found", "protecting a missing page: 404 before 422")
    api.ok(api.protect(page), 200, "protect")
    api.error(api.put(page, editor, body=None, base_revision="x"), 403, "forbidden", "an invalid edit of a protected page: protection before validation")


@pytest.mark.requirement("R14")
@pytest.mark.category("state")
@pytest.mark.db_effect("DELETE", table="pages")
def test_delete_removes_the_page_and_its_history(api, http, reader):
    page = api.page(body="v1")
    api.edit(page, body="v2")
    r = api.delete(page)
    assert r.status_code == 204 and not r.content, f"delete answers 204 without a body: {api.brief(r)}"
    s = page["slug"]
    for path in (f"/pages/{s}", f"/pages/{s}/revisions", f"/pages/{s}/revisions/1", f"/pages/{s}/diff?from=1&to=2"):
        api.error(http.get(path, headers=reader.headers), 404, "not_found", f"GET {path} after deletion")
    api.error(api.delete(page), 404, "not_found", "deleting it again")
    api.error(api.put(page, api.admin, body="x", base_revision=2), 404, "not_found", "editing the deleted page")


@pytest.mark.requirement("R14", "R6")
@pytest.mark.category("state")
def test_deleted_slug_is_free_and_restarts_at_revision_1(api, http, editor):
    page = api.page(editor)
    api.edit(page, editor)
    api.ok(api.delete(page), 204, "delete")
    again = api.page(editor, slug=page["slug"], title="Fresh", body="fresh")
    assert (again["revision"], again["body"]) == (1, "fresh") and again["id"] != page["id"], f"a new page at the freed slug: {again}"
    assert api.numbers(again) == [1], "the old history is gone"


@pytest.mark.requirement("R13")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("UPDATE", table="pages")
def test_move_renames_and_leaves_a_redirect(api, http, editor, reader):
    page = api.page(editor, body="content")
    api.edit(page, editor, body="content 2")
    new = api.slug("renamed")
    r = api.move(page, new, editor)
    assert r.status_code == 200, f"move: {api.brief(r)}"
    moved = r.json()
    assert (moved.get("id"), moved.get("slug"), moved.get("revision"), moved.get("body")) == (page["id"], new, 2, "content 2"), f"the moved page: {moved}"
    assert api.numbers(new) == [2, 1], "the history moved with the page and the move created no revision"
    via = api.get_page(page["slug"], reader)
    assert (via.get("id"), via.get("slug"), via.get("redirected_from")) == (page["id"], new, page["slug"]), f"the old slug redirects: {via}"
    direct = api.get_page(new, reader)
    assert direct.get("redirected_from") is None, f"the new slug is the page itself: {direct}"


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_only_get_follows_a_redirect(api, http, editor):
    page = api.page(editor)
    old = page["slug"]
    api.ok(api.move(page, api.slug("new"), editor), 200, "move")
    for method, path, body in (
        ("PUT", f"/pages/{old}", {"body": "x", "base_revision": 1}), ("GET", f"/pages/{old}/revisions", None),
        ("GET", f"/pages/{old}/revisions/1", None), ("GET", f"/pages/{old}/diff?from=1&to=1", None),
        ("POST", f"/pages/{old}/revert", {"revision": 1}), ("POST", f"/pages/{old}/move", {"new_slug": api.slug()}),
        ("PUT", f"/pages/{old}/protection", {"protected": True}), ("DELETE", f"/pages/{old}", None),
    ):
        api.error(api.call(method, path, body=body), 404, "not_found", f"{method} {path} on a redirect slug")
    assert api.get_page(old)["revision"] == 1 and api.get_page(old)["protected"] is False, "nothing changed through the redirect"


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_move_to_a_taken_slug_gets_409(api, http, editor):
    a, b = api.page(editor), api.page(editor)
    api.error(api.move(a, b["slug"], editor), 409, "slug_taken", "moving onto another page")
    api.error(api.move(a, a["slug"], editor), 409, "slug_taken", "moving onto its own slug")
    api.unchanged(a, "refused moves")
    api.unchanged(b, "a refused move onto it")


@pytest.mark.requirement("R13", "R16")
@pytest.mark.category("validation")
def test_move_validation(api, http, editor):
    page = api.page(editor)
    problems = [api.validation_problem(api.move(page, v, editor), ["new_slug"], f"new_slug={v!r:.30}") for v in ("", "Bad", "a b", "x" * 101, None, 5, "a--b")]
    problems.append(api.validation_problem(api.call("POST", f"/pages/{page['slug']}/move", editor, {}), ["new_slug"], "no new_slug"))
    api.assert_no_problems(problems, "invalid moves were accepted")
    api.unchanged(page, "invalid moves")
    api.error(api.move(api.slug("missing"), "Bad", editor), 404, "not_found", "moving a missing page: 404 before 422")


@pytest.mark.requirement("R13", "R6")
@pytest.mark.category("workflow")
def test_redirects_follow_the_page_and_yield_to_new_pages(api, http, editor):
    page = api.page(editor)
    a = page["slug"]
    b, c = api.slug("b"), api.slug("c")
    api.ok(api.move(a, b, editor), 200, "move a -> b")
    api.ok(api.move(b, c, editor), 200, "move b -> c")
    for old in (a, b):
        via = api.get_page(old)
        assert (via["id"], via["slug"], via.get("redirected_from")) == (page["id"], c, old), f"{old} redirects to the page at {c}: {via}"
    other = api.page(editor, slug=b, title="Takes b", body="b page")
    assert api.get_page(b).get("redirected_from") is None and api.get_page(b)["id"] == other["id"], "a page created at a redirect slug replaces the redirect"
    api.ok(api.move(c, a, editor), 200, "move the page back onto its first slug (a redirect)")
    back = api.get_page(a)
    assert (back["id"], back.get("redirected_from")) == (page["id"], None), f"the page is at a again: {back}"
    assert api.get_page(c)["id"] == page["id"] and api.get_page(c).get("redirected_from") == c, "c now redirects"
