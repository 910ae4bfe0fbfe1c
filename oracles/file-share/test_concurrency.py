"""Requests that arrive at once (spec.md: "Requests may arrive concurrently"; a public download
"increases `download_count` by 1").

Downloads of one share sent as a burst released together (http/concurrency.py): every one
succeeds and every one is counted, none lost to another.
"""

from __future__ import annotations

import os

import pytest

from pytest_backendbench.http.concurrency import at_once, one_winner

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("state")]


@pytest.mark.requirement("R17")
def test_downloads_at_once_are_each_counted_once(api, http, alice):
    file = api.put_file(alice, "counted.bin", os.urandom(2000))
    share = api.share(alice, file)
    answers = at_once(http.base_url, lambda _: api.public(share["token"]), range(10), http.timeout_s)
    one_winner(answers, "ten downloads of a share without a limit at once", won=200, allowed=10)
    counted = api.shares(alice, file)[0]["download_count"]
    assert counted == 10, f"ten successful downloads count ten: download_count {counted}"
