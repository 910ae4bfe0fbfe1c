"""Security items derived rule by rule from spec.md (issue 24; REVIEW.md "Security rules").

Each item exercises one rule, one condition or one hostile value path at a time. Every answer
any item of this module receives is also checked for the password or a hash of it
("No response ever contains a password.").
"""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http.account_items import password_edge_item, password_leak_item
from pytest_backendbench.http.hostile import HOSTILE_VALUES, hostile_findings

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]


def _register(api, http, username: str, password: str) -> dict:
    return api.ok(http.post("/users", json={"username": username, "password": password}), 201, f"register {username}")


test_no_user_answer_carries_the_password_or_its_hash = password_leak_item("R2", "R3")


test_a_password_wrong_only_at_its_edge_gets_401 = password_edge_item("R3")


@pytest.mark.requirement("R3", "R27")
@pytest.mark.cwe(943)
def test_login_matches_the_username_literally_not_as_a_pattern(api, http, alice):
    name = alice.username  # alice_<12 hex>
    patterns = [name[:-3] + "%", "%" + name[3:], name[:-1] + "_", "_" + name[1:], name.replace("_", "%"), "%", ".*", name[:-2] + ".*", "*"]
    problems = []
    for pattern in patterns:
        r = http.post("/auth/token", json={"username": pattern, "password": alice.password})
        if r.status_code != 401:
            problems.append(f"username {pattern!r} with alice's password: expected 401, got {api.brief(r)}")
    assert not problems, "a login username must match only as the literal text it is:\n" + "\n".join(problems)


@pytest.mark.requirement("R3", "R27")
@pytest.mark.cwe(89)
def test_login_with_sql_in_the_username_or_password_gets_401(api, http, alice):
    problems = []
    for username, password in (
        (alice.username + "'--", "anything-at-all"),
        (alice.username + "' OR '1'='1", "anything-at-all"),
        ("' OR '1'='1' --", "anything-at-all"),
        (alice.username, "' OR '1'='1"),
        (alice.username, "x' OR 'x'='x"),
        (alice.username, '" OR ""="'),
        (alice.username, alice.password + "' OR '1'='1"),
    ):
        r = http.post("/auth/token", json={"username": username, "password": password})
        if r.status_code != 401:
            problems.append(f"login {username!r} / {password!r}: expected 401, got {api.brief(r)}")
    assert not problems, "SQL in login credentials must only ever be wrong credentials:\n" + "\n".join(problems)


@pytest.mark.requirement("R2", "R27")
@pytest.mark.cwe(89)
def test_hostile_passwords_are_stored_and_compared_as_sent(api, http):
    problems = []
    for index, value in enumerate(HOSTILE_VALUES):
        password = f"pw-{value}-{index:03d}"  # 8-128 characters of any kind
        username = api.unique("hp")
        r = http.post("/users", json={"username": username, "password": password})
        if r.status_code != 201:
            problems.append(f"register with the password {password!r}: expected 201, got {api.brief(r)}")
            continue
        if (r := http.post("/auth/token", json={"username": username, "password": password})).status_code != 200:
            problems.append(f"login with the password {password!r} just registered: expected 200, got {api.brief(r)}")
        other = password.replace(value, "y" * len(value))
        if (r := http.post("/auth/token", json={"username": username, "password": other})).status_code != 401:
            problems.append(f"login with {other!r} instead of {password!r}: expected 401, got {api.brief(r)}")
    assert not problems, "\n".join(problems)


@pytest.mark.requirement("R2", "R9", "R27")
@pytest.mark.cwe(943)
def test_uniqueness_of_usernames_and_slugs_compares_literally(api, http, alice):
    stem = uuid.uuid4().hex[:10]
    _register(api, http, f"q{stem}az", "pw-" + uuid.uuid4().hex)
    r = http.post("/users", json={"username": f"q{stem}_z", "password": "pw-" + uuid.uuid4().hex})
    assert r.status_code == 201, f"username q{stem}_z is free ('_' is a character, not a wildcard): {api.brief(r)}"
    first = api.link(alice, slug=f"s{stem}a9")
    second = http.post("/links", json={"url": "https://example.com/second", "slug": f"s{stem}_9"}, headers=alice.headers)
    assert second.status_code == 201, f"slug s{stem}_9 is free while s{stem}a9 exists: {api.brief(second)}"
    dashed = http.post("/links", json={"url": "https://example.com/third", "slug": f"s{stem}%9"}, headers=alice.headers)
    api.error(dashed, 422, "validation_error", "a slug with % breaks the slug pattern")
    assert api.follow(first["slug"]).headers.get("Location") == first["url"], "the first slug still redirects to its own url"
    assert api.follow(f"s{stem}_9").headers.get("Location") == "https://example.com/second"


@pytest.mark.requirement("R14", "R27")
@pytest.mark.cwe(943)
def test_the_tag_filter_matches_whole_tags_only(api, http, alice):
    mine = api.link(alice, tags=["alpha-beta"])
    problems = []
    for value in ("alpha", "beta", "lpha-bet", "alpha-", "ALPHA-BETA", "alpha-beta ", " alpha-beta", "alpha-beta,x", "alpha-b%", "alpha-bet_"):
        r = http.get("/links", params={"tag": value}, headers=alice.headers)
        if r.status_code != 200 or r.json().get("items") != [] or r.json().get("total") != 0:
            problems.append(f"GET /links?tag={value!r}: expected 200 with no items, got {api.brief(r)}")
    assert not problems, "the tag filter matches only a whole tag, literally:\n" + "\n".join(problems)
    assert api.link_ids(alice, tag="alpha-beta") == [mine["id"]]


