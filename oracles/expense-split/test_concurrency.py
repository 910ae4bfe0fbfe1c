"""Requests that arrive at once (spec.md: "Requests may arrive concurrently"; a member's name is
"unique among the project's members, active or not (`409 member_exists`)").

One name added by a burst released together (http/concurrency.py): one member is created, every
other request gets `409 member_exists`.
"""

from __future__ import annotations

import pytest

from pytest_backendbench.http.concurrency import at_once, one_winner

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("state")]


@pytest.mark.requirement("R4")
def test_a_member_name_added_at_once_exists_once(api, http):
    project, name = api.project(), api.unique("Ann", " ", 6)
    answers = at_once(http.base_url, lambda weight: api.post_member(project, name=name, weight=weight), range(1, 7), http.timeout_s)
    one_winner(answers, "one member name added six times at once", code="member_exists")
    named = [m for m in api.members(project) if m["name"] == name]
    assert len(named) == 1, f"the project has one member of that name: {named}"
