"""Delivery rounds, failures and retries (spec.md: Delivering, Retrying)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R18")
@pytest.mark.category("side_effects")
def test_a_flaky_provider_is_retried(api, http, delivery):
    _user, n = api.notified(email=api.email("flaky.example"))
    assert api.state(n) == ("sent", None, 3), f"two 503s then a 202 within one request: sent after 3 attempts: {n}"
    attempts = delivery.attempts_for(n["id"])
    assert [a.get("status") for a in attempts] == [503, 503, 202], f"three POST /messages, the third accepted: {[a.get('status') for a in attempts]}"


@pytest.mark.requirement("R18")
@pytest.mark.category("state")
def test_a_flaky_sms_is_sent_on_the_third_attempt(api, http):
    user = api.user(phone=api.phone("+998"))
    n = api.send(user, api.template(channel="sms", subject=None, body="b"))
    assert api.state(n) == ("sent", None, 3) and n["provider_message_id"], f"sent after 3 attempts with the provider's id: {n}"


@pytest.mark.requirement("R19")
@pytest.mark.category("side_effects")
def test_a_refusal_is_not_retried(api, http, delivery):
    _user, n = api.notified(email=api.email("bounce.example"))
    assert api.state(n) == ("failed", "rejected", 1), f"a 422 from the provider fails at once: {n}"
    assert len(delivery.attempts_for(n["id"])) == 1, "a refused message must not be sent again"


@pytest.mark.requirement("R19")
@pytest.mark.category("side_effects")
def test_three_failures_give_up(api, http, delivery):
    _user, n = api.notified(email=api.email("down.example"))
    assert api.state(n) == ("failed", "provider_unavailable", 3), f"three 503s: failed, provider_unavailable: {n}"
    assert len(delivery.attempts_for(n["id"])) == 3, "exactly three attempts, no more"


@pytest.mark.requirement("R19")
@pytest.mark.category("state")
def test_a_failed_notification_has_no_provider_id(api, http):
    user = api.user(phone=api.phone("+999"))
    n = api.send(user, api.template(channel="sms", subject=None, body="b"))
    assert (n["status"], n["provider_message_id"], n["sent_at"], n["to"]) == ("failed", None, None, user.phone), (
        f"failed: no provider id, no sent_at, to is the address tried: {n}"
    )


@pytest.mark.requirement("R20")
@pytest.mark.category("state")
def test_a_retry_goes_to_the_current_address(api, http, delivery):
    user, n = api.notified(email=api.email("down.example"))
    fixed = api.email()
    api.set_addresses(user, email=fixed)
    got = api.retry(n)
    assert api.state(got) == ("sent", None, 4) and got["to"] == fixed, f"the retry reaches the new address on its first attempt (4 in all): {got}"
    assert [a["json"]["to"] for a in delivery.attempts_for(n["id"])] == [user.email] * 3 + [fixed], "three tries to the old address, one to the new"


@pytest.mark.requirement("R20")
@pytest.mark.category("side_effects")
def test_a_retry_that_fails_again_keeps_counting(api, http, delivery):
    _user, n = api.notified(email=api.email("down.example"))
    got = api.retry(n)
    assert api.state(got) == ("failed", "provider_unavailable", 6), f"a second round of three attempts: {got}"
    assert len(delivery.attempts_for(n["id"])) == 6, "six attempts reached the provider in all"


@pytest.mark.requirement("R20")
@pytest.mark.category("side_effects")
def test_only_failed_notifications_can_be_retried(api, http, delivery, admin):
    _user, sent = api.notified()
    api.error(http.post(f"/notifications/{sent['id']}/retry", headers=admin.headers), 409, "invalid_state", "retrying a sent notification")
    assert len(delivery.attempts_for(sent["id"])) == 1, "a rejected retry must send nothing"
    skipped = api.send(api.user(email=None), api.template())
    api.error(http.post(f"/notifications/{skipped['id']}/retry", headers=admin.headers), 409, "invalid_state", "retrying a skipped notification")


@pytest.mark.requirement("R20", "R22")
@pytest.mark.category("authorization")
def test_only_the_administrator_retries(api, http):
    user, other = api.user(email=api.email("down.example")), api.user("other")
    n = api.send(user, api.template())
    api.error(http.post(f"/notifications/{n['id']}/retry", headers=user.headers), 403, "forbidden", "the recipient retrying")
    api.error(http.post(f"/notifications/{n['id']}/retry", headers=other.headers), 404, "not_found", "another user retrying")
    assert api.notification(user, n)["attempts"] == 3, "rejected retries must not attempt anything"


@pytest.mark.requirement("R20", "R13")
@pytest.mark.category("state")
def test_a_retry_without_address_skips(api, http, delivery):
    user, n = api.notified(email=api.email("down.example"))
    api.set_addresses(user, email=None)
    got = api.retry(n)
    assert (got["status"], got["reason"], got["attempts"]) == ("skipped", "no_address", 3), f"no address any more: skipped without attempting: {got}"
    assert len(delivery.attempts_for(n["id"])) == 3, "no new attempt"


@pytest.mark.requirement("R18", "R19")
@pytest.mark.category("side_effects")
def test_no_answer_counts_as_a_failed_attempt(api, http, delivery):
    _user, n = api.notified(email=api.email("silent.example"))
    assert api.state(n) == ("failed", "provider_unavailable", 3), f"three attempts without an answer: failed, provider_unavailable: {n}"
    assert len(delivery.attempts_for(n["id"])) == 3, "an unanswered attempt is tried again, three attempts in all"

