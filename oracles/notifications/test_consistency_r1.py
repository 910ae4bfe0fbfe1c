"""R1 (evolved) items: content kept through deferral, current addresses, isolation, exact validation."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r1")]


@pytest.mark.requirement("R25", "R21")
@pytest.mark.category("side_effects")
def test_a_deferred_notification_is_delivered_with_its_original_content(api, http, delivery, admin):
    user = api.in_quiet_hours()
    template = api.template(subject="Original {{username}}", body="Original body")
    n = api.send(user, template)
    api.ok(http.patch(f"/templates/{template['id']}", json={"subject": "Edited", "body": "Edited body"}, headers=admin.headers), 200, "edit")
    api.preferences(user)
    api.dispatch()
    sent = [a["json"] for a in delivery.attempts_for(n["id"])]
    assert [(s.get("subject"), s.get("body")) for s in sent] == [(f"Original {user.username}", "Original body")], (
        f"the deferred notification goes out with the content rendered at creation: {sent}"
    )


@pytest.mark.requirement("R21", "R12")
@pytest.mark.category("side_effects")
def test_dispatch_delivers_to_the_current_address(api, http, delivery):
    user = api.in_quiet_hours()
    n = api.send(user, api.template())
    new_mail = api.email()
    api.set_addresses(user, email=new_mail)
    api.preferences(user)
    api.dispatch()
    got = api.notification(user, n)
    assert (got["status"], got["to"]) == ("sent", new_mail), f"delivered to the address the user has at dispatch time: {got}"
    assert [a["json"]["to"] for a in delivery.attempts_for(n["id"])] == [new_mail], "one attempt, to the new address"


@pytest.mark.requirement("R21", "R13")
@pytest.mark.category("state")
def test_dispatch_skips_a_recipient_without_address(api, http):
    user = api.in_quiet_hours()
    n = api.send(user, api.template(channel="sms", subject=None, body="b"))
    api.set_addresses(user, phone=None)
    api.dispatch()
    got = api.notification(user, n)
    assert (got["status"], got["reason"]) == ("skipped", "no_address"), f"the phone was removed while deferred: {got}"


@pytest.mark.requirement("R22", "R23")
@pytest.mark.category("authorization")
def test_users_never_see_each_others_notifications(api, http):
    alice, bob = api.user("alice"), api.user("bob")
    template = api.template()
    hers = api.send(alice, template)
    api.send(bob, template)
    for params in ({}, {"status": "sent"}, {"limit": 100}):
        ids = [x["id"] for x in api.mine(bob, **params)["items"]]
        assert hers["id"] not in ids, f"bob's list with {params} shows alice's notification"
    api.error(http.get(f"/notifications/{hers['id']}", headers=bob.headers), 404, "not_found", "bob reading alice's notification")
    api.error(http.get("/notifications", params={"user_id": alice.id}, headers=bob.headers), 403, "forbidden", "bob listing alice's notifications")


@pytest.mark.requirement("R26", "R8")
@pytest.mark.category("validation")
def test_every_invalid_template_field_is_listed_once(api, http, admin):
    r = http.post("/templates", json={"key": "A", "channel": "fax", "category": None, "body": 5}, headers=admin.headers)
    error = api.error(r, 422, "validation_error", "a template with four invalid fields")
    assert sorted(error.get("fields", [])) == ["body", "category", "channel", "key"], f"each invalid field listed once: {error}"


@pytest.mark.requirement("R17", "R16")
@pytest.mark.category("side_effects")
def test_an_account_alert_is_not_held_by_quiet_hours(api, http, delivery):
    user = api.in_quiet_hours()
    alert = api.send(user, api.template(channel="sms", subject=None, body="Login from a new device", category="account"))
    promo = api.send(user, api.template(channel="sms", subject=None, body="Sale!", category="marketing"))
    assert (alert["status"], promo["status"]) == ("sent", "deferred"), f"account goes out, marketing waits: {alert['status']}, {promo['status']}"
    assert len(delivery.attempts_for(alert["id"])) == 1 and delivery.attempts_for(promo["id"]) == [], "only the alert reached the provider"


@pytest.mark.requirement("R19", "R20")
@pytest.mark.category("side_effects")
def test_retrying_a_refused_message_tries_once_more(api, http, delivery):
    _user, n = api.notified(email=api.email("bounce.example"))
    got = api.retry(n)
    assert api.state(got) == ("failed", "rejected", 2), f"a refusal again: one more attempt, still rejected: {got}"
    assert len(delivery.attempts_for(n["id"])) == 2, "two attempts in all"


@pytest.mark.requirement("R18", "R20")
@pytest.mark.category("state")
def test_a_flaky_address_recovers_on_retry(api, http):
    user, n = api.notified(email=api.email("down.example"))
    api.set_addresses(user, email=api.email("flaky.example"))
    got = api.retry(n)
    assert api.state(got) == ("sent", None, 6), f"the new flaky address fails twice, then accepts: 3 + 3 attempts: {got}"
