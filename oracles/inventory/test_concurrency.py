"""Requests that arrive at once (spec.md: "Requests may arrive concurrently"; a supplier name is
"unique **case-insensitively** (`409`)").

One supplier name in several spellings created by a burst released together
(http/concurrency.py): one supplier is created, every other request gets `409 conflict`.
"""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http.concurrency import at_once, one_winner

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("state")]


@pytest.mark.requirement("R11")
def test_a_supplier_name_created_at_once_in_any_case_exists_once(api, http):
    name = "Acme " + uuid.uuid4().hex[:8]
    spellings = [name, name.lower(), name.upper(), name.swapcase(), name, name.upper()]
    answers = at_once(http.base_url, lambda spelling: http.post("/suppliers", json={"name": spelling}, headers=api.admin.headers),
                      spellings, http.timeout_s)
    one_winner(answers, "one supplier name in six spellings created at once", code="conflict")
