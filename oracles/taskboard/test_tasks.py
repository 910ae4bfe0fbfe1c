"""Tasks: creation, assignment, the status workflow, permissions, filters and pagination (spec.md: Tasks)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R15")
@pytest.mark.category("api_surface")
def test_create_task_with_defaults(api, http, board):
    r = http.post(f"{board.path}/tasks", json={"title": "Write the brief"}, headers=board.member.headers)
    assert r.status_code == 201, f"a member creating a task: {r.status_code} {r.text[:300]}"
    task = r.json()
    expected = {
        "title": "Write the brief",
        "description": "",
        "status": "todo",
        "priority": "medium",
        "assignee_id": None,
        "completed_at": None,
        "created_by": board.member.id,
        "project_id": board.project["id"],
    }
    got = {k: task.get(k, "<missing>") for k in expected}
    assert got == expected, f"new task fields: expected {expected}, got {got}"
    fetched = api.get_task(board.project, board.viewer, task["id"])
    assert fetched.get("title") == "Write the brief", f"a viewer reading the task back: {fetched}"


@pytest.mark.requirement("R15")
@pytest.mark.category("api_surface")
def test_create_task_with_all_fields(api, http, board):
    body = {"title": "Ship it", "description": "all of it", "priority": "high", "assignee_id": board.member.id}
    r = http.post(f"{board.path}/tasks", json=body, headers=board.owner.headers)
    assert r.status_code == 201, f"an owner creating a full task: {r.status_code} {r.text[:300]}"
    got = {k: r.json().get(k) for k in body}
    assert got == body, f"the task should store every field sent: expected {body}, got {got}"


@pytest.mark.requirement("R15", "R28")
@pytest.mark.category("validation")
def test_create_task_rejects_invalid_titles(api, http, board):
    cases = {"missing": {}, "empty": {"title": ""}, "blank": {"title": " \t "}, "201 characters": {"title": "t" * 201}, "a list": {"title": ["a list"]}}
    problems = [
        api.validation_problem(http.post(f"{board.path}/tasks", json=body, headers=board.member.headers), ["title"], f"task title {label}")
        for label, body in cases.items()
    ]
    problems = [p for p in problems if p]
    assert not problems, "invalid task titles were not rejected as the spec says: " + "\n".join(problems)
    assert api.tasks(board.project, board.owner)["total"] == 0, "a rejected create must not create a task"


@pytest.mark.requirement("R15", "R28")
@pytest.mark.category("validation")
def test_create_task_rejects_invalid_priority_and_description(api, http, board):
    cases = [
        ({"title": "ok", "priority": "urgent"}, "priority"),
        ({"title": "ok", "priority": "HIGH"}, "priority"),
        ({"title": "ok", "description": "d" * 5001}, "description"),
        ({"title": "ok", "description": None}, "description"),
    ]
    problems = [
        api.validation_problem(http.post(f"{board.path}/tasks", json=body, headers=board.member.headers), [field], f"task with {str(body)[:50]}")
        for body, field in cases
    ]
    problems = [p for p in problems if p]
    assert not problems, "invalid task fields were not rejected as the spec says: " + "\n".join(problems)
    assert api.tasks(board.project, board.owner)["total"] == 0, "a rejected create must not create a task"


@pytest.mark.requirement("R15")
@pytest.mark.category("validation")
def test_create_task_accepts_boundary_lengths(api, http, board):
    r = http.post(f"{board.path}/tasks", json={"title": "t" * 200, "description": "d" * 5000}, headers=board.member.headers)
    assert r.status_code == 201, f"a 200-character title and 5000-character description are valid: {r.status_code} {r.text[:200]}"


@pytest.mark.requirement("R15")
@pytest.mark.category("authorization")
def test_viewer_cannot_create_a_task(api, http, board):
    r = http.post(f"{board.path}/tasks", json={"title": "from a viewer"}, headers=board.viewer.headers)
    api.error(r, 403, "forbidden", "a viewer creating a task")
    assert api.tasks(board.project, board.owner)["total"] == 0, "the viewer's rejected task was created anyway"


@pytest.mark.requirement("R16")
@pytest.mark.category("state")
def test_assign_and_unassign(api, http, board):
    task = api.task(board.project, board.owner)
    updated = api.patch_task(board.project, board.member, task, assignee_id=board.owner.id)
    assert updated.get("assignee_id") == board.owner.id, f"assigning to the owner: {updated}"
    assert api.get_task(board.project, board.viewer, task["id"]).get("assignee_id") == board.owner.id, "the assignment did not persist"
    updated = api.patch_task(board.project, board.member, task, assignee_id=None)
    assert updated.get("assignee_id") is None, f"assignee_id null should unassign: {updated}"
    assert api.get_task(board.project, board.viewer, task["id"]).get("assignee_id") is None, "the unassignment did not persist"


@pytest.mark.requirement("R16", "R28")
@pytest.mark.category("validation")
@pytest.mark.parametrize("who", ["viewer", "outsider", "unknown"])
def test_assignee_must_be_an_owner_or_member(api, http, board, who):
    assignee = "no-such-user-000" if who == "unknown" else getattr(board, who).id
    r = http.post(f"{board.path}/tasks", json={"title": "assign me", "assignee_id": assignee}, headers=board.owner.headers)
    api.assert_invalid(r, ["assignee_id"], f"creating a task assigned to a {who}")
    task = api.task(board.project, board.owner)
    r = http.patch(f"{board.path}/tasks/{task['id']}", json={"assignee_id": assignee}, headers=board.owner.headers)
    api.assert_invalid(r, ["assignee_id"], f"assigning an existing task to a {who}")
    assert api.get_task(board.project, board.owner, task["id"]).get("assignee_id") is None, "a rejected assignment changed the task"


@pytest.mark.requirement("R17")
@pytest.mark.category("state")
def test_allowed_status_walk(api, http, board):
    task = api.task(board.project, board.member)
    walk = ["in_progress", "done", "in_progress", "todo", "cancelled", "todo", "in_progress", "cancelled"]
    for status in walk:
        r = http.patch(f"{board.path}/tasks/{task['id']}", json={"status": status}, headers=board.member.headers)
        assert r.status_code == 200, f"allowed change to {status}: {r.status_code} {r.text[:300]}"
        assert r.json().get("status") == status, f"status should now be {status}: {r.text[:300]}"
    assert api.get_task(board.project, board.viewer, task["id"]).get("status") == "cancelled", "the final status did not persist"


@pytest.mark.requirement("R17")
@pytest.mark.category("state")
@pytest.mark.parametrize(
    "path, target",
    [
        ([], "done"),
        (["in_progress", "done"], "todo"),
        (["in_progress", "done"], "cancelled"),
        (["cancelled"], "in_progress"),
        (["cancelled"], "done"),
    ],
    ids=["todo-to-done", "done-to-todo", "done-to-cancelled", "cancelled-to-in_progress", "cancelled-to-done"],
)
def test_forbidden_transitions_get_409(api, http, board, path, target):
    task = api.move(board.project, board.member, api.task(board.project, board.member), *path)
    before = task["status"]
    r = http.patch(f"{board.path}/tasks/{task['id']}", json={"status": target}, headers=board.member.headers)
    api.error(r, 409, "invalid_transition", f"changing status {before} -> {target}")
    after = api.get_task(board.project, board.member, task["id"])
    assert after.get("status") == before, f"a rejected transition changed the status to {after.get('status')}"


@pytest.mark.requirement("R17", "R28")
@pytest.mark.category("validation")
def test_unknown_status_gets_422(api, http, board):
    task = api.task(board.project, board.member)
    problems = []
    for status in ("finished", "DONE", "", None):
        r = http.patch(f"{board.path}/tasks/{task['id']}", json={"status": status}, headers=board.member.headers)
        problems.append(api.validation_problem(r, ["status"], f"setting status {status!r}"))
    problems = [p for p in problems if p]
    assert not problems, "unknown statuses were not rejected as the spec says: " + "\n".join(problems)
    assert api.get_task(board.project, board.member, task["id"])["status"] == "todo", "a rejected status changed the task"


@pytest.mark.requirement("R18")
@pytest.mark.category("state")
def test_completed_at_follows_done(api, http, board):
    task = api.task(board.project, board.member)
    task = api.move(board.project, board.member, task, "in_progress")
    assert task.get("completed_at") is None, f"completed_at must be null before done: {task}"
    task = api.patch_task(board.project, board.member, task, status="done")
    assert isinstance(task.get("completed_at"), str) and task["completed_at"], f"completed_at must be set on entering done: {task}"
    assert api.get_task(board.project, board.member, task["id"]).get("completed_at") == task["completed_at"], "completed_at did not persist"
    task = api.patch_task(board.project, board.member, task, status="in_progress")
    assert task.get("completed_at") is None, f"completed_at must be cleared on reopening: {task}"


@pytest.mark.requirement("R19")
@pytest.mark.category("state")
def test_edit_task_fields(api, http, board):
    task = api.task(board.project, board.owner, title="Old title")
    api.patch_task(board.project, board.member, task, title="New title", description="details", priority="low")
    got = api.get_task(board.project, board.viewer, task["id"])
    assert (got.get("title"), got.get("description"), got.get("priority"), got.get("status")) == (
        "New title", "details", "low", "todo"
    ), f"a member's edit of an owner's task should persist and leave status alone: {got}"


@pytest.mark.requirement("R19")
@pytest.mark.category("authorization")
def test_viewer_cannot_edit_a_task(api, http, board):
    task = api.task(board.project, board.owner, title="Untouchable")
    for body in ({"title": "viewer was here"}, {"status": "in_progress"}, {"assignee_id": board.member.id}):
        r = http.patch(f"{board.path}/tasks/{task['id']}", json=body, headers=board.viewer.headers)
        api.error(r, 403, "forbidden", f"a viewer updating a task with {body}")
    got = api.get_task(board.project, board.owner, task["id"])
    assert (got.get("title"), got.get("status"), got.get("assignee_id")) == ("Untouchable", "todo", None), (
        f"the viewer's rejected edits changed the task: {got}"
    )


@pytest.mark.requirement("R19")
@pytest.mark.category("authorization")
def test_member_deletes_own_task(api, http, board):
    task = api.task(board.project, board.member)
    r = http.delete(f"{board.path}/tasks/{task['id']}", headers=board.member.headers)
    assert r.status_code == 204, f"a member deleting a task they created: {r.status_code} {r.text[:300]}"
    r = http.get(f"{board.path}/tasks/{task['id']}", headers=board.member.headers)
    api.error(r, 404, "not_found", "reading a deleted task")


@pytest.mark.requirement("R19")
@pytest.mark.category("authorization")
def test_member_cannot_delete_someone_elses_task(api, http, board):
    task = api.task(board.project, board.owner)
    r = http.delete(f"{board.path}/tasks/{task['id']}", headers=board.member.headers)
    api.error(r, 403, "forbidden", "a member deleting the owner's task")
    api.get_task(board.project, board.owner, task["id"])


@pytest.mark.requirement("R19")
@pytest.mark.category("authorization")
def test_owner_deletes_any_task(api, http, board):
    task = api.task(board.project, board.member)
    r = http.delete(f"{board.path}/tasks/{task['id']}", headers=board.owner.headers)
    assert r.status_code == 204, f"the owner deleting a member's task: {r.status_code} {r.text[:300]}"
    assert api.tasks(board.project, board.owner)["total"] == 0, "the deleted task is still listed"


@pytest.mark.requirement("R19")
@pytest.mark.category("authorization")
def test_viewer_cannot_delete_a_task(api, http, board):
    task = api.task(board.project, board.member)
    r = http.delete(f"{board.path}/tasks/{task['id']}", headers=board.viewer.headers)
    api.error(r, 403, "forbidden", "a viewer deleting a task")
    api.get_task(board.project, board.owner, task["id"])


@pytest.mark.requirement("R21")
@pytest.mark.category("authorization")
def test_task_is_not_reachable_under_another_project(api, http, board):
    other = api.project(board.owner)
    task = api.task(other, board.owner)
    r = http.get(f"{board.path}/tasks/{task['id']}", headers=board.owner.headers)
    api.error(r, 404, "not_found", "reading a task through a project it does not belong to")


@pytest.mark.requirement("R10")
@pytest.mark.category("authorization")
def test_unknown_task_gets_404(api, http, board):
    r = http.get(f"{board.path}/tasks/no-such-task-000", headers=board.owner.headers)
    api.error(r, 404, "not_found", "reading a task id that does not exist")


@pytest.mark.requirement("R20")
@pytest.mark.category("api_surface")
def test_filter_by_status(api, http, board):
    a = api.task(board.project, board.member, title="a")
    b = api.move(board.project, board.member, api.task(board.project, board.member, title="b"), "in_progress")
    c = api.move(board.project, board.member, api.task(board.project, board.member, title="c"), "in_progress", "done")
    expectations = {"todo": [a["id"]], "in_progress": [b["id"]], "done": [c["id"]], "cancelled": []}
    for status, ids in expectations.items():
        page = api.tasks(board.project, board.viewer, status=status)
        assert [t["id"] for t in page["items"]] == ids and page["total"] == len(ids), f"status={status}: {page}"


@pytest.mark.requirement("R20")
@pytest.mark.category("api_surface")
def test_filter_by_assignee_and_unassigned(api, http, board):
    mine = api.task(board.project, board.owner, assignee_id=board.member.id)
    owners = api.task(board.project, board.owner, assignee_id=board.owner.id)
    loose = api.task(board.project, board.owner)
    checks = {board.member.id: [mine["id"]], board.owner.id: [owners["id"]], "none": [loose["id"]], "nobody-at-all": []}
    for assignee, ids in checks.items():
        page = api.tasks(board.project, board.member, assignee_id=assignee)
        assert [t["id"] for t in page["items"]] == ids and page["total"] == len(ids), f"assignee_id={assignee}: {page}"


@pytest.mark.requirement("R20")
@pytest.mark.category("api_surface")
def test_task_pagination(api, http, board):
    ids = [api.task(board.project, board.member, title=f"t{i}")["id"] for i in range(5)]
    first = api.tasks(board.project, board.member, limit=2)
    assert [t["id"] for t in first["items"]] == ids[:2], f"limit=2 should give the two oldest tasks: {first}"
    assert (first.get("total"), first.get("limit"), first.get("offset")) == (5, 2, 0), f"envelope for limit=2: {first}"
    last = api.tasks(board.project, board.member, limit=2, offset=4)
    assert [t["id"] for t in last["items"]] == ids[4:], f"offset=4 should give the newest task only: {last}"
    beyond = api.tasks(board.project, board.member, offset=9)
    assert beyond["items"] == [] and beyond["total"] == 5, f"an offset past the end gives no items but the same total: {beyond}"


@pytest.mark.requirement("R20")
@pytest.mark.category("api_surface")
def test_task_list_defaults(api, http, board):
    ids = [api.task(board.project, board.member)["id"] for _ in range(2)]
    page = api.tasks(board.project, board.viewer)
    assert [t["id"] for t in page["items"]] == ids, f"tasks should be listed oldest first: {page}"
    assert (page.get("total"), page.get("limit"), page.get("offset")) == (2, 20, 0), f"default limit 20 and offset 0 should be echoed: {page}"


@pytest.mark.requirement("R20", "R28")
@pytest.mark.category("validation")
@pytest.mark.parametrize(
    "field, values",
    [("limit", [0, 101, "ten"]), ("offset", [-1, "1.5"]), ("status", ["finished", "TODO"])],
    ids=["limit", "offset", "status"],
)
def test_invalid_list_parameters_get_422(api, http, board, field, values):
    problems = []
    for value in values:
        r = http.get(f"{board.path}/tasks", params={field: value}, headers=board.member.headers)
        problems.append(api.validation_problem(r, [field], f"listing tasks with {field}={value!r}"))
    problems = [p for p in problems if p]
    assert not problems, f"invalid {field} values were not rejected as the spec says: " + "\n".join(problems)
