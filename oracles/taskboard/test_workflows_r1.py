"""R1 (evolved) items: multi-step journeys where roles, workflow and side effects interact."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r1"), pytest.mark.weight(2.0)]


@pytest.mark.requirement("R11", "R13", "R14")
@pytest.mark.category("workflow")
def test_ownership_handover(api, http):
    founder, successor = api.user("founder"), api.user("successor")
    project = api.project(founder)
    path = f"/projects/{project['id']}"
    api.add_member(project, founder, successor)
    api.set_role(project, founder, successor, "owner")
    demoted = api.set_role(project, founder, founder, "member")
    assert demoted.get("role") == "member", f"an owner may demote themselves while another owner remains: {demoted}"
    r = http.post(f"{path}/members", json={"username": api.user("late").username}, headers=founder.headers)
    api.error(r, 403, "forbidden", "the demoted founder adding a member")
    r = http.delete(f"{path}/members/{founder.id}", headers=successor.headers)
    assert r.status_code == 204, f"the new owner removing the founder: {r.status_code} {r.text[:300]}"
    api.error(http.get(path, headers=founder.headers), 404, "not_found", "the removed founder reading the project")
    r = http.patch(f"{path}/members/{successor.id}", json={"role": "viewer"}, headers=successor.headers)
    api.error(r, 409, "conflict", "the only remaining owner demoting themselves")
    members = api.ok(http.get(f"{path}/members", headers=successor.headers), 200, "list members")["items"]
    assert [(m["user_id"], m["role"]) for m in members] == [(successor.id, "owner")], f"only the successor remains: {members}"


@pytest.mark.requirement("R7", "R5", "R9")
@pytest.mark.category("workflow")
def test_logout_then_login_again(api, http):
    user = api.user("commuter")
    project = api.project(user)
    r = http.post("/auth/logout", headers=user.headers)
    assert r.status_code == 204, f"logout: {r.status_code} {r.text[:300]}"
    api.error(http.get(f"/projects/{project['id']}", headers=user.headers), 401, "unauthorized", "a revoked token reading a project")
    api.error(http.post("/auth/logout", headers=user.headers), 401, "unauthorized", "logging out twice with the same token")
    token = api.login(user.username, user.password)
    r = http.get("/projects", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200 and [p["id"] for p in r.json()["items"]] == [project["id"]], (
        f"after logging in again the user's projects are intact: {r.status_code} {r.text[:300]}"
    )


@pytest.mark.requirement("R17", "R18", "R24")
@pytest.mark.category("workflow")
def test_reopen_cycle(api, http, board):
    task = api.task(board.project, board.member)
    task = api.move(board.project, board.member, task, "in_progress", "done")
    assert task["completed_at"], f"completed_at is set on done: {task}"
    task = api.patch_task(board.project, board.owner, task, status="in_progress")
    assert task["completed_at"] is None, f"reopening clears completed_at: {task}"
    r = http.patch(f"{board.path}/tasks/{task['id']}", json={"status": "cancelled"}, headers=board.member.headers)
    assert r.status_code == 200, f"in_progress -> cancelled is allowed: {r.status_code} {r.text[:300]}"
    r = http.patch(f"{board.path}/tasks/{task['id']}", json={"status": "done"}, headers=board.member.headers)
    api.error(r, 409, "invalid_transition", "cancelled -> done")
    task = api.move(board.project, board.member, task, "todo", "in_progress", "done")
    assert task["completed_at"], f"completed_at is set again on the second done: {task}"
    statuses = [
        (e["data"].get("from"), e["data"].get("to"))
        for e in api.activity(board.project, board.viewer)
        if e.get("type") == "task_status_changed" and e.get("task_id") == task["id"]
    ]
    expected = [("in_progress", "done"), ("todo", "in_progress"), ("cancelled", "todo"), ("in_progress", "cancelled"),
                ("done", "in_progress"), ("in_progress", "done"), ("todo", "in_progress")]
    assert statuses == expected, f"every transition recorded once, newest first:\n  expected {expected}\n  got      {statuses}"


@pytest.mark.requirement("R27", "R16", "R20", "R12")
@pytest.mark.category("workflow")
def test_member_leaves_and_comes_back(api, http, board):
    tasks = [api.task(board.project, board.owner, assignee_id=board.member.id) for _ in range(2)]
    r = http.delete(f"{board.path}/members/{board.member.id}", headers=board.member.headers)
    assert r.status_code == 204, f"the member leaving: {r.status_code} {r.text[:300]}"
    unassigned = api.tasks(board.project, board.owner, assignee_id="none")
    assert [t["id"] for t in unassigned["items"]] == [t["id"] for t in tasks], f"both tasks are unassigned: {unassigned}"
    r = http.patch(f"{board.path}/tasks/{tasks[0]['id']}", json={"assignee_id": board.member.id}, headers=board.owner.headers)
    api.assert_invalid(r, ["assignee_id"], "assigning a task to a user who left")
    api.add_member(board.project, board.owner, board.member, "member")
    members = api.ok(http.get(f"{board.path}/members", headers=board.member.headers), 200, "list members")["items"]
    assert [m["user_id"] for m in members] == [board.owner.id, board.viewer.id, board.member.id], (
        f"a re-added member joins at the end of the list: {[m['user_id'] for m in members]}"
    )
    task = api.patch_task(board.project, board.owner, tasks[0], assignee_id=board.member.id)
    assert task["assignee_id"] == board.member.id, f"the returning member can be assigned again: {task}"


@pytest.mark.requirement("R24", "R26", "R23")
@pytest.mark.category("side_effects")
def test_deleting_a_task_keeps_its_history(api, http, board):
    task, comment = api.commented(board, board.member, board.owner, title="Ephemeral")
    api.patch_task(board.project, board.member, task, status="in_progress")
    r = http.delete(f"{board.path}/tasks/{task['id']}", headers=board.member.headers)
    assert r.status_code == 204, f"the creator deleting the task: {r.status_code} {r.text[:300]}"
    about = [(e["type"], e["actor_id"]) for e in api.activity(board.project, board.viewer) if e.get("task_id") == task["id"]]
    expected = [
        ("task_deleted", board.member.id),
        ("task_status_changed", board.member.id),
        ("comment_added", board.owner.id),
        ("task_created", board.member.id),
    ]
    assert about == expected, f"the task's whole history remains after deletion: expected {expected}, got {about}"
    listed = [t["id"] for t in api.tasks(board.project, board.owner)["items"]]
    assert task["id"] not in listed, f"the deleted task is still listed: {listed}"
    r = http.get(f"{board.path}/tasks/{task['id']}/comments", headers=board.owner.headers)
    api.error(r, 404, "not_found", f"listing comments (e.g. {comment['id']}) of the deleted task")
