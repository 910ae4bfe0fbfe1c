"""Preferences and templates (spec.md: Preferences, Templates)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]

DEFAULTS = {"email_enabled": True, "sms_enabled": True, "opted_out": [], "quiet_hours": None}


# ---------------------------------------------------------------- preferences


@pytest.mark.requirement("R5")
@pytest.mark.category("api_surface")
def test_new_users_get_default_preferences(api, http, checks):
    user = api.user()
    r = http.get("/me/preferences", headers=user.headers)
    assert r.status_code == 200, f"GET /me/preferences: {r.status_code} {r.text[:300]}"
    assert checks.documented(r.json(), DEFAULTS) == DEFAULTS, f"a new user's preferences:\n  expected {DEFAULTS}\n  got      {r.json()}"


@pytest.mark.requirement("R6")
@pytest.mark.category("state")
def test_preferences_are_replaced(api, http, checks):
    user = api.user()
    wanted = {"email_enabled": False, "sms_enabled": True, "opted_out": ["reminders", "marketing"], "quiet_hours": {"start": "22:30", "end": "07:00"}}
    r = http.put("/me/preferences", json=wanted, headers=user.headers)
    assert r.status_code == 200 and checks.documented(r.json(), wanted) == wanted, f"PUT answers the new preferences as sent: {r.status_code} {r.text[:300]}"
    assert checks.documented(api.ok(http.get("/me/preferences", headers=user.headers), 200, "read back"), wanted) == wanted, "the preferences did not persist"
    back = api.preferences(user)
    assert checks.documented(back, DEFAULTS) == DEFAULTS, f"a second PUT replaces everything again: {back}"


@pytest.mark.requirement("R6")
@pytest.mark.category("validation")
def test_preference_fields_are_validated(api, http, checks):
    user = api.user()
    cases = {
        "email_enabled as a string": ({"email_enabled": "yes"}, ["email_enabled"]),
        "sms_enabled as a number": ({"sms_enabled": 0}, ["sms_enabled"]),
        "email_enabled null": ({"email_enabled": None}, ["email_enabled"]),
        "opting out of account": ({"opted_out": ["account"]}, ["opted_out"]),
        "an unknown category": ({"opted_out": ["news"]}, ["opted_out"]),
        "a category twice": ({"opted_out": ["marketing", "marketing"]}, ["opted_out"]),
        "opted_out as a string": ({"opted_out": "marketing"}, ["opted_out"]),
        "start equal to end": ({"quiet_hours": {"start": "22:00", "end": "22:00"}}, ["quiet_hours"]),
        "24:00": ({"quiet_hours": {"start": "22:00", "end": "24:00"}}, ["quiet_hours"]),
        "a time without leading zero": ({"quiet_hours": {"start": "7:00", "end": "09:00"}}, ["quiet_hours"]),
        "quiet hours without end": ({"quiet_hours": {"start": "22:00"}}, ["quiet_hours"]),
        "quiet hours as a string": ({"quiet_hours": "22:00-07:00"}, ["quiet_hours"]),
    }
    problems = [api.validation_problem(http.put("/me/preferences", json={**DEFAULTS, **changes}, headers=user.headers), fields, label)
                for label, (changes, fields) in cases.items()]
    problems = [p for p in problems if p]
    assert not problems, "invalid preferences were not rejected:\n" + "\n".join(problems)
    assert checks.documented(api.ok(http.get("/me/preferences", headers=user.headers), 200, "read back"), DEFAULTS) == DEFAULTS, "rejected PUTs must change nothing"


@pytest.mark.requirement("R6")
@pytest.mark.category("validation")
def test_every_preference_is_required(api, http):
    user = api.user()
    r = http.put("/me/preferences", json={}, headers=user.headers)
    error = api.error(r, 422, "validation_error", "PUT /me/preferences with an empty object")
    assert sorted(error.get("fields", [])) == ["email_enabled", "opted_out", "quiet_hours", "sms_enabled"], f"all four fields are required: {error}"


@pytest.mark.requirement("R6")
@pytest.mark.category("authorization")
def test_preferences_are_per_user(api, http, checks):
    alice, bob = api.user("alice"), api.user("bob")
    api.preferences(alice, sms_enabled=False, opted_out=["marketing"])
    assert checks.documented(api.ok(http.get("/me/preferences", headers=bob.headers), 200, "bob's preferences"), DEFAULTS) == DEFAULTS, "alice's PUT changed bob's preferences"


# ---------------------------------------------------------------- templates


@pytest.mark.requirement("R7")
@pytest.mark.category("api_surface")
def test_create_an_email_template(api, http, admin):
    body = {"key": f"welcome.{api.unique('k')}", "channel": "email", "category": "account", "subject": "Welcome, {{username}}!",
            "body": "Your code is {{ code }}."}
    r = http.post("/templates", json=body, headers=admin.headers)
    assert r.status_code == 201, f"creating an email template: {r.status_code} {r.text[:300]}"
    template = r.json()
    assert {k: template.get(k) for k in body} == body, f"the template's fields as sent: {template}"
    assert isinstance(template.get("id"), str) and template["id"], f"no id: {template}"


@pytest.mark.requirement("R7")
@pytest.mark.category("api_surface")
def test_create_an_sms_template(api, http, admin):
    r = http.post("/templates", json={"key": f"sms.{api.unique('k')}", "channel": "sms", "category": "reminders", "body": "See you at {{time}}"},
                  headers=admin.headers)
    assert r.status_code == 201, f"creating an sms template without subject: {r.status_code} {r.text[:300]}"
    assert r.json().get("subject") is None, f"an sms template's subject is null: {r.json()}"


@pytest.mark.requirement("R7")
@pytest.mark.category("authorization")
def test_users_cannot_touch_templates(api, http):
    user = api.user()
    template = api.template()
    for method, path, body in (
        ("get", "/templates", None),
        ("post", "/templates", {"key": "x.y.z", "channel": "sms", "category": "marketing", "body": "hi"}),
        ("get", f"/templates/{template['id']}", None),
        ("patch", f"/templates/{template['id']}", {"body": "hijacked"}),
        ("delete", f"/templates/{template['id']}", None),
    ):
        api.error(http.request(method, path, json=body, headers=user.headers), 403, "forbidden", f"a user: {method.upper()} {path}")
    got = api.ok(http.get(f"/templates/{template['id']}", headers=api.admin.headers), 200, "read the template")
    assert got["body"] == template["body"], "a user's rejected PATCH changed the template"


@pytest.mark.requirement("R7")
@pytest.mark.category("state")
def test_a_template_key_is_unique(api, http, admin):
    template = api.template()
    r = http.post("/templates", json={"key": template["key"], "channel": "sms", "category": "marketing", "body": "again"}, headers=admin.headers)
    api.error(r, 409, "conflict", "a second template with the same key")


@pytest.mark.requirement("R8", "R26")
@pytest.mark.category("validation")
def test_template_fields_are_validated(api, http, admin):
    def email(**changes):
        return {"key": f"k.{api.unique('t')}", "channel": "email", "category": "marketing", "subject": "S", "body": "B", **changes}

    cases = {
        "a key with upper case": (email(key="Bad.Key"), ["key"]),
        "a two-character key": (email(key="ab"), ["key"]),
        "channel push": (email(channel="push"), ["channel"]),
        "category news": (email(category="news"), ["category"]),
        "email without subject": ({k: v for k, v in email().items() if k != "subject"}, ["subject"]),
        "email with a blank subject": (email(subject="  "), ["subject"]),
        "201-character subject": (email(subject="s" * 201), ["subject"]),
        "sms with a subject": (email(channel="sms", subject="no subjects for sms"), ["subject"]),
        "blank body": (email(body=" "), ["body"]),
        "2001-character body": (email(body="b" * 2001), ["body"]),
    }
    # Whether a subject is valid depends on the channel: for an unknown channel it may be listed too.
    also = {"channel push": ("subject",)}
    problems = [api.validation_problem(http.post("/templates", json=b, headers=admin.headers), fields, label, also.get(label, ()))
                for label, (b, fields) in cases.items()]
    problems = [p for p in problems if p]
    assert not problems, "invalid templates were not rejected:\n" + "\n".join(problems)


@pytest.mark.requirement("R9")
@pytest.mark.category("api_surface")
def test_templates_are_listed_oldest_first(api, http, admin):
    made = [api.template()["id"], api.template(channel="sms", subject=None)["id"]]
    # Other items add templates too: page through the whole list and look at this item's two.
    ids: list[str] = []
    while True:
        body = api.ok(http.get("/templates", params={"offset": len(ids), "limit": 100}, headers=admin.headers), 200, "list templates")
        ids += [t["id"] for t in body["items"]]
        if not body["items"] or len(ids) >= body["total"]:
            break
    mine = [i for i in ids if i in made]
    assert mine == made, f"the two new templates, oldest first: {mine} (of {len(ids)} listed)"
    assert ids.index(made[0]) < ids.index(made[1]) and len(ids) == body["total"], f"the list is oldest first and total counts it: {body['total']} vs {len(ids)}"


@pytest.mark.requirement("R9")
@pytest.mark.category("api_surface")
def test_a_template_is_read_by_id(api, http, admin):
    template = api.template()
    assert api.ok(http.get(f"/templates/{template['id']}", headers=admin.headers), 200, "read") == template, "GET answers the same template"
    api.error(http.get("/templates/no-such-template", headers=admin.headers), 404, "not_found", "an unknown template id")


@pytest.mark.requirement("R9")
@pytest.mark.category("state")
def test_a_template_is_edited_but_keeps_key_and_channel(api, http, admin):
    template = api.template(category="reminders")
    r = http.patch(f"/templates/{template['id']}", json={"category": "marketing", "subject": "New {{username}}", "body": "New body",
                                                         "key": "changed.key", "channel": "sms"}, headers=admin.headers)
    assert r.status_code == 200, f"editing a template: {r.status_code} {r.text[:300]}"
    got = api.ok(http.get(f"/templates/{template['id']}", headers=admin.headers), 200, "read back")
    assert (got["category"], got["subject"], got["body"]) == ("marketing", "New {{username}}", "New body"), f"the edit did not persist: {got}"
    assert (got["key"], got["channel"]) == (template["key"], "email"), f"key and channel cannot change: {got}"


@pytest.mark.requirement("R9", "R8")
@pytest.mark.category("validation")
def test_an_invalid_template_edit_changes_nothing(api, http, admin):
    sms = api.template(channel="sms", subject=None, body="Old")
    r = http.patch(f"/templates/{sms['id']}", json={"body": "New", "subject": "sms has none"}, headers=admin.headers)
    error = api.error(r, 422, "validation_error", "giving an sms template a subject")
    assert error.get("fields") == ["subject"], f"422 should list exactly ['subject']: {error}"
    assert api.ok(http.get(f"/templates/{sms['id']}", headers=admin.headers), 200, "read")["body"] == "Old", "a rejected edit changed the body"


@pytest.mark.requirement("R9")
@pytest.mark.category("state")
def test_a_deleted_template_is_gone(api, http, admin):
    template = api.template()
    r = http.delete(f"/templates/{template['id']}", headers=admin.headers)
    assert r.status_code == 204, f"deleting a template: {r.status_code} {r.text[:300]}"
    api.error(http.get(f"/templates/{template['id']}", headers=admin.headers), 404, "not_found", "reading a deleted template")
    api.error(http.delete(f"/templates/{template['id']}", headers=admin.headers), 404, "not_found", "deleting it again")
