"""R1 (evolved) items: validation edge cases, all-or-nothing updates, cascades and silent side effects."""

from __future__ import annotations

import uuid

import pytest

pytestmark = [pytest.mark.tier("r1")]


@pytest.mark.requirement("R17")
@pytest.mark.category("state")
def test_rejected_transition_changes_nothing(api, http, board):
    task = api.task(board.project, board.member, title="Original")
    before = api.activity(board.project, board.owner)
    r = http.patch(
        f"{board.path}/tasks/{task['id']}",
        json={"title": "Changed", "priority": "high", "assignee_id": board.member.id, "status": "done"},
        headers=board.member.headers,
    )
    api.error(r, 409, "invalid_transition", "todo -> done combined with other edits")
    got = api.get_task(board.project, board.member, task["id"])
    assert (got["title"], got["priority"], got["assignee_id"], got["status"]) == ("Original", "medium", None, "todo"), (
        f"a PATCH rejected with 409 must change nothing: {got}"
    )
    assert api.shape(api.activity(board.project, board.owner)) == api.shape(before), "a rejected PATCH recorded activity"


@pytest.mark.requirement("R28", "R19")
@pytest.mark.category("state")
def test_rejected_validation_changes_nothing(api, http, board):
    task = api.task(board.project, board.member, title="Original")
    r = http.patch(
        f"{board.path}/tasks/{task['id']}",
        json={"title": "Changed", "status": "in_progress", "priority": "urgent"},
        headers=board.member.headers,
    )
    api.assert_invalid(r, ["priority"], "a PATCH with a valid title and status but an invalid priority")
    got = api.get_task(board.project, board.member, task["id"])
    assert (got["title"], got["status"]) == ("Original", "todo"), f"a PATCH rejected with 422 must change nothing: {got}"


@pytest.mark.requirement("R28", "R15", "R16")
@pytest.mark.category("validation")
def test_every_invalid_field_is_listed_once(api, http, board):
    body = {"title": "   ", "priority": "asap", "assignee_id": board.viewer.id, "description": 12}
    r = http.post(f"{board.path}/tasks", json=body, headers=board.owner.headers)
    error = api.error(r, 422, "validation_error", "creating a task with four invalid fields")
    fields = error.get("fields", [])
    assert sorted(fields) == ["assignee_id", "description", "priority", "title"], f"each invalid field listed once: {fields}"


@pytest.mark.requirement("R29", "R19")
@pytest.mark.category("validation")
def test_wrong_types_in_an_update_get_422(api, http, board):
    task = api.task(board.project, board.member)
    r = http.patch(
        f"{board.path}/tasks/{task['id']}",
        json={"title": True, "priority": None, "assignee_id": 5},
        headers=board.member.headers,
    )
    error = api.error(r, 422, "validation_error", "updating a task with a boolean title, null priority and numeric assignee")
    assert sorted(error.get("fields", [])) == ["assignee_id", "priority", "title"], f"each mistyped field listed: {error}"
    r = http.patch(f"{board.path}/tasks/{task['id']}", data="[1, 2]", headers={**board.member.headers, "Content-Type": "application/json"})
    api.error(r, 422, "validation_error", "updating a task with a JSON array body")


@pytest.mark.requirement("R15", "R18")
@pytest.mark.category("validation")
def test_status_sent_at_creation_is_ignored(api, http, board):
    r = http.post(f"{board.path}/tasks", json={"title": "Born done?", "status": "done"}, headers=board.member.headers)
    assert r.status_code == 201, f"unknown-at-creation fields are ignored, not rejected: {r.status_code} {r.text[:300]}"
    assert (r.json().get("status"), r.json().get("completed_at")) == ("todo", None), f"a new task starts in todo: {r.json()}"


