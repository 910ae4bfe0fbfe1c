"""The activity feed as a side effect of mutations (spec.md: Activity feed)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


def entry(entries, kind):
    """The newest entry of a type, or None."""
    return next((e for e in entries if e.get("type") == kind), None)


@pytest.mark.requirement("R24")
@pytest.mark.category("side_effects")
def test_project_creation_is_recorded(api, http):
    owner = api.user("owner")
    project = api.project(owner, name="Recorded")
    entries = api.activity(project, owner)
    assert len(entries) == 1, f"a new project should have exactly one entry: {api.shape(entries)}"
    e = entries[0]
    assert api.facts(e, "name") == ("project_created", owner.id, None, {"name": "Recorded"}), f"the project_created entry: {e}"


@pytest.mark.requirement("R24")
@pytest.mark.category("side_effects")
def test_member_added_is_recorded(api, http):
    owner, bob = api.user("owner"), api.user("bob")
    project = api.project(owner)
    api.add_member(project, owner, bob, "viewer")
    entries = api.activity(project, bob)
    assert [e.get("type") for e in entries] == ["member_added", "project_created"], f"entries: {api.shape(entries)}"
    e = entries[0]
    assert api.facts(e, "user_id", "role") == ("member_added", owner.id, None, {"user_id": bob.id, "role": "viewer"}), (
        f"the member_added entry: {e}"
    )


@pytest.mark.requirement("R24")
@pytest.mark.category("side_effects")
def test_task_created_is_recorded(api, http, board):
    task = api.task(board.project, board.member, title="Tracked", assignee_id=board.owner.id)
    e = api.activity(board.project, board.viewer)[0]
    assert (e.get("type"), e.get("actor_id"), e.get("task_id")) == ("task_created", board.member.id, task["id"]), (
        f"the newest entry should be task_created by the member: {e}"
    )
    assert api.facts(e, "title", "assignee_id")[3] == {"title": "Tracked", "assignee_id": board.owner.id}, f"task_created data: {e.get('data')}"


@pytest.mark.requirement("R24")
@pytest.mark.category("side_effects")
def test_status_change_is_recorded(api, http, board):
    task = api.task(board.project, board.member)
    api.patch_task(board.project, board.owner, task, status="in_progress")
    entries = api.activity(board.project, board.member)
    e = entries[0]
    assert api.facts(e, "from", "to") == ("task_status_changed", board.owner.id, task["id"], {"from": "todo", "to": "in_progress"}), (
        f"the task_status_changed entry: {e}"
    )


@pytest.mark.requirement("R24")
@pytest.mark.category("side_effects")
def test_assignment_is_recorded(api, http, board):
    task = api.task(board.project, board.owner)
    api.patch_task(board.project, board.owner, task, assignee_id=board.member.id)
    api.patch_task(board.project, board.member, task, assignee_id=None)
    entries = api.activity(board.project, board.owner)[:2]
    expected = [
        ("task_assigned", board.member.id, task["id"], {"assignee_id": None, "previous_assignee_id": board.member.id}),
        ("task_assigned", board.owner.id, task["id"], {"assignee_id": board.member.id, "previous_assignee_id": None}),
    ]
    got = [api.facts(e, "assignee_id", "previous_assignee_id") for e in entries]
    assert got == expected, f"two task_assigned entries, newest first: expected {expected}, got {got}"


@pytest.mark.requirement("R24")
@pytest.mark.category("side_effects")
def test_comment_is_recorded(api, http, board):
    task, comment = api.commented(board, board.owner, board.member)
    e = api.activity(board.project, board.owner)[0]
    assert api.facts(e, "comment_id") == ("comment_added", board.member.id, task["id"], {"comment_id": comment["id"]}), (
        f"the comment_added entry: {e}"
    )


@pytest.mark.requirement("R24")
@pytest.mark.category("side_effects")
def test_role_change_and_removal_are_recorded(api, http, board):
    api.set_role(board.project, board.owner, board.viewer, "member")
    r = http.delete(f"{board.path}/members/{board.member.id}", headers=board.member.headers)
    assert r.status_code == 204, f"a member leaving: {r.status_code} {r.text[:300]}"
    entries = api.activity(board.project, board.owner)[:2]
    expected = [
        ("member_removed", board.member.id, None, {"user_id": board.member.id}),
        ("member_role_changed", board.owner.id, None, {"user_id": board.viewer.id, "from": "viewer", "to": "member"}),
    ]
    got = [api.facts(e, *want[3]) for e, want in zip(entries, expected)]
    assert got == expected, f"newest first: expected {expected}, got {got}"


@pytest.mark.requirement("R24", "R26")
@pytest.mark.category("side_effects")
def test_task_deletion_is_recorded_and_history_kept(api, http, board):
    task = api.task(board.project, board.member, title="Short-lived")
    r = http.delete(f"{board.path}/tasks/{task['id']}", headers=board.owner.headers)
    assert r.status_code == 204, f"owner deleting a task: {r.status_code} {r.text[:300]}"
    entries = api.activity(board.project, board.member)
    assert api.shape(entries[:2]) == [("task_deleted", task["id"]), ("task_created", task["id"])], (
        f"task_deleted should follow task_created, and task_created must remain: {api.shape(entries)}"
    )
    assert api.facts(entries[0], "title")[1:] == (board.owner.id, task["id"], {"title": "Short-lived"}), (
        f"the task_deleted entry: {entries[0]}"
    )


@pytest.mark.requirement("R24")
@pytest.mark.category("side_effects")
def test_failed_requests_record_nothing(api, http, board):
    task = api.task(board.project, board.member)
    before = api.activity(board.project, board.owner)
    attempts = [
        http.post(f"{board.path}/tasks", json={"title": ""}, headers=board.member.headers),
        http.post(f"{board.path}/tasks", json={"title": "viewer"}, headers=board.viewer.headers),
        http.patch(f"{board.path}/tasks/{task['id']}", json={"status": "done"}, headers=board.member.headers),
        http.post(f"{board.path}/tasks/{task['id']}/comments", json={"body": "x"}, headers=board.viewer.headers),
        http.post(f"{board.path}/members", json={"username": board.outsider.username}, headers=board.member.headers),
    ]
    assert [r.status_code for r in attempts] == [422, 403, 409, 403, 403], (
        f"each attempt should fail: {[r.status_code for r in attempts]}"
    )
    after = api.activity(board.project, board.owner)
    assert api.shape(after) == api.shape(before), f"failed requests appended entries: {api.shape(after[: len(after) - len(before)])}"


@pytest.mark.requirement("R24")
@pytest.mark.category("side_effects")
def test_silent_edits_record_nothing(api, http, board):
    task = api.task(board.project, board.member)
    before = api.activity(board.project, board.owner)
    api.patch_task(board.project, board.member, task, title="renamed", description="more", priority="high")
    r = http.patch(board.path, json={"description": "edited"}, headers=board.owner.headers)
    assert r.status_code == 200, f"owner editing the project: {r.status_code} {r.text[:300]}"
    comment = api.comment(board.project, board.member, task)
    r = http.delete(f"{board.path}/tasks/{task['id']}/comments/{comment['id']}", headers=board.member.headers)
    assert r.status_code == 204, f"deleting own comment: {r.status_code} {r.text[:300]}"
    after = api.activity(board.project, board.owner)
    assert api.shape(after) == [("comment_added", task["id"])] + api.shape(before), (
        f"only comment_added should have been appended: {api.shape(after)}"
    )


@pytest.mark.requirement("R25")
@pytest.mark.category("api_surface")
def test_activity_is_newest_first_and_paginated(api, http, board):
    tasks = [api.task(board.project, board.member, title=f"n{i}") for i in range(3)]
    r = http.get(f"{board.path}/activity", params={"limit": 2, "offset": 1}, headers=board.viewer.headers)
    assert r.status_code == 200, f"a viewer reading activity: {r.status_code} {r.text[:300]}"
    page = r.json()
    # project_created, member_added x2, task_created x3 = 6 entries
    assert (page.get("total"), page.get("limit"), page.get("offset")) == (6, 2, 1), f"envelope: {page}"
    assert api.shape(page["items"]) == [("task_created", tasks[1]["id"]), ("task_created", tasks[0]["id"])], (
        f"limit=2&offset=1 should skip the newest entry: {api.shape(page['items'])}"
    )


@pytest.mark.requirement("R25")
@pytest.mark.category("authorization")
def test_every_role_reads_activity_but_outsiders_do_not(api, http, board):
    for who in ("owner", "member", "viewer"):
        r = http.get(f"{board.path}/activity", headers=getattr(board, who).headers)
        assert r.status_code == 200, f"a {who} reading activity: {r.status_code} {r.text[:300]}"
    r = http.get(f"{board.path}/activity", headers=board.outsider.headers)
    api.error(r, 404, "not_found", "an outsider reading activity")
