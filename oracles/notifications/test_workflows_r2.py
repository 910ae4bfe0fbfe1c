"""R2 (evolved) items: journeys across preferences, templates, delivery and the provider."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r2"), pytest.mark.weight(2.0)]


@pytest.mark.requirement("R4", "R13", "R12", "R23")
@pytest.mark.category("workflow")
def test_adding_a_phone_number_later(api, http, delivery):
    user = api.user(phone=None)
    template = api.template(channel="sms", subject=None, body="Your table is ready, {{username}}")
    first = api.send(user, template)
    number = api.phone()
    api.set_addresses(user, phone=number)
    second = api.send(user, template)
    assert (first["status"], first["reason"], second["status"]) == ("skipped", "no_address", "sent"), f"skipped, then sent: {first}, {second}"
    assert [a["json"]["to"] for a in delivery.to(number)] == [number], "exactly one message reached the new number"
    assert [x["status"] for x in api.mine(user)["items"]] == ["sent", "skipped"], "the user sees both, newest first"


@pytest.mark.requirement("R16", "R21", "R23", "R24")
@pytest.mark.category("workflow")
def test_a_quiet_night(api, http, delivery):
    user = api.in_quiet_hours()
    template = api.template(category="reminders")
    held = [api.send(user, template) for _ in range(2)]
    api.dispatch()
    assert [x["status"] for x in api.mine(user, status="deferred")["items"]] == ["deferred", "deferred"], "still night: both wait"
    api.preferences(user, quiet_hours=api.quiet(120, 180))
    api.dispatch()
    assert api.mine(user, status="deferred")["total"] == 0, "the morning dispatch delivers everything"
    assert [x["id"] for x in api.all(user_id=user.id, status="sent")["items"]] == [held[1]["id"], held[0]["id"]], "both are sent"
    assert all(len(delivery.attempts_for(n["id"])) == 1 for n in held), "each reached the provider exactly once"


@pytest.mark.requirement("R19", "R20", "R4", "R24")
@pytest.mark.category("workflow")
def test_recovering_from_a_dead_mailbox(api, http, delivery):
    user = api.user(email=api.email("down.example"))
    template = api.template(category="account", subject="Verify", body="Code {{code}}")
    n = api.send(user, template, {"code": "1234"})
    assert api.state(n) == ("failed", "provider_unavailable", 3), f"the mailbox is down: {n}"
    assert [x["id"] for x in api.all(user_id=user.id, status="failed")["items"]] == [n["id"]], "the administrator finds it among failures"
    fixed = api.email()
    api.set_addresses(user, email=fixed)
    got = api.retry(n)
    assert api.state(got) == ("sent", None, 4), f"sent to the fixed address: {got}"
    assert delivery.to(fixed)[0]["json"]["body"] == "Code 1234", "the retry carries the original content"
    api.error(http.post(f"/notifications/{n['id']}/retry", headers=api.admin.headers), 409, "invalid_state", "retrying after success")


@pytest.mark.requirement("R15", "R17", "R6")
@pytest.mark.category("workflow")
def test_opting_out_and_back_in(api, http, delivery):
    user = api.user()
    promo = api.template(category="marketing", subject="Sale", body="50% off")
    security = api.template(category="account", subject="Security", body="New login")
    api.preferences(user, opted_out=["marketing"])
    skipped, alert = api.send(user, promo), api.send(user, security)
    assert (skipped["reason"], alert["status"]) == ("opted_out", "sent"), f"marketing skipped, account sent: {skipped}, {alert}"
    api.preferences(user, opted_out=[])
    again = api.send(user, promo)
    assert again["status"] == "sent", f"after opting back in, marketing arrives: {again}"
    assert len(delivery.to(user.email)) == 2, "two messages reached the mailbox: the alert and the second promotion"


@pytest.mark.requirement("R9", "R25", "R11")
@pytest.mark.category("workflow")
def test_a_template_through_its_life(api, http, admin):
    user, template, first = api.sent_from(subject="v1", body="Hello {{username}}")
    api.ok(http.patch(f"/templates/{template['id']}", json={"subject": "v2", "body": "Bye {{username}}, see {{when}}"}, headers=admin.headers), 200, "edit")
    api.error(api.try_send(user, template), 422, "validation_error", "the new body needs 'when'")
    second = api.send(user, template, {"when": "Monday"})
    assert (first["subject"], second["subject"], second["body"]) == ("v1", "v2", f"Bye {user.username}, see Monday"), (
        f"each notification has the content of its moment: {first['subject']}, {second['subject']}, {second['body']}"
    )
    api.ok(http.delete(f"/templates/{template['id']}", headers=admin.headers), 204, "delete")
    problem = api.validation_problem(api.try_send(user, template, {"when": "x"}), ["template_key"], "sending from a deleted template")
    assert problem is None, problem
    assert [x["subject"] for x in api.mine(user)["items"]] == ["v2", "v1"], "both notifications remain, unchanged"


@pytest.mark.requirement("R13", "R14", "R16", "R19", "R24")
@pytest.mark.category("workflow")
def test_a_campaign_to_different_people(api, http, delivery):
    template = api.template(category="reminders", subject="Reminder", body="Don't forget, {{username}}")
    happy = api.user("happy")
    homeless = api.user("homeless", email=None)
    off = api.user("off")
    api.preferences(off, email_enabled=False)
    sleepy = api.user("sleepy")
    api.preferences(sleepy, quiet_hours=api.quiet(-60, 60))
    bounced = api.user("bounced", email=api.email("bounce.example"))
    results = {u.username.split("_")[0]: api.send(u, template) for u in (happy, homeless, off, sleepy, bounced)}
    got = {name: (n["status"], n["reason"]) for name, n in results.items()}
    assert got == {
        "happy": ("sent", None), "homeless": ("skipped", "no_address"), "off": ("skipped", "channel_disabled"),
        "sleepy": ("deferred", None), "bounced": ("failed", "rejected"),
    }, f"each recipient's rules decide: {got}"
    attempted = {name for name, n in results.items() if delivery.attempts_for(n["id"])}
    assert attempted == {"happy", "bounced"}, f"only deliverable recipients reached the provider: {attempted}"
    for status, name in (("sent", "happy"), ("failed", "bounced")):
        ids = [x["id"] for x in api.all(status=status, limit=100)["items"]]
        assert results[name]["id"] in ids, f"the administrator finds {name}'s notification under status={status}"