@pytest.mark.requirement("R17", "R24")
@pytest.mark.category("side_effects")
def test_no_op_changes_record_nothing(api, http, board):
    task = api.task(board.project, board.owner, assignee_id=board.member.id)
    before = api.activity(board.project, board.owner)
    r = http.patch(f"{board.path}/tasks/{task['id']}", json={"status": "todo", "assignee_id": board.member.id}, headers=board.member.headers)
    assert r.status_code == 200, f"re-sending the current status and assignee is accepted: {r.status_code} {r.text[:300]}"
    r = http.patch(f"{board.path}/members/{board.viewer.id}", json={"role": "viewer"}, headers=board.owner.headers)
    assert r.status_code == 200, f"re-sending a member's current role is accepted: {r.status_code} {r.text[:300]}"
    after = api.activity(board.project, board.owner)
    assert api.shape(after) == api.shape(before), f"no-op changes appended entries: {api.shape(after)[: len(after) - len(before)]}"


@pytest.mark.requirement("R27", "R24")
@pytest.mark.category("state")
def test_removing_a_member_unassigns_their_tasks(api, http, board):
    elsewhere = api.project(board.owner)
    api.add_member(elsewhere, board.owner, board.member)
    kept = api.task(elsewhere, board.owner, assignee_id=board.member.id)
    mine = [api.task(board.project, board.owner, assignee_id=board.member.id) for _ in range(2)]
    owners = api.task(board.project, board.owner, assignee_id=board.owner.id)
    before = api.activity(board.project, board.owner)
    r = http.delete(f"{board.path}/members/{board.member.id}", headers=board.owner.headers)
    assert r.status_code == 204, f"removing the member: {r.status_code} {r.text[:300]}"
    for task in mine:
        assert api.get_task(board.project, board.owner, task["id"])["assignee_id"] is None, "the removed member's task is still assigned"
    assert api.get_task(board.project, board.owner, owners["id"])["assignee_id"] == board.owner.id, "another member's task lost its assignee"
    assert api.get_task(elsewhere, board.owner, kept["id"])["assignee_id"] == board.member.id, "a task in another project was unassigned"
    after = api.activity(board.project, board.owner)
    assert [e["type"] for e in after[: len(after) - len(before)]] == ["member_removed"], (
        f"only member_removed should be recorded (unassignment is silent): {api.shape(after)}"
    )


@pytest.mark.requirement("R27")
@pytest.mark.category("state")
def test_demotion_to_viewer_unassigns_but_promotion_does_not(api, http, board):
    second = api.user("second")
    api.add_member(board.project, board.owner, second)
    demoted = api.task(board.project, board.owner, assignee_id=board.member.id)
    promoted = api.task(board.project, board.owner, assignee_id=second.id)
    api.set_role(board.project, board.owner, board.member, "viewer")
    api.set_role(board.project, board.owner, second, "owner")
    assert api.get_task(board.project, board.owner, demoted["id"])["assignee_id"] is None, "a member demoted to viewer kept their task"
    assert api.get_task(board.project, board.owner, promoted["id"])["assignee_id"] == second.id, "promotion to owner must keep assignments"
    unassigned = api.tasks(board.project, board.owner, assignee_id="none")
    assert [t["id"] for t in unassigned["items"]] == [demoted["id"]], f"assignee_id=none after the demotion: {unassigned}"


@pytest.mark.requirement("R26")
@pytest.mark.category("state")
def test_project_deletion_cascades(api, http, board):
    task, comment = api.commented(board, board.member, board.member)
    r = http.delete(board.path, headers=board.owner.headers)
    assert r.status_code == 204, f"deleting the project: {r.status_code} {r.text[:300]}"
    for r in (
        http.get(f"{board.path}/tasks", headers=board.owner.headers),
        http.get(f"{board.path}/tasks/{task['id']}", headers=board.owner.headers),
        http.get(f"{board.path}/tasks/{task['id']}/comments", headers=board.member.headers),
        http.delete(f"{board.path}/tasks/{task['id']}/comments/{comment['id']}", headers=board.owner.headers),
        http.get(f"{board.path}/members", headers=board.viewer.headers),
        http.get(f"{board.path}/activity", headers=board.owner.headers),
        http.delete(board.path, headers=board.owner.headers),
    ):
        api.error(r, 404, "not_found", f"after the project was deleted: {r.request.method} {r.request.path_url}")


