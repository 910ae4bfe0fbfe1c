"""Answer conventions (spec.md: API conventions, The page): JSON bodies are labelled as JSON, 204 answers are empty, / is HTML."""

from __future__ import annotations

import pytest
import requests

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("api_surface")]


@pytest.mark.requirement("R1", "R2", "R4", "R7")
def test_json_answers_are_labelled_and_204_answers_are_empty(api, http, checks):
    event = api.event(capacity=1)
    problems = checks.answer_problems(http.get("/health"), 200, "GET /health")
    problems += checks.answer_problems(http.post("/api/events", json={"title": " ", "starts_at": "x", "capacity": 0}), 422, "POST an invalid event")
    problems += checks.answer_problems(api.post_registration(event, name="Ann", email=api.fresh_email()), 201, "register")
    problems += checks.answer_problems(api.post_registration(event, name="Bob", email=api.fresh_email()), 409, "register for a full event")
    problems += checks.answer_problems(http.get("/api/events"), 200, "GET /api/events")
    registration = api.attendees(event)[0]
    problems += checks.answer_problems(http.delete(f"/api/registrations/{registration['id']}"), 204, "DELETE a registration")
    problems += checks.answer_problems(http.delete(f"/api/registrations/{registration['id']}"), 404, "DELETE it again")
    assert not problems, "answer conventions:\n" + "\n".join(problems)


@pytest.mark.requirement("R9")
def test_the_page_is_served_as_html(api, service, http):
    # a plain session: the page is not part of the API contract
    with requests.Session() as session:
        session.trust_env = False
        r = session.get(service.base_url + "/", timeout=http.timeout_s)
    media = (r.headers.get("Content-Type") or "").split(";")[0].strip().lower()
    assert r.status_code == 200 and media == "text/html", f"GET / answers an HTML page: {r.status_code} {media!r}"
    assert "<" in r.text and "html" in r.text.lower(), f"GET / answers HTML: {r.text[:200]!r}"


@pytest.mark.requirement("R3", "R7")
def test_a_known_path_with_another_method_gets_405(api, service, http):
    event = api.event(capacity=2)
    registration = api.register(event)
    problems = []
    with requests.Session() as session:  # outside the contract: 405 is not one of its answers
        session.trust_env = False
        for method, path in (("DELETE", "/api/events"), ("PUT", "/api/events"), ("PATCH", f"/api/events/{event['id']}"),
                             ("DELETE", f"/api/events/{event['id']}"), ("PUT", f"/api/events/{event['id']}/registrations"),
                             ("GET", f"/api/registrations/{registration['id']}"), ("POST", "/health")):
            r = session.request(method, service.base_url + path, json={}, timeout=http.timeout_s)
            code = r.json().get("error") if r.headers.get("Content-Type", "").startswith("application/json") else None
            if r.status_code != 405 or code != "method_not_allowed":
                problems.append(f"{method} {path}: expected 405 method_not_allowed, got {r.status_code} {r.text[:120]}")
    assert not problems, "a path that exists but not with the request's method:\n" + "\n".join(problems)
    assert api.seats(event) == 1 and [a["id"] for a in api.attendees(event)] == [registration["id"]], "the refused methods changed nothing"
