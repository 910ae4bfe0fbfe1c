"""Comments on tasks: who may write, list and delete them (spec.md: Comments)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R22")
@pytest.mark.category("api_surface")
def test_add_and_list_comments(api, http, board):
    task = api.task(board.project, board.owner)
    url = f"{board.path}/tasks/{task['id']}/comments"
    r = http.post(url, json={"body": "first!"}, headers=board.member.headers)
    assert r.status_code == 201, f"a member commenting: {r.status_code} {r.text[:300]}"
    first = r.json()
    assert (first.get("body"), first.get("author_id"), first.get("task_id")) == ("first!", board.member.id, task["id"]), (
        f"the comment should echo body, author_id and task_id: {first}"
    )
    second = api.comment(board.project, board.owner, task, "second")
    r = http.get(url, headers=board.viewer.headers)
    assert r.status_code == 200, f"a viewer listing comments: {r.status_code} {r.text[:300]}"
    page = r.json()
    assert [c["id"] for c in page["items"]] == [first["id"], second["id"]], f"comments should be oldest first: {page}"
    assert page.get("total") == 2, f"total should be 2: {page}"


@pytest.mark.requirement("R22")
@pytest.mark.category("api_surface")
def test_comment_pagination(api, http, board):
    task = api.task(board.project, board.owner)
    ids = [api.comment(board.project, board.member, task, f"c{i}")["id"] for i in range(3)]
    r = http.get(f"{board.path}/tasks/{task['id']}/comments", params={"limit": 1, "offset": 1}, headers=board.member.headers)
    assert r.status_code == 200, f"listing comments with limit=1&offset=1: {r.status_code} {r.text[:300]}"
    page = r.json()
    assert [c["id"] for c in page["items"]] == ids[1:2], f"limit=1&offset=1 should give the second comment: {page}"
    assert (page.get("total"), page.get("limit"), page.get("offset")) == (3, 1, 1), f"envelope: {page}"


@pytest.mark.requirement("R22")
@pytest.mark.category("authorization")
def test_viewer_cannot_comment(api, http, board):
    task = api.task(board.project, board.owner)
    r = http.post(f"{board.path}/tasks/{task['id']}/comments", json={"body": "can I?"}, headers=board.viewer.headers)
    api.error(r, 403, "forbidden", "a viewer commenting")
    r = http.get(f"{board.path}/tasks/{task['id']}/comments", headers=board.owner.headers)
    assert r.json().get("total") == 0, f"the viewer's rejected comment was stored: {r.text[:300]}"


@pytest.mark.requirement("R22", "R28")
@pytest.mark.category("validation")
def test_comment_validation(api, http, board):
    task = api.task(board.project, board.owner)
    url = f"{board.path}/tasks/{task['id']}/comments"
    cases = {"missing": {}, "empty": {"body": ""}, "blank": {"body": "   "}, "2001 characters": {"body": "b" * 2001}, "a number": {"body": 7}}
    problems = [
        api.validation_problem(http.post(url, json=body, headers=board.member.headers), ["body"], f"comment body {label}")
        for label, body in cases.items()
    ]
    problems = [p for p in problems if p]
    assert not problems, "invalid comments were not rejected as the spec says: " + "\n".join(problems)
    r = http.post(url, json={"body": "b" * 2000}, headers=board.member.headers)
    assert r.status_code == 201, f"a 2000-character comment is valid: {r.status_code} {r.text[:200]}"


@pytest.mark.requirement("R23")
@pytest.mark.category("authorization")
def test_author_deletes_own_comment(api, http, board):
    task, comment = api.commented(board, board.owner, board.member)
    r = http.delete(f"{board.path}/tasks/{task['id']}/comments/{comment['id']}", headers=board.member.headers)
    assert r.status_code == 204, f"the author deleting their comment: {r.status_code} {r.text[:300]}"
    r = http.get(f"{board.path}/tasks/{task['id']}/comments", headers=board.member.headers)
    assert r.json().get("items") == [], f"the deleted comment is still listed: {r.text[:300]}"


@pytest.mark.requirement("R23")
@pytest.mark.category("authorization")
def test_other_member_cannot_delete_a_comment(api, http, board):
    task, comment = api.commented(board, board.owner, board.owner)
    for who in ("member", "viewer"):
        r = http.delete(f"{board.path}/tasks/{task['id']}/comments/{comment['id']}", headers=getattr(board, who).headers)
        api.error(r, 403, "forbidden", f"a {who} deleting the owner's comment")
    r = http.get(f"{board.path}/tasks/{task['id']}/comments", headers=board.owner.headers)
    assert [c["id"] for c in r.json()["items"]] == [comment["id"]], f"the comment should survive: {r.text[:300]}"


@pytest.mark.requirement("R23")
@pytest.mark.category("authorization")
def test_owner_deletes_any_comment(api, http, board):
    task, comment = api.commented(board, board.member, board.member)
    r = http.delete(f"{board.path}/tasks/{task['id']}/comments/{comment['id']}", headers=board.owner.headers)
    assert r.status_code == 204, f"the owner deleting a member's comment: {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R26")
@pytest.mark.category("state")
def test_deleting_a_task_deletes_its_comments(api, http, board):
    task, comment = api.commented(board, board.member, board.member)
    r = http.delete(f"{board.path}/tasks/{task['id']}", headers=board.member.headers)
    assert r.status_code == 204, f"deleting a commented task: {r.status_code} {r.text[:300]}"
    r = http.get(f"{board.path}/tasks/{task['id']}/comments", headers=board.member.headers)
    api.error(r, 404, "not_found", "listing comments of a deleted task")
    r = http.delete(f"{board.path}/tasks/{task['id']}/comments/{comment['id']}", headers=board.owner.headers)
    api.error(r, 404, "not_found", "deleting a comment of a deleted task")


@pytest.mark.requirement("R21")
@pytest.mark.category("authorization")
def test_comments_of_another_projects_task_get_404(api, http, board):
    other = api.project(board.owner)
    foreign = api.task(other, board.owner)
    api.comment(other, board.owner, foreign)
    r = http.get(f"{board.path}/tasks/{foreign['id']}/comments", headers=board.member.headers)
    api.error(r, 404, "not_found", "listing comments of another project's task")
    r = http.post(f"{board.path}/tasks/{foreign['id']}/comments", json={"body": "hi"}, headers=board.member.headers)
    api.error(r, 404, "not_found", "commenting on another project's task")
