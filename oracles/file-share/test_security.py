"""Security items (spec.md: Share links, Downloads, Secrets, Limits and hostile input), each tagged with its CWE."""

from __future__ import annotations

import os

import pytest

from pytest_backendbench.http.secrets import PASSWORD_EDGES, account_findings, long_password, response_secret_findings

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]


@pytest.mark.requirement("R15")
@pytest.mark.cwe(330)
def test_share_tokens_are_long_random_and_unique(api, http, alice):
    file = api.put_file(alice, "tokens.txt", b"t")
    other = api.put_file(alice, "tokens2.txt", b"t")
    shares = [api.share(alice, file if i % 2 else other) for i in range(20)]
    tokens = [s["token"] for s in shares]
    problems = [f"{t!r}: not 22-128 characters of A-Z a-z 0-9 _ -" for t in tokens if not (22 <= len(t) <= 128 and all(c.isascii() and (c.isalnum() or c in "_-") for c in t))]
    if len(set(tokens)) != len(tokens):
        problems.append("two shares got the same token")
    for i, a in enumerate(tokens):
        for b in tokens[i + 1:]:
            if a[:8] == b[:8] or a[-8:] == b[-8:]:
                problems.append(f"{a!r} and {b!r} share 8 leading or trailing characters: a counter, timestamp or id is part of the token")
    for share in shares:
        for part in (share["id"], share["file_id"], "tokens"):
            if len(part) >= 4 and part in share["token"]:
                problems.append(f"the token {share['token']!r} contains {part!r}")
    assert not problems, "share tokens:\n" + "\n".join(problems[:10])


@pytest.mark.requirement("R15", "R16")
@pytest.mark.cwe(330)
@pytest.mark.tier("r1")
def test_guessed_tokens_get_404(api, http, alice):
    file = api.put_file(alice, "guess.txt", b"guess me")
    share = api.share(alice, file)
    token = share["token"]
    neighbours = {token[:-1] + ("A" if token[-1] != "A" else "B"), token[:-1], token + "A", token.upper() if token.upper() != token else token.lower(),
                  file["id"], share["id"], "guess.txt", "1", "0" * 22}
    for guess in sorted(neighbours - {token}):
        api.error(api.public(guess), 404, "not_found", f"GET /s/{guess} (a guess near a real token)")
    assert api.public(token).content == b"guess me", "the real token works"


@pytest.mark.requirement("R12", "R16")
@pytest.mark.cwe(79)
@pytest.mark.parametrize("content_type", ["text/html", "text/html; charset=utf-8", "image/svg+xml", "application/xhtml+xml"])
def test_stored_markup_is_served_as_an_attachment(api, http, alice, content_type):
    data = b"<html><body><script>document.title = 'pwned'</script><svg onload=alert(1)></svg></body></html>"
    file = api.put_file(alice, "page.html", data, content_type)
    share = api.share(alice, file)
    problems = api.download_problems(api.public(share["token"]), data, content_type, "the public download")
    problems += api.download_problems(api.content(alice, file), data, content_type, "the owner's download")
    assert not problems, "a stored page must never render inline:\n" + "\n".join(problems)


@pytest.mark.requirement("R18")
@pytest.mark.cwe(287)
@pytest.mark.parametrize("edge", sorted(set(PASSWORD_EDGES) - {"leading-space", "trailing-space"}))  # HTTP trims header values
def test_a_share_password_wrong_only_at_its_edge_gets_401(api, http, alice, edge):
    password = long_password()
    file = api.put_file(alice, "edge.bin", b"edge")
    share = api.share(alice, file, password=password)
    wrong = PASSWORD_EDGES[edge](password)
    api.error(api.public(share["token"], wrong), 401, "password_required", f"the share password {edge}")
    assert api.shares(alice, file)[0]["download_count"] == 0, "a refused download does not count"
    assert api.public(share["token"], password).content == b"edge", "the exact password opens the share"


