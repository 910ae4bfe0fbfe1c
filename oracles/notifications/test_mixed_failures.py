"""Failed requests change nothing, also when valid fields travel with the failing one (spec.md: Errors).

"A request that fails changes nothing and sends nothing to the provider": each item sends valid
changes together with the one field (or role) that makes the request fail, then reads back that
none of the valid fields was written, no object exists, and the delivery mock saw nothing.
"""

from __future__ import annotations

import uuid

import pytest

pytestmark = [pytest.mark.tier("base")]

PREFERENCE_KEYS = {"email_enabled": None, "sms_enabled": None, "opted_out": None, "quiet_hours": None}
TEMPLATE_KEYS = {"id": None, "key": None, "channel": None, "category": None, "subject": None, "body": None}


def messages_with(delivery, marker):
    """Every POST /messages whose body or subject carries ``marker``."""
    return [e for e in delivery.handle.requests() if e.get("method") == "POST" and e.get("path") == "/messages"
            and marker in str((e.get("json") or {}).get("body")) + str((e.get("json") or {}).get("subject"))]


def me(api, http, user):
    got = api.ok(http.get("/me", headers=user.headers), 200, "read /me")
    return {k: got.get(k) for k in ("id", "username", "email", "phone")}


@pytest.mark.requirement("R2", "R26")
@pytest.mark.category("validation")
def test_mixed_registration_with_one_invalid_field_creates_nothing(api, http):
    username, password = api.unique("mixed"), "pw-" + uuid.uuid4().hex
    valid = {"username": username, "password": password, "email": api.email(), "phone": api.phone()}
    problems = [
        api.validation_problem(http.post("/users", json={**valid, "phone": "12345"}), ["phone"], "valid fields with a phone that is not E.164"),
        api.validation_problem(http.post("/users", json={**valid, "email": "not-an-email"}), ["email"], "valid fields with an invalid email"),
        api.validation_problem(http.post("/users", json={**valid, "password": "short"}), ["password"], "valid fields with a 5-character password"),
    ]
    problems = [p for p in problems if p]
    assert not problems, "invalid registrations were not rejected:\n" + "\n".join(problems)
    api.error(http.post("/auth/token", json={"username": username, "password": password}), 401, "unauthorized", "logging in as a refused registration")
    r = http.post("/users", json=valid)
    assert r.status_code == 201, f"the username of refused registrations is still free: {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R2", "R26")
@pytest.mark.category("state")
def test_mixed_taken_username_changes_nothing(api, http):
    user = api.user("taken")
    password = "pw-" + uuid.uuid4().hex
    r = http.post("/users", json={"username": user.username, "password": password, "email": api.email(), "phone": api.phone()})
    api.error(r, 409, "conflict", "a taken username with a valid password, email and phone")
    api.error(http.post("/auth/token", json={"username": user.username, "password": password}), 401, "unauthorized", "logging in with the refused password")
    body = api.ok(http.post("/auth/token", json={"username": user.username, "password": user.password}), 200, "the old password still works")
    assert body["user"]["id"] == user.id, f"the username still belongs to the first user: {body['user']}"
    assert me(api, http, user) == {"id": user.id, "username": user.username, "email": user.email, "phone": user.phone}, "the refused registration changed the existing user"


@pytest.mark.requirement("R4", "R26")
@pytest.mark.category("validation")
def test_mixed_address_change_with_one_invalid_field_changes_nothing(api, http):
    user = api.user("mixed")
    before = me(api, http, user)
    problems = [
        api.validation_problem(http.patch("/me", json={"email": api.email(), "phone": "123"}, headers=user.headers), ["phone"], "a valid new email with an invalid phone"),
        api.validation_problem(http.patch("/me", json={"email": "nope", "phone": api.phone()}, headers=user.headers), ["email"], "a valid new phone with an invalid email"),
        api.validation_problem(http.patch("/me", json={"email": None, "phone": 5}, headers=user.headers), ["phone"], "removing the email with a numeric phone"),
    ]
    problems = [p for p in problems if p]
    assert not problems, "invalid address changes were not rejected:\n" + "\n".join(problems)
    assert me(api, http, user) == before, "a refused change must write none of its valid addresses"


