"""Answer conventions (spec.md: Conventions, Errors): JSON bodies are labelled as JSON, 204 answers are empty."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("api_surface")]


@pytest.mark.requirement("R25")
def test_json_answers_are_labelled_and_204_answers_are_empty(api, http, alice, checks):
    link = api.link(alice)
    problems = checks.answer_problems(http.get("/health"), 200, "GET /health")
    problems += checks.answer_problems(http.get("/links"), 401, "GET /links without a token")
    problems += checks.answer_problems(http.post("/links", json={"url": "https://example.com/ct"}, headers=alice.headers), 201, "POST /links")
    problems += checks.answer_problems(http.post("/links", json={"url": "nope"}, headers=alice.headers), 422, "POST /links with a bad url")
    problems += checks.answer_problems(http.get(f"/links/{link['id']}/stats", headers=alice.headers), 200, "GET stats")
    problems += checks.answer_problems(http.delete(f"/links/{link['id']}/visits", headers=alice.headers), 204, "DELETE visits")
    problems += checks.answer_problems(http.delete(f"/links/{link['id']}", headers=alice.headers), 204, "DELETE a link")
    problems += checks.answer_problems(http.get(f"/links/{link['id']}", headers=alice.headers), 404, "GET a deleted link")
    assert not problems, "answer conventions:\n" + "\n".join(problems)
