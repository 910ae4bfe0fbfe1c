"""Guards condition by condition and ids of the wrong kind in a body (issue 35).

spec.md, Members: "A project always keeps at least one owner: changing the role of its only
owner ..., or removing its only owner (including the owner leaving), gets 409" -- whoever that
owner is, also when it is not the creator. Tasks: "members only the tasks they created";
Comments: "the comment's author while they are an owner or member" -- authorship travels with a
writing role until a demotion, and comes back with a promotion. Tasks: `assignee_id` "is null or
the id of a user who is currently an owner or member of the project" -- a member of another of
the owner's projects, or a task's, project's or comment's id, is refused like an unknown one.
Every refusal is read back: the project, its members, tasks and activity (R24: "failed requests
... append nothing").
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_backendbench.http.refusals import unchanged

pytestmark = [pytest.mark.tier("base")]


def project_state(api: Any, project: dict[str, Any], reader: Any) -> Any:
    """The members with their roles, the tasks with their assignees, and the activity feed."""
    path = f"/projects/{project['id']}"
    members = api.ok(api.http.get(f"{path}/members", headers=reader.headers), 200, "list members")["items"]
    tasks = api.tasks(project, reader, limit=100)["items"]
    return ([(m.get("user_id"), m.get("role")) for m in members], [(t.get("id"), t.get("assignee_id"), t.get("title")) for t in tasks],
            [e.get("id") for e in api.activity(project, reader)])


# how the owner who took over leaves the only-owner seat: (label, method, path under the project, body, sent by the owner themselves)
SEAT = [
    ("demoted-to-member", "PATCH", "members/{id}", {"role": "member"}),
    ("demoted-to-viewer", "PATCH", "members/{id}", {"role": "viewer"}),
    ("leaves", "DELETE", "members/{id}", None),
]


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
@pytest.mark.parametrize("method,where,body", [pytest.param(*s[1:], id=s[0]) for s in SEAT])
def test_the_only_owner_keeps_the_seat_also_when_not_the_creator(api, http, method, where, body):
    creator, heir, member = api.user("creator"), api.user("heir"), api.user("member")
    project = api.project(creator)
    api.add_member(project, creator, heir, "owner")
    api.add_member(project, creator, member, "member")
    api.ok(http.delete(f"/projects/{project['id']}/members/{creator.id}", headers=creator.headers), 204, "the creator leaves; the heir is the only owner")
    path = f"/projects/{project['id']}/{where.format(id=heir.id)}"
    with unchanged(lambda: project_state(api, project, member), f"the only owner (not the creator) {method} {where}"):
        api.error(http.request(method, path, json=body, headers=heir.headers), 409, "conflict", "the only owner, who did not create the project, giving up the seat")
    api.add_member(project, heir, creator, "owner")
    r = http.request(method, path, json=body, headers=heir.headers)
    assert r.status_code in (200, 204), f"with a second owner again the heir may: {r.status_code} {r.text[:300]}"


# a writing right that rests on authorship and a writing role: (what, the request that uses it)
AUTHORED = ["task", "comment"]


@pytest.mark.requirement("R19", "R23")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("what", AUTHORED)
def test_an_author_demoted_to_viewer_loses_the_right_and_regains_it(api, http, board, what):
    task, comment = api.commented(board, board.member, board.member)
    path = f"{board.path}/tasks/{task['id']}" + (f"/comments/{comment['id']}" if what == "comment" else "")
    api.set_role(board.project, board.owner, board.member, "viewer")
    with unchanged(lambda: (project_state(api, board.project, board.owner), api.ok(http.get(f"{board.path}/tasks/{task['id']}/comments", headers=board.owner.headers), 200, "list comments")["items"]),
                   f"a viewer deleting the {what} they wrote"):
        api.error(http.delete(path, headers=board.member.headers), 403, "forbidden", f"the {what}'s author, now a viewer, deleting it")
    api.set_role(board.project, board.owner, board.member, "member")
    api.ok(http.delete(path, headers=board.member.headers), 204, f"the {what}'s author, a member again, deletes it")


def wrong_assignee(api: Any, board: Any, kind: str) -> str:
    """An id that is not a current owner or member of the board's project."""
    if kind == "member-of-another-project":
        other = api.project(board.owner)
        stranger = api.user("elsewhere")
        api.add_member(other, board.owner, stranger, "member")
        return str(stranger.id)
    task, comment = api.commented(board, board.owner, board.owner)
    return str({"task-id": task["id"], "comment-id": comment["id"], "project-id": board.project["id"]}[kind])


@pytest.mark.requirement("R16", "R24")
@pytest.mark.category("validation")
@pytest.mark.parametrize("kind", ["member-of-another-project", "task-id", "comment-id", "project-id"])
@pytest.mark.parametrize("request_kind", ["create", "update"])
def test_an_assignee_of_the_wrong_project_or_kind_is_refused(api, http, board, kind, request_kind):
    target = wrong_assignee(api, board, kind)
    task = api.task(board.project, board.member, title="Kept")
    send = (lambda: http.post(f"{board.path}/tasks", json={"title": "New", "assignee_id": target}, headers=board.member.headers)) if request_kind == "create" \
        else (lambda: http.patch(f"{board.path}/tasks/{task['id']}", json={"title": "Changed", "assignee_id": target}, headers=board.member.headers))
    with unchanged(lambda: project_state(api, board.project, board.owner), f"a task {request_kind} assigned to a {kind}"):
        problem = api.validation_problem(send(), ["assignee_id"], f"a task {request_kind} with assignee_id of a {kind}")
    assert problem is None, problem
