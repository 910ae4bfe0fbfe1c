"""Share links and public downloads (spec.md: Share links, Public download)."""

from __future__ import annotations

import re
import time

import pytest

pytestmark = [pytest.mark.tier("base")]

TOKEN = re.compile(r"^[A-Za-z0-9_-]{22,128}$")


@pytest.mark.requirement("R14")
@pytest.mark.category("api_surface")
def test_a_share_answers_201_with_its_defaults(api, http, alice):
    file = api.put_file(alice)
    r = http.post(f"/files/{file['id']}/shares", json={}, headers=alice.headers)
    assert r.status_code == 201, f"POST /files/{{id}}/shares: {api.brief(r)}"
    share = r.json()
    got = (share.get("file_id"), share.get("password_protected"), share.get("expires_at"), share.get("max_downloads"), share.get("download_count"))
    assert got == (file["id"], False, None, None, 0), f"an unlimited share without password: {share}"
    assert share.get("id") and share.get("created_at") and TOKEN.match(str(share.get("token"))), f"id, created_at and a token of A-Z a-z 0-9 _ -: {share}"


@pytest.mark.requirement("R14")
@pytest.mark.category("api_surface")
def test_a_share_keeps_its_options(api, http, alice):
    file = api.put_file(alice)
    expires = api.future(7200)
    share = api.share(alice, file, password="open sesame 1", expires_at=expires, max_downloads=5)
    assert (share.get("password_protected"), share.get("max_downloads"), share.get("download_count")) == (True, 5, 0), f"the options: {share}"
    assert share.get("expires_at") and share["expires_at"][:19] == expires[:19], f"expires_at as sent: {share.get('expires_at')} vs {expires}"
    explicit = api.share(alice, file, password=None, expires_at=None, max_downloads=None)
    assert (explicit.get("password_protected"), explicit.get("expires_at"), explicit.get("max_downloads")) == (False, None, None), f"explicit nulls: {explicit}"


@pytest.mark.requirement("R16", "R12")
@pytest.mark.category("api_surface")
def test_anyone_downloads_a_share_without_an_account(api, http, alice):
    data = api.blob(700)
    file = api.put_file(alice, "holiday.jpg", data, "image/jpeg")
    share = api.share(alice, file)
    problems = api.download_problems(api.public(share["token"]), data, "image/jpeg", "GET /s/{token}")
    assert not problems, "\n".join(problems)


@pytest.mark.requirement("R16")
@pytest.mark.category("api_surface")
@pytest.mark.parametrize("header", ["Bearer forged", "Basic YWxpY2U6eA==", "other-user"])
@pytest.mark.tier("r1")
def test_an_authorization_header_is_ignored_by_public_downloads(api, http, alice, bob, header):
    file = api.put_file(alice, "pub.txt", b"public bytes", "text/plain")
    share = api.share(alice, file)
    sent = bob.headers if header == "other-user" else {"Authorization": header}
    r = api.public(share["token"], headers=sent)
    assert r.status_code == 200 and r.content == b"public bytes", f"GET /s/{{token}} with Authorization {header!r}: {api.brief(r)}"


@pytest.mark.requirement("R16")
@pytest.mark.category("api_surface")
def test_an_unknown_token_gets_404(api, http):
    for token in ("no-such-token-0000000000000", "A" * 43, "x"):
        api.error(api.public(token), 404, "not_found", f"GET /s/{token}")


@pytest.mark.requirement("R16")
@pytest.mark.category("side_effects")
def test_public_downloads_count_and_owner_downloads_do_not(api, http, alice):
    file = api.put_file(alice)
    share = api.share(alice, file)
    for _ in range(3):
        api.got(api.public(share["token"]), "a public download")
    api.got(api.content(alice, file), "the owner's own download")
    listed = api.shares(alice, file)
    assert [s.get("download_count") for s in listed] == [3], f"three public downloads counted: {listed}"


@pytest.mark.requirement("R14")
@pytest.mark.category("api_surface")
def test_shares_are_listed_in_creation_order(api, http, alice):
    file, other = api.put_file(alice), api.put_file(alice)
    made = [api.share(alice, file, max_downloads=n) for n in (3, 1, 2)]
    api.share(alice, other)
    listed = api.shares(alice, file)
    assert [s.get("id") for s in listed] == [s["id"] for s in made], f"the file's shares in creation order: {listed}"
    assert [s.get("token") for s in listed] == [s["token"] for s in made], "the owner sees the tokens"


@pytest.mark.requirement("R19")
@pytest.mark.category("state")
def test_a_revoked_token_gets_404_at_once(api, http, alice):
    file = api.put_file(alice)
    keep, revoke = api.share(alice, file), api.share(alice, file)
    api.got(api.public(revoke["token"]), "download before revoking")
    r = http.delete(f"/shares/{revoke['id']}", headers=alice.headers)
    assert r.status_code == 204 and not r.content, f"DELETE /shares/{{id}}: {api.brief(r)}"
    api.error(api.public(revoke["token"]), 404, "not_found", "the revoked token")
    api.error(http.delete(f"/shares/{revoke['id']}", headers=alice.headers), 404, "not_found", "revoking twice")
    assert [s["id"] for s in api.shares(alice, file)] == [keep["id"]], "the list no longer holds the revoked share"
    assert api.public(keep["token"]).status_code == 200, "another share of the file still works"


