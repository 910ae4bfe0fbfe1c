"""Security items derived rule by rule from spec.md (issue 24; REVIEW.md "Security rules").

Each item exercises one rule, one refusal condition or one hostile-value path at a time. Every
answer any item of this module receives is also checked for the password or a hash of it ("No
response ever contains a password or a password hash.").
"""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http.account_items import password_edge_item, password_leak_item
from pytest_backendbench.http.hostile import hostile_findings

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]


test_no_user_answer_carries_the_password_or_its_hash = password_leak_item("R2", "R5", "R6")


test_a_password_wrong_only_at_its_edge_gets_401 = password_edge_item("R5")


TASK_PATHS = {"read": ("GET", "", None), "edit": ("PATCH", "", {"title": "moved"}), "delete": ("DELETE", "", None),
              "list-comments": ("GET", "/comments", None), "comment": ("POST", "/comments", {"body": "sneaky"})}


@pytest.mark.requirement("R21")
@pytest.mark.cwe(639)
@pytest.mark.parametrize("action", sorted(TASK_PATHS))
def test_a_task_is_reachable_only_under_its_own_project(api, http, action):
    owner = api.user("owner")
    home, other = api.project(owner), api.project(owner)
    task = api.task(other, owner, "belongs to the other project")
    method, suffix, body = TASK_PATHS[action]
    api.error(http.request(method, f"/projects/{home['id']}/tasks/{task['id']}{suffix}", json=body, headers=owner.headers), 404, "not_found",
              f"{method} the other project's task under this project's path")
    got = api.get_task(other, owner, task["id"])
    assert got["title"] == "belongs to the other project" and got["project_id"] == other["id"]
    listed = api.ok(http.get(f"/projects/{other['id']}/tasks/{task['id']}/comments", headers=owner.headers), 200, "its comments")
    assert listed["items"] == [], f"no comment was added: {listed}"


@pytest.mark.requirement("R23")
@pytest.mark.cwe(863)
@pytest.mark.parametrize("who", ["another-member", "the-author-now-a-viewer", "a-viewer"])
def test_a_comment_is_deleted_only_by_an_owner_or_its_writing_author(api, http, board, who):
    task = api.task(board.project, board.member)
    author = api.user("author")
    api.add_member(board.project, board.owner, author, "member")
    comment = api.comment(board.project, author, task, "my words")
    caller = {"another-member": board.member, "a-viewer": board.viewer, "the-author-now-a-viewer": author}[who]
    if who == "the-author-now-a-viewer":
        api.set_role(board.project, board.owner, author, "viewer")
    path = f"{board.path}/tasks/{task['id']}/comments/{comment['id']}"
    api.error(http.delete(path, headers=caller.headers), 403, "forbidden", f"{who} deleting the comment")
    items = api.ok(http.get(f"{board.path}/tasks/{task['id']}/comments", headers=board.owner.headers), 200, "comments")["items"]
    assert [c["id"] for c in items] == [comment["id"]]


@pytest.mark.requirement("R19")
@pytest.mark.cwe(863)
@pytest.mark.parametrize("who", ["member-not-creator", "viewer-creator-demoted"])
def test_a_task_is_deleted_only_by_an_owner_or_its_member_creator(api, http, board, who):
    creator = api.user("creator")
    api.add_member(board.project, board.owner, creator, "member")
    task = api.task(board.project, creator)
    caller = board.member if who == "member-not-creator" else creator
    if who == "viewer-creator-demoted":
        api.set_role(board.project, board.owner, creator, "viewer")
    api.error(http.delete(f"{board.path}/tasks/{task['id']}", headers=caller.headers), 403, "forbidden", f"{who} deleting the task")
    assert api.get_task(board.project, board.owner, task["id"])["id"] == task["id"]


@pytest.mark.requirement("R11", "R14")
@pytest.mark.cwe(863)
@pytest.mark.parametrize("remover", ["member", "viewer"])
def test_only_an_owner_removes_someone_else(api, http, board, remover):
    caller = board.member if remover == "member" else board.viewer
    target = board.viewer if remover == "member" else board.member
    api.error(http.delete(f"{board.path}/members/{target.id}", headers=caller.headers), 403, "forbidden", f"a {remover} removing another member")
    members = api.ok(http.get(f"{board.path}/members", headers=board.owner.headers), 200, "members")["items"]
    assert target.id in [m["user_id"] for m in members]
    api.ok(http.delete(f"{board.path}/members/{caller.id}", headers=caller.headers), 204, f"the {remover} leaves")
    api.error(http.get(board.path, headers=caller.headers), 404, "not_found", "a user who left")


