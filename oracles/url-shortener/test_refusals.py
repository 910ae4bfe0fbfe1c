"""Refusals that change nothing at each field position, and the status guards one condition at a time (issue 35).

spec.md, Errors: "A request that fails changes nothing." Each body field of `POST /links` and
`PATCH /links/{id}` is sent invalid in turn with the others valid (http/refusals.py), and the
caller's links, tags and the slug are read back. The status is derived with a precedence
("`disabled` when `disabled` is `true`; otherwise `expired` …"): a link both disabled and past
its expiry is tried with each condition undone through `PATCH`.
"""

from __future__ import annotations

import pytest

from pytest_backendbench.http.refusals import one_invalid_field, unchanged

pytestmark = [pytest.mark.tier("r1"), pytest.mark.category("state")]

BAD_URL = ["example.com", "http://", "https://exa mple.com/"]
BAD_TAGS = [["ok", "Upper"], [f"t{i % 3}" for i in range(11)], "tag"]
CREATE = one_invalid_field({"url": "", "slug": "", "tags": [], "expires_at": ""},
                           {"url": BAD_URL, "slug": ["ab", "with space"], "tags": BAD_TAGS, "expires_at": ["2001-01-01T00:00:00Z", "2030-01-01"]})
UPDATE = one_invalid_field({"url": "", "tags": [], "expires_at": "", "disabled": False},
                           {"url": BAD_URL, "tags": BAD_TAGS, "expires_at": ["2030-01-01T09:30:00", 5], "disabled": ["yes", None]})


def everything(api, user, slug=None):
    """What a refused request must leave as it was: the caller's links and tags, and what a slug nobody holds answers.

    A slug that names a link is not followed: an active link's redirect records a visit.
    """
    r = api.follow(slug) if slug else None
    return api.links(user, limit=100)["items"], api.tags(user), r is None or (r.status_code, r.headers.get("Location"))


@pytest.mark.requirement("R6", "R7", "R8", "R10", "R11", "R25")
@pytest.mark.parametrize("field,body", CREATE)
def test_a_link_refused_for_one_field_creates_nothing(api, http, alice, field, body):
    slug = api.unique("refused", "-")
    valid = {"url": "https://example.com/refused", "slug": slug, "tags": ["b", "a"], "expires_at": api.in_days(7)}
    with unchanged(lambda: everything(api, alice, slug), f"a link with an invalid {field}"):
        r = http.post("/links", json={**valid, field: body[field]}, headers=alice.headers)
        problem = api.validation_problem(r, [field], f"a link whose only invalid field is {field}={body[field]!r}")
        assert problem is None, problem
    api.ok(http.post("/links", json=valid, headers=alice.headers), 201, "the same link with every field valid (its slug is free)")


@pytest.mark.requirement("R15", "R25")
@pytest.mark.parametrize("field,body", UPDATE)
def test_an_update_refused_for_one_field_changes_nothing(api, http, alice, field, body):
    link = api.link(alice, url="https://example.com/original", tags=["orig"])
    valid = {"url": "https://example.net/changed", "tags": ["changed"], "expires_at": "2001-01-01T00:00:00Z", "disabled": True}
    with unchanged(lambda: everything(api, alice), f"an update with an invalid {field}"):
        r = http.patch(f"/links/{link['id']}", json={**valid, field: body[field]}, headers=alice.headers)
        problem = api.validation_problem(r, [field], f"an update whose only invalid field is {field}={body[field]!r}")
        assert problem is None, problem


@pytest.mark.requirement("R14", "R16", "R18", "R19")
def test_disabled_and_expired_each_alone(api, alice):
    """Disabled and past its expiry: disabled wins; re-enabled it is expired; without the expiry it is active again."""
    link = api.link(alice, tags=[api.unique("both", "-").lower()])
    api.patch(alice, link, disabled=True, expires_at="2001-01-01T00:00:00Z")
    steps = [({}, "disabled", (410, "link_disabled")), ({"disabled": False}, "expired", (410, "link_expired")),
             ({"expires_at": None}, "active", (302, None))]
    for change, status, (code, error) in steps:
        if change:
            api.patch(alice, link, **change)
        listed = {s: api.link_ids(alice, status=s, tag=link["tags"][0]) for s in ("active", "disabled", "expired")}
        assert listed == {s: [link["id"]] if s == status else [] for s in listed}, f"after {change or 'disabling and expiring'}: the link is {status} only: {listed}"
        r = api.follow(link["slug"])
        assert r.status_code == code and (error is None or r.json().get("error") == error), f"following a {status} link: {api.brief(r)}"
    assert api.get_link(alice, link)["visit_count"] == 1, "only the redirect of the active link is recorded"