@pytest.mark.requirement("R6", "R26")
@pytest.mark.category("validation")
def test_mixed_preferences_with_one_invalid_field_change_nothing(api, http, checks):
    user = api.user("mixed")
    current = {"email_enabled": False, "sms_enabled": True, "opted_out": ["marketing"], "quiet_hours": {"start": "22:00", "end": "07:00"}}
    api.ok(http.put("/me/preferences", json=current, headers=user.headers), 200, "set non-default preferences")
    wanted = {"email_enabled": True, "sms_enabled": False, "opted_out": ["reminders"], "quiet_hours": {"start": "01:00", "end": "02:00"}}
    cases = {
        "quiet hours with start equal to end": ({**wanted, "quiet_hours": {"start": "03:00", "end": "03:00"}}, ["quiet_hours"]),
        "opting out of account": ({**wanted, "opted_out": ["reminders", "account"]}, ["opted_out"]),
        "sms_enabled as a string": ({**wanted, "sms_enabled": "no"}, ["sms_enabled"]),
        "email_enabled missing": ({k: v for k, v in wanted.items() if k != "email_enabled"}, ["email_enabled"]),
    }
    problems = [api.validation_problem(http.put("/me/preferences", json=body, headers=user.headers), fields, label) for label, (body, fields) in cases.items()]
    problems = [p for p in problems if p]
    assert not problems, "invalid preferences were not rejected:\n" + "\n".join(problems)
    got = checks.documented(api.ok(http.get("/me/preferences", headers=user.headers), 200, "read back"), PREFERENCE_KEYS)
    assert got == current, f"a refused PUT must write none of its valid fields:\n  expected {current}\n  got      {got}"


@pytest.mark.requirement("R7", "R8", "R26")
@pytest.mark.category("validation")
def test_mixed_template_creation_with_one_invalid_field_creates_nothing(api, http, admin):
    key = f"mixed.{uuid.uuid4().hex[:16]}"
    valid = {"key": key, "channel": "email", "category": "reminders", "subject": "Hello {{username}}", "body": "Hi {{username}}"}
    cases = {
        "a blank body": ({**valid, "body": " "}, ["body"]),
        "an unknown category": ({**valid, "category": "news"}, ["category"]),
        "a 201-character subject": ({**valid, "subject": "s" * 201}, ["subject"]),
        "an sms with a subject": ({**valid, "channel": "sms", "subject": "sms has none"}, ["subject"]),
    }
    problems = [api.validation_problem(http.post("/templates", json=body, headers=admin.headers), fields, label) for label, (body, fields) in cases.items()]
    problems = [p for p in problems if p]
    assert not problems, "invalid templates were not rejected:\n" + "\n".join(problems)
    user = api.user()
    problem = api.validation_problem(api.try_send(user, key), ["template_key"], "sending with the key of a refused template")
    assert problem is None, f"a refused creation must not create the template: {problem}"
    r = http.post("/templates", json=valid, headers=admin.headers)
    assert r.status_code == 201, f"the key of refused creations is still free: {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R7", "R26")
@pytest.mark.category("state")
def test_mixed_taken_template_key_changes_nothing(api, http, admin, checks, delivery):
    template = api.template(category="reminders", subject="Original {{username}}", body="Original body")
    marker = uuid.uuid4().hex
    r = http.post("/templates", json={"key": template["key"], "channel": "sms", "category": "marketing", "body": f"Replacement {marker}"}, headers=admin.headers)
    api.error(r, 409, "conflict", "a taken key with a valid channel, category and body")
    got = checks.documented(api.ok(http.get(f"/templates/{template['id']}", headers=admin.headers), 200, "read the template"), TEMPLATE_KEYS)
    assert got == checks.documented(template, TEMPLATE_KEYS), f"the refused creation changed the existing template:\n  was {template}\n  now {got}"
    user = api.user()
    sent = api.send(user, template)
    assert (sent.get("channel"), sent.get("body")) == ("email", "Original body"), f"the key still renders the first template: {sent}"
    assert messages_with(delivery, marker) == [], "the refused template's body reached the provider"