@pytest.mark.requirement("R14", "R27")
@pytest.mark.cwe(89)
def test_a_status_filter_that_is_not_a_status_gets_422(api, http, alice):
    api.link(alice)
    problems = []
    for value in ("active' OR '1'='1", "active'--", "active%", "%", "ACTIVE", "active ", "*", "active|disabled"):
        r = http.get("/links", params={"status": value}, headers=alice.headers)
        if why := api.validation_problem(r, ["status"], f"GET /links?status={value!r}"):
            problems.append(why)
    assert not problems, "status is one of active, disabled, expired; anything else gets 422 naming status:\n" + "\n".join(problems)


@pytest.mark.requirement("R12", "R24")
@pytest.mark.cwe(639)
@pytest.mark.parametrize("param", ["owner_id", "user_id", "owner", "user", "all"])
def test_the_caller_lists_never_widen_to_other_users(api, http, alice, bob, param):
    mine = api.link(alice, tags=["shared"])
    theirs = api.link(bob, tags=["shared", "bobs-only"])
    value = "true" if param == "all" else bob.id
    for path in ("/links", "/tags"):
        r = http.get(path, params={param: value}, headers=alice.headers)
        if r.status_code in (400, 422):
            continue  # a query parameter the contract does not define may be refused
        assert r.status_code == 200, f"GET {path}?{param}=...: {api.brief(r)}"
        assert theirs["id"] not in r.text and "bobs-only" not in r.text, f"GET {path}?{param}={value} showed bob's link: {api.brief(r)}"
        if path == "/links":
            assert [x.get("id") for x in r.json().get("items", [])] == [mine["id"]], f"GET /links?{param}=... lists the caller's links: {api.brief(r)}"
        else:
            assert [(i.get("tag"), i.get("links")) for i in r.json().get("items", [])] == [("shared", 1)], f"GET /tags?{param}=...: {api.brief(r)}"


@pytest.mark.requirement("R7")
@pytest.mark.cwe(79)
def test_script_urls_are_never_stored_or_redirected_to(api, http, alice):
    link = api.link(alice)
    problems = []
    for url in ("javascript:alert(1)", "JavaScript:alert(document.cookie)", "javascript://example.com/%0aalert(1)", "data:text/html,<script>alert(1)</script>",
                "vbscript:msgbox(1)", "//evil.example/", "https:/\\evil.example", " https://example.com/", "https://exa mple.com/"):
        for method, path in (("POST", "/links"), ("PATCH", f"/links/{link['id']}")):
            r = http.request(method, path, json={"url": url}, headers=alice.headers)
            if why := api.validation_problem(r, ["url"], f"{method} {path} with url {url!r}"):
                problems.append(why)
    assert not problems, "only absolute http(s) URLs with a host and no whitespace are links:\n" + "\n".join(problems)
    assert api.get_link(alice, link)["url"] == link["url"] and api.links(alice)["total"] == 1


@pytest.mark.requirement("R7", "R17")
@pytest.mark.cwe(113)
def test_line_breaks_in_a_url_never_reach_the_location_header(api, http, alice):
    link = api.link(alice)
    problems = []
    for url in ("https://example.com/a\r\nSet-Cookie: sid=evil", "https://example.com/a\nX-Injected: 1", "https://example.com/\ra", "https://example.com/\ta"):
        for method, path in (("POST", "/links"), ("PATCH", f"/links/{link['id']}")):
            r = http.request(method, path, json={"url": url}, headers=alice.headers)
            if why := api.validation_problem(r, ["url"], f"{method} {path} with url {url!r}"):
                problems.append(why)
    assert not problems, "a url contains no whitespace (CR, LF and tab included):\n" + "\n".join(problems)
    r = api.follow(link["slug"])
    assert r.headers.get("Location") == link["url"] and "X-Injected" not in r.headers and "evil" not in r.headers.get("Set-Cookie", "")


@pytest.mark.requirement("R7", "R27")
@pytest.mark.cwe(116)
def test_hostile_text_in_a_url_is_stored_and_redirected_verbatim(api, http, alice):
    values = [value.replace(" ", "+") for value in HOSTILE_VALUES]  # a url holds no whitespace
    found = hostile_findings(lambda body: http.post("/links", json=body, headers=alice.headers), {"url": "https://example.com/q"},
                             values=[f"https://example.com/q?v={v}" for v in values], verbatim=["url"], accepted=[201])
    assert not found, "a url is stored exactly as sent:\n" + "\n".join(found)
    for item in api.links(alice, limit=100)["items"]:
        r = api.follow(item["slug"])
        assert r.headers.get("Location") == item["url"] and r.json().get("url") == item["url"], f"redirect of {item['url']!r}: {api.brief(r)}"


@pytest.mark.requirement("R4", "R12", "R25")
@pytest.mark.cwe(203)
def test_without_a_token_an_existing_link_is_indistinguishable_from_none(api, http, alice):
    link = api.link(alice)
    for method, suffix in (("GET", ""), ("PATCH", ""), ("DELETE", ""), ("GET", "/visits"), ("GET", "/stats"), ("DELETE", "/visits")):
        for link_id in (link["id"], "no-such-link-" + uuid.uuid4().hex[:6]):
            body = {"url": "not a url"} if method == "PATCH" else None
            api.error(http.request(method, f"/links/{link_id}{suffix}", json=body), 401, "unauthorized",
                      f"{method} /links/<{'existing' if link_id == link['id'] else 'unknown'}>{suffix} without a token (401 before 404 and 422)")
    assert api.get_link(alice, link)["url"] == link["url"]