@pytest.mark.requirement("R2", "R20")
@pytest.mark.cwe(287)
@pytest.mark.parametrize("edge", ["differs-after-72-bytes", "first-72-bytes-only", "upper-cased", "trailing-space"])
def test_a_user_password_wrong_only_at_its_edge_gets_401(api, http, admin, edge):
    credentials = {"username": api.unique("edge"), "password": long_password()}
    api.ok(http.post("/users", json=credentials, headers=admin.headers), 201, "create the user")
    wrong = {**credentials, "password": PASSWORD_EDGES[edge](credentials["password"])}
    api.error(http.post("/auth/token", json=wrong), 401, "unauthorized", f"login with the password {edge}")
    api.ok(http.post("/auth/token", json=credentials), 200, "login with the exact password")


@pytest.mark.requirement("R20", "R3")
@pytest.mark.cwe(200)
def test_no_user_answer_carries_the_password_or_its_hash(api, http, admin):
    credentials = {"username": api.unique("leak"), "password": long_password()}
    found = account_findings(http, credentials, credentials, register_headers=admin.headers)
    users = http.get("/users", headers=admin.headers)
    found += response_secret_findings(users, [credentials["password"]], user_object=True)
    assert not found, "create, log in, GET /me, 409, 401 and GET /users answers:\n" + "\n".join(found)


@pytest.mark.requirement("R20", "R14")
@pytest.mark.cwe(256)
def test_no_share_answer_carries_its_password_or_a_hash(api, http, alice, checks):
    password = long_password()
    file = api.put_file(alice, "guarded.txt", b"guarded")
    created = http.post(f"/files/{file['id']}/shares", json={"password": password}, headers=alice.headers)
    assert created.status_code == 201, f"create a password share: {api.brief(created)}"
    listed = http.get(f"/files/{file['id']}/shares", headers=alice.headers)
    refused = api.public(created.json()["token"], "not-the-password")
    found = []
    for what, r in (("the created share", created), ("the share list", listed), ("a refused download", refused)):
        found += [f"{what}: {leak}" for leak in checks.password_leaks(r.text, password)]
        found += response_secret_findings(r, [password], user_object=True)
    assert not found, "share answers:\n" + "\n".join(found)


@pytest.mark.requirement("R17")
@pytest.mark.cwe(362)
@pytest.mark.tier("r2")
def test_concurrent_downloads_never_exceed_max_downloads(api, http, alice, checks):
    file = api.put_file(alice, "limited.bin", os.urandom(2000))
    share = api.share(alice, file, max_downloads=3)
    answers = checks.concurrently(lambda _: api.public(share["token"]), list(range(10)))
    statuses = sorted(r.status_code for r in answers)
    assert statuses == [200] * 3 + [410] * 7, f"exactly 3 of 10 concurrent downloads succeed, the rest 410: {statuses}"
    assert api.shares(alice, file)[0]["download_count"] == 3, "download_count is 3"


@pytest.mark.requirement("R2")
@pytest.mark.cwe(287)
def test_malformed_or_tampered_tokens_get_401(api, http, alice, checks):
    api.put_file(alice, "mine.txt", b"mine")
    problems = checks.token_problems(http, "GET", "/files", alice.token)
    problems += checks.token_problems(http, "GET", "/me", alice.token)
    assert not problems, "tokens:\n" + "\n".join(problems)


@pytest.mark.requirement("R5", "R14", "R21")
@pytest.mark.cwe(915)
def test_server_owned_fields_cannot_be_assigned(api, http, admin, alice):
    r = http.post("/users", json={"username": api.unique("mass"), "password": "password123", "used_bytes": -999999, "id": "chosen"}, headers=admin.headers)
    assert r.status_code == 201 and r.json().get("used_bytes") == 0 and r.json().get("id") != "chosen", f"used_bytes and id are the server's: {api.brief(r)}"
    file = api.put_file(alice, "owned.bin", b"owned")
    body = {"download_count": -100, "token": "chosen-token-aaaaaaaaaaaaaaaa", "file_id": "other", "password_protected": True, "max_downloads": 1}
    share = api.share(alice, file, **body)
    got = (share.get("download_count"), share.get("file_id"), share.get("password_protected"))
    assert got == (0, file["id"], False) and share.get("token") != body["token"], f"server-owned share fields: {share}"
    api.error(api.public(body["token"]), 404, "not_found", "the token the client chose")
    api.got(api.public(share["token"]), "the one download")
    api.error(api.public(share["token"]), 410, "gone", "max_downloads 1 still applies")
