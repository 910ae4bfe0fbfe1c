"""Creating and listing links: URLs, slugs, tags, expiry (spec.md: Links)."""

from __future__ import annotations

import re
import uuid

import pytest

pytestmark = [pytest.mark.tier("base")]

GENERATED = re.compile(r"^[A-Za-z0-9]{7}$")


@pytest.mark.requirement("R6")
@pytest.mark.category("api_surface")
def test_create_link_with_defaults(api, http, alice):
    r = http.post("/links", json={"url": "https://example.org/docs/start"}, headers=alice.headers)
    assert r.status_code == 201, f"shortening a URL: {api.brief(r)}"
    link = r.json()
    expected = {
        "url": "https://example.org/docs/start", "tags": [], "owner_id": alice.id, "disabled": False,
        "expires_at": None, "status": "active", "visit_count": 0, "last_visited_at": None,
    }
    got = {k: link.get(k, "<missing>") for k in expected}
    assert got == expected, f"a new link: expected {expected}, got {got}"
    assert isinstance(link.get("slug"), str) and GENERATED.match(link["slug"]), f"a generated slug has exactly 7 characters of [A-Za-z0-9]: {link.get('slug')!r}"
    fetched = api.get_link(alice, link)
    assert (fetched.get("slug"), fetched.get("url")) == (link["slug"], link["url"]), f"GET /links/{{id}} answers the same link: {fetched}"


@pytest.mark.requirement("R6", "R9")
@pytest.mark.category("api_surface")
def test_generated_slugs_are_distinct(api, http, alice):
    slugs = [api.link(alice)["slug"] for _ in range(8)]
    bad = [s for s in slugs if not GENERATED.match(str(s))]
    assert not bad, f"generated slugs must have exactly 7 characters of [A-Za-z0-9]: {bad}"
    assert len(set(slugs)) == len(slugs), f"generated slugs must not collide: {slugs}"


@pytest.mark.requirement("R8")
@pytest.mark.category("api_surface")
def test_custom_slug(api, http, alice):
    for slug in (f"Spring-Sale_{uuid.uuid4().hex[:8]}", f"a{uuid.uuid4().hex[:2]}", "z" * 24 + uuid.uuid4().hex[:8]):
        r = http.post("/links", json={"url": "https://example.com/sale", "slug": slug}, headers=alice.headers)
        assert r.status_code == 201, f"custom slug {slug!r} ({len(slug)} characters) is valid: {api.brief(r)}"
        assert r.json().get("slug") == slug, f"the link should keep the custom slug {slug!r}: {r.text[:200]}"


@pytest.mark.requirement("R8")
@pytest.mark.category("validation")
@pytest.mark.parametrize("slug", ["ab", "x" * 33, "has space", "dots.are.bad", "slash/slug", "ümlaut", "", None, 1234], ids=lambda s: repr(s)[:12])
def test_invalid_custom_slug_gets_422(api, http, alice, slug):
    r = http.post("/links", json={"url": "https://example.com", "slug": slug}, headers=alice.headers)
    problem = api.validation_problem(r, ["slug"], f"custom slug {slug!r}")
    assert problem is None, problem


@pytest.mark.requirement("R7", "R26")
@pytest.mark.category("validation")
def test_invalid_urls_get_422(api, http, alice):
    cases = [
        "example.com", "ftp://example.com/file", "http://", "https:///path", "javascript:alert(1)",
        "http://exa mple.com/", "mailto:someone@example.com", "", "https://example.com/" + "a" * 2030, None, 42,
    ]
    problems = [
        api.validation_problem(http.post("/links", json={"url": url}, headers=alice.headers), ["url"], f"url {str(url)[:40]!r}")
        for url in cases
    ]
    problems.append(api.validation_problem(http.post("/links", json={"slug": unique_slug()}, headers=alice.headers), ["url"], "a link without url"))
    api.assert_no_problems(problems, "invalid URLs were not rejected as the spec says")
    assert api.links(alice)["total"] == 0, "a rejected URL created a link"


