"""How a notification's status is decided: addresses, switches, opt-outs, quiet hours, account (spec.md: Sending)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R13")
@pytest.mark.category("side_effects")
def test_no_email_address_skips(api, http, delivery):
    _user, n = api.notified(email=None)
    assert api.state(n) == ("skipped", "no_address", 0) and n["to"] is None, f"no email address: skipped, nothing attempted: {n}"
    assert delivery.attempts_for(n["id"]) == [], "nothing may reach the provider"


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_no_phone_skips_sms_only(api, http):
    user = api.user(phone=None)
    sms = api.send(user, api.template(channel="sms", subject=None, body="sms"))
    mail = api.send(user, api.template())
    assert (sms["status"], sms["reason"]) == ("skipped", "no_address"), f"an sms to a user without phone: {sms}"
    assert mail["status"] == "sent", f"the same user's email still goes out: {mail}"


@pytest.mark.requirement("R14")
@pytest.mark.category("side_effects")
def test_a_switched_off_channel_skips(api, http, delivery):
    user = api.preferring(email_enabled=False)
    n = api.send(user, api.template(category="marketing"))
    assert api.state(n) == ("skipped", "channel_disabled", 0), f"email switched off: {n}"
    assert delivery.attempts_for(n["id"]) == [], "nothing may reach the provider"


@pytest.mark.requirement("R14")
@pytest.mark.category("state")
def test_switching_off_sms_keeps_email(api, http):
    user = api.preferring(sms_enabled=False)
    assert api.send(user, api.template())["status"] == "sent", "email stays on when only sms is off"
    sms = api.send(user, api.template(channel="sms", subject=None, body="b"))
    assert (sms["status"], sms["reason"]) == ("skipped", "channel_disabled"), f"the sms is skipped: {sms}"


@pytest.mark.requirement("R15")
@pytest.mark.category("side_effects")
def test_an_opted_out_category_skips(api, http, delivery):
    user = api.preferring(opted_out=["marketing"])
    n = api.send(user, api.template(category="marketing"))
    assert api.state(n) == ("skipped", "opted_out", 0), f"marketing opted out: {n}"
    assert delivery.attempts_for(n["id"]) == [], "nothing may reach the provider"


@pytest.mark.requirement("R15")
@pytest.mark.category("state")
def test_other_categories_still_arrive(api, http):
    user = api.preferring(opted_out=["marketing"])
    n = api.send(user, api.template(category="reminders"))
    assert n["status"] == "sent", f"reminders are not opted out: {n}"


@pytest.mark.requirement("R16")
@pytest.mark.category("side_effects")
def test_quiet_hours_defer(api, http, delivery):
    user = api.in_quiet_hours()
    n = api.send(user, api.template())
    assert api.state(n) == ("deferred", None, 0), f"in quiet hours the notification is deferred: {n}"
    assert (n["to"], n["sent_at"], n["provider_message_id"]) == (None, None, None), f"nothing attempted: {n}"
    assert delivery.attempts_for(n["id"]) == [], "nothing may reach the provider in quiet hours"


@pytest.mark.requirement("R16")
@pytest.mark.category("state")
def test_quiet_hours_at_another_time_do_not_defer(api, http):
    user = api.preferring(quiet_hours=api.quiet(120, 180))
    assert api.send(user, api.template())["status"] == "sent", "quiet hours two hours from now must not hold a notification now"


@pytest.mark.requirement("R16")
@pytest.mark.category("state")
def test_quiet_hours_wrap_over_midnight(api, http):
    inside, outside = api.user("inside"), api.user("outside")
    wrapping = api.quiet_wrapping_now()
    api.preferences(inside, quiet_hours=wrapping)
    api.preferences(outside, quiet_hours=api.quiet(60, -60))
    got = (api.send(inside, api.template())["status"], api.send(outside, api.template())["status"])
    assert got == ("deferred", "sent"), (
        f"quiet hours {wrapping} run over midnight and hold the current time; "
        f"hours from an hour ahead round to an hour ago leave it out: got {got}"
    )


@pytest.mark.requirement("R16")
@pytest.mark.category("state")
def test_quiet_hours_include_start_and_exclude_end(api, http):
    starts_now, ends_now = api.user("starts"), api.user("ends")
    api.steady_minute()
    api.preferences(starts_now, quiet_hours={"start": api.clock(0), "end": api.clock(90)})
    api.preferences(ends_now, quiet_hours={"start": api.clock(-90), "end": api.clock(0)})
    got = (api.send(starts_now, api.template())["status"], api.send(ends_now, api.template())["status"])
    assert got == ("deferred", "sent"), f"start is inclusive and end exclusive: got {got}"


@pytest.mark.requirement("R13", "R14", "R15", "R16")
@pytest.mark.category("state")
def test_the_rules_apply_in_order(api, http):
    user = api.user(phone=None)
    api.preferences(user, sms_enabled=False, email_enabled=False, opted_out=["marketing", "reminders"], quiet_hours=api.quiet(-60, 60))
    sms = api.send(user, api.template(channel="sms", subject=None, body="b", category="marketing"))
    assert sms["reason"] == "no_address", f"no address comes first: {sms}"
    mail = api.send(user, api.template(category="marketing"))
    assert mail["reason"] == "channel_disabled", f"a switched-off channel comes before opt-outs: {mail}"
    api.preferences(user, opted_out=["marketing"], quiet_hours=api.quiet(-60, 60))
    mail = api.send(user, api.template(category="marketing"))
    assert mail["reason"] == "opted_out", f"an opt-out comes before quiet hours: {mail}"


@pytest.mark.requirement("R17")
@pytest.mark.category("side_effects")
def test_account_notifications_ignore_preferences(api, http, delivery):
    user = api.preferring(email_enabled=False, sms_enabled=False, quiet_hours=api.quiet(-60, 60))
    n = api.send(user, api.template(category="account", subject="Reset", body="Your reset code"))
    assert api.state(n) == ("sent", None, 1), f"an account notification goes out despite switches and quiet hours: {n}"
    assert len(delivery.attempts_for(n["id"])) == 1, "it reaches the provider once"


@pytest.mark.requirement("R17")
@pytest.mark.category("state")
def test_account_notifications_still_need_an_address(api, http):
    user = api.user(email=None)
    n = api.send(user, api.template(category="account"))
    assert (n["status"], n["reason"]) == ("skipped", "no_address"), f"without an address even account notifications are skipped: {n}"
