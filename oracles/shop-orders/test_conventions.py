"""Answer conventions (spec.md: Conventions, Errors): JSON bodies are labelled as JSON, 204 answers are empty."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("api_surface")]


@pytest.mark.requirement("R26")
def test_json_answers_are_labelled(api, http, staff, checks):
    customer = api.customer()
    product = api.product()
    problems = checks.answer_problems(http.get("/health"), 200, "GET /health")
    problems += checks.answer_problems(http.get("/cart"), 401, "GET /cart without a token")
    problems += checks.answer_problems(http.get("/products"), 200, "GET /products (public)")
    problems += checks.answer_problems(http.put(f"/cart/items/{product['id']}", json={"quantity": 1}, headers=customer.headers), 200, "PUT a cart line")
    problems += checks.answer_problems(http.put(f"/cart/items/{product['id']}", json={"quantity": 0}, headers=customer.headers), 422, "PUT quantity 0")
    problems += checks.answer_problems(http.post("/orders", json={"shipping_address": "x"}, headers={**customer.headers, "Idempotency-Key": api.key()}), 201, "check out")
    problems += checks.answer_problems(http.get("/orders/no-such-order", headers=customer.headers), 404, "GET an unknown order")
    assert not problems, "answer conventions:\n" + "\n".join(problems)
