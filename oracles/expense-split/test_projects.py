"""Projects and access: health, creation, validation, tokens, 401/403 (spec.md: Running, Access, Projects)."""

from __future__ import annotations

import pytest

from pytest_backendbench.http.account_items import health_item

pytestmark = [pytest.mark.tier("base")]


test_health_answers_ok = health_item("R1", name="test_health_answers_ok")


@pytest.mark.requirement("R2")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("INSERT", table="projects")
def test_create_project_answers_slug_name_and_created_at(api, http):
    slug, name = api.fresh_slug("trip"), api.unique("Weekend in Lyon", " ", 6)
    r = http.post("/api/projects", json={"slug": slug, "name": name, "password": api.fresh_password()})
    assert r.status_code == 201, api.brief(r)
    body = r.json()
    assert (body.get("slug"), body.get("name")) == (slug, name), f"slug and name echoed: {body}"
    assert isinstance(body.get("created_at"), str) and body["created_at"], f"created_at is a timestamp string: {body}"


@pytest.mark.requirement("R2", "R3")
@pytest.mark.category("state")
def test_a_project_reads_back_with_its_token(api, http):
    project = api.project()
    r = api.get(project)
    assert r.status_code == 200, api.brief(r)
    assert (r.json().get("slug"), r.json().get("name")) == (project.slug, project.name), f"GET answers the project: {r.text[:200]}"


@pytest.mark.requirement("R2")
@pytest.mark.category("validation")
@pytest.mark.parametrize("slug", ["abc", "a" * 40, "0-trip", "trip-2030-lyon"], ids=["3-chars", "40-chars", "digit-first", "dashes"])
def test_valid_slugs_are_accepted(api, http, slug):
    import uuid

    fresh = (slug[:-8] + uuid.uuid4().hex[:8]) if len(slug) > 12 else None
    wanted = fresh or slug
    r = api.create_project(slug=wanted)
    if r.status_code == 409 and fresh is None:  # a short fixed slug made by an earlier run of this item
        api.error(r, 409, "slug_taken", f"the slug {wanted!r} exists already")
        return
    assert r.status_code == 201 and r.json().get("slug") == wanted, f"{wanted!r} is a valid slug: {api.brief(r)}"


INVALID_PROJECTS = [
    ("slug-too-short", {"slug": "ab"}, ["slug"]),
    ("slug-too-long", {"slug": "a" * 41}, ["slug"]),
    ("slug-upper-case", {"slug": "Trip-ABC"}, ["slug"]),
    ("slug-leading-dash", {"slug": "-trip"}, ["slug"]),
    ("slug-space", {"slug": "my trip"}, ["slug"]),
    ("slug-slash", {"slug": "a/b/c"}, ["slug"]),
    ("slug-underscore", {"slug": "my_trip"}, ["slug"]),
    ("slug-number", {"slug": 12345}, ["slug"]),
    ("name-blank", {"name": "   "}, ["name"]),
    ("name-too-long", {"name": "n" * 101}, ["name"]),
    ("name-missing", {"name": None}, ["name"]),
    ("password-short", {"password": "1234567"}, ["password"]),
    ("password-long", {"password": "p" * 129}, ["password"]),
    ("password-number", {"password": 12345678}, ["password"]),
    ("everything-wrong", {"slug": "", "name": "", "password": ""}, ["slug", "name", "password"]),
]


@pytest.mark.requirement("R2")
@pytest.mark.category("validation")
@pytest.mark.parametrize("override,fields", [(o, f) for _, o, f in INVALID_PROJECTS], ids=[i for i, _, _ in INVALID_PROJECTS])
def test_invalid_projects_get_422_listing_the_fields(api, http, override, fields):
    body = {"slug": api.fresh_slug(), "name": "Flat share", "password": api.fresh_password()}
    body.update(override)
    body = {k: v for k, v in body.items() if v is not None}
    problem = api.validation_problem(http.post("/api/projects", json=body), fields, f"an invalid project {override}")
    assert problem is None, problem
    if isinstance(body.get("slug"), str) and body["slug"] != override.get("slug"):
        password = body["password"] if isinstance(body.get("password"), str) else "any-password"
        assert api.post_token(body["slug"], password).status_code == 401, "a refused project was stored"


