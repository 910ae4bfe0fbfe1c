"""The worked examples spec.md gives, each an item of its own and checked exactly (issue 35).

The referrer example `https://News.Example.com:8443/a?b=1` is already an item of its own
(`test_analytics.py::test_referrer_is_the_lower_cased_host`).
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest

RESPONSE_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("state")]


@pytest.mark.requirement("R10")
def test_example_tags_b_a_b_are_stored_as_a_b(api, alice):
    """Links, Creating: "`["b", "a", "b"]` is stored as `["a", "b"]`"."""
    link = api.link(alice, tags=["b", "a", "b"])
    assert link["tags"] == ["a", "b"], link
    assert api.get_link(alice, link)["tags"] == ["a", "b"]


@pytest.mark.requirement("R10")
@pytest.mark.category("validation")
def test_example_eleven_tags_are_invalid_even_when_some_repeat(api, http, alice):
    """Links, Creating: "11 elements are invalid even when some repeat"."""
    r = http.post("/links", json={"url": "https://example.com/eleven", "tags": ["a"] * 6 + ["b"] * 5}, headers=alice.headers)
    problem = api.validation_problem(r, ["tags"], "11 tags, 2 distinct")
    assert problem is None, problem


@pytest.mark.requirement("R9")
def test_example_promo_and_promo_are_different_slugs(api, alice, bob):
    """Links, Creating: "`Promo` and `promo` are different slugs" (a suffix keeps the pair unique on a shared service)."""
    tail = api.unique("x", "", 8)
    upper = api.link(alice, url="https://example.com/upper", slug="Promo" + tail)
    lower = api.link(bob, url="https://example.com/lower", slug="promo" + tail)
    assert (upper["slug"], lower["slug"]) == ("Promo" + tail, "promo" + tail)
    assert [api.follow(s).headers.get("Location") for s in (upper["slug"], lower["slug"])] == ["https://example.com/upper", "https://example.com/lower"]


@pytest.mark.requirement("R20", "R21")
def test_example_stats_by_referrer(api, alice):
    """Visit analytics: the example's `by_referrer` — `news.example.com` twice, one direct visit — and `total_visits` 3."""
    link = api.link(alice)
    for referer in ("https://news.example.com/a", "https://news.example.com/b", None):
        api.visit(link, referer)
    stats = api.stats(alice, link)
    assert stats["total_visits"] == 3 and stats["by_referrer"] == [{"referrer": "news.example.com", "visits": 2}, {"referrer": None, "visits": 1}], stats
    assert sum(d["visits"] for d in stats["by_day"]) == 3, stats


@pytest.mark.requirement("R11", "R15")
def test_example_timestamps_2030_01_01_0930_plus_0200_and_the_z_form(api, alice):
    """Conventions, Timestamps: a request may send `2030-01-01T09:30:00+02:00`; a response is in UTC with `Z`
    (`2025-03-01T12:00:00.123Z`) and "denotes the same instant as the one sent". Sent by `PATCH`, where any instant is accepted."""
    link = api.patch(alice, api.link(alice), expires_at="2030-01-01T09:30:00+02:00")
    stamp = link["expires_at"]
    assert RESPONSE_STAMP.match(stamp), f"expires_at in the Z form: {stamp!r}"
    assert api.instant(stamp) == datetime(2030, 1, 1, 7, 30, tzinfo=timezone.utc), f"the same instant as 09:30 at +02:00: {stamp!r}"
    assert all(RESPONSE_STAMP.match(link[k]) for k in ("created_at", "updated_at")), link


@pytest.mark.requirement("R7")
@pytest.mark.category("validation")
@pytest.mark.parametrize("url", ["example.com", "ftp://example.com", "http://", "https:///path", "javascript:alert(1)"])
def test_example_invalid_urls(api, http, alice, url):
    """Links, Creating: "`example.com`, `ftp://example.com`, `http://`, `https:///path` and `javascript:alert(1)` are invalid"."""
    problem = api.validation_problem(http.post("/links", json={"url": url}, headers=alice.headers), ["url"], f"the url {url!r}")
    assert problem is None, problem
