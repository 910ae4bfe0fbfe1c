"""Answer conventions (spec.md: Conventions, Errors): JSON bodies are labelled as JSON, 204 answers are empty."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("api_surface")]


@pytest.mark.requirement("R26")
def test_json_answers_are_labelled_and_204_answers_are_empty(api, http, checks):
    flag = api.flag()
    headers = api.admin.headers
    problems = checks.answer_problems(http.get("/health"), 200, "GET /health")
    problems += checks.answer_problems(http.get("/flags"), 401, "GET /flags without a key")
    problems += checks.answer_problems(http.post("/flags", json={"key": api.unique("ct")}, headers=headers), 201, "POST /flags")
    problems += checks.answer_problems(http.post("/flags", json={"key": "Bad Key"}, headers=headers), 422, "POST a bad key")
    problems += checks.answer_problems(http.post(f"/environments/staging/flags/{flag['key']}/evaluate", json={"user_id": "u"}, headers=headers), 200, "evaluate")
    problems += checks.answer_problems(http.delete(f"/flags/{flag['key']}", headers=headers), 204, "DELETE a flag")
    problems += checks.answer_problems(http.get(f"/flags/{flag['key']}", headers=headers), 404, "GET a deleted flag")
    assert not problems, "answer conventions:\n" + "\n".join(problems)
