"""Requests that arrive at once (spec.md: "Requests may arrive concurrently; a request either
applies completely or not at all"; `over_budget`: a project's recorded minutes never exceed its
budget).

Entries of several users on one project with a budget, sent as a burst released together
(http/concurrency.py): exactly as many as the budget holds are recorded, every other gets
`409 over_budget`.
"""

from __future__ import annotations

import pytest

from pytest_backendbench.http.concurrency import at_once, one_winner

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("state")]


@pytest.mark.requirement("R13", "R24")
def test_entries_at_once_never_pass_the_project_budget(api, http):
    work, users = api.work(budget_minutes=120), [api.staff() for _ in range(6)]
    answers = at_once(http.base_url, lambda user: api.post_entry(user, work, duration=60), users, http.timeout_s)
    one_winner(answers, "six hour-long entries at once on a project with a budget of 120 minutes", allowed=2, code="over_budget")
    used = api.get(f"/projects/{work.project['id']}")["used_minutes"]
    assert used == 120, f"the project used exactly its budget: used_minutes {used}"
