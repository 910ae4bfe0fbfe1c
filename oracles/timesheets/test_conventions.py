"""Answer and body conventions (spec.md: Conventions, Errors)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R24")
@pytest.mark.category("api_surface")
def test_json_answers_are_labelled_and_204_answers_are_empty(api, http, checks, work):
    user = api.staff()
    e = api.entry(user, work)
    problems = checks.answer_problems(http.get("/health"), 200, "GET /health")
    problems += checks.answer_problems(http.get("/entries"), 401, "GET /entries without a token")
    problems += checks.answer_problems(api.post_entry(user, work, api.day(1), duration=5), 201, "POST /entries")
    problems += checks.answer_problems(api.post_entry(user, work, duration=0), 422, "POST an invalid entry")
    problems += checks.answer_problems(http.get(api.sheet_path(user), headers=user.headers), 200, "GET a timesheet")
    problems += checks.answer_problems(http.delete(f"/entries/{e['id']}", headers=user.headers), 204, "DELETE an entry")
    problems += checks.answer_problems(http.get(f"/entries/{e['id']}", headers=user.headers), 404, "GET a deleted entry")
    assert not problems, "answer conventions:\n" + "\n".join(problems)


@pytest.mark.requirement("R24")
@pytest.mark.category("api_surface")
def test_a_method_a_path_does_not_have_gets_405(api, http, service, checks, employee):
    problems = checks.wrong_method_problems(service, http.timeout_s, "/health", employee.headers)
    problems += checks.wrong_method_problems(service, http.timeout_s, "/reports/summary", employee.headers, ("POST", "DELETE"))
    assert not problems, "wrong methods:\n" + "\n".join(problems)


@pytest.mark.requirement("R25")
@pytest.mark.category("validation")
@pytest.mark.parametrize("raw", ["{not json", "[1, 2]", "\"text\"", "null", "42"], ids=["broken", "array", "string", "null", "number"])
def test_a_body_that_is_not_a_json_object_gets_422(api, http, employee, raw):
    headers = {**employee.headers, "Content-Type": "application/json"}
    problem = api.validation_problem(http.post("/entries", data=raw, headers=headers), None, f"POST /entries with {raw!r}")
    assert problem is None, problem
    assert api.entries(employee) == []


@pytest.mark.requirement("R25", "R10")
@pytest.mark.category("validation")
def test_every_invalid_field_is_named_once(api, http, employee, work):
    body = {"project_id": 5, "activity_id": ["x"], "date": True, "duration_minutes": "60", "description": 7}
    problem = api.validation_problem(http.post("/entries", json=body, headers=employee.headers),
                                     ["project_id", "activity_id", "date", "duration_minutes", "description"], "an entry with every field of the wrong type")
    assert problem is None, problem
    problem = api.validation_problem(http.post("/customers", json={"name": ["x"]}, headers=api.admin.headers), ["name"], "a customer name that is a list")
    assert problem is None, problem
