"""Answer conventions (spec.md: Conventions, Errors): JSON bodies are labelled as JSON, 204 answers are empty."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("api_surface")]


@pytest.mark.requirement("R26")
def test_json_answers_are_labelled_and_204_answers_are_empty(api, http, at, checks):
    owner = api.user("owner")
    resource = api.resource(owner)
    problems = checks.answer_problems(http.get("/health"), 200, "GET /health")
    problems += checks.answer_problems(http.get("/resources"), 401, "GET /resources without a token")
    problems += checks.answer_problems(api.try_book(owner, resource, at("09:00"), at("10:00")), 201, "book")
    problems += checks.answer_problems(api.try_book(owner, resource, at("09:00"), at("09:00")), 422, "book an empty interval")
    problems += checks.answer_problems(http.get(f"/resources/{resource['id']}/bookings", headers=owner.headers), 200, "GET the resource's bookings")
    problems += checks.answer_problems(http.delete(f"/resources/{resource['id']}", headers=owner.headers), 204, "DELETE a resource")
    problems += checks.answer_problems(http.get(f"/resources/{resource['id']}", headers=owner.headers), 404, "GET a deleted resource")
    assert not problems, "answer conventions:\n" + "\n".join(problems)
