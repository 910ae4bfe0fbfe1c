"""Members and roles: adding, listing, role changes, removal, leaving, the last owner (spec.md: Members)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R12")
@pytest.mark.category("api_surface")
def test_owner_adds_a_member(api, http):
    owner, bob = api.user("owner"), api.user("bob")
    project = api.project(owner)
    r = http.post(f"/projects/{project['id']}/members", json={"username": bob.username, "role": "viewer"}, headers=owner.headers)
    assert r.status_code == 201, f"owner adding a viewer: {r.status_code} {r.text[:300]}"
    member = r.json()
    assert (member.get("user_id"), member.get("username"), member.get("role")) == (bob.id, bob.username, "viewer"), (
        f"the new member should echo user_id, username and role: {member}"
    )
    r = http.get(f"/projects/{project['id']}", headers=bob.headers)
    assert r.status_code == 200 and r.json().get("role") == "viewer", f"bob should now see the project as viewer: {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R12")
@pytest.mark.category("api_surface")
def test_role_defaults_to_member(api, http):
    owner, bob = api.user("owner"), api.user("bob")
    project = api.project(owner)
    r = http.post(f"/projects/{project['id']}/members", json={"username": bob.username}, headers=owner.headers)
    assert r.status_code == 201, f"adding a member without a role: {r.status_code} {r.text[:300]}"
    assert r.json().get("role") == "member", f"role should default to member: {r.json()}"


@pytest.mark.requirement("R12")
@pytest.mark.category("api_surface")
def test_member_list_in_join_order(api, http, board):
    r = http.get(f"{board.path}/members", headers=board.viewer.headers)
    assert r.status_code == 200, f"a viewer listing members: {r.status_code} {r.text[:300]}"
    got = [(m["user_id"], m["role"]) for m in r.json()["items"]]
    expected = [(board.owner.id, "owner"), (board.member.id, "member"), (board.viewer.id, "viewer")]
    assert got == expected, f"members should be owner, member, viewer in join order: got {got}"


@pytest.mark.requirement("R12", "R28")
@pytest.mark.category("validation")
def test_adding_an_unknown_username_gets_422(api, http, board):
    r = http.post(f"{board.path}/members", json={"username": "no_such_user_zz9"}, headers=board.owner.headers)
    api.assert_invalid(r, ["username"], "adding a username nobody registered")


@pytest.mark.requirement("R12", "R28")
@pytest.mark.category("validation")
def test_adding_with_an_invalid_role_gets_422(api, http, board):
    problems = []
    for role in ("admin", "OWNER", 3, None):
        r = http.post(f"{board.path}/members", json={"username": board.outsider.username, "role": role}, headers=board.owner.headers)
        problems.append(api.validation_problem(r, ["role"], f"adding a member with role {role!r}"))
    problems = [p for p in problems if p]
    assert not problems, "invalid roles were not rejected as the spec says: " + "\n".join(problems)
    r = http.get(board.path, headers=board.outsider.headers)
    assert r.status_code == 404, f"a rejected add must not create a membership: {r.status_code} {r.text[:200]}"


@pytest.mark.requirement("R12")
@pytest.mark.category("state")
def test_adding_an_existing_member_gets_409(api, http, board):
    r = http.post(f"{board.path}/members", json={"username": board.member.username, "role": "viewer"}, headers=board.owner.headers)
    api.error(r, 409, "conflict", "adding someone who is already a member")
    members = api.ok(http.get(f"{board.path}/members", headers=board.owner.headers), 200, "list members")["items"]
    roles = [m["role"] for m in members if m["user_id"] == board.member.id]
    assert roles == ["member"], f"the member should be listed once and keep role member: {roles}"


@pytest.mark.requirement("R11")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("who", ["member", "viewer"])
def test_non_owner_cannot_add_members(api, http, board, who):
    user = getattr(board, who)
    r = http.post(f"{board.path}/members", json={"username": board.outsider.username}, headers=user.headers)
    api.error(r, 403, "forbidden", f"a {who} adding a member")
    r = http.get(board.path, headers=board.outsider.headers)
    assert r.status_code == 404, f"the outsider must not have been added: {r.status_code} {r.text[:200]}"


@pytest.mark.requirement("R11")
@pytest.mark.category("state")
def test_owner_changes_a_role(api, http, board):
    r = http.patch(f"{board.path}/members/{board.viewer.id}", json={"role": "member"}, headers=board.owner.headers)
    assert r.status_code == 200, f"owner promoting a viewer: {r.status_code} {r.text[:300]}"
    assert r.json().get("role") == "member", f"the answer should carry the new role: {r.json()}"
    r = http.get(board.path, headers=board.viewer.headers)
    assert r.json().get("role") == "member", f"the promoted user should now see role member: {r.text[:300]}"
    r = http.post(f"{board.path}/tasks", json={"title": "now I can"}, headers=board.viewer.headers)
    assert r.status_code == 201, f"a promoted viewer should be able to create tasks: {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R11")
@pytest.mark.category("authorization")
def test_member_cannot_change_roles(api, http, board):
    r = http.patch(f"{board.path}/members/{board.member.id}", json={"role": "owner"}, headers=board.member.headers)
    api.error(r, 403, "forbidden", "a member promoting themselves to owner")
    r = http.get(board.path, headers=board.member.headers)
    assert r.json().get("role") == "member", f"the rejected promotion changed the role: {r.text[:300]}"


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_demoting_the_last_owner_gets_409(api, http, board):
    r = http.patch(f"{board.path}/members/{board.owner.id}", json={"role": "member"}, headers=board.owner.headers)
    api.error(r, 409, "conflict", "the only owner demoting themselves")
    r = http.get(board.path, headers=board.owner.headers)
    assert r.json().get("role") == "owner", f"the only owner must stay owner: {r.text[:300]}"


@pytest.mark.requirement("R13", "R14")
@pytest.mark.category("state")
def test_last_owner_cannot_leave(api, http, board):
    r = http.delete(f"{board.path}/members/{board.owner.id}", headers=board.owner.headers)
    api.error(r, 409, "conflict", "the only owner leaving the project")
    r = http.get(board.path, headers=board.owner.headers)
    assert r.status_code == 200, f"the only owner must still be a member: {r.status_code} {r.text[:200]}"


@pytest.mark.requirement("R13", "R11")
@pytest.mark.category("workflow")
def test_second_owner_allows_the_first_to_leave(api, http, board):
    api.set_role(board.project, board.owner, board.member, "owner")
    r = http.post(f"{board.path}/members", json={"username": board.outsider.username}, headers=board.member.headers)
    assert r.status_code == 201, f"a promoted owner should be able to add members: {r.status_code} {r.text[:300]}"
    r = http.delete(f"{board.path}/members/{board.owner.id}", headers=board.owner.headers)
    assert r.status_code == 204, f"an owner may leave while another owner remains: {r.status_code} {r.text[:300]}"
    r = http.delete(f"{board.path}/members/{board.member.id}", headers=board.member.headers)
    api.error(r, 409, "conflict", "the remaining (now only) owner leaving")


@pytest.mark.requirement("R14")
@pytest.mark.category("workflow")
@pytest.mark.parametrize("who", ["member", "viewer"])
def test_member_leaves_the_project(api, http, board, who):
    user = getattr(board, who)
    r = http.delete(f"{board.path}/members/{user.id}", headers=user.headers)
    assert r.status_code == 204, f"a {who} leaving: {r.status_code} {r.text[:300]}"
    r = http.get(board.path, headers=user.headers)
    api.error(r, 404, "not_found", f"a {who} who left reading the project")
    ids = [m["user_id"] for m in api.ok(http.get(f"{board.path}/members", headers=board.owner.headers), 200, "list members")["items"]]
    assert user.id not in ids, f"a {who} who left is still listed: {ids}"


@pytest.mark.requirement("R11")
@pytest.mark.category("authorization")
def test_member_cannot_remove_someone_else(api, http, board):
    r = http.delete(f"{board.path}/members/{board.viewer.id}", headers=board.member.headers)
    api.error(r, 403, "forbidden", "a member removing a viewer")
    r = http.get(board.path, headers=board.viewer.headers)
    assert r.status_code == 200, f"the viewer must still be a member: {r.status_code} {r.text[:200]}"


@pytest.mark.requirement("R14", "R10")
@pytest.mark.category("authorization")
def test_removed_member_loses_access(api, http, board):
    task = api.task(board.project, board.member)
    r = http.delete(f"{board.path}/members/{board.member.id}", headers=board.owner.headers)
    assert r.status_code == 204, f"owner removing a member: {r.status_code} {r.text[:300]}"
    for r in (
        http.get(board.path, headers=board.member.headers),
        http.get(f"{board.path}/tasks/{task['id']}", headers=board.member.headers),
        http.patch(f"{board.path}/tasks/{task['id']}", json={"title": "still mine"}, headers=board.member.headers),
        http.post(f"{board.path}/tasks", json={"title": "one more"}, headers=board.member.headers),
    ):
        api.error(r, 404, "not_found", f"a removed member: {r.request.method} {r.request.path_url}")
    listed = api.ok(http.get("/projects", headers=board.member.headers), 200, "list projects")["items"]
    assert board.project["id"] not in [p["id"] for p in listed], "a removed member still lists the project"


@pytest.mark.requirement("R14")
@pytest.mark.category("api_surface")
def test_removing_a_non_member_gets_404(api, http, board):
    r = http.delete(f"{board.path}/members/{board.outsider.id}", headers=board.owner.headers)
    api.error(r, 404, "not_found", "removing a user who is not a member")
    r = http.patch(f"{board.path}/members/{board.outsider.id}", json={"role": "viewer"}, headers=board.owner.headers)
    api.error(r, 404, "not_found", "changing the role of a user who is not a member")
