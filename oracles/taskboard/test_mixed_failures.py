"""Failed requests change nothing, also when valid fields travel with the failing one.

spec.md, Errors: "A request that fails changes nothing and records no activity."; Tasks: "The
change is all-or-nothing". Each item sends a request whose other fields are all valid beside
the ONE that makes it fail (422, 409, 404 or 403), then reads the project back (project, members
with roles, tasks with their assignees, comments, activity) and checks that none of the valid
fields was written, nobody was added, removed or unassigned, and no activity was recorded.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

pytestmark = [pytest.mark.tier("r2")]

TASK_KEYS = ("title", "description", "priority", "assignee_id", "status", "completed_at")


def board_state(api: Any, board: Any) -> dict[str, Any]:
    """Everything under the board's project a failed request must leave as it was (read by the owner)."""
    owner = board.owner
    project = api.ok(api.http.get(board.path, headers=owner.headers), 200, "read the project")
    members = api.ok(api.http.get(f"{board.path}/members", headers=owner.headers), 200, "list members")["items"]
    tasks = api.tasks(board.project, owner, limit=100)["items"]
    comments = {}
    for task in tasks:
        page = api.ok(api.http.get(f"{board.path}/tasks/{task['id']}/comments", params={"limit": 100}, headers=owner.headers), 200, "list comments")
        comments[task["id"]] = [(c.get("id"), c.get("body")) for c in page["items"]]
    return {
        "project": (project.get("name"), project.get("description")),
        "members": [(m.get("user_id"), m.get("role")) for m in members],
        "tasks": [(t.get("id"), *(t.get(k) for k in TASK_KEYS)) for t in tasks],
        "comments": comments,
        "activity": [e.get("id") for e in api.activity(board.project, owner)],
    }


def same_problem(before: dict[str, Any], after: dict[str, Any], what: str) -> str | None:
    """Why ``after`` differs from ``before`` (named by part), or None."""
    changed = [part for part in before if before[part] != after[part]]
    if not changed:
        return None
    return f"{what} changed {', '.join(changed)}:\n" + "\n".join(f"  {p}: before {before[p]}\n  {p}: after  {after[p]}" for p in changed)


# ---------------------------------------------------------------- POST /users


@pytest.mark.requirement("R3", "R28")
@pytest.mark.category("validation")
@pytest.mark.parametrize(
    "field, value",
    [("password", "short"), ("password", "p" * 129), ("display_name", "   "), ("display_name", "d" * 65), ("display_name", None)],
    ids=["password-short", "password-long", "display-blank", "display-65", "display-null"],
)
def test_mixed_registration_with_one_invalid_field_creates_no_user(api, http, field, value):
    username = f"mixreg_{uuid.uuid4().hex[:12]}"
    body = {"username": username, "password": "long enough", "display_name": "Valid Name", field: value}
    problem = api.validation_problem(http.post("/users", json=body), [field], f"registering with one invalid field {field}={str(value)[:12]!r}")
    assert problem is None, problem
    api.error(http.post("/auth/token", json={"username": username, "password": "long enough"}), 401, "unauthorized", "logging in as the user a 422 must not have created")
    r = http.post("/users", json={"username": username, "password": "long enough"})
    assert r.status_code == 201, f"the username must still be free after the rejected registration: {r.status_code} {r.text[:200]}"


@pytest.mark.requirement("R4", "R28")
@pytest.mark.category("state")
def test_mixed_registration_with_a_taken_username_keeps_the_first_user(api, http):
    created, password = api.register("first", display_name="First Display")
    r = http.post("/users", json={"username": created["username"], "password": "a different password", "display_name": "Second Display"})
    api.error(r, 409, "conflict", "registering a taken username with a valid password and display_name")
    api.error(http.post("/auth/token", json={"username": created["username"], "password": "a different password"}), 401, "unauthorized",
              "logging in with the password the 409 must not have stored")
    token = api.login(created["username"], password)
    me = api.ok(http.get("/me", headers={"Authorization": f"Bearer {token}"}), 200, "read the user")
    assert (me.get("id"), me.get("display_name")) == (created["id"], "First Display"), f"the 409 must leave the first user as it was: {me}"


