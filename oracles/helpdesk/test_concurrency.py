"""Requests that arrive at once (spec.md: "Requests may arrive concurrently"; "An email already
taken gets `409 conflict`", compared without regard to case).

One email in several spellings registered by a burst released together (http/concurrency.py):
one user is created, every other request gets `409 conflict`.
"""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http.concurrency import at_once, one_winner

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("state")]


@pytest.mark.requirement("R2")
def test_an_email_registered_at_once_in_any_case_is_one_user(api, http):
    email = f"race.{uuid.uuid4().hex[:12]}@example.org"
    spellings = [email, email.upper(), email.capitalize(), email, email.upper(), email.swapcase()]
    answers = at_once(http.base_url, lambda spelling: http.post("/api/auth/register", json={"email": spelling, "name": "Racer", "password": "pass-" + spelling}),
                      spellings, http.timeout_s)
    one_winner(answers, "one email in six spellings registered at once", code="conflict")
    users = api.ok(http.get("/api/users", params={"email": email}, headers=api.admin.headers), 200, "list the users by email")["items"]
    assert len(users) == 1, f"one user has that email: {users}"