@pytest.mark.requirement("R7")
@pytest.mark.category("api_surface")
@pytest.mark.parametrize(
    "url",
    ["HTTPS://Example.COM/Path?q=1&x=y#frag", "http://localhost:8080/a/b", "https://example.com/" + "p" * 2028],
    ids=["mixed-case-with-query", "host-with-port", "2048-characters"],
)
def test_valid_urls_are_stored_exactly(api, http, alice, url):
    r = http.post("/links", json={"url": url}, headers=alice.headers)
    assert r.status_code == 201, f"url {url[:60]!r} is valid: {api.brief(r)}"
    assert r.json().get("url") == url, f"the URL must be stored exactly as sent: {r.json().get('url')!r}"


@pytest.mark.requirement("R9")
@pytest.mark.category("state")
@pytest.mark.parametrize("holder", ["same-user", "other-user"])
def test_taken_slug_gets_409(api, http, alice, bob, holder):
    slug = unique_slug()
    api.link(alice if holder == "same-user" else bob, slug=slug, url="https://example.com/first")
    r = http.post("/links", json={"url": "https://example.com/second", "slug": slug}, headers=alice.headers)
    api.error(r, 409, "conflict", f"reusing a slug held by the {holder.replace('-', ' ')}")
    follow = api.follow(slug)
    assert follow.status_code == 302 and follow.headers.get("Location") == "https://example.com/first", (
        f"the slug must still redirect to the first link: {api.brief(follow)}"
    )


@pytest.mark.requirement("R9")
@pytest.mark.category("state")
def test_slugs_are_case_sensitive(api, http, alice, bob):
    base = f"promo{uuid.uuid4().hex[:8]}"
    lower = api.link(alice, slug=base, url="https://example.com/lower")
    upper = api.link(bob, slug=base.upper(), url="https://example.com/upper")
    assert upper.get("slug") == base.upper(), f"a slug differing only in case is a different slug: {upper}"
    assert api.follow(base).headers.get("Location") == lower["url"], "the lower-case slug redirects to its own URL"
    assert api.follow(base.upper()).headers.get("Location") == upper["url"], "the upper-case slug redirects to its own URL"


@pytest.mark.requirement("R10")
@pytest.mark.category("api_surface")
def test_tags_are_deduplicated_and_sorted(api, http, alice):
    link = api.link(alice, tags=["spring", "email", "spring", "2025", "a-b"])
    assert link.get("tags") == ["2025", "a-b", "email", "spring"], f"tags are stored without duplicates, ascending: {link.get('tags')}"
    assert api.get_link(alice, link).get("tags") == ["2025", "a-b", "email", "spring"], "the stored tags read back the same"
    ten = api.link(alice, tags=[f"t{i}" for i in range(10)])
    assert len(ten.get("tags", [])) == 10, f"ten tags are allowed: {ten.get('tags')}"


@pytest.mark.requirement("R10", "R26")
@pytest.mark.category("validation")
def test_invalid_tags_get_422(api, http, alice):
    cases = [["Upper"], ["has space"], [""], ["t" * 25], [f"t{i}" for i in range(11)], ["ok", 5], "spring", {"tag": "x"}, None]
    problems = [
        api.validation_problem(http.post("/links", json={"url": "https://example.com", "tags": tags}, headers=alice.headers), ["tags"], f"tags {str(tags)[:50]}")
        for tags in cases
    ]
    api.assert_no_problems(problems, "invalid tags were not rejected as the spec says")


@pytest.mark.requirement("R11")
@pytest.mark.category("api_surface")
def test_expiry_in_the_future(api, http, alice):
    link = api.link(alice, expires_at="2031-01-01T09:30:00+02:00")
    got = link.get("expires_at")
    assert isinstance(got, str) and got.endswith("Z"), f"timestamps in responses are UTC with a Z suffix: {got!r}"
    assert api.instant(got) == api.instant("2031-01-01T07:30:00Z"), f"expires_at must denote the instant sent (07:30 UTC): {got}"
    assert link.get("status") == "active", f"a link expiring in the future is active: {link}"
    none = api.link(alice, expires_at=None)
    assert none.get("expires_at") is None and none.get("status") == "active", f"expires_at null never expires: {none}"


