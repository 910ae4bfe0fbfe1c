"""Security items (spec.md: Users, Templates, Notifications, Limits and hostile input), each tagged with its CWE."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]


@pytest.mark.requirement("R22", "R24")
@pytest.mark.cwe(639)
def test_another_users_notification_reaches_nothing(api, http):
    alice, bob = api.user("alice"), api.user("bob")
    sent = api.send(alice, api.template(body="Your code is 4711"))
    api.error(http.get(f"/notifications/{sent['id']}", headers=bob.headers), 404, "not_found", "bob reading alice's notification")
    r = http.post(f"/notifications/{sent['id']}/retry", headers=bob.headers)
    assert r.status_code in (403, 404), f"bob retrying alice's notification: {api.brief(r)}"
    api.error(http.get("/notifications", params={"user_id": alice.id}, headers=bob.headers), 403, "forbidden", "bob listing alice's notifications")
    assert [n["id"] for n in api.mine(bob)["items"]] == [], "bob's own list must not show alice's notification"
    assert "4711" not in http.get("/me/notifications", params={"limit": 100}, headers=bob.headers).text, "alice's content leaked into bob's list"


@pytest.mark.requirement("R2", "R4", "R7")
@pytest.mark.cwe(915)
def test_roles_and_ids_cannot_be_assigned(api, http):
    r = http.post("/users", json={"username": api.unique("mass"), "password": "long enough", "role": "admin", "is_admin": True, "id": "admin"})
    assert r.status_code == 201, f"undefined fields are ignored at registration: {api.brief(r)}"
    assert r.json().get("id") != "admin", f"the client chose its id: {r.json()}"
    user = api.user("mass")
    r = http.patch("/me", json={"id": "admin", "username": "root", "role": "admin"}, headers=user.headers)
    assert r.status_code == 200, f"PATCH /me ignores fields it does not define: {api.brief(r)}"
    me = api.ok(http.get("/me", headers=user.headers), 200, "read /me")
    assert (me.get("id"), me.get("username")) == (user.id, user.username), f"PATCH /me changed the id or username: {me}"
    api.error(http.get("/templates", headers=user.headers), 403, "forbidden", "a user who claimed the admin role")
    api.error(http.get("/notifications", headers=user.headers), 403, "forbidden", "a user who claimed the admin role")


@pytest.mark.requirement("R10", "R28")
@pytest.mark.cwe(1336)
def test_data_is_rendered_verbatim_never_as_a_template(api, http, checks):
    user = api.user()
    template = api.template(subject="For {{name}}", body="Dear {{name}}, {{note}}")
    data = {"name": "{{username}}", "note": "{{ note }} {{name}} ${7*7} {{7*7}} ' OR '1'='1"}
    sent = api.send(user, template, data)
    assert sent["subject"] == "For {{username}}", f"a value is inserted verbatim, never rendered again: {sent['subject']!r}"
    assert sent["body"] == "Dear {{username}}, {{ note }} {{name}} ${7*7} {{7*7}} ' OR '1'='1", f"the body renders each value verbatim: {sent['body']!r}"
    for text in checks.injection_texts:
        body = api.template(body=text, subject=None, channel="sms")
        assert body["body"] == text, f"a template body is stored verbatim: {text!r} became {body['body']!r}"


@pytest.mark.requirement("R23", "R24", "R28")
@pytest.mark.cwe(89)
def test_filters_never_widen(api, http):
    alice, bob = api.user("alice"), api.user("bob")
    template = api.template()
    api.send(alice, template)
    api.send(bob, template)
    for value in ("' OR '1'='1", "%", "*", f"{alice.id}' OR '1'='1", '{"$ne": null}'):
        r = http.get("/notifications", params={"user_id": value, "limit": 100}, headers=api.admin.headers)
        if r.status_code == 422:
            continue
        assert r.status_code == 200, f"GET /notifications?user_id={value!r}: {api.brief(r)}"
        assert r.json().get("items") == [], f"user_id={value!r} names nobody, yet listed {len(r.json().get('items', []))} notifications"
    for value in ("' OR '1'='1", "%", "sent' OR 'a'='a"):
        r = http.get("/me/notifications", params={"status": value}, headers=alice.headers)
        assert r.status_code == 422 or (r.status_code == 200 and r.json().get("items") == []), f"status={value!r} is no status: {api.brief(r)}"
    assert [n["user_id"] for n in api.all(user_id=alice.id)["items"]] == [alice.id], "the literal id still matches only alice's"


@pytest.mark.requirement("R28")
@pytest.mark.cwe(400)
def test_oversized_and_deeply_nested_bodies_are_refused(api, http, service, checks):
    user = api.user()
    key = f"big.{api.unique('k')}"
    problems = checks.hostile_body_problems(service, http.timeout_s, "POST", "/templates", api.admin.headers,
                                            {"key": key, "channel": "sms", "category": "reminders", "body": "b"}, "body")
    problems += checks.hostile_body_problems(service, http.timeout_s, "PATCH", "/me", user.headers, {"phone": None}, "email")
    template = api.template()
    problems += checks.hostile_body_problems(service, http.timeout_s, "POST", "/notifications", api.admin.headers,
                                             {"user_id": user.id, "template_key": template["key"]}, "data")
    assert not problems, "limits on request bodies:\n" + "\n".join(problems)
    me = api.ok(http.get("/me", headers=user.headers), 200, "read /me")
    assert (me.get("email"), me.get("phone")) == (user.email, user.phone), f"refused PATCHes must change nothing: {me}"
    assert api.mine(user)["items"] == [], "a refused send must create nothing"


@pytest.mark.requirement("R3")
@pytest.mark.cwe(287)
def test_tampered_tokens_get_401(api, http, checks):
    user = api.user()
    problems = checks.token_problems(http, "PUT", "/me/preferences", user.token,
                                     {"email_enabled": False, "sms_enabled": False, "opted_out": [], "quiet_hours": None})
    problems += checks.token_problems(http, "GET", "/templates", api.admin.token)
    assert not problems, "token misuse was not refused:\n" + "\n".join(problems)
    prefs = api.ok(http.get("/me/preferences", headers=user.headers), 200, "read preferences")
    assert (prefs.get("email_enabled"), prefs.get("sms_enabled")) == (True, True), f"a request with a bad token changed the preferences: {prefs}"


@pytest.mark.requirement("R9", "R22", "R28")
@pytest.mark.cwe(22)
def test_path_traversal_in_ids_gets_404(api, http, service, checks):
    user = api.user()
    api.send(user, api.template())
    problems = checks.traversal_problems(service, http.timeout_s, "/notifications/", api.admin.headers)
    problems += checks.traversal_problems(service, http.timeout_s, "/notifications/", user.headers)
    problems += checks.traversal_problems(service, http.timeout_s, "/templates/", api.admin.headers)
    assert not problems, "ids that climb out of their path must name nothing:\n" + "\n".join(problems)
