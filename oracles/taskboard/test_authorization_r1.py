"""R1 (evolved) items: authorization isolation and error precedence across roles and projects."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r1"), pytest.mark.category("authorization")]


@pytest.mark.requirement("R28", "R15")
def test_viewer_sending_an_invalid_body_gets_403_not_422(api, http, board):
    task = api.task(board.project, board.owner)
    r = http.post(f"{board.path}/tasks", json={"title": ""}, headers=board.viewer.headers)
    api.error(r, 403, "forbidden", "a viewer creating a task with an empty title (role is checked before validation)")
    r = http.patch(f"{board.path}/tasks/{task['id']}", json={"status": "nonsense"}, headers=board.viewer.headers)
    api.error(r, 403, "forbidden", "a viewer setting an unknown status (role is checked before validation)")
    r = http.post(f"{board.path}/members", json={"username": "x", "role": "boss"}, headers=board.member.headers)
    api.error(r, 403, "forbidden", "a member adding a member with an invalid body (role is checked before validation)")


@pytest.mark.requirement("R28", "R10")
def test_outsider_sending_anything_gets_404(api, http, board):
    task = api.task(board.project, board.owner)
    attempts = [
        http.post(f"{board.path}/tasks", json={"title": ""}, headers=board.outsider.headers),
        http.patch(f"{board.path}/tasks/{task['id']}", json={"status": "done"}, headers=board.outsider.headers),
        http.delete(f"{board.path}/tasks/{task['id']}", headers=board.outsider.headers),
        http.post(f"{board.path}/members", json={"username": board.outsider.username}, headers=board.outsider.headers),
        http.delete(f"{board.path}/members/{board.member.id}", headers=board.outsider.headers),
    ]
    for r in attempts:
        api.error(r, 404, "not_found", f"an outsider: {r.request.method} {r.request.path_url} (existence must not be revealed)")
    assert api.get_task(board.project, board.owner, task["id"])["status"] == "todo", "an outsider changed the task"


@pytest.mark.requirement("R28", "R6")
def test_authentication_is_checked_first(api, http, board):
    bad = {"Authorization": "Bearer revoked-or-never-issued"}
    for r in (
        http.get("/projects/does-not-exist", headers=bad),
        http.post(f"{board.path}/tasks", json={"title": ""}, headers=bad),
        http.delete(board.path, headers=bad),
    ):
        api.error(r, 401, "unauthorized", f"{r.request.method} {r.request.path_url} with an unknown token")


@pytest.mark.requirement("R28", "R14")
def test_non_owner_removing_a_non_member_gets_404(api, http, board):
    r = http.delete(f"{board.path}/members/{board.outsider.id}", headers=board.member.headers)
    api.error(r, 404, "not_found", "a member removing a user who is not in the project (visibility before role)")


@pytest.mark.requirement("R21")
def test_task_of_another_project_cannot_be_changed_through_this_one(api, http, board):
    other = api.project(board.owner)
    foreign = api.task(other, board.owner, title="Foreign")
    r = http.patch(f"{board.path}/tasks/{foreign['id']}", json={"title": "hijacked"}, headers=board.owner.headers)
    api.error(r, 404, "not_found", "updating another project's task through this project's path")
    r = http.delete(f"{board.path}/tasks/{foreign['id']}", headers=board.owner.headers)
    api.error(r, 404, "not_found", "deleting another project's task through this project's path")
    assert api.get_task(other, board.owner, foreign["id"])["title"] == "Foreign", "the foreign task was modified"


@pytest.mark.requirement("R21", "R10")
def test_member_of_one_project_cannot_reach_anothers_task(api, http, board):
    stranger = api.user("stranger")
    private = api.project(stranger)
    secret = api.task(private, stranger)
    for r in (
        http.get(f"{board.path}/tasks/{secret['id']}", headers=board.member.headers),
        http.get(f"/projects/{private['id']}/tasks/{secret['id']}", headers=board.member.headers),
        http.patch(f"{board.path}/tasks/{secret['id']}", json={"status": "cancelled"}, headers=board.member.headers),
    ):
        api.error(r, 404, "not_found", f"a member of another project: {r.request.method} {r.request.path_url}")
    assert api.get_task(private, stranger, secret["id"])["status"] == "todo", "the private task was changed"


@pytest.mark.requirement("R11", "R15", "R19", "R22")
def test_member_demoted_to_viewer_loses_write_access(api, http, board):
    task = api.task(board.project, board.member)
    api.set_role(board.project, board.owner, board.member, "viewer")
    attempts = [
        http.post(f"{board.path}/tasks", json={"title": "more"}, headers=board.member.headers),
        http.patch(f"{board.path}/tasks/{task['id']}", json={"title": "edit"}, headers=board.member.headers),
        http.delete(f"{board.path}/tasks/{task['id']}", headers=board.member.headers),
        http.post(f"{board.path}/tasks/{task['id']}/comments", json={"body": "hi"}, headers=board.member.headers),
    ]
    for r in attempts:
        api.error(r, 403, "forbidden", f"a member demoted to viewer: {r.request.method} {r.request.path_url}")
    r = http.get(f"{board.path}/tasks/{task['id']}", headers=board.member.headers)
    assert r.status_code == 200, f"a viewer still reads tasks: {r.status_code} {r.text[:200]}"


@pytest.mark.requirement("R23")
def test_author_demoted_to_viewer_cannot_delete_their_comment(api, http, board):
    task, comment = api.commented(board, board.owner, board.member)
    api.set_role(board.project, board.owner, board.member, "viewer")
    r = http.delete(f"{board.path}/tasks/{task['id']}/comments/{comment['id']}", headers=board.member.headers)
    api.error(r, 403, "forbidden", "a comment's author who is now a viewer deleting it")
    r = http.get(f"{board.path}/tasks/{task['id']}/comments", headers=board.member.headers)
    assert [c["id"] for c in r.json()["items"]] == [comment["id"]], f"the comment should remain: {r.text[:300]}"


@pytest.mark.requirement("R23", "R21")
def test_comment_must_belong_to_the_task_in_the_path(api, http, board):
    first, second = api.task(board.project, board.owner), api.task(board.project, board.owner)
    comment = api.comment(board.project, board.member, first)
    r = http.delete(f"{board.path}/tasks/{second['id']}/comments/{comment['id']}", headers=board.owner.headers)
    api.error(r, 404, "not_found", "deleting a comment through a task it is not on")
    r = http.get(f"{board.path}/tasks/{first['id']}/comments", headers=board.owner.headers)
    assert [c["id"] for c in r.json()["items"]] == [comment["id"]], f"the comment should remain: {r.text[:300]}"
