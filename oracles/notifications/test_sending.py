"""Sending: rendering, validation and the delivery request (spec.md: Sending, Delivering)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R10")
@pytest.mark.category("api_surface")
def test_sending_renders_the_template(api, http, admin):
    user = api.user("ann")
    template = api.template(category="reminders", subject="{{username}}, your {{item}} is ready", body="Pick up {{item}} at {{place}}.")
    r = http.post("/notifications", json={"user_id": user.id, "template_key": template["key"],
                                          "data": {"item": "parcel", "place": "Desk 4", "username": "someone else"}}, headers=admin.headers)
    assert r.status_code == 201, f"sending a notification: {r.status_code} {r.text[:300]}"
    n = r.json()
    expected = {"user_id": user.id, "template_key": template["key"], "channel": "email", "category": "reminders",
                "subject": f"{user.username}, your parcel is ready", "body": "Pick up parcel at Desk 4."}
    assert {k: n.get(k) for k in expected} == expected, f"the rendered notification (username is always the recipient's):\n  expected {expected}\n  got      { {k: n.get(k) for k in expected} }"
    assert api.notification(admin, n) == n, "reading the notification back gives the same notification"


@pytest.mark.requirement("R10")
@pytest.mark.category("api_surface")
def test_placeholders_may_have_spaces(api, http):
    user = api.user()
    template = api.template(subject="Code", body="Your code: {{ code }} / {{code}} / {{  username  }}")
    n = api.send(user, template, {"code": "4711"})
    assert n["body"] == f"Your code: 4711 / 4711 / {user.username}", f"every placeholder form is replaced: {n['body']!r}"


@pytest.mark.requirement("R10", "R12")
@pytest.mark.category("api_surface")
def test_an_sms_notification(api, http, delivery):
    user, _template, n = api.sent_from(channel="sms", subject=None, body="Reminder for {{username}}")
    assert (n["channel"], n["subject"], n["to"], n["status"]) == ("sms", None, user.phone, "sent"), f"an sms to the user's phone: {n}"
    sent = delivery.attempts_for(n["id"])[0]["json"]
    assert sent.get("channel") == "sms" and sent.get("subject") is None, f"an sms is sent without subject: {sent}"


@pytest.mark.requirement("R11")
@pytest.mark.category("authorization")
def test_users_cannot_send(api, http):
    user = api.user()
    template = api.template()
    api.error(api.try_send(user, template, headers=user.headers), 403, "forbidden", "a user sending a notification")
    api.error(api.try_send("nobody", "nothing", headers=user.headers), 403, "forbidden", "a user sending an invalid one (403 before 422)")
    assert api.mine(user)["total"] == 0, "no notification may exist after a rejected send"


@pytest.mark.requirement("R11")
@pytest.mark.category("validation")
def test_unknown_recipient_or_template_gets_422(api, http):
    user = api.user()
    template = api.template()
    problems = [
        api.validation_problem(api.try_send("no-such-user", template), ["user_id"], "an unknown user_id"),
        api.validation_problem(api.try_send(user, "no.such.template"), ["template_key"], "an unknown template_key"),
        api.validation_problem(api.try_send("no-such-user", "no.such.template"), ["template_key", "user_id"], "both unknown"),
        api.validation_problem(api.http.post("/notifications", json={}, headers=api.admin.headers), ["template_key", "user_id"], "both missing"),
    ]
    problems = [p for p in problems if p]
    assert not problems, "invalid sends were not rejected:\n" + "\n".join(problems)


@pytest.mark.requirement("R11", "R27")
@pytest.mark.category("validation")
def test_data_must_fill_every_placeholder_with_a_string(api, http):
    user = api.user()
    template = api.template(subject="Order {{order}}", body="Total {{total}}")
    problems = [
        api.validation_problem(api.try_send(user, template, {"order": "A1"}), ["data"], "a missing body placeholder"),
        api.validation_problem(api.try_send(user, template, {"total": "9"}), ["data"], "a missing subject placeholder"),
        api.validation_problem(api.try_send(user, template, {"order": "A1", "total": 9}), ["data"], "a number value"),
        api.validation_problem(api.try_send(user, template, ["order", "total"]), ["data"], "data as a list"),
    ]
    problems = [p for p in problems if p]
    assert not problems, "sends with bad data were not rejected:\n" + "\n".join(problems)
    assert api.mine(user)["total"] == 0, "no notification may exist after rejected sends"


@pytest.mark.requirement("R11")
@pytest.mark.category("side_effects")
def test_rejected_sends_reach_no_provider(api, http, delivery):
    user = api.user(email=api.email())
    template = api.template(body="Hi {{name}}")
    api.try_send(user, template, {})
    assert delivery.to(user.email) == [], "a send rejected with 422 must not reach the provider"


@pytest.mark.requirement("R12")
@pytest.mark.category("side_effects")
def test_delivery_sends_one_message(api, http, delivery):
    user, _template, n = api.sent_from(subject="Hello {{username}}", body="Body for {{username}}")
    attempts = delivery.attempts_for(n["id"])
    assert len(attempts) == 1, f"one POST /messages for a healthy recipient, got {len(attempts)}"
    expected = {"channel": "email", "to": user.email, "subject": f"Hello {user.username}", "body": f"Body for {user.username}", "reference": n["id"]}
    sent = attempts[0]["json"]
    assert {k: sent.get(k) for k in expected} == expected, f"the message body:\n  expected {expected}\n  got      {sent}"


@pytest.mark.requirement("R12")
@pytest.mark.category("state")
def test_a_sent_notification_records_the_provider_id(api, http, delivery):
    user, n = api.notified()
    assert api.state(n) == ("sent", None, 1), f"status sent, no reason, one attempt: {n}"
    assert n["to"] == user.email and isinstance(n["sent_at"], str), f"to and sent_at are set: {n}"
    message = delivery.message(n["provider_message_id"]) if n.get("provider_message_id") else None
    assert message is not None and message["reference"] == n["id"], f"provider_message_id names the provider's accepted message: {n}"