# ---------------------------------------------------------------- POST /projects, PATCH /projects/{id}

INVALID_PROJECT = {"name": "   ", "description": "d" * 2001}


@pytest.mark.requirement("R8", "R28")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field", list(INVALID_PROJECT), ids=list(INVALID_PROJECT))
def test_mixed_project_creation_with_one_invalid_field_creates_nothing(api, http, field):
    user = api.user("maker")
    body = {"name": f"Project {uuid.uuid4().hex[:8]}", "description": "a valid description", field: INVALID_PROJECT[field]}
    problem = api.validation_problem(http.post("/projects", json=body, headers=user.headers), [field], f"a project whose only invalid field is {field}")
    assert problem is None, problem
    page = api.ok(http.get("/projects", headers=user.headers), 200, "list projects")
    assert page["items"] == [] and page["total"] == 0, f"a rejected project must not be created: {page}"


@pytest.mark.requirement("R8", "R11", "R24", "R28")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field", list(INVALID_PROJECT), ids=list(INVALID_PROJECT))
def test_mixed_project_update_with_one_invalid_field_changes_nothing(api, http, board, field):
    before = board_state(api, board)
    body = {"name": "Renamed", "description": "new words", field: INVALID_PROJECT[field]}
    problem = api.validation_problem(http.patch(board.path, json=body, headers=board.owner.headers), [field], f"a project update whose only invalid field is {field}")
    assert problem is None, problem
    problem = same_problem(before, board_state(api, board), f"a project update rejected for {field}")
    assert problem is None, problem


@pytest.mark.requirement("R10", "R11", "R24", "R28")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("who, status, code", [("member", 403, "forbidden"), ("viewer", 403, "forbidden"), ("outsider", 404, "not_found")])
def test_mixed_owner_only_requests_by_others_change_nothing(api, http, board, who, status, code):
    caller = getattr(board, who)
    newcomer = api.user("newcomer")
    task = api.task(board.project, board.member, assignee_id=board.member.id)
    before = board_state(api, board)
    calls = [
        ("PATCH", board.path, {"name": "Hijacked", "description": "hijacked"}),
        ("POST", f"{board.path}/members", {"username": newcomer.username, "role": "owner"}),
        ("PATCH", f"{board.path}/members/{board.member.id}", {"role": "viewer"}),
        ("DELETE", f"{board.path}/members/{board.owner.id}", None),
        ("DELETE", board.path, None),
    ]
    if who != "member":
        calls.insert(4, ("DELETE", f"{board.path}/members/{board.member.id}", None))
    for method, path, body in calls:
        api.error(http.request(method, path, json=body, headers=caller.headers), status, code, f"a {who}: {method} {path} with a valid body")
    problem = same_problem(before, board_state(api, board), f"owner-only requests refused for a {who}")
    assert problem is None, problem
    assert api.get_task(board.project, board.owner, task["id"])["assignee_id"] == board.member.id, "a refused removal or demotion must not unassign"
    api.error(http.get(board.path, headers=newcomer.headers), 404, "not_found", "the user a refused add must not have made a member")


# ---------------------------------------------------------------- members: POST, PATCH, DELETE


@pytest.mark.requirement("R12", "R24", "R28")
@pytest.mark.category("validation")
@pytest.mark.parametrize("case", ["invalid-role", "unknown-username"])
def test_mixed_member_addition_with_one_invalid_field_adds_nobody(api, http, board, case):
    before = board_state(api, board)
    if case == "unknown-username":
        field, body = "username", {"username": f"nobody_{uuid.uuid4().hex[:10]}", "role": "owner"}
    else:
        field, body = "role", {"username": board.outsider.username, "role": "boss"}
    problem = api.validation_problem(http.post(f"{board.path}/members", json=body, headers=board.owner.headers), [field], f"adding a member with one invalid field ({case})")
    assert problem is None, problem
    problem = same_problem(before, board_state(api, board), f"a member addition rejected for {field}")
    assert problem is None, problem
    api.error(http.get(board.path, headers=board.outsider.headers), 404, "not_found", "the outsider after a rejected addition")


