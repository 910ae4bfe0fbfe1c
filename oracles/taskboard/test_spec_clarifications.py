"""Passages careful readers found open, now settled in spec.md (issue 15); each item tests the sentence from both sides.

- Errors: "a path that exists but not with the request's method gets `405` (`method_not_allowed`)".
- Lists: "An empty value (`limit=`, `offset=`) is invalid too: only an absent parameter takes its default."
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R28")
@pytest.mark.category("api_surface")
def test_a_method_a_path_does_not_have_gets_405(api, http, service, checks):
    caller = api.user()
    problems = checks.wrong_method_problems(service, http.timeout_s, "/health", caller.headers)
    assert not problems, "a method the path does not have:\n" + "\n".join(problems)
    assert http.get("/health").status_code == 200, "GET /health still answers 200"


@pytest.mark.requirement("R9", "R28")
@pytest.mark.category("validation")
def test_an_empty_limit_or_offset_is_invalid_not_the_default(api, http):
    caller = api.user()
    problems = [
        api.validation_problem(http.get("/projects", params={"limit": ""}, headers=caller.headers), ["limit"], "GET /projects?limit="),
        api.validation_problem(http.get("/projects", params={"offset": ""}, headers=caller.headers), ["offset"], "GET /projects?offset="),
    ]
    problems = [p for p in problems if p]
    assert not problems, "empty paging values:\n" + "\n".join(problems)
    page = api.ok(http.get("/projects", headers=caller.headers), 200, "list with no paging parameters")
    assert (page.get("limit"), page.get("offset")) == (20, 0), f"absent parameters take their defaults (20, 0): {page}"
