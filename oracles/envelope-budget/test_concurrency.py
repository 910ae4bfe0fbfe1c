"""Requests that arrive at once (spec.md: "Requests may arrive concurrently"; an envelope name is
"unique among the caller's envelopes ... compared case-insensitively").

One name in several spellings created by a burst released together (http/concurrency.py): one
envelope is created, every other request gets `409 conflict`.
"""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http.concurrency import at_once, one_winner

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("state")]


@pytest.mark.requirement("R10")
def test_an_envelope_name_created_at_once_in_any_case_exists_once(api, http, alice):
    name = "Rent " + uuid.uuid4().hex[:8]
    spellings = [name, name.lower(), name.upper(), name.swapcase(), name, name.lower()]
    answers = at_once(http.base_url, lambda spelling: http.post("/envelopes", json={"name": spelling}, headers=alice.headers),
                      spellings, http.timeout_s)
    one_winner(answers, "one envelope name in six spellings created at once", code="conflict")
    envelopes = api.ok(http.get("/envelopes", headers=alice.headers), 200, "list the envelopes")
    names = [e["name"].lower() for e in envelopes.get("items", envelopes) if e["name"].lower() == name.lower()]
    assert names == [name.lower()], f"the user has one envelope of that name: {envelopes}"
