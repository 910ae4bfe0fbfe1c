"""R2 (evolved) items: authorization isolation that almost-correct services get wrong.

Ids that are valid somewhere else (a user who is a member of another project, a comment on
another project's task), owners who were demoted, and members who were removed: each must be
judged by the caller's *current* role in *this* project, with 404 before 403 before 422.
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r2"), pytest.mark.category("authorization")]


@pytest.mark.requirement("R21", "R28", "R16", "R23")
def test_ids_from_another_project_are_unknown_here(api, http, board):
    other = api.project(board.owner)
    alice = api.user("alice")
    api.add_member(other, board.owner, alice)
    foreign_task = api.task(other, alice)
    foreign_comment = api.comment(other, alice, foreign_task)
    local_task = api.task(board.project, board.member)
    members = f"{board.path}/members/{alice.id}"
    through_local = f"{board.path}/tasks/{local_task['id']}/comments/{foreign_comment['id']}"
    attempts = [
        (http.patch(members, json={"role": "viewer"}, headers=board.owner.headers),
         "an owner of both projects changing, under this project, the role of a user who is only in the other"),
        (http.delete(members, headers=board.owner.headers),
         "an owner of both projects removing, under this project, a user who is only in the other"),
        (http.patch(members, json={"role": "boss"}, headers=board.viewer.headers),
         "a viewer sending an invalid role for a user who is not in this project (the member must exist here first)"),
        (http.delete(through_local, headers=board.owner.headers),
         "deleting another project's comment through a task of this project"),
        (http.delete(through_local, headers=board.viewer.headers),
         "a viewer deleting another project's comment through a task of this project (404 before 403)"),
        (http.delete(f"{board.path}/tasks/{foreign_task['id']}/comments/{foreign_comment['id']}", headers=board.owner.headers),
         "deleting a comment through another project's task under this project's path"),
    ]
    for r, what in attempts:
        api.error(r, 404, "not_found", what)
    r = http.post(f"{board.path}/tasks", json={"title": "for alice", "assignee_id": alice.id}, headers=board.owner.headers)
    api.assert_invalid(r, ["assignee_id"], "assigning a new task to a user who is a member of another project only")
    listed = api.ok(http.get(f"/projects/{other['id']}/members", headers=alice.headers), 200, "list the other project's members")
    assert [(m["user_id"], m["role"]) for m in listed["items"]] == [(board.owner.id, "owner"), (alice.id, "member")], (
        f"the rejected requests changed the other project's members: {listed['items']}"
    )
    comments = api.ok(http.get(f"/projects/{other['id']}/tasks/{foreign_task['id']}/comments", headers=alice.headers), 200, "list comments")
    assert [c["id"] for c in comments["items"]] == [foreign_comment["id"]], f"the foreign comment should remain: {comments}"
    leaked = [e for e in api.activity(board.project, board.owner)
              if e.get("task_id") == foreign_task["id"] or (e.get("data") or {}).get("user_id") == alice.id]
    assert not leaked, f"the other project's activity appears in this project's feed: {api.shape(leaked)}"


@pytest.mark.requirement("R11", "R19", "R23", "R8", "R9")
def test_demoted_creator_loses_every_owner_power(api, http):
    founder, heir, third = api.user("founder"), api.user("heir"), api.user("third")
    project = api.project(founder)
    path = f"/projects/{project['id']}"
    api.add_member(project, founder, heir)
    api.add_member(project, founder, third)
    api.set_role(project, founder, heir, "owner")
    own = api.task(project, founder)
    theirs = api.task(project, heir)
    note = api.comment(project, heir, theirs)
    api.set_role(project, heir, founder, "member")
    seen = api.ok(http.get(path, headers=founder.headers), 200, "the demoted creator reading the project")
    assert (seen.get("role"), seen.get("created_by")) == ("member", founder.id), (
        f"the project shows the caller's current role (member) and still names its creator: {seen}"
    )
    listed = api.ok(http.get("/projects", headers=founder.headers), 200, "list projects")["items"]
    assert [(p["id"], p["role"]) for p in listed] == [(project["id"], "member")], f"GET /projects shows the current role: {listed}"
    attempts = [
        (http.delete(path, headers=founder.headers), "the demoted creator deleting the project"),
        (http.patch(path, json={"name": "mine again"}, headers=founder.headers), "the demoted creator renaming the project"),
        (http.post(f"{path}/members", json={"username": api.user("late").username}, headers=founder.headers),
         "the demoted creator adding a member"),
        (http.patch(f"{path}/members/{founder.id}", json={"role": "owner"}, headers=founder.headers),
         "the demoted creator promoting themselves back to owner"),
        (http.patch(f"{path}/members/{third.id}", json={"role": "viewer"}, headers=founder.headers),
         "the demoted creator changing another member's role"),
        (http.delete(f"{path}/members/{third.id}", headers=founder.headers), "the demoted creator removing another member"),
        (http.delete(f"{path}/tasks/{theirs['id']}", headers=founder.headers), "the demoted creator deleting a task someone else created"),
        (http.delete(f"{path}/tasks/{theirs['id']}/comments/{note['id']}", headers=founder.headers),
         "the demoted creator deleting someone else's comment"),
    ]
    for r, what in attempts:
        api.error(r, 403, "forbidden", what)
    members = api.ok(http.get(f"{path}/members", headers=heir.headers), 200, "list members")["items"]
    assert [(m["user_id"], m["role"]) for m in members] == [(founder.id, "member"), (heir.id, "owner"), (third.id, "member")], (
        f"the rejected requests changed the members: {[(m['user_id'], m['role']) for m in members]}"
    )
    r = http.delete(f"{path}/tasks/{own['id']}", headers=founder.headers)
    assert r.status_code == 204, f"as a member the demoted creator still deletes a task they created: {r.status_code} {r.text[:300]}"
    r = http.delete(path, headers=heir.headers)
    assert r.status_code == 204, f"an owner who did not create the project may delete it: {r.status_code} {r.text[:300]}"
    api.error(http.get(path, headers=founder.headers), 404, "not_found", "the creator reading the project the new owner deleted")


@pytest.mark.requirement("R14", "R10", "R12", "R19", "R23")
def test_removed_member_cannot_touch_what_they_created(api, http, board):
    task = api.task(board.project, board.member)
    note = api.comment(board.project, board.member, task)
    r = http.delete(f"{board.path}/members/{board.member.id}", headers=board.owner.headers)
    assert r.status_code == 204, f"the owner removing the member: {r.status_code} {r.text[:300]}"
    task_path = f"{board.path}/tasks/{task['id']}"
    gone = board.member.headers
    for r in (
        http.delete(task_path, headers=gone),
        http.delete(f"{task_path}/comments/{note['id']}", headers=gone),
        http.post(f"{task_path}/comments", json={"body": "still here?"}, headers=gone),
        http.get(f"{task_path}/comments", headers=gone),
        http.get(f"{board.path}/tasks", headers=gone),
        http.get(f"{board.path}/members", headers=gone),
        http.get(f"{board.path}/activity", headers=gone),
        http.delete(f"{board.path}/members/{board.member.id}", headers=gone),
    ):
        api.error(r, 404, "not_found", f"a removed member: {r.request.method} {r.request.path_url} (not 403: they may not see the project)")
    kept = api.get_task(board.project, board.owner, task["id"])
    assert kept.get("created_by") == board.member.id, f"the removed member's task stays, created_by unchanged: {kept}"
    comments = api.ok(http.get(f"{task_path}/comments", headers=board.owner.headers), 200, "list comments")["items"]
    assert [(c["id"], c["author_id"]) for c in comments] == [(note["id"], board.member.id)], f"the removed member's comment stays: {comments}"
    api.add_member(board.project, board.owner, board.member, "viewer")
    assert api.get_task(board.project, board.member, task["id"])["id"] == task["id"], "re-added as a viewer, the user reads tasks again"
    r = http.delete(f"{task_path}/comments/{note['id']}", headers=gone)
    api.error(r, 403, "forbidden", "the author, re-added as a viewer, deleting their old comment")
    r = http.delete(task_path, headers=gone)
    api.error(r, 403, "forbidden", "the creator, re-added as a viewer, deleting their old task")
    assert api.tasks(board.project, board.owner)["total"] == 1, "the rejected deletion removed the task"
