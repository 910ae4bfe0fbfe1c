"""Security items (spec.md: Authentication, Links are private, Limits and hostile input), each tagged with its CWE."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]


@pytest.mark.requirement("R12")
@pytest.mark.cwe(639)
def test_another_users_link_id_reaches_nothing(api, http, alice, bob):
    link = api.link(alice, tags=["mine"])
    api.visit(link, "https://one.example/")
    for method, path, body in (
        ("GET", f"/links/{link['id']}", None),
        ("PATCH", f"/links/{link['id']}", {"url": "https://evil.example/", "disabled": True}),
        ("GET", f"/links/{link['id']}/visits", None),
        ("GET", f"/links/{link['id']}/stats", None),
        ("DELETE", f"/links/{link['id']}/visits", None),
        ("DELETE", f"/links/{link['id']}", None),
    ):
        api.error(http.request(method, path, json=body, headers=bob.headers), 404, "not_found", f"bob: {method} {path} of alice's link")
    got = api.get_link(alice, link)
    assert (got["url"], got["disabled"], got["visit_count"]) == (link["url"], False, 1), f"bob's requests changed alice's link: {got}"
    assert api.follow(link["slug"]).headers.get("Location") == link["url"], "alice's link must still redirect to her url"


@pytest.mark.requirement("R6", "R15")
@pytest.mark.cwe(915)
def test_owner_and_derived_fields_cannot_be_assigned(api, http, alice, bob):
    forged = {"owner_id": bob.id, "id": "forged-id", "status": "disabled", "visit_count": 999, "last_visited_at": api.in_days(-1),
              "created_at": "2001-01-01T00:00:00Z", "updated_at": "2001-01-01T00:00:00Z"}
    r = http.post("/links", json={"url": "https://example.com/mass", **forged}, headers=alice.headers)
    assert r.status_code == 201, f"fields the contract does not let a client set are ignored: {api.brief(r)}"
    link = r.json()
    wrong = {k: link.get(k) for k in ("owner_id", "id", "status", "visit_count", "last_visited_at") if link.get(k) == forged[k]}
    assert not wrong and link.get("owner_id") == alice.id, f"the client set server-owned fields: {wrong or link}"
    assert api.instant(link["created_at"]).year != 2001, f"created_at is the service's: {link['created_at']}"
    r = http.patch(f"/links/{link['id']}", json={"owner_id": bob.id, "visit_count": 5, "status": "expired"}, headers=alice.headers)
    assert r.status_code == 200, f"a PATCH of undefined fields is accepted and ignores them: {api.brief(r)}"
    got = api.get_link(alice, link)
    assert (got["owner_id"], got["visit_count"], got["status"]) == (alice.id, 0, "active"), f"PATCH assigned server-owned fields: {got}"
    assert link["id"] not in api.link_ids(bob), "the link must not move to bob"
    api.error(http.get(f"/links/{link['id']}", headers=bob.headers), 404, "not_found", "bob reading the link after a forged PATCH")


@pytest.mark.requirement("R7", "R14", "R27")
@pytest.mark.cwe(89)
def test_hostile_text_is_stored_verbatim_and_filters_never_widen(api, http, alice, bob, checks):
    mine = api.link(alice, tags=["alpha"])
    api.link(bob, tags=["alpha"])
    url = "https://example.com/search?q='OR'1'='1;--&x=%25_%25&y={\"$gt\":\"\"}"
    odd = api.link(alice, url=url)
    assert api.get_link(alice, odd)["url"] == url, "the url must be stored and answered verbatim"
    assert api.follow(odd["slug"]).headers.get("Location") == url, "the redirect goes to the url exactly as sent"
    for value in ("' OR '1'='1", "%", "%alpha%", "alph_", "*", ".*", "alpha' OR 'a'='a", '{"$ne": null}'):
        r = http.get("/links", params={"tag": value}, headers=alice.headers)
        if r.status_code == 422:
            continue
        assert r.status_code == 200, f"GET /links?tag={value!r}: {api.brief(r)}"
        ids = [x.get("id") for x in r.json().get("items", [])]
        assert ids == [], f"the tag filter {value!r} matches no tag literally, yet listed {ids}"
    assert api.link_ids(alice, tag="alpha") == [mine["id"]], "the literal tag still matches only the caller's link"


@pytest.mark.requirement("R27")
@pytest.mark.cwe(400)
def test_oversized_and_deeply_nested_bodies_are_refused(api, http, service, alice, checks):
    before = api.links(alice)["total"]
    problems = checks.hostile_body_problems(service, http.timeout_s, "POST", "/links", alice.headers, {"url": "https://example.com/big"}, "url")
    link = api.link(alice)
    # the PATCH body is oversized in a field the contract does not define: only the 1 MiB limit refuses it
    problems += checks.hostile_body_problems(service, http.timeout_s, "PATCH", f"/links/{link['id']}", alice.headers, {"disabled": True}, "padding")
    assert not problems, "limits on request bodies:\n" + "\n".join(problems)
    assert api.links(alice)["total"] == before + 1, "refused bodies must create nothing"
    assert api.get_link(alice, link)["disabled"] is False, "a refused PATCH must change nothing"


@pytest.mark.requirement("R4", "R5")
@pytest.mark.cwe(287)
def test_revoked_and_tampered_tokens_get_401(api, http, alice, checks):
    spare = api.login(alice.username, alice.password)
    problems = checks.token_problems(http, "GET", "/links", alice.token)
    api.ok(http.post("/auth/logout", headers={"Authorization": f"Bearer {spare}"}), 204, "log out the spare token")
    for method, path, body in (("GET", "/me", None), ("GET", "/links", None), ("POST", "/links", {"url": "https://example.com/revoked"})):
        r = http.request(method, path, json=body, headers={"Authorization": f"Bearer {spare}"})
        if r.status_code != 401:
            problems.append(f"{method} {path} with a revoked token: expected 401, got {api.brief(r)}")
    assert not problems, "token misuse was not refused:\n" + "\n".join(problems)
    assert api.links(alice)["total"] == 0, "no request with a bad token may create a link"


@pytest.mark.requirement("R12", "R18", "R27")
@pytest.mark.cwe(22)
def test_path_traversal_in_ids_and_slugs_gets_404(api, http, service, alice, checks):
    api.link(alice)
    problems = checks.traversal_problems(service, http.timeout_s, "/links/", alice.headers)
    problems += checks.traversal_problems(service, http.timeout_s, "/links/", alice.headers, "/visits")
    problems += checks.traversal_problems(service, http.timeout_s, "/r/", {})
    assert not problems, "ids that climb out of their path must name nothing:\n" + "\n".join(problems)
