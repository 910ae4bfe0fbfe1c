"""R2 (evolved) items: expiry over time, concurrent visits, resets and multi-step consistency."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta, timezone

import pytest
import requests

pytestmark = [pytest.mark.tier("r2")]


@pytest.mark.requirement("R11", "R16", "R18", "R14")
@pytest.mark.category("state")
def test_a_link_expires_when_its_time_comes(api, http, alice):
    link = api.link(alice, expires_at=api.in_days(1))
    assert api.follow(link["slug"]).status_code == 302, "before its expiry the link redirects"
    deadline = datetime.now(timezone.utc) + timedelta(seconds=1)
    api.patch(alice, link, expires_at=deadline.isoformat(timespec="milliseconds").replace("+00:00", "Z"))
    time.sleep(max(0.0, (deadline - datetime.now(timezone.utc)).total_seconds()) + 0.3)
    api.error(api.follow(link["slug"]), 410, "link_expired", "following the link after its expiry")
    got = api.get_link(alice, link)
    assert (got.get("status"), got.get("visit_count")) == ("expired", 1), f"expired with only the early visit: {got}"
    assert [x["id"] for x in api.links(alice, status="expired")["items"]] == [link["id"]], "the link is listed as expired now"


@pytest.mark.requirement("R19", "R21")
@pytest.mark.category("state")
def test_concurrent_visits_are_all_counted(api, http, service, alice, checks):
    link = api.link(alice)
    statuses: list[int] = []
    lock = threading.Lock()

    def follow(i: int) -> None:
        with requests.Session() as session:
            r = session.get(f"{service.base_url}/r/{link['slug']}", headers={"Referer": f"https://r{i % 3}.example/"}, allow_redirects=False, timeout=http.timeout_s)
        with lock:
            statuses.append(r.status_code)

    checks.concurrently(follow, list(range(12)), 2 * http.timeout_s)
    assert statuses == [302] * 12, f"every concurrent follow redirects: {statuses}"
    stats = api.stats(alice, link)
    got = [(x.get("referrer"), x.get("visits")) for x in stats.get("by_referrer", [])]
    assert stats.get("total_visits") == 12 and got == [("r0.example", 4), ("r1.example", 4), ("r2.example", 4)], f"12 visits, 4 per referrer: {stats}"
    assert api.get_link(alice, link).get("visit_count") == 12, "visit_count must count every concurrent visit"


@pytest.mark.requirement("R22", "R19", "R21")
@pytest.mark.category("side_effects")
def test_counting_restarts_after_a_reset(api, http, alice):
    link = api.link(alice)
    for referer in ("https://a.example/", "https://a.example/", "https://b.example/"):
        api.visit(link, referer)
    api.ok(http.delete(f"/links/{link['id']}/visits", headers=alice.headers), 204, "reset visits")
    api.visit(link, "https://b.example/")
    stats = api.stats(alice, link)
    got = [(x.get("referrer"), x.get("visits")) for x in stats.get("by_referrer", [])]
    assert stats.get("total_visits") == 1 and got == [("b.example", 1)], f"only the visit after the reset counts: {stats}"
    visits = api.visits(alice, link)
    assert visits["total"] == 1 and api.get_link(alice, link).get("last_visited_at") == visits["items"][0]["visited_at"], (
        f"last_visited_at is the post-reset visit: {visits}"
    )


@pytest.mark.requirement("R23", "R24", "R14")
@pytest.mark.category("side_effects")
def test_deleting_links_updates_tags_and_filters(api, http, alice):
    a = api.link(alice, tags=["spring", "email"])
    b = api.link(alice, tags=["spring"])
    api.ok(http.delete(f"/links/{a['id']}", headers=alice.headers), 204, "delete a link")
    assert api.tags(alice) == [("spring", 1)], f"the deleted link's tags no longer count: {api.tags(alice)}"
    assert api.link_ids(alice, tag="email") == [], "the deleted link no longer matches its tag"
    assert api.link_ids(alice, tag="spring") == [b["id"]], "the remaining link still matches"


@pytest.mark.requirement("R15", "R25")
@pytest.mark.category("state")
def test_a_partly_invalid_update_changes_nothing(api, http, alice):
    link = api.link(alice, url="https://example.com/original", tags=["orig"])
    r = http.patch(f"/links/{link['id']}", json={"url": "https://example.com/changed", "disabled": True, "tags": ["NOT-VALID"]}, headers=alice.headers)
    problem = api.validation_problem(r, ["tags"], "an update with a valid url and disabled but invalid tags")
    assert problem is None, problem
    got = api.get_link(alice, link)
    assert (got.get("url"), got.get("disabled"), got.get("tags"), got.get("status")) == ("https://example.com/original", False, ["orig"], "active"), (
        f"an update is all or nothing: {got}"
    )
    assert api.follow(link["slug"]).headers.get("Location") == "https://example.com/original", "the redirect still uses the original URL"


@pytest.mark.requirement("R16", "R18", "R19")
@pytest.mark.category("workflow")
def test_visits_while_refused_never_count(api, http, alice):
    link = api.link(alice)
    api.visit(link, "https://one.example/")
    api.patch(alice, link, expires_at=api.in_days(-1))
    api.follow(link["slug"], "https://two.example/")
    api.patch(alice, link, expires_at=None, disabled=True)
    api.follow(link["slug"], "https://three.example/")
    api.patch(alice, link, disabled=False)
    api.visit(link, "https://four.example/")
    problem = api.newest_first_problem(api.visits(alice, link)["items"], ["four.example", "one.example"], "referrer", "visited_at", "only the visits while active are recorded, newest first")
    assert problem is None, problem


@pytest.mark.requirement("R9", "R12", "R23")
@pytest.mark.category("authorization")
def test_a_reused_slug_does_not_expose_the_previous_owner(api, http, alice, bob):
    old = api.link(alice, tags=["secret"])
    api.visit(old, "https://private.example/")
    api.ok(http.delete(f"/links/{old['id']}", headers=alice.headers), 204, "alice deletes her link")
    new = api.link(bob, slug=old["slug"], url="https://bob.example/")
    assert api.visits(bob, new)["items"] == [], "bob must not see the visits of alice's deleted link"
    assert api.tags(bob) == [], "bob must not inherit alice's tags"
    api.error(http.get(f"/links/{old['id']}", headers=bob.headers), 404, "not_found", "bob reading alice's deleted link")