@pytest.mark.requirement("R12", "R24", "R27")
@pytest.mark.category("state")
def test_mixed_adding_an_existing_member_with_another_role_changes_nothing(api, http, board):
    task = api.task(board.project, board.member, assignee_id=board.member.id)
    before = board_state(api, board)
    for username, role in ((board.viewer.username, "owner"), (board.member.username, "viewer")):
        api.error(http.post(f"{board.path}/members", json={"username": username, "role": role}, headers=board.owner.headers), 409, "conflict",
                  f"adding the existing {username} again with a valid role {role}")
    problem = same_problem(before, board_state(api, board), "additions refused with 409")
    assert problem is None, problem
    assert api.get_task(board.project, board.owner, task["id"])["assignee_id"] == board.member.id, "a refused re-add as viewer must not unassign"
    api.error(http.post(f"{board.path}/tasks", json={"title": "still a viewer"}, headers=board.viewer.headers), 403, "forbidden", "the viewer after a refused re-add as owner")


@pytest.mark.requirement("R11", "R13", "R24", "R27")
@pytest.mark.category("state")
def test_mixed_refused_role_changes_change_nothing(api, http, board):
    task = api.task(board.project, board.owner, assignee_id=board.owner.id)
    before = board_state(api, board)
    problem = api.validation_problem(http.patch(f"{board.path}/members/{board.member.id}", json={"role": "chief"}, headers=board.owner.headers), ["role"], "an invalid role")
    assert problem is None, problem
    api.error(http.patch(f"{board.path}/members/{board.owner.id}", json={"role": "viewer"}, headers=board.owner.headers), 409, "conflict",
              "the only owner demoting themselves to viewer")
    api.error(http.patch(f"{board.path}/members/{board.outsider.id}", json={"role": "owner"}, headers=board.owner.headers), 404, "not_found",
              "a valid role for a user who is not a member")
    problem = same_problem(before, board_state(api, board), "refused role changes")
    assert problem is None, problem
    assert api.get_task(board.project, board.owner, task["id"])["assignee_id"] == board.owner.id, "a refused demotion to viewer must not unassign"
    api.error(http.get(board.path, headers=board.outsider.headers), 404, "not_found", "the outsider after a refused role change")


@pytest.mark.requirement("R13", "R14", "R24", "R27")
@pytest.mark.category("state")
def test_mixed_refused_removals_keep_members_and_assignments(api, http, board):
    owned = api.task(board.project, board.owner, assignee_id=board.owner.id)
    assigned = api.task(board.project, board.member, assignee_id=board.member.id)
    before = board_state(api, board)
    api.error(http.delete(f"{board.path}/members/{board.owner.id}", headers=board.owner.headers), 409, "conflict", "the only owner leaving")
    api.error(http.delete(f"{board.path}/members/{board.member.id}", headers=board.viewer.headers), 403, "forbidden", "a viewer removing a member")
    api.error(http.delete(f"{board.path}/members/{board.outsider.id}", headers=board.owner.headers), 404, "not_found", "removing a user who is not a member")
    problem = same_problem(before, board_state(api, board), "refused removals")
    assert problem is None, problem
    got = (api.get_task(board.project, board.owner, owned["id"])["assignee_id"], api.get_task(board.project, board.owner, assigned["id"])["assignee_id"])
    assert got == (board.owner.id, board.member.id), f"refused removals must not unassign anybody: {got}"


# ---------------------------------------------------------------- tasks: POST, PATCH, DELETE

INVALID_TASK = {"title": "   ", "description": "d" * 5001, "priority": "urgent", "assignee_id": "viewer"}


@pytest.mark.requirement("R15", "R16", "R24", "R28")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field", list(INVALID_TASK), ids=list(INVALID_TASK))
def test_mixed_task_creation_with_one_invalid_field_creates_nothing(api, http, board, field):
    before = board_state(api, board)
    body = {"title": "Write the report", "description": "by Friday", "priority": "high", "assignee_id": board.member.id}
    body[field] = board.viewer.id if field == "assignee_id" else INVALID_TASK[field]
    problem = api.validation_problem(http.post(f"{board.path}/tasks", json=body, headers=board.owner.headers), [field], f"a task whose only invalid field is {field}")
    assert problem is None, problem
    problem = same_problem(before, board_state(api, board), f"a task rejected for {field}")
    assert problem is None, problem