@pytest.mark.requirement("R26", "R9", "R24")
@pytest.mark.category("state")
def test_a_recreated_project_starts_empty(api, http):
    owner = api.user("owner")
    old = api.project(owner, name="Phoenix")
    api.task(old, owner)
    r = http.delete(f"/projects/{old['id']}", headers=owner.headers)
    assert r.status_code == 204, f"deleting the project: {r.status_code} {r.text[:300]}"
    new = api.project(owner, name="Phoenix")
    assert new["id"] != old["id"], "a new project must get a new id"
    assert api.tasks(new, owner)["total"] == 0, "a recreated project inherited tasks"
    assert api.shape(api.activity(new, owner)) == [("project_created", None)], "a recreated project inherited activity"
    listed = api.ok(http.get("/projects", headers=owner.headers), 200, "list projects")
    assert [p["id"] for p in listed["items"]] == [new["id"]] and listed["total"] == 1, f"only the new project is listed: {listed}"


@pytest.mark.requirement("R20")
@pytest.mark.category("api_surface")
def test_filters_combine_with_and(api, http, board):
    a = api.move(board.project, board.member, api.task(board.project, board.member, assignee_id=board.member.id), "in_progress")
    api.task(board.project, board.member, assignee_id=board.member.id)
    api.move(board.project, board.member, api.task(board.project, board.member, assignee_id=board.owner.id), "in_progress")
    api.move(board.project, board.member, api.task(board.project, board.member), "in_progress")
    page = api.tasks(board.project, board.viewer, status="in_progress", assignee_id=board.member.id)
    assert [t["id"] for t in page["items"]] == [a["id"]] and page["total"] == 1, f"status AND assignee: {page}"
    page = api.tasks(board.project, board.viewer, status="in_progress", assignee_id="none", limit=1)
    assert page["total"] == 1 and len(page["items"]) == 1 and page["items"][0]["assignee_id"] is None, f"status AND unassigned: {page}"


@pytest.mark.requirement("R25", "R9", "R22")
@pytest.mark.category("validation")
def test_every_list_validates_pagination(api, http, board):
    task = api.task(board.project, board.member)
    for path, params, field in (
        ("/projects", {"offset": -3}, "offset"),
        (f"{board.path}/activity", {"limit": 0}, "limit"),
        (f"{board.path}/tasks/{task['id']}/comments", {"limit": "many"}, "limit"),
    ):
        r = http.get(path, params=params, headers=board.member.headers)
        api.assert_invalid(r, [field], f"GET {path} with {params}")
    r = http.get(f"{board.path}/tasks", params={"limit": 0, "offset": -1}, headers=board.member.headers)
    error = api.error(r, 422, "validation_error", "listing tasks with limit=0 and offset=-1")
    assert sorted(error.get("fields", [])) == ["limit", "offset"], f"both invalid parameters should be listed: {error}"


@pytest.mark.requirement("R3", "R8", "R15")
@pytest.mark.category("validation")
def test_lengths_count_characters_not_bytes(api, http, board):
    r = http.post("/users", json={"username": f"uni_{uuid.uuid4().hex[:12]}", "password": "ü" * 8, "display_name": "é" * 64})
    assert r.status_code == 201, f"64 'é' (128 UTF-8 bytes) is a valid display_name, 8 'ü' a valid password: {r.status_code} {r.text[:200]}"
    r = http.patch(board.path, json={"name": "ü" * 100}, headers=board.owner.headers)
    assert r.status_code == 200, f"a 100-character name of 'ü' is valid: {r.status_code} {r.text[:200]}"
    r = http.post(f"{board.path}/tasks", json={"title": "ñ" * 200}, headers=board.member.headers)
    assert r.status_code == 201 and r.json().get("title") == "ñ" * 200, f"a 200-character title of 'ñ' is valid and stored as sent: {r.status_code} {r.text[:100]}"
    r = http.post(f"{board.path}/tasks", json={"title": "ñ" * 201}, headers=board.member.headers)
    api.assert_invalid(r, ["title"], "a 201-character title of 'ñ'")
