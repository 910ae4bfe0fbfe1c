"""The worked examples of spec.md not already items of their own, each checked exactly (issue 35).

Conventions: "A defined field whose value has the wrong JSON type gets 422 (for example
`"title": 5`)"; Activity feed: "A single PATCH that changes both the status and the assignee
appends `task_status_changed` first, then `task_assigned`". The workflow's examples (`todo ->
done`, `done -> todo`, `done -> cancelled`, `cancelled -> in_progress`) are
`test_tasks.py::test_forbidden_transitions_get_409`.
"""

from __future__ import annotations

import pytest

from pytest_backendbench.http.refusals import unchanged

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R29", "R15")
@pytest.mark.category("validation")
@pytest.mark.parametrize("request_kind", ["create", "update"])
def test_a_title_of_5_gets_422(api, http, board, request_kind):
    task = api.task(board.project, board.member, title="Kept")
    method, path = ("POST", f"{board.path}/tasks") if request_kind == "create" else ("PATCH", f"{board.path}/tasks/{task['id']}")
    with unchanged(lambda: (api.tasks(board.project, board.owner)["items"], api.activity(board.project, board.owner)), f'a task {request_kind} with "title": 5'):
        problem = api.validation_problem(http.request(method, path, json={"title": 5}, headers=board.member.headers), ["title"], f'spec.md\'s example "title": 5 ({request_kind})')
    assert problem is None, problem


@pytest.mark.requirement("R24")
@pytest.mark.category("side_effects")
def test_one_patch_of_status_and_assignee_appends_status_first(api, http, board):
    task = api.task(board.project, board.owner)
    api.patch_task(board.project, board.member, task, status="in_progress", assignee_id=board.member.id)
    newest = [api.facts(e, *keys) for e, keys in zip(api.activity(board.project, board.owner)[:2], (("assignee_id", "previous_assignee_id"), ("from", "to")))]
    expected = [
        ("task_assigned", board.member.id, task["id"], {"assignee_id": board.member.id, "previous_assignee_id": None}),
        ("task_status_changed", board.member.id, task["id"], {"from": "todo", "to": "in_progress"}),
    ]
    assert newest == expected, f"spec.md: task_status_changed first, then task_assigned (the feed is newest first): {newest}"
