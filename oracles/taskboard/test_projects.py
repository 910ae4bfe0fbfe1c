"""Projects: creation, listing, visibility, editing and deletion (spec.md: Projects and roles)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R8")
@pytest.mark.category("api_surface")
def test_create_project_makes_the_caller_owner(api, http):
    owner = api.user("owner")
    r = http.post("/projects", json={"name": "Launch plan", "description": "Q3 launch"}, headers=owner.headers)
    assert r.status_code == 201, f"creating a project: {r.status_code} {r.text[:300]}"
    project = r.json()
    assert project.get("name") == "Launch plan" and project.get("description") == "Q3 launch", f"fields not stored: {project}"
    assert project.get("created_by") == owner.id, f"created_by should be the caller: {project}"
    assert project.get("role") == "owner", f"the creator's role should be owner: {project}"
    r = http.get(f"/projects/{project['id']}", headers=owner.headers)
    assert r.status_code == 200 and r.json().get("name") == "Launch plan", f"reading the new project back: {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R8")
@pytest.mark.category("api_surface")
def test_project_description_defaults_to_empty(api, http):
    owner = api.user("owner")
    r = http.post("/projects", json={"name": "No description"}, headers=owner.headers)
    assert r.status_code == 201, f"creating a project without description: {r.status_code} {r.text[:300]}"
    assert r.json().get("description") == "", f"description should default to an empty string: {r.json()}"


@pytest.mark.requirement("R8", "R28")
@pytest.mark.category("validation")
def test_create_project_rejects_invalid_names(api, http):
    owner = api.user("owner")
    cases = {"missing": {}, "empty": {"name": ""}, "blank": {"name": "   "}, "101 characters": {"name": "n" * 101}, "a number": {"name": 42}}
    problems = [
        api.validation_problem(http.post("/projects", json=body, headers=owner.headers), ["name"], f"project name {label}")
        for label, body in cases.items()
    ]
    problems = [p for p in problems if p]
    assert not problems, "invalid project names were not rejected as the spec says: " + "\n".join(problems)
    listed = api.ok(http.get("/projects", headers=owner.headers), 200, "list projects")
    assert listed["total"] == 0, f"rejected creates must not create projects: {listed}"


@pytest.mark.requirement("R8", "R28")
@pytest.mark.category("validation")
def test_create_project_rejects_a_long_description(api, http):
    owner = api.user("owner")
    r = http.post("/projects", json={"name": "ok", "description": "d" * 2001}, headers=owner.headers)
    api.assert_invalid(r, ["description"], "creating a project with a 2001-character description")


@pytest.mark.requirement("R8")
@pytest.mark.category("validation")
def test_create_project_accepts_boundary_lengths(api, http):
    owner = api.user("owner")
    r = http.post("/projects", json={"name": "n" * 100, "description": "d" * 2000}, headers=owner.headers)
    assert r.status_code == 201, f"a 100-character name and 2000-character description are valid: {r.status_code} {r.text[:200]}"


@pytest.mark.requirement("R6")
@pytest.mark.category("authorization")
def test_project_routes_need_a_token(api, http, board):
    paths = [
        ("get", "/projects"),
        ("post", "/projects"),
        ("get", board.path),
        ("get", f"{board.path}/members"),
        ("get", f"{board.path}/tasks"),
        ("get", f"{board.path}/activity"),
    ]
    for method, path in paths:
        r = http.request(method, path, json={"name": "x"} if method == "post" else None)
        api.error(r, 401, "unauthorized", f"{method.upper()} {path} without a token")


@pytest.mark.requirement("R9", "R10")
@pytest.mark.category("authorization")
def test_list_projects_shows_only_my_projects(api, http):
    alice, bob = api.user("alice"), api.user("bob")
    mine = api.project(alice)
    theirs = api.project(bob)
    r = http.get("/projects", headers=alice.headers)
    assert r.status_code == 200, f"GET /projects: {r.status_code} {r.text[:300]}"
    ids = [p["id"] for p in r.json()["items"]]
    assert ids == [mine["id"]], f"alice should see exactly her one project, saw {ids} (bob's is {theirs['id']})"
    assert r.json().get("total") == 1, f"total should count only alice's projects: {r.json()}"


@pytest.mark.requirement("R9")
@pytest.mark.category("api_surface")
def test_list_projects_oldest_first_and_paginated(api, http):
    owner = api.user("owner")
    created = [api.project(owner, name=f"P{i}")["id"] for i in range(3)]
    r = http.get("/projects", params={"limit": 2, "offset": 1}, headers=owner.headers)
    assert r.status_code == 200, f"GET /projects?limit=2&offset=1: {r.status_code} {r.text[:300]}"
    body = r.json()
    assert [p["id"] for p in body["items"]] == created[1:], f"second page should be the 2nd and 3rd projects: {body}"
    assert (body.get("total"), body.get("limit"), body.get("offset")) == (3, 2, 1), f"envelope should echo total/limit/offset: {body}"


@pytest.mark.requirement("R9", "R12")
@pytest.mark.category("api_surface")
def test_list_projects_includes_memberships_with_role(api, http):
    owner, viewer = api.user("owner"), api.user("viewer")
    project = api.project(owner)
    api.add_member(project, owner, viewer, "viewer")
    r = http.get("/projects", headers=viewer.headers)
    assert r.status_code == 200, f"GET /projects as a viewer: {r.status_code} {r.text[:300]}"
    items = r.json()["items"]
    assert [p["id"] for p in items] == [project["id"]], f"the viewer should see the project they were added to: {items}"
    assert items[0].get("role") == "viewer", f"role should be the caller's role (viewer): {items[0]}"


@pytest.mark.requirement("R10")
@pytest.mark.category("authorization")
def test_non_member_gets_404_for_a_project(api, http, board):
    r = http.get(board.path, headers=board.outsider.headers)
    api.error(r, 404, "not_found", "an outsider reading a project")


@pytest.mark.requirement("R10")
@pytest.mark.category("api_surface")
def test_unknown_project_gets_404(api, http):
    user = api.user("user")
    r = http.get("/projects/does-not-exist-0000", headers=user.headers)
    api.error(r, 404, "not_found", "reading a project id that does not exist")


@pytest.mark.requirement("R10")
@pytest.mark.category("authorization")
def test_non_member_gets_404_under_a_project(api, http, board):
    task = api.task(board.project, board.owner)
    outsider = board.outsider.headers
    checks = [
        http.get(f"{board.path}/members", headers=outsider),
        http.get(f"{board.path}/tasks", headers=outsider),
        http.get(f"{board.path}/tasks/{task['id']}", headers=outsider),
        http.get(f"{board.path}/tasks/{task['id']}/comments", headers=outsider),
        http.get(f"{board.path}/activity", headers=outsider),
        http.post(f"{board.path}/tasks", json={"title": "sneaky"}, headers=outsider),
        http.patch(board.path, json={"name": "taken over"}, headers=outsider),
        http.delete(board.path, headers=outsider),
    ]
    for r in checks:
        api.error(r, 404, "not_found", f"an outsider: {r.request.method} {r.request.path_url}")


@pytest.mark.requirement("R11")
@pytest.mark.category("state")
def test_owner_edits_the_project(api, http, board):
    r = http.patch(board.path, json={"name": "Renamed", "description": "new words"}, headers=board.owner.headers)
    assert r.status_code == 200, f"owner editing the project: {r.status_code} {r.text[:300]}"
    r = http.get(board.path, headers=board.member.headers)
    body = r.json()
    assert (body.get("name"), body.get("description")) == ("Renamed", "new words"), f"the edit did not persist: {body}"
    assert body.get("role") == "member", f"role should be the caller's (member): {body}"


@pytest.mark.requirement("R11")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("who", ["member", "viewer"])
def test_non_owner_cannot_edit_the_project(api, http, board, who):
    user = getattr(board, who)
    r = http.patch(board.path, json={"name": "Hijacked"}, headers=user.headers)
    api.error(r, 403, "forbidden", f"a {who} renaming the project")
    assert api.ok(http.get(board.path, headers=board.owner.headers), 200, "read project")["name"] == board.project["name"], (
        f"the {who}'s rejected edit changed the project"
    )


@pytest.mark.requirement("R11")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("who", ["member", "viewer"])
def test_non_owner_cannot_delete_the_project(api, http, board, who):
    user = getattr(board, who)
    r = http.delete(board.path, headers=user.headers)
    api.error(r, 403, "forbidden", f"a {who} deleting the project")
    r = http.get(board.path, headers=board.owner.headers)
    assert r.status_code == 200, f"the project should survive a rejected delete: {r.status_code} {r.text[:200]}"


@pytest.mark.requirement("R26")
@pytest.mark.category("state")
def test_deleted_project_is_gone(api, http, board):
    r = http.delete(board.path, headers=board.owner.headers)
    assert r.status_code == 204, f"owner deleting the project: {r.status_code} {r.text[:300]}"
    for user in (board.owner, board.member):
        r = http.get(board.path, headers=user.headers)
        api.error(r, 404, "not_found", "reading a deleted project")
        listed = api.ok(http.get("/projects", headers=user.headers), 200, "list projects")["items"]
        assert board.project["id"] not in [p["id"] for p in listed], "a deleted project is still listed in GET /projects"