@pytest.mark.requirement("R17")
@pytest.mark.category("state")
@pytest.mark.parametrize("limit", [1, 2])
def test_max_downloads_then_410(api, http, alice, limit):
    file = api.put_file(alice)
    share = api.share(alice, file, max_downloads=limit)
    for n in range(limit):
        api.got(api.public(share["token"]), f"download {n + 1} of {limit}")
    api.error(api.public(share["token"]), 410, "gone", f"download {limit + 1} of {limit}")
    api.error(api.public(share["token"]), 410, "gone", "and again")
    assert api.shares(alice, file)[0].get("download_count") == limit, "only successful downloads count"
    assert api.content(alice, file).status_code == 200, "the owner still downloads the file"


@pytest.mark.requirement("R17")
@pytest.mark.category("state")
@pytest.mark.tier("r1")
def test_an_expired_share_gets_410(api, http, alice):
    file = api.put_file(alice)
    share = api.share(alice, file, expires_at=api.future(2))
    lasting = api.share(alice, file, expires_at=api.future(3600))
    time.sleep(3)
    api.error(api.public(share["token"]), 410, "gone", "a share past its expires_at")
    assert api.public(lasting["token"]).status_code == 200, "a share that has not expired"


@pytest.mark.requirement("R18")
@pytest.mark.category("state")
def test_a_password_share_needs_the_password(api, http, alice):
    data = api.blob(90)
    file = api.put_file(alice, "secret.bin", data)
    share = api.share(alice, file, password="correct horse 42")
    api.error(api.public(share["token"]), 401, "password_required", "no X-Share-Password")
    api.error(api.public(share["token"], "wrong horse 42"), 401, "password_required", "a wrong password")
    assert api.shares(alice, file)[0].get("download_count") == 0, "refused downloads do not count"
    r = api.public(share["token"], "correct horse 42")
    assert r.status_code == 200 and r.content == data, f"the right password: {api.brief(r)}"
    assert api.shares(alice, file)[0].get("download_count") == 1


@pytest.mark.requirement("R18", "R17")
@pytest.mark.category("state")
@pytest.mark.tier("r1")
def test_public_errors_follow_the_precedence(api, http, alice):
    file = api.put_file(alice)
    used_up = api.share(alice, file, password="password-123", max_downloads=1)
    api.got(api.public(used_up["token"], "password-123"), "the one download")
    api.error(api.public(used_up["token"]), 410, "gone", "used up and no password (410 before 401)")
    api.error(api.public(used_up["token"], "wrong-pass-1"), 410, "gone", "used up and a wrong password (410 before 401)")
    revoked = api.share(alice, file, password="password-123", max_downloads=1)
    api.got(api.public(revoked["token"], "password-123"), "the one download")
    api.ok(http.delete(f"/shares/{revoked['id']}", headers=alice.headers), 204, "revoke")
    api.error(api.public(revoked["token"]), 404, "not_found", "revoked and used up (404 before 410)")


@pytest.mark.requirement("R14", "R21")
@pytest.mark.category("validation")
@pytest.mark.parametrize("case", ["password-short", "password-long", "password-number", "expires-past", "expires-no-zone", "expires-garbage",
                                  "expires-number", "max-zero", "max-too-large", "max-fraction", "max-boolean", "max-string"])
def test_an_invalid_share_field_gets_422_naming_it(api, http, alice, case):
    field, value = {
        "password-short": ("password", "seven77"), "password-long": ("password", "p" * 129), "password-number": ("password", 12345678),
        "expires-past": ("expires_at", "2001-01-01T00:00:00Z"), "expires-no-zone": ("expires_at", api.future(3600)[:19]),
        "expires-garbage": ("expires_at", "tomorrow"), "expires-number": ("expires_at", 1893456000),
        "max-zero": ("max_downloads", 0), "max-too-large": ("max_downloads", 1_000_001), "max-fraction": ("max_downloads", 1.5),
        "max-boolean": ("max_downloads", True), "max-string": ("max_downloads", "3"),
    }[case]
    file = api.put_file(alice)
    problem = api.validation_problem(http.post(f"/files/{file['id']}/shares", json={field: value}, headers=alice.headers), [field], f"{field}={value!r}")
    api.assert_no_problems([problem], "an invalid share")
    assert api.shares(alice, file) == [], "a refused share is not created"


@pytest.mark.requirement("R14", "R21")
@pytest.mark.category("validation")
def test_every_invalid_share_field_is_named_and_bodies_must_be_objects(api, http, alice):
    file = api.put_file(alice)
    problems = [
        api.validation_problem(http.post(f"/files/{file['id']}/shares", json={"password": "x", "expires_at": "soon", "max_downloads": -1}, headers=alice.headers),
                               ["password", "expires_at", "max_downloads"], "three invalid fields"),
    ]
    for raw in (b"not json", b"[]", b'"text"', b"{"):
        problems.append(api.validation_problem(http.post(f"/files/{file['id']}/shares", data=raw, headers={**alice.headers, "Content-Type": "application/json"}), None, f"body {raw!r}"))
    api.assert_no_problems(problems, "invalid share bodies")
    assert api.shares(alice, file) == [], "nothing created"


@pytest.mark.requirement("R14", "R21")
@pytest.mark.category("validation")
@pytest.mark.tier("r1")
def test_boundary_share_values_are_accepted(api, http, alice):
    file = api.put_file(alice)
    low = api.share(alice, file, password="8chars!!", max_downloads=1)
    high = api.share(alice, file, password="p" * 128, max_downloads=1_000_000, expires_at=api.future(4 * 3600).replace("Z", "+02:00"))
    assert (low["max_downloads"], high["max_downloads"], low["password_protected"], high["password_protected"]) == (1, 1_000_000, True, True)
    assert api.public(high["token"], "p" * 128).status_code == 200, "the 128-character password opens the share"
