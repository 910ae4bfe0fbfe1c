"""Security items derived rule by rule from spec.md (issue 24; REVIEW.md "Security rules").

Each item exercises one rule, one endpoint or one hostile-value path at a time. Every answer any
item of this task receives is also checked, by conftest.py's http_response_checks, for the
password or a hash of it ("No response
ever contains a password.").
"""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http.account_items import almost_token_item, password_edge_item, password_leak_item
from pytest_backendbench.http.hostile import HOSTILE_VALUES, hostile_findings

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]


test_no_user_answer_carries_the_password_or_its_hash = password_leak_item("R2", register=lambda api: {"email": api.email(), "phone": None})


test_a_password_wrong_only_at_its_edge_gets_401 = password_edge_item("R3")


test_a_token_that_is_almost_the_administrators_gets_401 = almost_token_item("R3", name="test_a_token_that_is_almost_the_administrators_gets_401", holder="admin", whose="the administrator's token",
                                                                 calls=lambda api: [("GET", "/templates", None), ("GET", "/notifications", None), ("POST", "/notifications/dispatch", None)])


USER_DENIED = [("POST", "/templates", "template"), ("GET", "/templates", None),
               ("GET", "/templates/{template}", None), ("PATCH", "/templates/{template}", {"body": "changed"}), ("DELETE", "/templates/{template}", None),
               ("POST", "/notifications", "send"), ("POST", "/notifications/{notification}/retry", None),
               ("POST", "/notifications/dispatch", None), ("GET", "/notifications", None)]


@pytest.mark.requirement("R7", "R10", "R20", "R21", "R24", "R26")
@pytest.mark.cwe(863)
@pytest.mark.parametrize(("method", "path", "body"), USER_DENIED, ids=[f"{m}-{p}" for m, p, _ in USER_DENIED])
def test_a_user_gets_403_on_each_administrator_endpoint(api, http, delivery, method, path, body):
    user = api.user(email="someone@bounce.example")
    template = api.template(body="Original {{username}}")
    failed = api.send(user, template)  # refused by the provider for good: failed, retryable by the administrator
    assert failed["status"] == "failed", f"setup: a bounce address fails: {failed}"
    new_key = f"denied.{uuid.uuid4().hex[:12]}"
    if body == "send":
        body = {"user_id": user.id, "template_key": template["key"]}
    elif body == "template":
        body = {"key": new_key, "channel": "sms", "category": "reminders", "body": "b"}
    target = path.format(template=template["id"], notification=failed["id"])
    before = len(delivery.attempts_for(failed["id"]))
    api.error(http.request(method, target, json=body, headers=user.headers), 403, "forbidden", f"a user: {method} {target}")
    got = api.ok(http.get(f"/templates/{template['id']}", headers=api.admin.headers), 200, "the template is still there")
    assert got["body"] == "Original {{username}}"
    assert api.state(api.notification(api.admin, failed)) == ("failed", "rejected", 1) and len(delivery.attempts_for(failed["id"])) == before
    assert api.mine(user)["total"] == 1, "the user's refused send created nothing"
    r = api.try_send(user, new_key)
    assert not (why := api.validation_problem(r, ["template_key"], "sending with the key of the refused template")), why


ADMIN_DENIED = [("GET", "/me", None), ("PATCH", "/me", {"email": None}), ("GET", "/me/preferences", None),
                ("PUT", "/me/preferences", {"email_enabled": False, "sms_enabled": False, "opted_out": [], "quiet_hours": None}),
                ("GET", "/me/notifications", None)]


@pytest.mark.requirement("R4", "R5", "R6", "R23", "R26")
@pytest.mark.cwe(863)
@pytest.mark.parametrize(("method", "path", "body"), ADMIN_DENIED, ids=[f"{m}-{p}" for m, p, _ in ADMIN_DENIED])
def test_the_administrator_gets_403_on_each_me_endpoint(api, http, admin, method, path, body):
    api.error(http.request(method, path, json=body, headers=admin.headers), 403, "forbidden", f"the administrator: {method} {path}")


@pytest.mark.requirement("R23")
@pytest.mark.cwe(639)
@pytest.mark.parametrize("param", ["user_id", "owner_id", "user", "all"])
def test_my_notifications_never_widen_to_other_users(api, http, param):
    alice, bob = api.user("alice"), api.user("bob")
    template = api.template(body="Secret for {{username}}")
    mine, theirs = api.send(alice, template), api.send(bob, template)
    value = "true" if param == "all" else bob.id
    r = http.get("/me/notifications", params={param: value, "limit": 100}, headers=alice.headers)
    if r.status_code not in (400, 422):
        assert r.status_code == 200, api.brief(r)
        assert [n.get("id") for n in r.json().get("items", [])] == [mine["id"]], f"GET /me/notifications?{param}=... lists only alice's: {r.text[:300]}"
        assert theirs["id"] not in r.text and bob.username not in r.text


