"""Answer conventions (spec.md: Conventions, Errors): JSON bodies are labelled as JSON, 204 answers are empty."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("api_surface")]


@pytest.mark.requirement("R28")
def test_json_answers_are_labelled_and_204_answers_are_empty(api, http, board, checks):
    task = api.task(board.project, board.owner)
    problems = checks.answer_problems(http.get("/health"), 200, "GET /health")
    problems += checks.answer_problems(http.get("/projects"), 401, "GET /projects without a token")
    problems += checks.answer_problems(http.post(f"{board.path}/tasks", json={"title": "ct"}, headers=board.owner.headers), 201, "POST a task")
    problems += checks.answer_problems(http.post(f"{board.path}/tasks", json={"title": ""}, headers=board.owner.headers), 422, "POST an empty title")
    problems += checks.answer_problems(http.get(f"{board.path}/activity", headers=board.owner.headers), 200, "GET activity")
    problems += checks.answer_problems(http.delete(f"{board.path}/tasks/{task['id']}", headers=board.owner.headers), 204, "DELETE a task")
    problems += checks.answer_problems(http.get(f"{board.path}/tasks/{task['id']}", headers=board.owner.headers), 404, "GET a deleted task")
    problems += checks.answer_problems(http.post("/auth/logout", headers=board.member.headers), 204, "POST /auth/logout")
    assert not problems, "answer conventions:\n" + "\n".join(problems)