@pytest.mark.requirement("R16")
@pytest.mark.cwe(284)
@pytest.mark.parametrize("assignee", ["a-viewer", "an-outsider", "no-user", "a-removed-member"])
def test_a_task_is_assigned_only_to_a_current_owner_or_member(api, http, board, assignee):
    removed = api.user("removed")
    api.add_member(board.project, board.owner, removed, "member")
    api.ok(http.delete(f"{board.path}/members/{removed.id}", headers=board.owner.headers), 204, "remove a member")
    target = {"a-viewer": board.viewer.id, "an-outsider": board.outsider.id, "no-user": "u-" + uuid.uuid4().hex, "a-removed-member": removed.id}[assignee]
    r = http.post(f"{board.path}/tasks", json={"title": "t", "assignee_id": target}, headers=board.member.headers)
    assert not (why := api.validation_problem(r, ["assignee_id"], f"creating a task assigned to {assignee}")), why
    task = api.task(board.project, board.member)
    r = http.patch(f"{board.path}/tasks/{task['id']}", json={"assignee_id": target}, headers=board.member.headers)
    assert not (why := api.validation_problem(r, ["assignee_id"], f"assigning a task to {assignee}")), why
    assert api.get_task(board.project, board.owner, task["id"])["assignee_id"] is None


@pytest.mark.requirement("R10", "R28")
@pytest.mark.cwe(203)
def test_a_non_member_learns_nothing_and_a_viewer_is_refused_before_validation(api, http, board):
    task = api.task(board.project, board.owner)
    problems = []
    for who, method, path, body, status in (
        (board.outsider, "PATCH", board.path, {"name": ""}, 404),
        (board.outsider, "POST", f"{board.path}/tasks", {"title": 5}, 404),
        (board.outsider, "POST", f"{board.path}/members", {"username": "nobody-at-all", "role": "king"}, 404),
        (board.outsider, "PATCH", f"{board.path}/tasks/{task['id']}", {"status": "done"}, 404),
        (board.outsider, "DELETE", f"{board.path}/members/{board.owner.id}", None, 404),
        (board.viewer, "POST", f"{board.path}/tasks", {"title": ""}, 403),
        (board.viewer, "PATCH", f"{board.path}/tasks/{task['id']}", {"status": "nonsense"}, 403),
        (board.member, "PATCH", board.path, {"name": ""}, 403),
        (board.member, "POST", f"{board.path}/members", {"username": board.outsider.username, "role": "king"}, 403),
    ):
        r = http.request(method, path, json=body, headers=who.headers)
        if r.status_code != status:
            problems.append(f"{method} {path} {body} by {'the outsider' if who is board.outsider else 'a ' + ('viewer' if who is board.viewer else 'member')}: "
                            f"expected {status}, got {api.brief(r)}")
    assert not problems, "404 for non-members (never 403 or 422), then 403 before 422:\n" + "\n".join(problems)


@pytest.mark.requirement("R9")
@pytest.mark.cwe(639)
@pytest.mark.parametrize("param", ["user_id", "member", "owner", "all"])
def test_the_project_list_never_widens_to_other_users(api, http, param):
    alice, bob = api.user("alice"), api.user("bob")
    mine, theirs = api.project(alice), api.project(bob)
    value = "true" if param == "all" else bob.id
    r = http.get("/projects", params={param: value, "limit": 100}, headers=alice.headers)
    if r.status_code not in (400, 422):
        assert r.status_code == 200, api.brief(r)
        assert [p.get("id") for p in r.json().get("items", [])] == [mine["id"]], f"GET /projects?{param}=... lists only alice's: {r.text[:300]}"
        assert theirs["id"] not in r.text


@pytest.mark.requirement("R20", "R30")
@pytest.mark.cwe(89)
def test_hostile_filter_values_match_nothing_or_get_422(api, http, board):
    api.task(board.project, board.owner, assignee_id=board.member.id)
    api.task(board.project, board.owner)
    problems = []
    for value in ("' OR '1'='1", "none' OR '1'='1", "%", "_", "*", ".*", "NONE", "null", board.member.id + "%", '{"$ne": null}'):
        r = http.get(f"{board.path}/tasks", params={"assignee_id": value}, headers=board.viewer.headers)
        if r.status_code != 200 or r.json().get("total") != 0:
            problems.append(f"GET tasks?assignee_id={value!r}: expected 200 matching nothing, got {api.brief(r)[:200]}")
        r = http.get(f"{board.path}/tasks", params={"status": value}, headers=board.viewer.headers)
        if why := api.validation_problem(r, ["status"], f"GET tasks?status={value!r}"):
            problems.append(why)
    assert not problems, "assignee_id matches literally (none is the only keyword); status is validated:\n" + "\n".join(problems)


@pytest.mark.requirement("R2", "R8", "R15", "R22", "R30")
@pytest.mark.cwe(116)
def test_hostile_text_is_stored_and_answered_verbatim(api, http, board):
    found = hostile_findings(lambda body: http.post("/projects", json=body, headers=board.owner.headers), {"name": "n", "description": "d"},
                             verbatim=["name", "description"], accepted=[201])
    found += hostile_findings(lambda body: http.post(f"{board.path}/tasks", json=body, headers=board.member.headers),
                              {"title": "t", "description": "d"}, verbatim=["title", "description"], accepted=[201])
    task = api.task(board.project, board.member)
    found += hostile_findings(lambda body: http.post(f"{board.path}/tasks/{task['id']}/comments", json=body, headers=board.member.headers),
                              {"body": "b"}, verbatim=["body"], accepted=[201])
    found += hostile_findings(lambda body: http.post("/users", json={**body, "username": api.unique("hd"), "password": "pw-12345678"}),
                              {"display_name": "d"}, verbatim=["display_name"], accepted=[201])
    assert not found, "text is stored and answered exactly as sent:\n" + "\n".join(found)
