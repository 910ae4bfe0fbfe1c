"""Answer conventions (spec.md: API conventions, The page): JSON answers are labelled, 204s are empty, pages are HTML, 405s."""

from __future__ import annotations

import pytest
import requests

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("api_surface")]


@pytest.mark.requirement("R1", "R2", "R5", "R6", "R8")
def test_json_answers_are_labelled_and_204_answers_are_empty(api, http, checks):
    owner = api.owner()
    built = api.build(owner, publish=False)
    problems = checks.answer_problems(http.get("/health"), 200, "GET /health")
    problems += checks.answer_problems(api.register(api.fresh_email()), 201, "register")
    problems += checks.answer_problems(api.post(owner, "/api/forms", {"title": " "}), 422, "POST an invalid form")
    problems += checks.answer_problems(api.get(owner, "/api/forms"), 200, "GET /api/forms")
    problems += checks.answer_problems(api.delete(owner, f"/api/forms/{built.id}/questions/{built.qids['Guests']}"), 204, "DELETE a question")
    problems += checks.answer_problems(api.post(owner, f"/api/forms/{built.id}/publish"), 200, "publish")
    problems += checks.answer_problems(api.submit(built, {"Your name": "A", "Main course": "Fish"}), 201, "submit")
    problems += checks.answer_problems(http.get(f"/api/public/forms/{built.slug}"), 200, "GET the public view")
    problems += checks.answer_problems(api.get(owner, f"/api/forms/{built.id}/summary"), 200, "GET the summary")
    problems += checks.answer_problems(api.delete(owner, f"/api/forms/{built.id}"), 204, "DELETE the form")
    problems += checks.answer_problems(api.get(owner, "/api/me"), 200, "GET /api/me")
    assert not problems, "answer conventions:\n" + "\n".join(problems)


@pytest.mark.requirement("R14")
@pytest.mark.parametrize("path", ["/", "/f/{slug}"], ids=["root", "form-page"])
def test_the_pages_are_served_as_html(api, service, http, path):
    built = api.build()
    with requests.Session() as session:  # the pages are not part of the API contract
        session.trust_env = False
        r = session.get(service.base_url + path.format(slug=built.slug), timeout=http.timeout_s)
    media = (r.headers.get("Content-Type") or "").split(";")[0].strip().lower()
    assert r.status_code == 200 and media == "text/html", f"GET {path} answers an HTML page: {r.status_code} {media!r}"
    assert "<" in r.text and "html" in r.text.lower(), f"GET {path} answers HTML: {r.text[:200]!r}"


@pytest.mark.requirement("R5", "R8")
def test_a_known_path_with_another_method_gets_405(api, service, http):
    owner = api.owner()
    built = api.build(owner)
    problems = []
    with requests.Session() as session:  # outside the contract: 405 is not one of its answers
        session.trust_env = False
        for method, path in (("PUT", "/api/forms"), ("DELETE", "/api/forms"), ("PUT", f"/api/forms/{built.id}"), ("GET", f"/api/forms/{built.id}/publish"),
                             ("DELETE", f"/api/forms/{built.id}/summary"), ("GET", "/api/users"), ("GET", "/api/auth/token"),
                             ("DELETE", f"/api/public/forms/{built.slug}"), ("POST", "/health")):
            r = session.request(method, service.base_url + path, json={}, headers=owner.headers, timeout=http.timeout_s)
            code = r.json().get("error") if r.headers.get("Content-Type", "").startswith("application/json") else None
            if r.status_code != 405 or code != "method_not_allowed":
                problems.append(f"{method} {path}: expected 405 method_not_allowed, got {r.status_code} {r.text[:120]}")
    assert not problems, "a path that exists but not with the request's method:\n" + "\n".join(problems)
    assert api.read(built)["status"] == "published" and len(api.read(built)["questions"]) == 4, "the refused methods changed nothing"
