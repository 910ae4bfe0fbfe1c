"""Answer conventions (spec.md: Conventions, Errors): JSON bodies are labelled as JSON, 204 answers are empty."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("api_surface")]


@pytest.mark.requirement("R26")
def test_json_answers_are_labelled_and_204_answers_are_empty(api, http, checks):
    template = api.template()
    headers = api.admin.headers
    user = api.user()
    problems = checks.answer_problems(http.get("/health"), 200, "GET /health")
    problems += checks.answer_problems(http.get("/me"), 401, "GET /me without a token")
    problems += checks.answer_problems(http.post("/notifications", json={"user_id": user.id, "template_key": template["key"]}, headers=headers), 201, "send")
    problems += checks.answer_problems(http.put("/me/preferences", json={}, headers=user.headers), 422, "PUT empty preferences")
    problems += checks.answer_problems(http.get("/me/notifications", headers=user.headers), 200, "GET /me/notifications")
    problems += checks.answer_problems(http.delete(f"/templates/{template['id']}", headers=headers), 204, "DELETE a template")
    problems += checks.answer_problems(http.get(f"/templates/{template['id']}", headers=headers), 404, "GET a deleted template")
    assert not problems, "answer conventions:\n" + "\n".join(problems)
