"""Passages careful readers found open, now settled in spec.md (issue 15); each item tests the sentence from both sides.

- Errors: "a path that exists but not with the request's method gets `405` (`method_not_allowed`)".
- Lists: "An empty value (`limit=`, `offset=`) is invalid too: only an absent parameter takes its default."
- Creating: "The limit of 10 counts the elements as sent, before duplicates are removed".
- Reading: "a value no tag can have, such as the empty `tag=`, matches no link".
- Changing: "`updated_at` is set ... by every successful `PATCH`, even one that changes no value (`{}` included)".
"""

from __future__ import annotations

import time

import pytest

from pytest_backendbench.http.account_items import empty_paging_item, wrong_method_item

pytestmark = [pytest.mark.tier("base")]


test_a_method_a_path_does_not_have_gets_405 = wrong_method_item("R25", caller="alice")


test_an_empty_limit_or_offset_is_invalid_not_the_default = empty_paging_item("R13", "R25", caller="alice", path="/links", other_path=lambda api, alice: f"/links/{api.link(alice)['id']}/visits")


@pytest.mark.requirement("R10", "R15")
@pytest.mark.category("validation")
def test_the_ten_tag_limit_counts_the_elements_as_sent(api, http, alice):
    eleven = ["a", "b"] * 5 + ["a"]
    problems = [api.validation_problem(http.post("/links", json={"url": "https://example.com/eleven", "tags": eleven}, headers=alice.headers), ["tags"],
                                       "11 elements, 2 distinct, at creation")]
    link = api.link(alice, tags=["keep"])
    problems.append(api.validation_problem(http.patch(f"/links/{link['id']}", json={"tags": eleven}, headers=alice.headers), ["tags"],
                                           "11 elements, 2 distinct, in a PATCH"))
    api.assert_no_problems(problems, "more than 10 tag elements, duplicates included, are invalid")
    assert api.get_link(alice, link).get("tags") == ["keep"], "the refused PATCH changed the tags"
    ten = api.link(alice, tags=["b", "a"] * 5)
    assert ten.get("tags") == ["a", "b"], f"10 elements with duplicates are valid and stored deduplicated: {ten.get('tags')}"


@pytest.mark.requirement("R14")
@pytest.mark.category("api_surface")
def test_an_empty_tag_filter_matches_no_link(api, http, alice):
    tagged, plain = api.link(alice, tags=["news"]), api.link(alice)
    r = http.get("/links", params={"tag": ""}, headers=alice.headers)
    assert r.status_code == 200, f"GET /links?tag= is a filter like any other: {r.status_code} {r.text[:300]}"
    assert (r.json().get("items"), r.json().get("total")) == ([], 0), f"an empty tag matches no link (it is not 'no filter'): {r.text[:300]}"
    everything = api.link_ids(alice, limit=100)
    assert {tagged["id"], plain["id"]} <= set(everything), "without the filter both links are listed"
    assert api.link_ids(alice, tag="news") == [tagged["id"]], "a real tag still matches its link"


@pytest.mark.requirement("R15")
@pytest.mark.category("state")
def test_every_successful_patch_sets_updated_at(api, http, alice):
    link = api.link(alice, tags=["x"])
    time.sleep(1.1)  # timestamps may have whole-second resolution
    r = http.patch(f"/links/{link['id']}", json={"url": "not a url"}, headers=alice.headers)
    problem = api.validation_problem(r, ["url"], "PATCH with an invalid url")
    assert problem is None, problem
    assert api.instant(api.get_link(alice, link)["updated_at"]) == api.instant(link["updated_at"]), "a refused PATCH must not move updated_at"
    r = http.patch(f"/links/{link['id']}", json={}, headers=alice.headers)
    assert r.status_code == 200, f"PATCH with {{}}: expected 200, got {r.status_code} {r.text[:300]}"
    got = api.get_link(alice, link)
    assert (got["url"], got["tags"], got["disabled"], got["expires_at"]) == (link["url"], ["x"], False, None), f"an empty PATCH changed a value: {got}"
    assert api.instant(got["updated_at"]) > api.instant(link["updated_at"]), f"an empty PATCH sets updated_at: {link['updated_at']} -> {got['updated_at']}"
