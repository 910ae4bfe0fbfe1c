"""Creating, reading and listing pages (spec.md: Pages, Conventions)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R6")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("INSERT", table="pages")
@pytest.mark.db_effect("INSERT", table="revisions")
def test_editor_creates_a_page_with_revision_1(api, http, editor):
    slug, title = api.slug(), f"Getting started {api.tag()}"
    r = api.create(editor, slug=slug, title=title, body="Hello\nworld", summary="first")
    assert r.status_code == 201, f"creating a page: {api.brief(r)}"
    page = r.json()
    got = {k: page.get(k) for k in ("slug", "title", "body", "protected", "revision")}
    assert got == {"slug": slug, "title": title, "body": "Hello\nworld", "protected": False, "revision": 1}, f"the new page: {page}"
    assert isinstance(page.get("id"), int) and api.utc(page.get("created_at")), f"id is an integer, created_at a UTC timestamp: {page}"


@pytest.mark.requirement("R6")
@pytest.mark.category("api_surface")
def test_get_page_answers_the_current_text(api, http, reader):
    page = api.page(body="line one\nline two")
    got = api.get_page(page, by=reader)
    assert {k: got.get(k) for k in ("id", "slug", "title", "body", "protected", "revision")} == {k: page[k] for k in ("id", "slug", "title", "body", "protected", "revision")}, f"GET answers the page: {got}"
    assert got.get("redirected_from") is None, f"a page read by its own slug has no redirected_from: {got}"


@pytest.mark.requirement("R6")
@pytest.mark.category("api_surface")
def test_summary_is_optional_and_the_body_may_be_empty(api, http, editor):
    page = api.page(editor, body="")
    assert page["body"] == "" and page["revision"] == 1, f"an empty body is allowed: {page}"
    first = api.revision(page, 1)
    assert first.get("summary") == "" and first.get("body") == "" and first.get("author") == editor.username, f"revision 1 with the default summary: {first}"


@pytest.mark.requirement("R6", "R16")
@pytest.mark.category("api_surface")
@pytest.mark.parametrize("kind", ["unknown", "never-valid"])
def test_unknown_slug_gets_404(api, http, reader, kind):
    slug = api.slug("missing") if kind == "unknown" else "Not_A_Slug"
    for path in (f"/pages/{slug}", f"/pages/{slug}/revisions", f"/pages/{slug}/revisions/1", f"/pages/{slug}/diff?from=1&to=1"):
        api.error(http.get(path, headers=reader.headers), 404, "not_found", f"GET {path}")


@pytest.mark.requirement("R6", "R16")
@pytest.mark.category("validation")
@pytest.mark.parametrize(
    "field, values",
    [
        ("slug", ["", "Upper", "with space", "-lead", "trail-", "a--b", "under_score", "a/b", "x" * 101, 7, None]),
        ("title", ["", "   ", "t" * 201, 12, None, ["t"]]),
        ("body", [None, 5, ["a"], "b" * 20_001, "\n" * 1_000]),
        ("summary", ["s" * 501, 3, None]),
    ],
    ids=["slug", "title", "body", "summary"],
)
def test_create_page_validation(api, http, editor, field, values):
    problems = []
    for value in values:
        body = {"slug": api.slug(), "title": "Valid", "body": "ok", field: value}
        r = http.post("/pages", json=body, headers=editor.headers)
        problems.append(api.validation_problem(r, [field], f"{field}={value!r:.40}"))
        if r.status_code == 201:
            problems.append(f"{field}={value!r:.40} created a page")
    api.assert_no_problems(problems, f"invalid {field} values were accepted")


@pytest.mark.requirement("R6")
@pytest.mark.category("validation")
def test_create_page_boundaries_are_accepted(api, http, editor):
    tag = api.tag()
    cases = [
        {"slug": ("s" + tag + "x" * 100)[:100], "title": "t" * 200, "body": "b" * 20_000, "summary": "s" * 500},
        {"slug": f"a-1-{tag}", "title": " x ", "body": "\n" * 999},
        {"slug": f"{tag}9", "title": "T", "body": "b"},
    ]
    for body in cases:
        r = http.post("/pages", json=body, headers=editor.headers)
        assert r.status_code == 201, f"slug {body['slug'][:20]}.. ({len(body['slug'])}), title {len(body['title'])}, body of {len(body['body'])} chars is valid: {api.brief(r)}"
        assert r.json().get("title") == body["title"] and r.json().get("body") == body["body"], "title and body are stored exactly as sent"


@pytest.mark.requirement("R6", "R16")
@pytest.mark.category("validation")
def test_every_invalid_field_is_listed(api, http, editor):
    r = http.post("/pages", json={"slug": "Bad Slug", "title": " ", "body": 3, "summary": 9}, headers=editor.headers)
    problem = api.validation_problem(r, ["slug", "title", "body", "summary"], "a page with four invalid fields")
    r2 = http.post("/pages", json={}, headers=editor.headers)
    api.assert_no_problems([problem, api.validation_problem(r2, ["slug", "title", "body"], "an empty object")], "422 lists every invalid field")


@pytest.mark.requirement("R6", "R16")
@pytest.mark.category("validation")
@pytest.mark.parametrize("raw", ["not json", "[1, 2]", '"text"', "null", "42"], ids=["garbage", "array", "string", "null", "number"])
def test_body_that_is_not_an_object_gets_422(api, http, editor, raw):
    r = http.post("/pages", data=raw, headers={**editor.headers, "Content-Type": "application/json"})
    problem = api.validation_problem(r, ["body"], f"POST /pages with {raw!r}")
    api.assert_no_problems([problem], "a body that is not a JSON object")


@pytest.mark.requirement("R6")
@pytest.mark.category("state")
def test_taken_slug_gets_409(api, http, editor):
    page = api.page(editor)
    r = api.create(editor, slug=page["slug"], title="Another", body="other")
    api.error(r, 409, "slug_taken", "creating a page at a taken slug")
    api.unchanged(page, "a refused creation at its slug")
    assert api.numbers(page) == [1], "the refused creation added no revision"


@pytest.mark.requirement("R6")
@pytest.mark.category("validation")
def test_validation_wins_over_a_taken_slug(api, http, editor):
    page = api.page(editor)
    r = api.create(editor, slug=page["slug"], title="", body="x")
    api.assert_no_problems([api.validation_problem(r, ["title"], "a taken slug with a blank title")], "422 comes before 409")


@pytest.mark.requirement("R6", "R17")
@pytest.mark.category("state")
def test_fields_the_contract_does_not_define_are_ignored(api, http, editor):
    r = api.create(editor, protected=True, revision=42, id=999_999, author="someone_else", created_at="2000-01-01T00:00:00Z")
    assert r.status_code == 201, f"extra fields are ignored: {api.brief(r)}"
    page = r.json()
    assert (page.get("protected"), page.get("revision")) == (False, 1) and page.get("id") != 999_999, f"server-owned fields keep their values: {page}"
    assert api.revision(page, 1)["author"] == editor.username, "the author is the caller"
