"""Failed requests change nothing, also when valid fields travel with the failing one.

spec.md, Errors: "A request that fails changes nothing." Each item sends a request whose other
fields are all valid beside the ONE that makes it fail (422, 409, 404 or 401), then reads the
state back (GET, lists, /tags, /r/{slug}, login) and checks that none of the valid fields was
written and nothing was created or reserved.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

pytestmark = [pytest.mark.tier("r2")]


def fresh_slug() -> str:
    """A custom slug nobody holds (slugs are global across the shared service)."""
    return f"mixed-{uuid.uuid4().hex[:12]}"


def link_state(link: dict[str, Any]) -> dict[str, Any]:
    """The fields of a link a failed PATCH must leave as they were."""
    return {k: link.get(k) for k in ("url", "tags", "disabled", "expires_at", "status", "slug", "updated_at", "visit_count")}


def full_update() -> dict[str, Any]:
    """A PATCH body where every field is valid and differs from the link made by ``original_link``."""
    return {"url": f"https://example.net/changed/{uuid.uuid4().hex[:8]}", "tags": ["changed", "mixed"], "expires_at": "2001-01-01T00:00:00Z", "disabled": True}


def original_link(api: Any, user: Any) -> dict[str, Any]:
    """A link whose every updatable field differs from ``full_update``."""
    return api.link(user, url=f"https://example.com/original/{uuid.uuid4().hex[:8]}", tags=["orig"])


def unchanged_problems(api: Any, user: Any, before: dict[str, Any], what: str) -> list[str]:
    """Why the link, its tags and its redirect are no longer as ``before``; empty when unchanged."""
    got = link_state(api.get_link(user, before))
    problems = [] if got == link_state(before) else [f"{what} changed the link: before {link_state(before)}, after {got}"]
    if api.tags(user) != [(t, 1) for t in before["tags"]]:
        problems.append(f"{what} changed GET /tags: {api.tags(user)}")
    r = api.follow(before["slug"])
    if r.status_code != 302 or r.headers.get("Location") != before["url"]:
        problems.append(f"{what}: the slug must still redirect to the original URL: {api.brief(r)}")
    return problems


# ---------------------------------------------------------------- POST /users


@pytest.mark.requirement("R2", "R25")
@pytest.mark.category("validation")
@pytest.mark.parametrize("password", ["seven77", "p" * 129, None, 12345678], ids=["too-short", "too-long", "null", "number"])
def test_mixed_registration_with_an_invalid_password_creates_no_user(api, http, password):
    username = api.unique("mixreg")
    r = http.post("/users", json={"username": username, "password": password})
    problem = api.validation_problem(r, ["password"], f"registering a valid username with password={str(password)[:12]!r}")
    assert problem is None, problem
    if isinstance(password, str):
        api.error(http.post("/auth/token", json={"username": username, "password": password}), 401, "unauthorized", "logging in as the user a 422 must not have created")
    r = http.post("/users", json={"username": username, "password": "a valid password"})
    assert r.status_code == 201, f"the username must still be free after the rejected registration: {api.brief(r)}"


@pytest.mark.requirement("R2", "R25")
@pytest.mark.category("state")
def test_mixed_registration_with_a_taken_username_keeps_the_first_user(api, http, alice):
    me = api.ok(http.get("/me", headers=alice.headers), 200, "read the user")
    api.error(http.post("/users", json={"username": alice.username, "password": "a different valid password"}), 409, "conflict", "registering a taken username with a new valid password")
    api.error(http.post("/auth/token", json={"username": alice.username, "password": "a different valid password"}), 401, "unauthorized",
              "logging in with the password the 409 must not have stored")
    token = api.login(alice.username, alice.password)
    again = api.ok(http.get("/me", headers={"Authorization": f"Bearer {token}"}), 200, "read the user again")
    assert (again.get("id"), again.get("username"), api.instant(again["created_at"])) == (me.get("id"), me.get("username"), api.instant(me["created_at"])), (
        f"the 409 must leave the first user as it was: {me} -> {again}"
    )


# ---------------------------------------------------------------- POST /links

INVALID_CREATE = {
    "url": "ftp://example.com/file",
    "slug": "no",
    "tags": ["fine", "NOT-VALID"],
    "expires_at": "2001-01-01T00:00:00Z",
}


@pytest.mark.requirement("R6", "R25")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field", list(INVALID_CREATE), ids=list(INVALID_CREATE))
def test_mixed_link_creation_with_one_invalid_field_creates_nothing(api, http, alice, field):
    slug = fresh_slug()
    body = {"url": f"https://example.com/mixed/{uuid.uuid4().hex[:8]}", "slug": slug, "tags": ["mixed", "valid"], "expires_at": api.in_days(7)}
    body[field] = INVALID_CREATE[field]
    problem = api.validation_problem(http.post("/links", json=body, headers=alice.headers), [field], f"creating a link whose only invalid field is {field}")
    assert problem is None, problem
    page = api.links(alice)
    assert page["total"] == 0 and page["items"] == [], f"a rejected creation must create no link: {page}"
    assert api.tags(alice) == [], f"a rejected creation must count no tags: {api.tags(alice)}"
    if field != "slug":
        api.error(api.follow(slug), 404, "not_found", "following the custom slug of a rejected creation")
        r = http.post("/links", json={"url": "https://example.com/after", "slug": slug}, headers=alice.headers)
        assert r.status_code == 201, f"the custom slug of a rejected creation must still be free: {api.brief(r)}"


@pytest.mark.requirement("R9", "R25")
@pytest.mark.category("state")
@pytest.mark.parametrize("holder", ["same-user", "other-user"])
def test_mixed_link_creation_with_a_taken_slug_creates_nothing(api, http, alice, bob, holder):
    slug = fresh_slug()
    owner = alice if holder == "same-user" else bob
    first = api.link(owner, slug=slug, url="https://example.com/first", tags=["first"])
    body = {"url": "https://example.com/second", "slug": slug, "tags": ["second", "mixed"], "expires_at": api.in_days(7)}
    api.error(http.post("/links", json=body, headers=alice.headers), 409, "conflict", f"creating a link with a slug the {holder.replace('-', ' ')} holds")
    expected_ids = [first["id"]] if owner is alice else []
    assert api.link_ids(alice) == expected_ids, f"the 409 must create no link: {api.links(alice)}"
    expected_tags = [("first", 1)] if owner is alice else []
    assert api.tags(alice) == expected_tags, f"the 409 must count no tags: {api.tags(alice)}"
    got = api.get_link(owner, first)
    assert link_state(got) == link_state(first), f"the 409 must leave the holder's link as it was: {first} -> {got}"
    r = api.follow(slug)
    assert r.status_code == 302 and r.headers.get("Location") == "https://example.com/first", f"the slug must still redirect to the first link: {api.brief(r)}"


@pytest.mark.requirement("R4", "R25")
@pytest.mark.category("authorization")
def test_mixed_link_creation_without_a_valid_token_creates_nothing(api, http, alice):
    revoked = api.login(alice.username, alice.password)
    api.ok(http.post("/auth/logout", headers={"Authorization": f"Bearer {revoked}"}), 204, "log a second token out")
    slug = fresh_slug()
    body = {"url": "https://example.com/unauthenticated", "slug": slug, "tags": ["mixed"], "expires_at": api.in_days(7)}
    for headers in ({}, {"Authorization": "Bearer made-up-token"}, {"Authorization": f"Bearer {revoked}"}):
        api.error(http.post("/links", json=body, headers=headers), 401, "unauthorized", f"creating a valid link with {headers or 'no Authorization'}")
    api.error(api.follow(slug), 404, "not_found", "following the slug of a refused creation")
    assert api.links(alice)["total"] == 0 and api.tags(alice) == [], "a refused creation must create nothing for the token's user"
    r = http.post("/links", json=body, headers=alice.headers)
    assert r.status_code == 201, f"the slug of a refused creation must still be free: {api.brief(r)}"


# ---------------------------------------------------------------- PATCH /links/{link_id}

INVALID_UPDATE = {
    "url": "javascript:alert(1)",
    "tags": [f"t{i}" for i in range(11)],
    "expires_at": "2030-01-01T09:30:00",
    "disabled": "yes",
}


@pytest.mark.requirement("R15", "R25")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field", list(INVALID_UPDATE), ids=list(INVALID_UPDATE))
def test_mixed_update_with_one_invalid_field_changes_nothing(api, http, alice, field):
    link = original_link(api, alice)
    body = {**full_update(), field: INVALID_UPDATE[field]}
    r = http.patch(f"/links/{link['id']}", json=body, headers=alice.headers)
    problem = api.validation_problem(r, [field], f"an update whose only invalid field is {field}")
    assert problem is None, problem
    api.assert_no_problems(unchanged_problems(api, alice, link, f"an update rejected for {field}"), "a rejected update wrote its valid fields")


@pytest.mark.requirement("R12", "R25")
@pytest.mark.category("authorization")
def test_mixed_update_of_another_users_or_an_unknown_link_changes_nothing(api, http, alice, bob):
    link = original_link(api, alice)
    valid = full_update()
    api.error(http.patch(f"/links/{link['id']}", json=valid, headers=bob.headers), 404, "not_found", "bob sending a valid update to alice's link")
    invalid = {**full_update(), "tags": ["BAD"]}
    api.error(http.patch(f"/links/{link['id']}", json=invalid, headers=bob.headers), 404, "not_found", "bob sending valid fields and one invalid to alice's link (404 before 422)")
    api.error(http.patch(f"/links/unknown-{uuid.uuid4().hex}", json=valid, headers=alice.headers), 404, "not_found", "a valid update to a link id that names nothing")
    api.assert_no_problems(unchanged_problems(api, alice, link, "an update answered 404"), "a refused update wrote its valid fields")
    assert api.links(bob)["total"] == 0 and api.tags(bob) == [], "bob's refused update must not give him the link or its tags"


@pytest.mark.requirement("R4", "R25")
@pytest.mark.category("authorization")
def test_mixed_update_without_a_valid_token_changes_nothing(api, http, alice):
    link = original_link(api, alice)
    revoked = api.login(alice.username, alice.password)
    api.ok(http.post("/auth/logout", headers={"Authorization": f"Bearer {revoked}"}), 204, "log a second token out")
    for headers in ({}, {"Authorization": "Bearer made-up-token"}, {"Authorization": f"Bearer {revoked}"}):
        r = http.patch(f"/links/{link['id']}", json=full_update(), headers=headers)
        api.error(r, 401, "unauthorized", f"a valid update with {headers or 'no Authorization'}")
    api.assert_no_problems(unchanged_problems(api, alice, link, "an update answered 401"), "a refused update wrote its valid fields")


# ---------------------------------------------------------------- DELETE /links/{link_id} and /links/{link_id}/visits


@pytest.mark.requirement("R12", "R22", "R23", "R25")
@pytest.mark.category("authorization")
def test_mixed_refused_deletes_keep_the_link_and_its_visits(api, http, alice, bob):
    link = original_link(api, alice)
    api.visit(link, "https://kept.example/")
    link = api.get_link(alice, link)
    for path in (f"/links/{link['id']}", f"/links/{link['id']}/visits"):
        api.error(http.delete(path, headers=bob.headers), 404, "not_found", f"bob: DELETE {path}")
        api.error(http.delete(path, headers={"Authorization": "Bearer made-up-token"}), 401, "unauthorized", f"DELETE {path} with an unknown token")
    api.assert_no_problems(unchanged_problems(api, alice, link, "a refused delete"), "a refused delete changed the link")
    visits = api.visits(alice, link)
    assert visits["total"] == 2 and [v.get("referrer") for v in visits["items"]][-1] == "kept.example", f"the visits must survive refused deletes: {visits}"
    stats = api.stats(alice, link)
    assert stats.get("total_visits") == 2, f"the stats must survive refused deletes: {stats}"
