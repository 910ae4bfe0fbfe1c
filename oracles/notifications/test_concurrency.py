"""Requests that arrive at once (spec.md: "Requests may arrive concurrently"; "Only a `failed`
notification can be retried").

Retries of one failed notification sent as a burst released together (http/concurrency.py): one
runs a delivery round, every other gets `409 invalid_state`, and the provider mock receives the
message once.
"""

from __future__ import annotations

import pytest

from pytest_backendbench.http.concurrency import at_once, one_winner

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("side_effects")]


@pytest.mark.requirement("R20")
def test_retries_sent_at_once_deliver_the_message_once(api, http, delivery):
    fixed, user = api.email(), api.user(email=api.email("down.example"))  # the provider is down for down.example
    failed = api.send(user, api.template())
    api.set_addresses(user, email=fixed)
    answers = at_once(http.base_url, lambda _: http.post(f"/notifications/{failed['id']}/retry", headers=api.admin.headers),
                      range(6), http.timeout_s)
    one_winner(answers, "six retries of one failed notification at once", won=200, code="invalid_state")
    tries = [a["json"]["to"] for a in delivery.attempts_for(failed["id"])]
    assert tries == [user.email] * 3 + [fixed], f"three failed tries, then one delivery round that reaches the new address once: {tries}"
    assert api.state(api.notification(api.admin, failed)) == ("sent", None, 4), "the notification is sent after 4 attempts"