@pytest.mark.requirement("R9", "R8", "R26")
@pytest.mark.category("validation")
def test_mixed_template_edit_with_one_invalid_field_changes_nothing(api, http, admin, checks):
    template = api.template(category="reminders", subject="Old subject", body="Old body")
    before = checks.documented(api.ok(http.get(f"/templates/{template['id']}", headers=admin.headers), 200, "read"), TEMPLATE_KEYS)
    cases = {
        "a blank body": ({"category": "marketing", "subject": "New subject", "body": ""}, ["body"]),
        "an unknown category": ({"category": "news", "subject": "New subject", "body": "New body"}, ["category"]),
        "a blank subject for email": ({"category": "marketing", "subject": " ", "body": "New body"}, ["subject"]),
        "a body of the wrong type": ({"category": "marketing", "subject": "New subject", "body": 5}, ["body"]),
    }
    problems = [api.validation_problem(http.patch(f"/templates/{template['id']}", json=body, headers=admin.headers), fields, label) for label, (body, fields) in cases.items()]
    problems = [p for p in problems if p]
    assert not problems, "invalid template edits were not rejected:\n" + "\n".join(problems)
    after = checks.documented(api.ok(http.get(f"/templates/{template['id']}", headers=admin.headers), 200, "read back"), TEMPLATE_KEYS)
    assert after == before, f"a refused edit must write none of its valid fields:\n  before {before}\n  after  {after}"


@pytest.mark.requirement("R7")
@pytest.mark.category("authorization")
def test_mixed_users_change_no_template(api, http, admin, checks):
    user = api.user()
    template = api.template(category="reminders", subject="Old subject", body="Old body")
    before = checks.documented(api.ok(http.get(f"/templates/{template['id']}", headers=admin.headers), 200, "read"), TEMPLATE_KEYS)
    key = f"mixed.{uuid.uuid4().hex[:16]}"
    api.error(http.post("/templates", json={"key": key, "channel": "email", "category": "account", "subject": "S", "body": "B"}, headers=user.headers),
              403, "forbidden", "a user creating a valid template")
    api.error(http.patch(f"/templates/{template['id']}", json={"category": "marketing", "subject": "New subject", "body": "New body"}, headers=user.headers),
              403, "forbidden", "a user editing every field of a template")
    api.error(http.delete(f"/templates/{template['id']}", headers=user.headers), 403, "forbidden", "a user deleting a template")
    after = checks.documented(api.ok(http.get(f"/templates/{template['id']}", headers=admin.headers), 200, "read back"), TEMPLATE_KEYS)
    assert after == before, f"refused requests changed the template:\n  before {before}\n  after  {after}"
    problem = api.validation_problem(api.try_send(user, key), ["template_key"], "sending with the key a user tried to create")
    assert problem is None, f"a refused creation must not create the template: {problem}"


@pytest.mark.requirement("R11", "R26")
@pytest.mark.category("side_effects")
def test_mixed_send_with_one_invalid_field_creates_and_sends_nothing(api, http, delivery):
    user = api.user()
    marker = uuid.uuid4().hex
    template = api.template(subject="Hello {{name}}", body=f"Dear {{{{name}}}}, {marker}")
    cases = {
        "an unknown user_id beside a valid template and data": ({"user_id": f"ghost-{marker}", "template_key": template["key"], "data": {"name": "Ann"}}, ["user_id"]),
        "an unknown template_key beside a valid user and data": ({"user_id": user.id, "template_key": f"ghost.{marker}", "data": {"name": "Ann"}}, ["template_key"]),
        "a non-string value beside the placeholder's value": ({"user_id": user.id, "template_key": template["key"], "data": {"name": "Ann", "extra": 5}}, ["data"]),
    }
    problems = [api.validation_problem(http.post("/notifications", json=body, headers=api.admin.headers), fields, label) for label, (body, fields) in cases.items()]
    problems = [p for p in problems if p]
    assert not problems, "invalid sends were not rejected:\n" + "\n".join(problems)
    assert api.mine(user)["total"] == 0 and api.all(user_id=user.id)["total"] == 0, "a refused send must not create a notification"
    assert delivery.to(user.email) == [] and messages_with(delivery, marker) == [], "a refused send must send nothing to the provider"


@pytest.mark.requirement("R21", "R26")
@pytest.mark.category("side_effects")
def test_mixed_refused_dispatch_delivers_nothing(api, http, delivery):
    user = api.in_quiet_hours()
    n = api.send(user, api.template())
    assert api.state(n) == ("deferred", None, 0), f"setup: the notification is deferred: {n}"
    api.preferences(user)
    api.error(http.post("/notifications/dispatch", headers=user.headers), 403, "forbidden", "a user dispatching while a deferred notification is due")
    got = api.notification(user, n)
    assert api.state(got) == ("deferred", None, 0) and got.get("to") is None, f"a refused dispatch must not deliver anything: {got}"
    assert delivery.attempts_for(n["id"]) == [], "a refused dispatch must send nothing to the provider"
    api.dispatch()