@pytest.mark.requirement("R16", "R17", "R19", "R24", "R28")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field", [*INVALID_TASK, "status"], ids=[*INVALID_TASK, "status"])
def test_mixed_task_update_with_one_invalid_field_changes_nothing(api, http, board, field):
    task = api.task(board.project, board.member, title="Original", description="original", priority="low")
    before = board_state(api, board)
    body = {"title": "Changed", "description": "changed", "priority": "high", "assignee_id": board.member.id, "status": "in_progress"}
    body[field] = {"assignee_id": board.outsider.id, "status": "finished"}.get(field, INVALID_TASK.get(field))
    r = http.patch(f"{board.path}/tasks/{task['id']}", json=body, headers=board.member.headers)
    problem = api.validation_problem(r, [field], f"a task update whose only invalid field is {field}")
    assert problem is None, problem
    problem = same_problem(before, board_state(api, board), f"a task update rejected for {field}")
    assert problem is None, problem


@pytest.mark.requirement("R10", "R19", "R21", "R24")
@pytest.mark.category("authorization")
def test_mixed_refused_task_changes_keep_the_task_and_its_comments(api, http, board):
    task = api.task(board.project, board.owner, title="Kept", priority="low")
    api.comment(board.project, board.member, task, "kept comment")
    other = api.project(board.owner)
    body = {"title": "Changed", "priority": "high", "assignee_id": board.member.id, "status": "in_progress"}
    before = board_state(api, board)
    api.error(http.patch(f"{board.path}/tasks/{task['id']}", json=body, headers=board.viewer.headers), 403, "forbidden", "a viewer sending a valid task update")
    api.error(http.delete(f"{board.path}/tasks/{task['id']}", headers=board.viewer.headers), 403, "forbidden", "a viewer deleting a task")
    api.error(http.delete(f"{board.path}/tasks/{task['id']}", headers=board.member.headers), 403, "forbidden", "a member deleting a task someone else created")
    api.error(http.patch(f"{board.path}/tasks/{task['id']}", json=body, headers=board.outsider.headers), 404, "not_found", "an outsider sending a valid task update")
    api.error(http.patch(f"/projects/{other['id']}/tasks/{task['id']}", json=body, headers=board.owner.headers), 404, "not_found",
              "a valid update of the task through another project's path")
    api.error(http.delete(f"/projects/{other['id']}/tasks/{task['id']}", headers=board.owner.headers), 404, "not_found", "deleting the task through another project's path")
    problem = same_problem(before, board_state(api, board), "refused task changes")
    assert problem is None, problem
    assert api.activity(other, board.owner)[0].get("type") == "project_created", "refused requests under the other project must record nothing there"


# ---------------------------------------------------------------- comments: POST, DELETE


@pytest.mark.requirement("R22", "R23", "R24")
@pytest.mark.category("authorization")
def test_mixed_refused_comment_changes_change_nothing(api, http, board):
    task = api.task(board.project, board.member)
    comment = api.comment(board.project, board.member, task, "the member's comment")
    other_task = api.task(board.project, board.owner)
    before = board_state(api, board)
    base = f"{board.path}/tasks/{task['id']}/comments"
    api.error(http.post(base, json={"body": "a valid comment"}, headers=board.viewer.headers), 403, "forbidden", "a viewer posting a valid comment")
    api.error(http.post(base, json={"body": "a valid comment"}, headers=board.outsider.headers), 404, "not_found", "an outsider posting a valid comment")
    api.error(http.post(f"{board.path}/tasks/no-such-task-{uuid.uuid4().hex[:6]}/comments", json={"body": "a valid comment"}, headers=board.member.headers), 404, "not_found",
              "a valid comment on a task that does not exist")
    api.error(http.delete(f"{base}/{comment['id']}", headers=board.viewer.headers), 403, "forbidden", "a viewer deleting a member's comment")
    api.error(http.delete(f"{board.path}/tasks/{other_task['id']}/comments/{comment['id']}", headers=board.owner.headers), 404, "not_found",
              "deleting the comment through another task's path")
    problem = same_problem(before, board_state(api, board), "refused comment changes")
    assert problem is None, problem
