"""Projects and members (spec.md: Projects and roles)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R5")
@pytest.mark.category("api_surface")
def test_the_creator_owns_the_project(api, http):
    owner = api.user()
    project = api.ok(http.post("/projects", json={"name": "Backend"}, headers=owner.headers), 201, "create a project")
    assert project["name"] == "Backend" and project["owner_id"] == owner.id and project["id"] and project["created_at"], f"the project: {project}"
    got = api.ok(http.get(f"/projects/{project['id']}", headers=owner.headers), 200, "read the project")
    assert (got["id"], got["owner_id"]) == (project["id"], owner.id), f"GET answers the project: {got}"
    members = api.ok(http.get(f"/projects/{project['id']}/members", headers=owner.headers), 200, "list members")["items"]
    assert members == [{"user_id": owner.id, "username": owner.username, "role": "owner"}] or [
        {k: m.get(k) for k in ("user_id", "username", "role")} for m in members] == [{"user_id": owner.id, "username": owner.username, "role": "owner"}], f"the owner is the only member: {members}"


@pytest.mark.requirement("R5")
@pytest.mark.category("state")
def test_my_projects_are_the_ones_i_am_a_member_of_oldest_first(api, http):
    ann, bob = api.user("ann"), api.user("bob")
    first = api.project(ann)
    second = api.project(bob, reporters=(ann,))
    third = api.project(ann)
    hidden = api.project(bob)
    mine = [p["id"] for p in api.ok(http.get("/projects", headers=ann.headers), 200, "list projects")["items"]]
    assert mine == [first["id"], second["id"], third["id"]], f"ann's projects oldest first, bob's private one absent: {mine} (hidden {hidden['id']})"


@pytest.mark.requirement("R5")
@pytest.mark.category("validation")
@pytest.mark.parametrize("name", ["", "   ", "n" * 101, None, 7])
def test_a_project_name_is_validated(api, http, name):
    user = api.user()
    problem = api.validation_problem(http.post("/projects", json={"name": name}, headers=user.headers), ["name"], f"project name {name!r}")
    api.assert_no_problems([problem], "project validation")


@pytest.mark.requirement("R5")
@pytest.mark.category("authorization")
def test_non_members_and_the_administrator_see_nothing(api, http):
    owner, stranger = api.user("owner"), api.user("stranger")
    project = api.project(owner)
    issue = api.issue(owner, project)
    label = api.label(owner, project)
    for who, caller in (("a stranger", stranger), ("the administrator", api.admin)):
        for path in (f"/projects/{project['id']}", f"/projects/{project['id']}/members", f"/projects/{project['id']}/issues",
                     f"/projects/{project['id']}/issues/{issue['number']}", f"/projects/{project['id']}/labels", f"/projects/{project['id']}/milestones"):
            api.error(http.get(path, headers=caller.headers), 404, "not_found", f"{who} GET {path}")
        api.error(http.patch(f"/projects/{project['id']}/labels/{label['id']}", json={"name": "x"}, headers=caller.headers), 404, "not_found", f"{who} changing a label")


@pytest.mark.requirement("R6")
@pytest.mark.category("api_surface")
def test_the_owner_adds_changes_and_lists_members(api, http):
    owner, ann, bob = api.user("owner"), api.user("ann"), api.user("bob")
    project = api.project(owner)
    added = api.add_member(owner, project, ann, "reporter")
    assert (added["user_id"], added["username"], added["role"]) == (ann.id, ann.username, "reporter"), f"the new member: {added}"
    api.add_member(owner, project, bob, "maintainer")
    changed = api.ok(http.patch(f"/projects/{project['id']}/members/{ann.id}", json={"role": "maintainer"}, headers=owner.headers), 200, "change a role")
    assert changed["role"] == "maintainer", f"the changed member: {changed}"
    members = [(m["user_id"], m["role"]) for m in api.ok(http.get(f"/projects/{project['id']}/members", headers=ann.headers), 200, "list")["items"]]
    assert members == [(owner.id, "owner"), (ann.id, "maintainer"), (bob.id, "maintainer")], f"owner first, then in the order added: {members}"


@pytest.mark.requirement("R6")
@pytest.mark.category("validation")
def test_member_fields_are_validated(api, http):
    owner, ann = api.user("owner"), api.user("ann")
    project = api.project(owner)
    path = f"/projects/{project['id']}/members"
    problems = [
        api.validation_problem(http.post(path, json={"user_id": "no-such-user", "role": "reporter"}, headers=owner.headers), ["user_id"], "an unknown user"),
        api.validation_problem(http.post(path, json={"user_id": ann.id, "role": "owner"}, headers=owner.headers), ["role"], "role owner"),
        api.validation_problem(http.post(path, json={"user_id": ann.id, "role": "admin"}, headers=owner.headers), ["role"], "an unknown role"),
        api.validation_problem(http.post(path, json={"user_id": ann.id}, headers=owner.headers), ["role"], "no role"),
    ]
    api.assert_no_problems(problems, "member validation")
    assert [m["user_id"] for m in api.ok(http.get(path, headers=owner.headers), 200, "list")["items"]] == [owner.id], "nothing was added"


@pytest.mark.requirement("R6")
@pytest.mark.category("state")
def test_an_existing_member_and_the_owner_membership_conflict(api, http):
    owner, ann = api.user("owner"), api.user("ann")
    project = api.project(owner, reporters=(ann,))
    base = f"/projects/{project['id']}/members"
    api.error(http.post(base, json={"user_id": ann.id, "role": "maintainer"}, headers=owner.headers), 409, "conflict", "adding a member twice")
    api.error(http.post(base, json={"user_id": owner.id, "role": "reporter"}, headers=owner.headers), 409, "conflict", "adding the owner")
    api.error(http.patch(f"{base}/{owner.id}", json={"role": "reporter"}, headers=owner.headers), 409, "conflict", "demoting the owner")
    api.error(http.delete(f"{base}/{owner.id}", headers=owner.headers), 409, "conflict", "removing the owner")
    roles = {m["user_id"]: m["role"] for m in api.ok(http.get(base, headers=owner.headers), 200, "list")["items"]}
    assert roles == {owner.id: "owner", ann.id: "reporter"}, f"nothing changed: {roles}"


@pytest.mark.requirement("R6")
@pytest.mark.category("state")
def test_removing_a_member_unassigns_them_and_hides_the_project(api, http):
    owner, ann = api.user("owner"), api.user("ann")
    project = api.project(owner, maintainers=(ann,))
    one = api.issue(owner, project, assignees=[ann.id, owner.id])
    two = api.issue(owner, project, assignees=[ann.id])
    r = http.delete(f"/projects/{project['id']}/members/{ann.id}", headers=owner.headers)
    assert r.status_code == 204, f"remove a member: {api.brief(r)}"
    assert api.get_issue(owner, project, one["number"])["assignees"] == [owner.id], "ann is no longer assigned to issue one"
    assert api.get_issue(owner, project, two["number"])["assignees"] == [], "ann is no longer assigned to issue two"
    api.error(http.get(f"/projects/{project['id']}", headers=ann.headers), 404, "not_found", "a removed member")
    api.error(http.delete(f"/projects/{project['id']}/members/{ann.id}", headers=owner.headers), 404, "not_found", "removing a non-member")
