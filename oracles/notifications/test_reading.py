"""Dispatching deferred notifications, reading and listing, kept content, precedence (spec.md: Dispatching, Reading)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


# ---------------------------------------------------------------- dispatch


@pytest.mark.requirement("R21")
@pytest.mark.category("side_effects")
def test_dispatch_delivers_once_quiet_hours_are_over(api, http, delivery):
    user = api.in_quiet_hours()
    n = api.send(user, api.template())
    api.preferences(user)
    summary = api.dispatch()
    got = api.notification(user, n)
    assert api.state(got) == ("sent", None, 1), f"after quiet hours end, dispatch delivers it: {got}"
    assert len(delivery.attempts_for(n["id"])) == 1, "dispatch sends it once"
    assert summary["examined"] >= 1 and summary["sent"] >= 1, f"the summary counts it: {summary}"


@pytest.mark.requirement("R21")
@pytest.mark.category("state")
def test_dispatch_leaves_quiet_recipients_alone(api, http, delivery):
    user = api.in_quiet_hours()
    n = api.send(user, api.template())
    api.dispatch()
    got = api.notification(user, n)
    assert api.state(got) == ("deferred", None, 0), f"still in quiet hours: still deferred: {got}"
    assert delivery.attempts_for(n["id"]) == [], "nothing sent"


@pytest.mark.requirement("R21", "R15")
@pytest.mark.category("state")
def test_dispatch_uses_the_current_preferences(api, http):
    user = api.in_quiet_hours()
    n = api.send(user, api.template(category="marketing"))
    api.preferences(user, opted_out=["marketing"])
    api.dispatch()
    got = api.notification(user, n)
    assert (got["status"], got["reason"]) == ("skipped", "opted_out"), f"opted out while deferred: skipped at dispatch: {got}"


@pytest.mark.requirement("R21")
@pytest.mark.category("api_surface")
def test_dispatch_counts_add_up(api, http):
    user = api.in_quiet_hours()
    api.send(user, api.template())
    summary = api.dispatch()
    parts = summary["sent"] + summary["failed"] + summary["skipped"] + summary["deferred"]
    assert parts == summary["examined"] and summary["deferred"] >= 1, f"sent + failed + skipped + deferred = examined: {summary}"


@pytest.mark.requirement("R21")
@pytest.mark.category("authorization")
def test_users_cannot_dispatch(api, http):
    user = api.user()
    api.error(http.post("/notifications/dispatch", headers=user.headers), 403, "forbidden", "a user dispatching")


# ---------------------------------------------------------------- reading


@pytest.mark.requirement("R22")
@pytest.mark.category("authorization")
def test_a_notification_is_visible_to_its_recipient_and_the_administrator(api, http, admin):
    user, other = api.user("owner"), api.user("other")
    n = api.send(user, api.template())
    assert api.notification(user, n)["id"] == n["id"] and api.notification(admin, n)["id"] == n["id"], "recipient and administrator read it"
    api.error(http.get(f"/notifications/{n['id']}", headers=other.headers), 404, "not_found", "another user reading it")
    api.error(http.get("/notifications/no-such-id", headers=admin.headers), 404, "not_found", "an unknown notification id")


@pytest.mark.requirement("R23")
@pytest.mark.category("api_surface")
def test_my_notifications_newest_first(api, http):
    user, other = api.user("me"), api.user("other")
    template = api.template()
    first = api.send(user, template)
    api.send(other, template)
    second = api.send(user, template)
    third = api.send(user, template)
    body = api.mine(user)
    assert [x["id"] for x in body["items"]] == [third["id"], second["id"], first["id"]], f"only mine, newest first: {body['items']}"
    body = api.mine(user, limit=2, offset=1)
    assert [x["id"] for x in body["items"]] == [second["id"], first["id"]] and (body["total"], body["limit"], body["offset"]) == (3, 2, 1), (
        f"limit=2&offset=1: {body}"
    )


@pytest.mark.requirement("R23")
@pytest.mark.category("state")
def test_my_notifications_filter_by_status(api, http):
    user, sent = api.notified()
    api.preferences(user, sms_enabled=False)
    skipped = api.send(user, api.template(channel="sms", subject=None, body="b"))
    sent_ids = [x["id"] for x in api.mine(user, status="sent")["items"]]
    skipped_ids = [x["id"] for x in api.mine(user, status="skipped")["items"]]
    assert (sent_ids, skipped_ids) == ([sent["id"]], [skipped["id"]]), f"status=sent and status=skipped: {sent_ids}, {skipped_ids}"
    assert api.mine(user, status="failed")["total"] == 0, "nothing failed"


@pytest.mark.requirement("R23", "R24")
@pytest.mark.category("validation")
def test_notification_lists_validate_their_query(api, http, admin):
    user = api.user()
    for path, headers in (("/me/notifications", user.headers), ("/notifications", admin.headers)):
        for params, fields in (({"status": "queued"}, ["status"]), ({"limit": 500}, ["limit"]), ({"status": "x", "offset": -2}, ["offset", "status"])):
            problem = api.validation_problem(http.get(path, params=params, headers=headers), fields, f"GET {path} with {params}")
            assert problem is None, problem


@pytest.mark.requirement("R24")
@pytest.mark.category("api_surface")
def test_the_administrator_lists_by_user(api, http):
    alice, bob = api.user("alice"), api.user("bob")
    template = api.template()
    a1 = api.send(alice, template)
    api.send(bob, template)
    a2 = api.send(alice, template)
    body = api.all(user_id=alice.id)
    assert [x["id"] for x in body["items"]] == [a2["id"], a1["id"]] and body["total"] == 2, f"user_id filter, newest first: {body}"
    assert api.all(user_id="nobody-at-all")["total"] == 0, "a user_id matching nobody matches nothing"


@pytest.mark.requirement("R24")
@pytest.mark.category("state")
def test_the_administrator_combines_filters(api, http):
    user, failed = api.notified(email=api.email("bounce.example"))
    api.send(user, api.template(channel="sms", subject=None, body="b"))
    body = api.all(user_id=user.id, status="failed")
    assert [x["id"] for x in body["items"]] == [failed["id"]], f"user_id AND status=failed: {body}"


@pytest.mark.requirement("R24")
@pytest.mark.category("authorization")
def test_users_cannot_list_everything(api, http):
    user = api.user()
    api.error(http.get("/notifications", headers=user.headers), 403, "forbidden", "a user listing every notification")


@pytest.mark.requirement("R25")
@pytest.mark.category("state")
def test_a_notification_keeps_its_content(api, http, admin):
    user, template, n = api.sent_from(subject="Old subject", body="Old body")
    api.ok(http.patch(f"/templates/{template['id']}", json={"subject": "New subject", "body": "New body"}, headers=admin.headers), 200, "edit")
    got = api.notification(user, n)
    assert (got["subject"], got["body"]) == ("Old subject", "Old body"), f"a later template edit must not change a notification: {got}"
    api.ok(http.delete(f"/templates/{template['id']}", headers=admin.headers), 204, "delete the template")
    got = api.notification(admin, n)
    assert (got["template_key"], got["body"]) == (template["key"], "Old body"), f"a deleted template's notifications stay: {got}"


@pytest.mark.requirement("R26")
@pytest.mark.category("api_surface")
def test_error_precedence(api, http, admin):
    user, other = api.user("owner"), api.user("other")
    n = api.send(user, api.template())
    api.error(http.post(f"/notifications/{n['id']}/retry", headers=other.headers), 404, "not_found", "another user retrying (404 before 403)")
    api.error(http.post(f"/notifications/{n['id']}/retry", headers=user.headers), 403, "forbidden", "the recipient retrying (403 before 409)")
    api.error(http.post(f"/notifications/{n['id']}/retry", headers=admin.headers), 409, "invalid_state", "retrying a sent one")
    r = http.patch("/templates/no-such-template", json={"body": ""}, headers=admin.headers)
    api.error(r, 404, "not_found", "editing an unknown template with an invalid body (404 before 422)")
    r = http.post("/templates", json={"key": "ab", "channel": "sms", "category": "x", "body": ""}, headers=user.headers)
    api.error(r, 403, "forbidden", "a user creating an invalid template (403 before 422)")


@pytest.mark.requirement("R21")
@pytest.mark.category("side_effects")
def test_dispatch_takes_deferred_notifications_oldest_first(api, http, delivery):
    user = api.in_quiet_hours()
    template = api.template()
    made = [api.send(user, template)["id"] for _ in range(3)]
    api.preferences(user)
    api.dispatch()
    order = [e["json"]["reference"] for e in delivery.handle.requests()
             if e.get("path") == "/messages" and isinstance(e.get("json"), dict) and e["json"].get("reference") in made]
    assert order == made, f"dispatch delivers deferred notifications oldest first: {order} (created {made})"

