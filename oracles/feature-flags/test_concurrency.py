"""Requests that arrive at once (spec.md: "Requests may arrive concurrently"; a flag's `key`
"must not be the key of an existing flag (`409`)").

One key created by several requests in a burst released together (http/concurrency.py): one
flag is created, every other request gets `409 conflict`, and the flag is the winner's.
"""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http.concurrency import at_once, one_winner

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("state")]


@pytest.mark.requirement("R10")
def test_a_flag_key_created_at_once_is_created_once(api, http, editor):
    key, names = "race-" + uuid.uuid4().hex[:10], [f"Racer {i}" for i in range(6)]
    answers = at_once(http.base_url, lambda name: http.post("/flags", json={"key": key, "name": name}, headers=editor.headers),
                      names, http.timeout_s)
    [won] = one_winner(answers, "one flag key created six times at once", code="conflict")
    assert api.get_flag(key)["name"] == won.json()["name"], "the flag is the one whose creation won, not overwritten by a refused one"
