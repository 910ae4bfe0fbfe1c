"""Only the owner sees a file (spec.md: Files; Limits and hostile input; Precedence)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]

STRANGER_ACTIONS = {
    "read": ("GET", "/files/{id}", None),
    "download": ("GET", "/files/{id}/content", None),
    "delete": ("DELETE", "/files/{id}", None),
    "list-shares": ("GET", "/files/{id}/shares", None),
    "create-share": ("POST", "/files/{id}/shares", {}),
}


@pytest.mark.requirement("R11")
@pytest.mark.category("security")
@pytest.mark.cwe(639)
@pytest.mark.parametrize("action", sorted(STRANGER_ACTIONS))
def test_another_user_gets_404_for_a_file(api, http, alice, bob, action):
    data = api.blob(50)
    file = api.put_file(alice, "private.txt", data, "text/plain")
    share = api.share(alice, file)
    method, path, body = STRANGER_ACTIONS[action]
    api.error(http.request(method, path.format(id=file["id"]), json=body, headers=bob.headers), 404, "not_found", f"another user: {method} {path}")
    problems = api.download_problems(api.content(alice, file), data, "text/plain", "the owner's download afterwards")
    assert not problems, "\n".join(problems)
    assert [s["id"] for s in api.shares(alice, file)] == [share["id"]], "the file's shares are unchanged"


@pytest.mark.requirement("R11")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("action", sorted(STRANGER_ACTIONS))
def test_an_administrator_gets_404_for_a_users_file(api, http, admin, alice, action):
    file = api.put_file(alice, "mine.bin", api.blob(20))
    method, path, body = STRANGER_ACTIONS[action]
    api.error(http.request(method, path.format(id=file["id"]), json=body, headers=admin.headers), 404, "not_found", f"the administrator: {method} {path}")
    assert api.names(alice) == ["mine.bin"] and api.shares(alice, file) == [], "nothing changed"


@pytest.mark.requirement("R10", "R11")
@pytest.mark.category("security")
@pytest.mark.cwe(639)
def test_the_list_shows_only_the_callers_files(api, http, admin, alice, bob):
    api.put_file(alice, "alice-1", b"a1")
    api.put_file(alice, "alice-2", b"a2")
    api.put_file(bob, "bob-1", b"b1")
    assert api.names(alice) == ["alice-1", "alice-2"], f"alice's list: {api.names(alice)}"
    assert api.names(bob) == ["bob-1"], f"bob's list: {api.names(bob)}"
    assert all(not name.startswith(("alice-", "bob-")) for name in api.names(admin)), "the administrator's own list holds none of them"
    assert (api.used(alice), api.used(bob)) == (4, 2), "usage is per user"


@pytest.mark.requirement("R6", "R11")
@pytest.mark.category("security")
@pytest.mark.cwe(22)
def test_the_same_name_for_two_users_is_two_files(api, http, alice, bob):
    mine, theirs = api.blob(100), api.blob(70)
    a = api.put_file(alice, "report.pdf", mine, "application/pdf")
    b = api.put_file(bob, "report.pdf", theirs, "application/pdf", status=201)
    assert a["id"] != b["id"], "each user has their own namespace"
    problems = api.download_problems(api.content(alice, a), mine, "application/pdf", "alice's report")
    problems += api.download_problems(api.content(bob, b), theirs, "application/pdf", "bob's report")
    assert not problems, "\n".join(problems)
    api.ok(http.delete(f"/files/{b['id']}", headers=bob.headers), 204, "bob deletes his report")
    assert api.content(alice, a).content == mine, "deleting bob's file leaves alice's"


@pytest.mark.requirement("R19", "R11")
@pytest.mark.category("authorization")
def test_another_user_cannot_revoke_a_share(api, http, admin, alice, bob):
    file = api.put_file(alice, "shared.txt", b"shared")
    share = api.share(alice, file)
    for who in (bob, admin):
        api.error(http.delete(f"/shares/{share['id']}", headers=who.headers), 404, "not_found", f"{who.role} {who.username} revoking alice's share")
    assert api.public(share["token"]).content == b"shared", "the share still works"


@pytest.mark.requirement("R22")
@pytest.mark.category("security")
@pytest.mark.cwe(22)
def test_hostile_ids_and_tokens_in_paths_get_404(api, http, alice, service, checks):
    file = api.put_file(alice, "target", b"target")
    api.share(alice, file)
    timeout = http.timeout_s
    problems = checks.traversal_problems(service, timeout, "/files/", alice.headers)
    problems += checks.traversal_problems(service, timeout, "/files/", alice.headers, "/content")
    problems += checks.traversal_problems(service, timeout, "/files/", alice.headers, "/shares")
    problems += checks.traversal_problems(service, timeout, "/shares/", alice.headers, method="DELETE")
    problems += checks.traversal_problems(service, timeout, "/s/", {}, extra_ids=("..%2f..%2fetc%2fpasswd", "%2e%2e%2f%2e%2e%2ffiles", "..", "."))
    assert not problems, "hostile ids:\n" + "\n".join(problems)
    assert api.names(alice) == ["target"] and api.content(alice, file).content == b"target", "nothing changed"


@pytest.mark.requirement("R11", "R21", "R14")
@pytest.mark.category("authorization")
@pytest.mark.tier("r1")
def test_another_users_file_is_404_before_the_body_is_validated(api, http, alice, bob):
    file = api.put_file(alice)
    api.error(http.post(f"/files/{file['id']}/shares", json={"max_downloads": 0, "password": "x"}, headers=bob.headers), 404, "not_found",
              "sharing another user's file with an invalid body (404 before 422)")
    assert api.shares(alice, file) == [], "nothing created"
