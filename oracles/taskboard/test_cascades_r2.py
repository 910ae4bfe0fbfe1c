"""R2 (evolved) items: state after multi-step sequences, cascades, and the feed they leave.

Each cascade must reach exactly what spec.md says (every task of the removed or demoted
member, every comment of the deleted task, everything of the deleted project) and nothing
beyond it (other tasks, other projects).
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r2")]

STATUSES = ("todo", "in_progress", "done", "cancelled")
ALLOWED = {
    "todo": {"in_progress", "cancelled"},
    "in_progress": {"todo", "done", "cancelled"},
    "done": {"in_progress"},
    "cancelled": {"todo"},
}
ROUTE = {"todo": (), "in_progress": ("in_progress",), "done": ("in_progress", "done"), "cancelled": ("cancelled",)}


@pytest.mark.requirement("R17", "R18", "R24")
@pytest.mark.category("state")
@pytest.mark.weight(2.0)
def test_the_whole_transition_table(api, http, board):
    problems = []
    for source in STATUSES:
        for target in STATUSES:
            task = api.move(board.project, board.member, api.task(board.project, board.member), *ROUTE[source])
            before = api.activity(board.project, board.owner)
            r = http.patch(f"{board.path}/tasks/{task['id']}", json={"status": target}, headers=board.member.headers)
            after = api.get_task(board.project, board.owner, task["id"])
            added = api.activity(board.project, board.owner)[: -len(before) or None]
            label = f"{source} -> {target}"
            if target == source:
                if r.status_code != 200:
                    problems.append(f"{label}: re-sending the current status is accepted, got {r.status_code} {r.text[:200]}")
                if (after["status"], after["completed_at"]) != (source, task["completed_at"]):
                    problems.append(f"{label}: not a transition, yet status/completed_at changed: {task['completed_at']!r} -> {after}")
                if added:
                    problems.append(f"{label}: not a transition, yet recorded {api.shape(added)}")
            elif target in ALLOWED[source]:
                if r.status_code != 200:
                    problems.append(f"{label}: allowed, got {r.status_code} {r.text[:200]}")
                    continue
                if after["status"] != target or (after["completed_at"] is not None) != (target == "done"):
                    problems.append(f"{label}: status {after['status']!r}, completed_at {after['completed_at']!r} (set exactly in done)")
                facts = [api.facts(e, "from", "to") for e in added]
                if facts != [("task_status_changed", board.member.id, task["id"], {"from": source, "to": target})]:
                    problems.append(f"{label}: expected one task_status_changed entry, got {facts}")
            else:
                if r.status_code != 409 or (r.json() if r.content else {}).get("error") != "invalid_transition":
                    problems.append(f"{label}: forbidden, expected 409 invalid_transition, got {r.status_code} {r.text[:200]}")
                if (after["status"], after["completed_at"]) != (source, task["completed_at"]):
                    problems.append(f"{label}: a rejected transition changed the task: {after}")
                if added:
                    problems.append(f"{label}: a rejected transition recorded {api.shape(added)}")
    assert not problems, "the status workflow table, cell by cell:\n" + "\n".join(problems)


@pytest.mark.requirement("R27", "R16", "R24")
@pytest.mark.category("state")
def test_owner_demoted_straight_to_viewer_is_unassigned(api, http, board):
    co = api.user("coowner")
    api.add_member(board.project, board.owner, co, "owner")
    first = api.task(board.project, board.member, assignee_id=co.id)
    second = api.move(board.project, co, api.task(board.project, co, assignee_id=co.id), "in_progress")
    other = api.task(board.project, board.owner, assignee_id=board.member.id)
    before = api.activity(board.project, board.owner)
    demoted = api.set_role(board.project, board.owner, co, "viewer")
    assert demoted.get("role") == "viewer", f"the co-owner is now a viewer: {demoted}"
    got = {t["id"]: api.get_task(board.project, board.owner, t["id"]) for t in (first, second, other)}
    assert (got[first["id"]]["assignee_id"], got[second["id"]]["assignee_id"]) == (None, None), (
        f"an owner who becomes a viewer loses every assignment in the project: {[got[first['id']], got[second['id']]]}"
    )
    assert got[other["id"]]["assignee_id"] == board.member.id, f"another member's task lost its assignee: {got[other['id']]}"
    assert (got[second["id"]]["status"], got[second["id"]]["created_by"]) == ("in_progress", co.id), (
        f"unassignment changes nothing else about the task: {got[second['id']]}"
    )
    assert api.tasks(board.project, board.viewer, assignee_id=co.id)["total"] == 0, "tasks are still listed under the demoted owner"
    unassigned = api.tasks(board.project, board.viewer, assignee_id="none")
    assert [t["id"] for t in unassigned["items"]] == [first["id"], second["id"]], f"assignee_id=none after the demotion: {unassigned}"
    added = api.activity(board.project, board.owner)[: -len(before)]
    assert [api.facts(e, "user_id", "from", "to") for e in added] == [
        ("member_role_changed", board.owner.id, None, {"user_id": co.id, "from": "owner", "to": "viewer"})
    ], f"only the role change is recorded (unassignment is silent): {api.shape(added)}"
    r = http.patch(f"{board.path}/tasks/{first['id']}", json={"assignee_id": co.id}, headers=board.owner.headers)
    api.assert_invalid(r, ["assignee_id"], "assigning a task to the now-viewer")
    api.set_role(board.project, board.owner, co, "member")
    assert api.get_task(board.project, board.owner, first["id"])["assignee_id"] is None, "promoting back must not restore the old assignment"


@pytest.mark.requirement("R26", "R9", "R21")
@pytest.mark.category("state")
def test_deleting_one_project_leaves_the_others_intact(api, http, board):
    keep = api.project(board.owner)
    api.add_member(keep, board.owner, board.member)
    kept_task = api.task(keep, board.member, assignee_id=board.member.id)
    api.comment(keep, board.owner, kept_task)
    doomed = api.task(board.project, board.member, assignee_id=board.member.id)
    api.comment(board.project, board.member, doomed)
    keep_path = f"/projects/{keep['id']}"

    def snapshot():
        return {
            "tasks": api.ok(http.get(f"{keep_path}/tasks", headers=board.member.headers), 200, "list tasks")["items"],
            "comments": api.ok(http.get(f"{keep_path}/tasks/{kept_task['id']}/comments", headers=board.member.headers), 200, "list comments")["items"],
            "members": api.ok(http.get(f"{keep_path}/members", headers=board.member.headers), 200, "list members")["items"],
            "activity": api.activity(keep, board.member),
        }

    before = snapshot()
    r = http.delete(board.path, headers=board.owner.headers)
    assert r.status_code == 204, f"deleting the project: {r.status_code} {r.text[:300]}"
    after = snapshot()
    changed = [k for k in before if before[k] != after[k]]
    assert not changed, f"deleting one project changed another project's {changed}: " + "; ".join(
        f"{k}: {before[k]} -> {after[k]}" for k in changed
    )
    for user, expected in ((board.member, [keep["id"]]), (board.viewer, [])):
        listed = api.ok(http.get("/projects", headers=user.headers), 200, "list projects")
        assert ([p["id"] for p in listed["items"]], listed["total"]) == (expected, len(expected)), f"GET /projects after the deletion: {listed}"
    r = http.get(f"{keep_path}/tasks/{doomed['id']}", headers=board.owner.headers)
    api.error(r, 404, "not_found", "a task of the deleted project looked up under a surviving project")
    page = api.tasks(keep, board.owner, assignee_id=board.member.id)
    assert [t["id"] for t in page["items"]] == [kept_task["id"]], f"the member's assignment in the surviving project stays: {page}"


@pytest.mark.requirement("R26", "R22", "R24")
@pytest.mark.category("state")
def test_deleting_a_task_spares_its_siblings_comments(api, http, board):
    doomed, sibling = api.task(board.project, board.member, title="Doomed"), api.task(board.project, board.member)
    gone = [api.comment(board.project, board.member, doomed), api.comment(board.project, board.owner, doomed)]
    stays = [api.comment(board.project, board.owner, sibling), api.comment(board.project, board.member, sibling)]
    r = http.delete(f"{board.path}/tasks/{doomed['id']}", headers=board.owner.headers)
    assert r.status_code == 204, f"the owner deleting a task: {r.status_code} {r.text[:300]}"
    url = f"{board.path}/tasks/{sibling['id']}/comments"
    page = api.ok(http.get(url, headers=board.viewer.headers), 200, "list the sibling's comments")
    assert ([c["id"] for c in page["items"]], page["total"]) == ([c["id"] for c in stays], 2), f"the sibling's comments stay, oldest first: {page}"
    r = http.delete(f"{url}/{gone[0]['id']}", headers=board.owner.headers)
    api.error(r, 404, "not_found", "deleting a comment of the deleted task through its sibling")
    newest = api.comment(board.project, board.member, sibling)
    page = api.ok(http.get(url, headers=board.viewer.headers), 200, "list the sibling's comments")
    assert [c["id"] for c in page["items"]] == [c["id"] for c in stays] + [newest["id"]], f"commenting goes on normally: {page}"
    recorded = [e["data"].get("comment_id") for e in api.activity(board.project, board.viewer)
                if e.get("type") == "comment_added" and e.get("task_id") == doomed["id"]]
    assert recorded == [gone[1]["id"], gone[0]["id"]], f"comment_added entries of a deleted task remain, newest first: {recorded}"
    assert api.tasks(board.project, board.owner)["total"] == 1, "only the deleted task is gone"


@pytest.mark.requirement("R24", "R25", "R27", "R14")
@pytest.mark.category("side_effects")
@pytest.mark.weight(2.0)
def test_feed_after_leaving_demotion_and_deletion(api, http):
    owner, ann, ben = api.user("owner"), api.user("ann"), api.user("ben")
    project = api.project(owner, name="Ledger")
    path = f"/projects/{project['id']}"
    api.add_member(project, owner, ann)
    api.add_member(project, owner, ben, "member")
    first = api.task(project, ann, title="First", assignee_id=ann.id)
    second = api.task(project, owner, title="Second", assignee_id=ben.id)
    note = api.comment(project, ann, second)
    api.patch_task(project, owner, first, status="in_progress", assignee_id=ben.id, priority="high")
    r = http.delete(f"{path}/members/{ann.id}", headers=ann.headers)
    assert r.status_code == 204, f"ann leaving: {r.status_code} {r.text[:300]}"
    api.set_role(project, owner, ben, "viewer")
    r = http.delete(f"{path}/tasks/{first['id']}", headers=owner.headers)
    assert r.status_code == 204, f"the owner deleting a task: {r.status_code} {r.text[:300]}"
    assert api.get_task(project, ben, second["id"])["assignee_id"] is None, "ben, now a viewer, is still assigned"
    expected = [
        ("task_deleted", owner.id, first["id"], {"title": "First"}),
        ("member_role_changed", owner.id, None, {"user_id": ben.id, "from": "member", "to": "viewer"}),
        ("member_removed", ann.id, None, {"user_id": ann.id}),
        ("task_assigned", owner.id, first["id"], {"assignee_id": ben.id, "previous_assignee_id": ann.id}),
        ("task_status_changed", owner.id, first["id"], {"from": "todo", "to": "in_progress"}),
        ("comment_added", ann.id, second["id"], {"comment_id": note["id"]}),
        ("task_created", owner.id, second["id"], {"title": "Second", "assignee_id": ben.id}),
        ("task_created", ann.id, first["id"], {"title": "First", "assignee_id": ann.id}),
        ("member_added", owner.id, None, {"user_id": ben.id, "role": "member"}),
        ("member_added", owner.id, None, {"user_id": ann.id, "role": "member"}),
        ("project_created", owner.id, None, {"name": "Ledger"}),
    ]
    entries = api.activity(project, ben)
    got = [(e.get("type"), e.get("actor_id"), e.get("task_id"), e.get("data")) for e in entries]
    assert got == expected, "the whole feed, newest first, each data holding exactly the specified fields:\n  expected " + (
        "\n           ".join(map(str, expected)) + "\n  got      " + "\n           ".join(map(str, got))
    )
    page = api.ok(http.get(f"{path}/activity", params={"limit": 4, "offset": 3}, headers=owner.headers), 200, "a page of the feed")
    assert ([e["id"] for e in page["items"]], page["total"]) == ([e["id"] for e in entries[3:7]], 11), (
        f"limit=4&offset=3 is the same slice of the same order: {api.shape(page['items'])} total {page.get('total')}"
    )
    api.error(http.get(f"{path}/activity", headers=ann.headers), 404, "not_found", "ann, who left, reading the feed")
