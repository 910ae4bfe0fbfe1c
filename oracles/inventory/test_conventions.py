"""Answer conventions (spec.md: Conventions, Errors): JSON bodies are labelled as JSON, 204 answers are empty."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("api_surface")]


@pytest.mark.requirement("R25")
def test_json_answers_are_labelled_and_204_answers_are_empty(api, http, checks):
    product = api.product()
    headers = api.admin.headers
    problems = checks.answer_problems(http.get("/health"), 200, "GET /health")
    problems += checks.answer_problems(http.get("/products"), 401, "GET /products without a token")
    problems += checks.answer_problems(http.post("/suppliers", json={"name": "ct " + api.tag()}, headers=headers), 201, "POST /suppliers")
    problems += checks.answer_problems(http.post("/warehouses", json={"code": "bad code", "name": "x"}, headers=headers), 422, "POST a bad warehouse code")
    problems += checks.answer_problems(http.get(f"/products/{product['id']}/stock", headers=headers), 200, "GET a product's stock")
    problems += checks.answer_problems(http.delete(f"/products/{product['id']}", headers=headers), 204, "DELETE a product")
    problems += checks.answer_problems(http.get(f"/products/{product['id']}", headers=headers), 404, "GET a deleted product")
    assert not problems, "answer conventions:\n" + "\n".join(problems)
