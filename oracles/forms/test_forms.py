"""Forms and questions: creation, validation, reading, listing, deletion (spec.md: Forms, Questions)."""

from __future__ import annotations

import re

import pytest

pytestmark = [pytest.mark.tier("base")]

SLUG = re.compile(r"^[A-Za-z0-9_-]{8,64}$")


@pytest.mark.requirement("R5")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("INSERT", table="forms")
@pytest.mark.ab_check("AB-03")
def test_create_form_answers_a_draft(api, http):
    owner = api.owner()
    title = api.unique("Team lunch")
    r = api.post(owner, "/api/forms", {"title": title})
    assert r.status_code == 201, api.brief(r)
    form = r.json()
    want = {"title": title, "status": "draft", "response_limit": None, "response_count": 0, "questions": []}
    assert {k: form.get(k) for k in want} == want, f"a new form is an empty draft without a limit: {form}"
    assert isinstance(form.get("id"), int) and not isinstance(form.get("id"), bool), f"ids are integers: {form}"
    assert isinstance(form.get("slug"), str) and SLUG.match(form["slug"]), f"slug: 8 to 64 characters of A-Z a-z 0-9 - _: {form.get('slug')!r}"
    assert isinstance(form.get("created_at"), str), f"created_at: {form}"


@pytest.mark.requirement("R5")
@pytest.mark.category("state")
def test_slugs_are_unique_and_not_the_id_or_title(api, http):
    owner = api.owner()
    forms = [api.ok(api.create_form(owner, title="Same title"), 201, "create a form") for _ in range(3)]
    slugs = [f["slug"] for f in forms]
    assert len(set(slugs)) == 3, f"every form has its own slug: {slugs}"
    for form in forms:
        assert str(form["id"]) != form["slug"] and "same" not in form["slug"].lower(), f"the slug is random, not the id or the title: {form}"


@pytest.mark.requirement("R5")
@pytest.mark.category("validation")
@pytest.mark.parametrize("limit", [1, 100000, None])
def test_response_limit_bounds_are_accepted(api, http, limit):
    owner = api.owner()
    r = api.create_form(owner, response_limit=limit)
    assert r.status_code == 201 and r.json().get("response_limit") == limit, f"response_limit {limit}: {api.brief(r)}"


INVALID_FORMS = [
    ("title-missing", {"title": ...}, "title"),
    ("title-empty", {"title": ""}, "title"),
    ("title-blank", {"title": " \t\n"}, "title"),
    ("title-201", {"title": "x" * 201}, "title"),
    ("title-number", {"title": 5}, "title"),
    ("limit-0", {"response_limit": 0}, "response_limit"),
    ("limit-100001", {"response_limit": 100001}, "response_limit"),
    ("limit-fraction", {"response_limit": 2.5}, "response_limit"),
    ("limit-string", {"response_limit": "5"}, "response_limit"),
    ("limit-boolean", {"response_limit": True}, "response_limit"),
]


@pytest.mark.requirement("R5")
@pytest.mark.category("validation")
@pytest.mark.parametrize("case,change,field", INVALID_FORMS, ids=[c[0] for c in INVALID_FORMS])
def test_invalid_forms_get_422_naming_the_field(api, http, case, change, field):
    owner = api.owner()
    body = {k: v for k, v in {"title": api.unique("Form"), **change}.items() if v is not ...}
    problem = api.validation_problem(api.post(owner, "/api/forms", body), [field], f"a form with {case}")
    assert problem is None, problem
    assert api.ok(api.get(owner, "/api/forms"), 200, "list forms")["items"] == [], "a refused form is not stored"


@pytest.mark.requirement("R5")
@pytest.mark.category("validation")
@pytest.mark.parametrize("length,accepted", [(200, True), (201, False)], ids=["200", "201"])
def test_title_length_counts_unicode_characters(api, http, length, accepted):
    owner = api.owner()
    title = ("\u00e9\U0001f4dd" * 101)[:length]
    r = api.create_form(owner, title=title)
    if accepted:
        assert r.status_code == 201 and r.json().get("title") == title, f"{length} characters ({len(title.encode())} bytes): {api.brief(r)}"
    else:
        problem = api.validation_problem(r, ["title"], f"a title of {length} characters")
        assert problem is None, problem


@pytest.mark.requirement("R5")
@pytest.mark.category("validation")
@pytest.mark.parametrize("body", [[], "title", 7, None], ids=["list", "string", "number", "null"])
def test_a_body_that_is_not_an_object_gets_422(api, http, body):
    owner = api.owner()
    problem = api.validation_problem(http.post("/api/forms", json=body, headers=owner.headers), ["body"], f"a body {body!r}")
    assert problem is None, problem


@pytest.mark.requirement("R5")
@pytest.mark.category("state")
@pytest.mark.db_effect("SELECT", table="forms")
@pytest.mark.ab_check("AB-04")
def test_a_form_reads_back_with_its_questions_in_order(api, http):
    built = api.build(publish=False)
    form = api.read(built)
    assert [q["title"] for q in form["questions"]] == ["Your name", "Guests", "Main course", "Extras"], f"questions in position order: {form}"
    assert [q["position"] for q in form["questions"]] == [1, 2, 3, 4], f"positions 1..n: {form['questions']}"
    assert (form["status"], form["slug"], form["response_count"]) == ("draft", built.slug, 0), f"the form as created: {form}"


@pytest.mark.requirement("R5")
@pytest.mark.category("state")
def test_the_list_holds_the_callers_forms_oldest_first(api, http):
    owner, other = api.owner(), api.owner()
    mine = [api.ok(api.create_form(owner), 201, "create a form") for _ in range(3)]
    api.ok(api.create_form(other), 201, "another owner's form")
    listed = api.ok(api.get(owner, "/api/forms"), 200, "list forms")["items"]
    assert [f.get("id") for f in listed] == [f["id"] for f in mine], f"exactly the caller's forms, oldest first: {[f.get('id') for f in listed]}"


@pytest.mark.requirement("R5")
@pytest.mark.category("side_effects")
@pytest.mark.db_effect("DELETE", table="forms")
def test_deleting_a_form_removes_it_and_its_public_page(api, http):
    built = api.build()
    api.answer(built, api.valid(built))
    api.ok(api.delete(built.owner, f"/api/forms/{built.id}"), 204, "delete the form")
    api.error(api.get(built.owner, f"/api/forms/{built.id}"), 404, "not_found", "the deleted form")
    api.error(api.get(built.owner, f"/api/forms/{built.id}/responses"), 404, "not_found", "the deleted form's responses")
    api.error(http.get(f"/api/public/forms/{built.slug}"), 404, "not_found", "the deleted form's slug")
    api.error(api.delete(built.owner, f"/api/forms/{built.id}"), 404, "not_found", "deleting it again")
    assert api.ok(api.get(built.owner, "/api/forms"), 200, "list")["items"] == [], "the list no longer holds it"


@pytest.mark.requirement("R5")
@pytest.mark.category("api_surface")
def test_unknown_form_ids_get_404(api, http):
    owner = api.owner()
    gone = api.unknown_form_id(owner)
    for method, path in (("GET", ""), ("DELETE", ""), ("GET", "/responses"), ("GET", "/summary"), ("GET", "/export.csv"), ("POST", "/publish"), ("POST", "/close")):
        api.error(http.request(method, f"/api/forms/{gone}{path}", headers=owner.headers), 404, "not_found", f"{method} /api/forms/<unknown>{path}")