@pytest.mark.requirement("R2")
@pytest.mark.category("validation")
@pytest.mark.parametrize("name,password", [("n" * 100, "p" * 128), ("x", "12345678")], ids=["longest", "shortest"])
def test_boundary_names_and_passwords_are_accepted(api, http, name, password):
    project = api.project(name=name, password=password)
    assert api.get(project).json().get("name") == name


@pytest.mark.requirement("R2")
@pytest.mark.category("state")
def test_an_existing_slug_gets_409_slug_taken(api, http):
    project = api.project()
    api.error(api.create_project(slug=project.slug, password=api.fresh_password()), 409, "slug_taken", "the same slug again")
    assert api.get(project).json().get("name") == project.name, "the first project is untouched"
    assert api.post_token(project.slug, project.password).status_code == 200, "its password still opens it"


@pytest.mark.requirement("R2")
@pytest.mark.category("validation")
@pytest.mark.parametrize("raw", [b"[]", b'"text"', b"not json", b"42"], ids=["array", "string", "garbage", "number"])
def test_a_body_that_is_not_an_object_gets_422(api, http, raw):
    r = http.post("/api/projects", data=raw, headers={"Content-Type": "application/json"})
    problem = api.validation_problem(r, ["body"], f"POST /api/projects with {raw!r}")
    assert problem is None, problem


@pytest.mark.requirement("R3")
@pytest.mark.category("authorization")
def test_the_right_password_gets_a_token_each_time_and_all_stay_valid(api, http):
    project = api.project()
    first, second = api.token(project.slug, project.password), api.token(project.slug, project.password)
    assert first != second, "each call issues a new token"
    for token in (first, second, project.token):
        r = http.get(project.path(), headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 200, f"earlier tokens stay valid: {api.brief(r)}"


@pytest.mark.requirement("R3")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("wrong", ["other-password", "upper", "prefix", "blank"])
def test_a_wrong_password_gets_401(api, http, wrong):
    project = api.project()
    sent = {"other-password": api.fresh_password(), "upper": project.password.upper(), "prefix": project.password[:-1], "blank": ""}[wrong]
    api.error(api.post_token(project.slug, sent), 401, "unauthorized", f"a wrong password ({wrong})")


@pytest.mark.requirement("R3")
@pytest.mark.category("authorization")
def test_an_unknown_slug_at_the_token_path_gets_401(api, http):
    api.error(api.post_token(api.fresh_slug("nobody"), api.fresh_password()), 401, "unauthorized", "a slug no project has")


@pytest.mark.requirement("R3")
@pytest.mark.category("validation")
@pytest.mark.parametrize("body", [{}, {"password": 12345678}, {"password": None}], ids=["missing", "number", "null"])
def test_a_token_request_without_a_password_string_gets_422(api, http, body):
    project = api.project()
    problem = api.validation_problem(http.post(project.path("/token"), json=body), ["password"], f"token request {body}")
    assert problem is None, problem


@pytest.mark.requirement("R3")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("rest", ["", "/members", "/bills", "/balances", "/settlements"])
def test_project_paths_without_a_token_get_401(api, http, rest):
    project = api.project()
    api.error(http.get(project.path(rest)), 401, "unauthorized", f"GET {project.path(rest)} without a token")


@pytest.mark.requirement("R3")
@pytest.mark.category("authorization")
def test_malformed_and_tampered_tokens_get_401(api, http, checks):
    project = api.project()
    problems = checks.token_problems(http, "GET", project.path("/members"), project.token)
    problems += checks.token_problems(http, "POST", project.path("/members"), project.token, {"name": "Intruder"})
    assert not problems, "tokens that are not exactly a valid one:\n" + "\n".join(problems)
    assert api.members(project) == [], "no member was added by a refused request"


@pytest.mark.requirement("R3")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("rest", ["", "/members", "/bills", "/balances", "/settlements"])
def test_a_token_opens_only_its_own_project(api, http, rest):
    mine, theirs = api.project(), api.project()
    api.error(api.get(theirs, rest, token_of=mine), 403, "forbidden", f"GET {theirs.path(rest)} with another project's token")


@pytest.mark.requirement("R3")
@pytest.mark.category("authorization")
def test_a_token_under_a_slug_no_project_has_gets_403(api, http):
    mine = api.project()
    r = http.get(f"/api/projects/{api.fresh_slug('ghost')}/members", headers=mine.auth)
    api.error(r, 403, "forbidden", "a valid token under a slug no project has")
