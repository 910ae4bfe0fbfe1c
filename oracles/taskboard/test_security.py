"""Security items (spec.md: Authentication, Visibility, Limits and hostile input), each tagged with its CWE."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]


@pytest.mark.requirement("R10", "R21")
@pytest.mark.cwe(639)
def test_an_outsider_reaches_nothing_by_id(api, http, board):
    task, comment = api.commented(board, board.owner, board.owner, description="secret plans")
    base, tpath = board.path, f"{board.path}/tasks/{task['id']}"
    for method, path, body in (
        ("GET", base, None), ("PATCH", base, {"name": "taken over"}), ("GET", f"{base}/members", None),
        ("POST", f"{base}/members", {"username": board.outsider.username, "role": "owner"}),
        ("GET", f"{base}/tasks", None), ("GET", tpath, None), ("PATCH", tpath, {"title": "owned"}),
        ("GET", f"{tpath}/comments", None), ("DELETE", f"{tpath}/comments/{comment['id']}", None),
        ("GET", f"{base}/activity", None), ("DELETE", tpath, None), ("DELETE", base, None),
    ):
        api.error(http.request(method, path, json=body, headers=board.outsider.headers), 404, "not_found", f"an outsider: {method} {path}")
    got = api.get_task(board.project, board.owner, task["id"])
    assert (got["title"], got["description"]) == (task["title"], "secret plans"), f"the outsider changed the task: {got}"
    project = api.ok(http.get(base, headers=board.owner.headers), 200, "the owner reads the project")
    assert project["name"] == board.project["name"], f"the outsider renamed the project: {project}"


@pytest.mark.requirement("R8", "R15")
@pytest.mark.cwe(915)
def test_server_owned_fields_cannot_be_assigned(api, http, board):
    forged = {"id": "forged", "created_by": board.owner.id, "project_id": "elsewhere", "status": "done", "completed_at": "2001-01-01T00:00:00Z",
              "created_at": "2001-01-01T00:00:00Z"}
    r = http.post(f"{board.path}/tasks", json={"title": "mine", **forged}, headers=board.member.headers)
    assert r.status_code == 201, f"undefined or server-owned fields are ignored at creation: {api.brief(r)}"
    task = r.json()
    got = (task.get("id") != "forged", task.get("created_by"), task.get("project_id"), task.get("status"), task.get("completed_at"))
    assert got == (True, board.member.id, board.project["id"], "todo", None), f"the client assigned server-owned task fields: {task}"
    r = http.patch(f"{board.path}/tasks/{task['id']}", json={"created_by": board.viewer.id, "completed_at": "2001-01-01T00:00:00Z"}, headers=board.member.headers)
    assert r.status_code == 200, f"a PATCH of fields it does not define ignores them: {api.brief(r)}"
    again = api.get_task(board.project, board.owner, task["id"])
    assert (again["created_by"], again["completed_at"]) == (board.member.id, None), f"PATCH assigned server-owned fields: {again}"
    project = http.post("/projects", json={"name": "forged", "created_by": board.owner.id, "role": "viewer", "id": "forged"}, headers=board.outsider.headers)
    assert project.status_code == 201, f"creating a project with forged fields: {api.brief(project)}"
    body = project.json()
    assert (body.get("created_by"), body.get("role"), body.get("id") != "forged") == (board.outsider.id, "owner", True), f"forged project fields: {body}"


@pytest.mark.requirement("R15", "R20", "R22", "R30")
@pytest.mark.cwe(89)
def test_hostile_text_is_stored_verbatim_and_filters_never_widen(api, http, board, checks):
    titles = list(checks.injection_texts)
    made = [api.task(board.project, board.member, title=t, description=t) for t in titles]
    for sent, task in zip(titles, made):
        got = api.get_task(board.project, board.owner, task["id"])
        assert (got["title"], got["description"]) == (sent, sent), f"the text must come back verbatim: sent {sent!r}, got {got['title']!r}"
    note = api.comment(board.project, board.member, made[0], body="'; DELETE FROM comments;--")
    assert note["body"] == "'; DELETE FROM comments;--", f"a comment is stored verbatim: {note}"
    for value in ("' OR '1'='1", "%", "*", board.member.id + "' OR '1'='1", '{"$ne": null}'):
        r = http.get(f"{board.path}/tasks", params={"assignee_id": value}, headers=board.owner.headers)
        if r.status_code == 422:
            continue
        assert r.status_code == 200, f"GET tasks?assignee_id={value!r}: {api.brief(r)}"
        assert r.json().get("items") == [], f"assignee_id={value!r} names nobody, yet listed {[t.get('title') for t in r.json().get('items', [])]}"


@pytest.mark.requirement("R30")
@pytest.mark.cwe(400)
def test_oversized_and_deeply_nested_bodies_are_refused(api, http, service, board, checks):
    problems = checks.hostile_body_problems(service, http.timeout_s, "POST", f"{board.path}/tasks", board.owner.headers, {"title": "big"}, "title")
    task = api.task(board.project, board.owner, title="kept")
    # the PATCH body is oversized in a field the contract does not define: only the 1 MiB limit refuses it
    problems += checks.hostile_body_problems(service, http.timeout_s, "PATCH", f"{board.path}/tasks/{task['id']}", board.owner.headers, {"priority": "high"}, "padding")
    assert not problems, "limits on request bodies:\n" + "\n".join(problems)
    assert [t["title"] for t in api.tasks(board.project, board.owner)["items"]] == ["kept"], "refused bodies must create nothing"
    assert api.get_task(board.project, board.owner, task["id"])["priority"] == "medium", "a refused PATCH must change nothing"


@pytest.mark.requirement("R6", "R7")
@pytest.mark.cwe(287)
def test_revoked_and_tampered_tokens_get_401(api, http, board, checks):
    spare = api.login(board.owner.username, board.owner.password)
    problems = checks.token_problems(http, "POST", f"{board.path}/tasks", board.owner.token, {"title": "forged"})
    api.ok(http.post("/auth/logout", headers={"Authorization": f"Bearer {spare}"}), 204, "log out the spare token")
    for method, path, body in (("GET", "/me", None), ("GET", board.path, None), ("POST", f"{board.path}/tasks", {"title": "revoked"})):
        r = http.request(method, path, json=body, headers={"Authorization": f"Bearer {spare}"})
        if r.status_code != 401:
            problems.append(f"{method} {path} with a revoked token: expected 401, got {api.brief(r)}")
    assert not problems, "token misuse was not refused:\n" + "\n".join(problems)
    assert api.tasks(board.project, board.owner)["total"] == 0, "no request with a bad token may create a task"


@pytest.mark.requirement("R10", "R21", "R30")
@pytest.mark.cwe(22)
def test_path_traversal_in_ids_gets_404(api, http, service, board, checks):
    api.task(board.project, board.owner)
    problems = checks.traversal_problems(service, http.timeout_s, "/projects/", board.owner.headers)
    problems += checks.traversal_problems(service, http.timeout_s, f"{board.path}/tasks/", board.owner.headers)
    problems += checks.traversal_problems(service, http.timeout_s, f"{board.path}/tasks/", board.owner.headers, "/comments")
    assert not problems, "ids that climb out of their path must name nothing:\n" + "\n".join(problems)
