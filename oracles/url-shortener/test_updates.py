"""Changing and deleting links; derived status (spec.md: Reading, changing, deleting)."""

from __future__ import annotations

import time
import uuid

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R15", "R17")
@pytest.mark.category("state")
def test_update_url_changes_the_redirect(api, http, alice):
    link = api.link(alice, url="https://example.com/old")
    updated = api.patch(alice, link, url="https://example.net/new?ref=1")
    assert updated.get("url") == "https://example.net/new?ref=1", f"the update answers the new URL: {updated}"
    r = api.follow(link["slug"])
    assert r.status_code == 302 and r.headers.get("Location") == "https://example.net/new?ref=1", f"the slug must redirect to the new URL: {api.brief(r)}"


@pytest.mark.requirement("R15", "R10")
@pytest.mark.category("state")
def test_update_tags(api, http, alice):
    link = api.link(alice, tags=["a"])
    api.patch(alice, link, tags=["z", "b", "z"])
    assert api.get_link(alice, link).get("tags") == ["b", "z"], "updated tags are deduplicated, sorted and persisted"
    api.patch(alice, link, tags=[])
    assert api.get_link(alice, link).get("tags") == [], "an empty list removes every tag"


@pytest.mark.requirement("R15")
@pytest.mark.category("state")
def test_slug_cannot_be_changed(api, http, alice):
    link = api.link(alice)
    r = http.patch(f"/links/{link['id']}", json={"slug": f"new-{uuid.uuid4().hex[:8]}", "tags": ["kept"]}, headers=alice.headers)
    assert r.status_code == 200, f"a slug in an update is ignored, not an error: {api.brief(r)}"
    got = api.get_link(alice, link)
    assert (got.get("slug"), got.get("tags")) == (link["slug"], ["kept"]), f"the slug must stay and the rest apply: {got}"


@pytest.mark.requirement("R15", "R26")
@pytest.mark.category("validation")
def test_invalid_updates_get_422_and_change_nothing(api, http, alice):
    link = api.link(alice, url="https://example.com/keep", tags=["keep"])
    cases = [
        ({"url": "notaurl"}, ["url"]), ({"url": None}, ["url"]), ({"tags": ["UP"]}, ["tags"]), ({"disabled": "true"}, ["disabled"]),
        ({"disabled": None}, ["disabled"]), ({"expires_at": "2030-01-01"}, ["expires_at"]),
        ({"url": "https://example.com/fine", "tags": "single"}, ["tags"]), ({"url": "", "disabled": 1}, ["url", "disabled"]),
    ]
    problems = [
        api.validation_problem(http.patch(f"/links/{link['id']}", json=body, headers=alice.headers), fields, f"update {body}")
        for body, fields in cases
    ]
    api.assert_no_problems(problems, "invalid updates were not rejected as the spec says")
    got = api.get_link(alice, link)
    assert (got.get("url"), got.get("tags"), got.get("disabled"), got.get("expires_at")) == ("https://example.com/keep", ["keep"], False, None), (
        f"rejected updates changed the link: {got}"
    )


@pytest.mark.requirement("R16")
@pytest.mark.category("state")
def test_disabling_and_enabling(api, http, alice):
    link = api.link(alice)
    disabled = api.patch(alice, link, disabled=True)
    assert (disabled.get("disabled"), disabled.get("status")) == (True, "disabled"), f"a disabled link: {disabled}"
    enabled = api.patch(alice, link, disabled=False)
    assert (enabled.get("disabled"), enabled.get("status")) == (False, "active"), f"a re-enabled link: {enabled}"


@pytest.mark.requirement("R15", "R16")
@pytest.mark.category("state")
def test_past_expiry_expires_at_once(api, http, alice):
    link = api.link(alice, expires_at=api.in_days(30))
    past = api.in_days(-2)
    expired = api.patch(alice, link, expires_at=past)
    assert expired.get("status") == "expired", f"an update may set a past expiry, which expires the link at once: {expired}"
    assert api.instant(expired["expires_at"]) == api.instant(past), f"expires_at is the instant sent: {expired['expires_at']} vs {past}"
    revived = api.patch(alice, link, expires_at=None)
    assert (revived.get("expires_at"), revived.get("status")) == (None, "active"), f"expires_at null removes the expiry: {revived}"


@pytest.mark.requirement("R16")
@pytest.mark.category("state")
def test_disabled_wins_over_expired(api, http, alice):
    link = api.link(alice)
    both = api.patch(alice, link, disabled=True, expires_at=api.in_days(-1))
    assert both.get("status") == "disabled", f"a disabled link reports disabled even when it has expired: {both}"
    only_expired = api.patch(alice, link, disabled=False)
    assert only_expired.get("status") == "expired", f"re-enabled but past its expiry: {only_expired}"


@pytest.mark.requirement("R23")
@pytest.mark.category("state")
def test_delete_link(api, http, alice):
    keep = api.link(alice)
    gone = api.link(alice, tags=["gone"])
    api.visit(gone)
    r = http.delete(f"/links/{gone['id']}", headers=alice.headers)
    assert r.status_code == 204, f"deleting a link: {api.brief(r)}"
    for path in (f"/links/{gone['id']}", f"/links/{gone['id']}/stats", f"/links/{gone['id']}/visits"):
        api.error(http.get(path, headers=alice.headers), 404, "not_found", f"GET {path} after deletion")
    api.error(api.follow(gone["slug"]), 404, "not_found", "following a deleted link's slug")
    assert api.link_ids(alice) == [keep["id"]], "the deleted link is still listed"
    assert api.tags(alice) == [], "the deleted link's tags are still counted"


@pytest.mark.requirement("R9", "R23")
@pytest.mark.category("state")
def test_deleted_slug_can_be_reused(api, http, alice, bob):
    slug = f"reuse-{uuid.uuid4().hex[:10]}"
    old = api.link(alice, slug=slug, url="https://example.com/old")
    api.ok(http.delete(f"/links/{old['id']}", headers=alice.headers), 204, "delete the link")
    r = http.post("/links", json={"url": "https://example.com/new", "slug": slug}, headers=bob.headers)
    assert r.status_code == 201, f"the slug of a deleted link is free again: {api.brief(r)}"
    assert api.follow(slug).headers.get("Location") == "https://example.com/new", "the reused slug redirects to the new link"


@pytest.mark.requirement("R15", "R16")
@pytest.mark.category("state")
def test_a_change_sets_updated_at_and_an_expiry_of_now_expires_at_once(api, http, alice):
    link = api.link(alice)
    time.sleep(1.1)  # timestamps may have whole-second resolution
    changed = api.patch(alice, link, url="https://example.com/changed")
    assert api.instant(changed["updated_at"]) > api.instant(link["updated_at"]), f"updated_at is the time of the change: {link['updated_at']} -> {changed['updated_at']}"
    now = api.patch(alice, link, expires_at=api.in_days(0))
    assert now["status"] == "expired", f"an expiry at the present instant expires the link at once: {now}"
    r = api.follow(link["slug"])
    assert r.status_code == 410 and r.json().get("error") == "link_expired", f"following a link that expired now: {api.brief(r)}"

