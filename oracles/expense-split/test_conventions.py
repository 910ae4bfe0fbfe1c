"""Answer conventions (spec.md: API conventions, The page): JSON bodies, empty 204s, 405s, / is HTML."""

from __future__ import annotations

import pytest
import requests

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("api_surface")]


@pytest.mark.requirement("R1", "R2", "R3", "R5")
def test_json_answers_are_labelled_and_204_answers_are_empty(api, http, checks):
    project = api.project()
    a = api.member(project)
    problems = checks.answer_problems(http.get("/health"), 200, "GET /health")
    problems += checks.answer_problems(api.create_project(slug="x"), 422, "POST an invalid project")
    problems += checks.answer_problems(api.post_token(project.slug, "wrong-password"), 401, "a wrong password")
    problems += checks.answer_problems(http.get(project.path("/members")), 401, "no token")
    problems += checks.answer_problems(api.post_member(project, name="Jan"), 201, "add a member")
    bill = api.post_bill(project, api.bill_body(a, [a]))
    problems += checks.answer_problems(bill, 201, "record a bill")
    problems += checks.answer_problems(api.get(project, "/balances"), 200, "GET balances")
    problems += checks.answer_problems(api.get(project, "/settlements"), 200, "GET settlements")
    problems += checks.answer_problems(http.delete(project.path(f"/bills/{bill.json()['id']}"), headers=project.auth), 204, "DELETE a bill")
    problems += checks.answer_problems(http.delete(project.path(f"/bills/{bill.json()['id']}"), headers=project.auth), 404, "DELETE it again")
    assert not problems, "answer conventions:\n" + "\n".join(problems)


@pytest.mark.requirement("R11")
def test_the_page_is_served_as_html(api, service, http):
    with requests.Session() as session:  # a plain session: the page is not part of the API contract
        session.trust_env = False
        r = session.get(service.base_url + "/", timeout=http.timeout_s)
    media = (r.headers.get("Content-Type") or "").split(";")[0].strip().lower()
    assert r.status_code == 200 and media == "text/html", f"GET / answers an HTML page: {r.status_code} {media!r}"
    assert "<" in r.text and "html" in r.text.lower(), f"GET / answers HTML: {r.text[:200]!r}"


@pytest.mark.requirement("R2", "R3", "R5")
def test_a_known_path_with_another_method_gets_405(api, service, http):
    project = api.project()
    a = api.member(project)
    bill = api.bill(project, a, [a])
    problems = []
    with requests.Session() as session:  # outside the contract: 405 is not one of its answers
        session.trust_env = False
        for method, path in (("GET", "/api/projects"), ("DELETE", "/api/projects"), ("GET", project.path("/token")),
                             ("DELETE", project.path("/members")), ("PUT", project.path("/bills")), ("POST", project.path("/balances")),
                             ("DELETE", project.path("/settlements")), ("POST", project.path(f"/bills/{bill['id']}")), ("POST", "/health")):
            r = session.request(method, service.base_url + path, json={}, headers=project.auth, timeout=http.timeout_s)
            code = r.json().get("error") if r.headers.get("Content-Type", "").startswith("application/json") else None
            if r.status_code != 405 or code != "method_not_allowed":
                problems.append(f"{method} {path}: expected 405 method_not_allowed, got {r.status_code} {r.text[:120]}")
    assert not problems, "a path that exists but not with the request's method:\n" + "\n".join(problems)
    assert [b["id"] for b in api.bills(project)] == [bill["id"]], "the refused methods changed nothing"
