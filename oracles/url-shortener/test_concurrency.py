"""Requests that arrive at once (spec.md: "Requests may arrive concurrently"; "no two existing
links (of any users) share a slug").

Several users claim one custom slug in a burst released together (http/concurrency.py): one
link gets it, every other claim gets `409 conflict`, and the slug redirects to the winner's URL.
"""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http.concurrency import at_once, one_winner

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("state")]


@pytest.mark.requirement("R9")
def test_a_slug_claimed_at_once_goes_to_one_link(api, http):
    slug, users = "race-" + uuid.uuid4().hex[:12], [api.user("racer") for _ in range(6)]
    urls = [f"https://example.com/{uuid.uuid4().hex}" for _ in users]
    answers = at_once(http.base_url, lambda i: http.post("/links", json={"url": urls[i], "slug": slug}, headers=users[i].headers),
                      range(len(users)), http.timeout_s)
    [won] = one_winner(answers, "six users claim one slug at once", code="conflict")
    winner = answers.index(won)
    followed = api.follow(slug)
    assert followed.status_code == 302 and followed.headers.get("Location") == urls[winner], \
        f"the slug redirects to the winning link's URL {urls[winner]}: {api.brief(followed)} Location={followed.headers.get('Location')}"
    owned = {i: [link["slug"] for link in api.links(user)["items"]] for i, user in enumerate(users)}
    assert owned == {i: [slug] if i == winner else [] for i in owned}, f"only the winner has a link, once: {owned}"
