"""Answer conventions (spec.md: Conventions, Errors): JSON bodies are labelled as JSON, 204 answers are empty."""

from __future__ import annotations

import uuid

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("api_surface")]


@pytest.mark.requirement("R27")
def test_json_answers_are_labelled_and_204_answers_are_empty(api, http, alice, checks):
    account = api.account(alice)
    problems = checks.answer_problems(http.get("/health"), 200, "GET /health")
    problems += checks.answer_problems(http.get("/accounts"), 401, "GET /accounts without a token")
    problems += checks.answer_problems(http.post("/envelopes", json={"name": f"ct-{uuid.uuid4().hex[:8]}"}, headers=alice.headers), 201, "POST /envelopes")
    problems += checks.answer_problems(http.post("/accounts", json={"name": ""}, headers=alice.headers), 422, "POST an unnamed account")
    problems += checks.answer_problems(http.get("/summary", headers=alice.headers), 200, "GET /summary")
    problems += checks.answer_problems(http.delete(f"/accounts/{account['id']}", headers=alice.headers), 204, "DELETE an account")
    problems += checks.answer_problems(http.get(f"/accounts/{account['id']}", headers=alice.headers), 404, "GET a deleted account")
    assert not problems, "answer conventions:\n" + "\n".join(problems)
