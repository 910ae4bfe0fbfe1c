"""Listing and searching pages (spec.md: Pages `GET /pages`, Conventions: paginated lists)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R15")
@pytest.mark.category("api_surface")
def test_search_finds_title_substrings_oldest_first(api, http, reader):
    word = api.tag()
    first = api.page(title=f"Alpha {word} guide")
    second = api.page(title=f"{word.upper()}")
    api.page(title=f"Alpha {word[:-1]} other")
    body = api.search(reader, q=word)
    assert [p["id"] for p in body["items"]] == [first["id"], second["id"]], f"the two pages whose titles contain {word!r} (ignoring case), oldest first: {body['items']}"
    assert body["total"] == 2 and body["limit"] == 20 and body["offset"] == 0, f"the envelope echoes defaults and counts matches: {body}"
    item = body["items"][0]
    assert {k: item.get(k) for k in ("id", "slug", "title", "protected", "revision")} == {k: first[k] for k in ("id", "slug", "title", "protected", "revision")}, f"a list item: {item}"


@pytest.mark.requirement("R15")
@pytest.mark.category("api_surface")
def test_search_ignores_case_both_ways(api, http):
    word = api.tag()
    page = api.page(title=f"MiXeD {word}")
    assert api.found(f"mixed {word.upper()}") == [page["id"]], "q matches ignoring the case of letters"
    assert api.found(f"XED {word}") == [page["id"]], "q matches inside the title"


@pytest.mark.requirement("R15", "R7")
@pytest.mark.category("state")
def test_search_matches_the_current_title_only(api, http, editor):
    old, new = api.tag(), api.tag()
    page = api.page(editor, title=f"Old {old}")
    api.edit(page, editor, title=f"New {new}")
    assert api.found(old) == [], "a title that is no longer current is not found"
    assert api.found(new) == [page["id"]], "the current title is found"


@pytest.mark.requirement("R15")
@pytest.mark.category("api_surface")
def test_pagination_slices_the_matches(api, http):
    word = api.tag()
    made = [api.page(title=f"Paged {word} {i}") for i in range(5)]
    ids = [p["id"] for p in made]
    first = api.search(q=word, limit=2)
    second = api.search(q=word, limit=2, offset=2)
    past = api.search(q=word, limit=2, offset=5)
    assert [p["id"] for p in first["items"]] == ids[:2] and [p["id"] for p in second["items"]] == ids[2:4], f"pages 1 and 2: {first}, {second}"
    assert (first["total"], first["limit"], second["offset"]) == (5, 2, 2), f"total, limit and offset: {first}, {second}"
    assert past["items"] == [] and past["total"] == 5, f"an offset at total gives no items: {past}"


@pytest.mark.requirement("R15", "R16")
@pytest.mark.category("validation")
@pytest.mark.parametrize("param, values", [("limit", ["0", "101", "abc", "", "-1", "1.5"]), ("offset", ["-1", "x", ""]), ("q", ["q" * 101])], ids=["limit", "offset", "q"])
def test_invalid_list_parameters_get_422(api, http, param, values):
    problems = [api.validation_problem(api.call("GET", "/pages", **{param: value}), [param], f"GET /pages?{param}={value[:20]}") for value in values]
    api.assert_no_problems(problems, f"invalid {param} values were accepted")


@pytest.mark.requirement("R15")
@pytest.mark.category("api_surface")
def test_limit_bounds_are_accepted(api, http):
    word = api.tag()
    page = api.page(title=f"Bound {word}")
    for params in ({"limit": "1"}, {"limit": "100"}, {"q": "q" * 100}, {"q": word, "offset": "0"}):
        r = api.call("GET", "/pages", **params)
        assert r.status_code == 200, f"GET /pages with {params} is valid: {api.brief(r)}"
    assert api.found(word) == [page["id"]]


@pytest.mark.requirement("R15", "R14", "R13")
@pytest.mark.category("state")
def test_list_shows_pages_not_redirects_and_not_deleted_pages(api, http, editor):
    word = api.tag()
    moved = api.page(editor, title=f"Moved {word}")
    gone = api.page(title=f"Gone {word}")
    api.ok(api.move(moved, api.slug("new"), editor), 200, "move a page")
    api.ok(api.delete(gone), 204, "delete a page")
    items = api.search(q=word, limit=100)["items"]
    assert [p["id"] for p in items] == [moved["id"]] and items[0]["slug"] != moved["slug"], f"the moved page once, under its new slug; not the deleted one: {items}"