@pytest.mark.requirement("R11", "R26")
@pytest.mark.category("validation")
@pytest.mark.parametrize(
    "value",
    ["2001-01-01T00:00:00Z", "2031-01-01", "2031-01-01T00:00:00", "next week", "2031-13-01T00:00:00Z", "2031-01-01 00:00:00Z", 1924992000, True],
    ids=["past", "date-only", "no-zone", "words", "bad-month", "space-separator", "number", "boolean"],
)
def test_invalid_expiry_at_creation_gets_422(api, http, alice, value):
    r = http.post("/links", json={"url": "https://example.com", "expires_at": value}, headers=alice.headers)
    problem = api.validation_problem(r, ["expires_at"], f"creating a link with expires_at={value!r}")
    assert problem is None, problem


@pytest.mark.requirement("R13")
@pytest.mark.category("api_surface")
def test_links_are_listed_newest_first(api, http, alice):
    ids = [api.link(alice)["id"] for _ in range(3)]
    page = api.links(alice)
    problem = api.newest_first_problem(page["items"], list(reversed(ids)), "id", "created_at", "links are listed newest first")
    assert problem is None, problem
    assert (page.get("total"), page.get("limit"), page.get("offset")) == (3, 20, 0), f"default page envelope: {page}"


@pytest.mark.requirement("R13")
@pytest.mark.category("api_surface")
def test_link_pagination(api, http, alice):
    ids = list(reversed([api.link(alice)["id"] for _ in range(5)]))
    first = api.links(alice, limit=2)
    assert [x["id"] for x in first["items"]] == ids[:2] and (first["total"], first["limit"], first["offset"]) == (5, 2, 0), f"limit=2: {first}"
    last = api.links(alice, limit=2, offset=4)
    assert [x["id"] for x in last["items"]] == ids[4:], f"offset=4 gives the oldest link: {last}"
    beyond = api.links(alice, offset=7)
    assert beyond["items"] == [] and beyond["total"] == 5, f"an offset past the end: {beyond}"


@pytest.mark.requirement("R13")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field, values", [("limit", [0, 101, "many"]), ("offset", [-2, "1e3"])], ids=["limit", "offset"])
def test_invalid_paging_gets_422(api, http, alice, field, values):
    problems = [api.validation_problem(http.get("/links", params={field: v}, headers=alice.headers), [field], f"{field}={v!r}") for v in values]
    api.assert_no_problems(problems, f"invalid {field} values were not rejected")


@pytest.mark.requirement("R14")
@pytest.mark.category("api_surface")
def test_filter_by_tag(api, http, alice):
    a = api.link(alice, tags=["news", "q1"])
    api.link(alice, tags=["q1"])
    c = api.link(alice, tags=["news"])
    page = api.links(alice, tag="news")
    assert [x["id"] for x in page["items"]] == [c["id"], a["id"]] and page["total"] == 2, f"tag=news: {page}"
    assert api.links(alice, tag="nothing-here")["total"] == 0, "a tag no link carries matches nothing"


@pytest.mark.requirement("R14", "R16")
@pytest.mark.category("api_surface")
def test_filter_by_status(api, http, alice):
    active = api.link(alice, tags=["mix"])
    disabled = api.link(alice, tags=["mix"])
    expired = api.link(alice, tags=["mix"])
    api.patch(alice, disabled, disabled=True)
    api.patch(alice, expired, expires_at=api.in_days(-1))
    for status, link in (("active", active), ("disabled", disabled), ("expired", expired)):
        page = api.links(alice, status=status, tag="mix")
        assert [x["id"] for x in page["items"]] == [link["id"]], f"status={status}: {[(x['id'], x.get('status')) for x in page['items']]}"


@pytest.mark.requirement("R14")
@pytest.mark.category("validation")
def test_invalid_status_filter_gets_422(api, http, alice):
    problems = [api.validation_problem(http.get("/links", params={"status": s}, headers=alice.headers), ["status"], f"status={s!r}") for s in ("live", "ACTIVE", "")]
    api.assert_no_problems(problems, "invalid status filters were not rejected")


def unique_slug() -> str:
    """A fresh custom slug."""
    return f"s-{uuid.uuid4().hex[:12]}"