@pytest.mark.requirement("R10", "R11")
@pytest.mark.cwe(20)
def test_data_cannot_change_who_the_username_placeholder_names(api, http):
    user = api.user()
    template = api.template(subject="For {{username}}", body="Hi {{ username }}, from {{sender}}")
    sent = api.send(user, template, {"username": "administrator", "sender": "{{username}}"})
    assert (sent["subject"], sent["body"]) == (f"For {user.username}", f"Hi {user.username}, from {{{{username}}}}"), f"rendered: {sent}"
    for bad in ({"username": 5}, {"username": None}, {"username": ["x"]}):
        r = api.try_send(user, template, {"sender": "s", **bad})
        assert not (why := api.validation_problem(r, ["data"], f"data {bad}")), why
    assert api.mine(user)["total"] == 1


@pytest.mark.requirement("R2", "R4", "R12")
@pytest.mark.cwe(93)
def test_line_breaks_never_reach_an_address(api, http, delivery):
    user = api.user()
    problems = []
    for field, value in (("email", "a\r\nbcc:spy@mail.example.com"), ("email", "victim\r\nBcc: spy@mail.example.com"),
                         ("email", "a\nb@mail.example.com"), ("email", "a b@mail.example.com"), ("email", "a\tb@mail.example.com"),
                         ("phone", "+15550000\n123"), ("phone", "+1555000012\r\n")):
        for method, path, headers in (("POST", "/users", {}), ("PATCH", "/me", user.headers)):
            body = {field: value} if method == "PATCH" else {"username": api.unique("crlf"), "password": "pw-12345678", field: value}
            r = http.request(method, path, json=body, headers=headers)
            if why := api.validation_problem(r, [field], f"{method} {path} with {field} {value!r}"):
                problems.append(why)
    assert not problems, "addresses hold no whitespace (CR, LF, tab, space):\n" + "\n".join(problems)
    me = api.ok(http.get("/me", headers=user.headers), 200, "read /me")
    assert (me["email"], me["phone"]) == (user.email, user.phone)
    sent = api.send(user, api.template())
    assert [a["json"]["to"] for a in delivery.attempts_for(sent["id"])] == [user.email]


@pytest.mark.requirement("R2", "R8", "R28")
@pytest.mark.cwe(943)
def test_username_and_template_key_uniqueness_compares_literally(api, http):
    stem = uuid.uuid4().hex[:10]
    api.ok(http.post("/users", json={"username": f"q{stem}az", "password": "pw-12345678"}), 201, "register q…az")
    r = http.post("/users", json={"username": f"q{stem}_z", "password": "pw-12345678"})
    assert r.status_code == 201, f"username q{stem}_z is free ('_' is a character, not a wildcard): {api.brief(r)}"
    api.template(key=f"k{stem}ab")
    for key in (f"k{stem}a_", f"k{stem}a.", f"k{stem}_b", f"k{stem}.b"):
        r = http.post("/templates", json={"key": key, "channel": "sms", "category": "reminders", "body": "b"}, headers=api.admin.headers)
        assert r.status_code == 201, f"template key {key} is free beside k{stem}ab: {api.brief(r)}"


@pytest.mark.requirement("R23", "R24", "R28")
@pytest.mark.cwe(89)
def test_a_status_filter_that_is_not_a_status_gets_422(api, http):
    user = api.user()
    api.send(user, api.template())
    problems = []
    for value in ("sent' OR '1'='1", "sent'--", "%", "_", "*", "SENT", "sent ", '{"$ne": null}'):
        for path, headers in (("/me/notifications", user.headers), ("/notifications", api.admin.headers)):
            r = http.get(path, params={"status": value}, headers=headers)
            if why := api.validation_problem(r, ["status"], f"GET {path}?status={value!r}"):
                problems.append(why)
    assert not problems, "an unknown status gets 422 naming status:\n" + "\n".join(problems)


@pytest.mark.requirement("R7", "R10", "R28")
@pytest.mark.cwe(116)
def test_hostile_text_is_stored_and_rendered_verbatim(api, http):
    admin = api.admin.headers
    found = hostile_findings(lambda body: http.post("/templates", json={**body, "key": f"h.{uuid.uuid4().hex[:12]}"}, headers=admin),
                             {"channel": "email", "category": "reminders", "subject": "s", "body": "b"}, fields=["subject", "body"],
                             verbatim=["subject", "body"], accepted=[201])
    user = api.user()
    template = api.template(subject="S {{v}}", body="B {{v}} {{username}}")
    for value in HOSTILE_VALUES:
        sent = api.send(user, template, {"v": value})
        if (sent["subject"], sent["body"]) != (f"S {value}", f"B {value} {user.username}"):
            found.append(f"data v={value!r}: rendered as {sent['subject']!r} / {sent['body']!r}")
    assert not found, "templates are stored and data rendered exactly as sent:\n" + "\n".join(found)
