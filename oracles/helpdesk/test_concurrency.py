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


ROUNDS = 3
"""Bursts per item, each with an email of its own. A registration hashes the password before it
looks the email up, and under load the hashes spread one burst's requests by tens of
milliseconds, so one burst does not always meet a check-then-insert window: one burst caught the
`email-race` mutant in 18 of 20 repeats at a load average of 9 (REVIEW.md, "Requests that arrive
at once"); three make a miss about a thousand times rarer."""


@pytest.mark.requirement("R2")
def test_an_email_registered_at_once_in_any_case_is_one_user(api, http):
    for burst in range(1, ROUNDS + 1):
        email = f"race.{uuid.uuid4().hex[:12]}@example.org"
        spellings = [email, email.upper(), email.capitalize(), email, email.upper(), email.swapcase()]
        answers = at_once(http.base_url, lambda spelling: http.post("/api/auth/register", json={"email": spelling, "name": "Racer", "password": "pass-" + spelling}),
                          spellings, http.timeout_s)
        one_winner(answers, f"one email in six spellings registered at once (burst {burst} of {ROUNDS})", code="conflict")
        users = api.ok(http.get("/api/users", params={"email": email}, headers=api.admin.headers), 200, "list the users by email")["items"]
        assert len(users) == 1, f"burst {burst} of {ROUNDS}: one user has that email: {users}"
