"""Refused requests change nothing and send nothing, a guard one condition at a time, ids in bodies (issue 35).

spec.md, Precedence: "A request that fails changes nothing and sends nothing to the provider."
Every endpoint that takes several fields gets its valid body with one field invalid, at each
position in turn (``one_invalid_field``); the state is read back (``unchanged``), and what the
delivery mock got for the item's own recipient address must not grow.

Body references: "`user_id` must name an existing user (field `user_id`); `template_key` an
existing template (field `template_key`)": a template's id as `user_id` or as `template_key`
(the right kind of value in the wrong place), a deleted template's key, and an unknown id are
refused. Users are never deleted and have no owner, so there is no other owner's id to try.

Guard: "Preferences are not consulted again [by a retry]: the notification was already due" —
the preferences that held when it was sent usually still hold; the item switches the channel
off, opts out and enters quiet hours before the retry, which must still deliver.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import requests

from pytest_backendbench.http.api import unique
from pytest_backendbench.http.refusals import one_invalid_field, unchanged

pytestmark = [pytest.mark.tier("base")]

FRESH, EMAIL, PHONE, USER, TEMPLATE_KEY = "<a fresh name>", "<a fresh email>", "<a fresh phone>", "<the recipient's id>", "<the template's key>"
TEMPLATE_ID, GONE_KEY = "<the template's id>", "<a deleted template's key>"
"""Placeholders in the bodies below, replaced when the item runs (ids are the service's)."""

BODIES: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    # endpoint: (requirement, a valid body, bad values per field)
    "register": ("R2", {"username": FRESH, "password": "long-enough-1", "email": EMAIL, "phone": PHONE},
                 {"username": ["UPPER", "ab"], "password": ["short"], "email": ["a@b", 5], "phone": ["12345", "+0123456789"]}),
    "patch-me": ("R4", {"email": EMAIL, "phone": PHONE}, {"email": ["a b@c.example"], "phone": ["+1 2345678", True]}),
    "put-preferences": ("R6", {"email_enabled": False, "sms_enabled": False, "opted_out": ["marketing"], "quiet_hours": {"start": "22:00", "end": "07:00"}},
                        {"email_enabled": ["false", None], "sms_enabled": [0], "opted_out": [["account"], ["marketing", "marketing"]],
                         "quiet_hours": [{"start": "22:00", "end": "22:00"}, {"start": "24:00", "end": "07:00"}]}),
    "create-template": ("R8", {"key": FRESH, "channel": "email", "category": "marketing", "subject": "Hi {{username}}", "body": "Body {{username}}"},
                        {"key": ["Upper.Key", "ab"], "channel": ["fax"], "category": ["news"], "subject": [" ", None], "body": ["b" * 2001, " "]}),
    "patch-template": ("R9", {"category": "account", "subject": "Changed", "body": "Changed body"},
                       {"category": ["security"], "subject": ["s" * 201], "body": [None]}),
    "send": ("R11", {"user_id": USER, "template_key": TEMPLATE_KEY, "data": {"code": "1234"}},
             {"user_id": [TEMPLATE_ID, "no-such-user"], "template_key": [GONE_KEY, TEMPLATE_ID], "data": [{}, {"code": 1234}, {"code": "1", "username": None}]}),
}
CASES = [pytest.param(endpoint, *case.values, id=f"{endpoint}-{case.id}", marks=[pytest.mark.requirement(requirement, "R26")])
         for endpoint, (requirement, valid, bad) in BODIES.items() for case in one_invalid_field(valid, bad)]


def placeholders(api: Any) -> tuple[dict[str, Any], Any, dict[str, Any]]:
    """The placeholders' values, the item's recipient and its template (whose body needs `code`)."""
    user = api.user()
    template = api.template(category="marketing", body="Your code is {{code}}")
    gone = api.template()
    api.ok(api.http.delete(f"/templates/{gone['id']}", headers=api.admin.headers), 204, "delete a template")
    values = {FRESH: unique("fresh"), EMAIL: api.email(), PHONE: api.phone(), USER: user.id, TEMPLATE_KEY: template["key"],
              TEMPLATE_ID: template["id"], GONE_KEY: gone["key"]}
    return values, user, template


def scene(api: Any, delivery: Any, endpoint: str, user: Any, template: dict[str, Any]) -> tuple[Callable[[dict[str, Any]], requests.Response], Callable[[], Any]]:
    """How to send ``endpoint`` a body, and how to read back what it must not change (the recipient's messages too)."""
    http, admin = api.http, api.admin.headers

    def read(method_path: Callable[[], Any]) -> Callable[[], Any]:
        return lambda: (method_path(), len(delivery.to(user.email)))

    if endpoint == "register":
        return (lambda body: http.post("/users", json=body)), read(lambda: None)
    if endpoint == "patch-me":
        return (lambda body: http.patch("/me", json=body, headers=user.headers)), read(lambda: api.ok(http.get("/me", headers=user.headers), 200, "GET /me"))
    if endpoint == "put-preferences":
        return ((lambda body: http.put("/me/preferences", json=body, headers=user.headers)),
                read(lambda: api.ok(http.get("/me/preferences", headers=user.headers), 200, "GET /me/preferences")))
    if endpoint == "create-template":
        return (lambda body: http.post("/templates", json=body, headers=admin)), read(lambda: api.ok(http.get("/templates?limit=1&offset=0", headers=admin), 200, "templates")["total"])
    if endpoint == "patch-template":
        path = f"/templates/{template['id']}"
        return (lambda body: http.patch(path, json=body, headers=admin)), read(lambda: api.ok(http.get(path, headers=admin), 200, "GET the template"))
    return (lambda body: http.post("/notifications", json=body, headers=admin)), read(lambda: api.all(user_id=user.id))


@pytest.mark.category("validation")
@pytest.mark.parametrize("endpoint, field, body", CASES)
def test_one_invalid_field_anywhere_in_the_body_changes_nothing(api, http, delivery, endpoint, field, body):
    values, user, template = placeholders(api)
    send, read = scene(api, delivery, endpoint, user, template)
    sent = {key: values.get(value, value) if isinstance(value, str) else value for key, value in body.items()}
    with unchanged(read, f"{endpoint} with {field} invalid"):
        r = send(sent)
    api.assert_no_problems([api.validation_problem(r, [field], f"{endpoint} with only {field} invalid: {str(sent)[:300]}")], "one invalid field")
    if endpoint == "register" and field != "username":
        again = http.post("/users", json={**sent, field: BODIES["register"][1][field] if field == "password" else None})
        assert again.status_code == 201, f"the refused registration created no user, so its username is still free: {api.brief(again)}"


@pytest.mark.requirement("R20", "R26")
@pytest.mark.category("side_effects")
@pytest.mark.parametrize("status", ["sent", "skipped", "deferred"])
def test_a_retry_refused_for_its_status_sends_nothing(api, http, delivery, status):
    user = api.user(email=None) if status == "skipped" else api.in_quiet_hours() if status == "deferred" else api.user()
    n = api.send(user, api.template())
    assert n["status"] == status, f"setup: a {status} notification: {n}"
    with unchanged(lambda: (api.notification(api.admin, n), len(delivery.attempts_for(n["id"]))), f"retrying a {status} notification"):
        r = http.post(f"/notifications/{n['id']}/retry", headers=api.admin.headers)
    api.error(r, 409, "invalid_state", f"retrying a {status} notification")


@pytest.mark.requirement("R20")
@pytest.mark.category("side_effects")
def test_a_retry_ignores_preferences_changed_since_sending(api, http, delivery):
    user = api.user(email=api.email("down.example"))
    n = api.send(user, api.template(category="marketing"))
    assert api.state(n) == ("failed", "provider_unavailable", 3), f"setup: a failed notification: {n}"
    address = api.email()
    api.set_addresses(user, email=address)
    api.preferences(user, email_enabled=False, opted_out=["marketing"], quiet_hours=api.quiet(-60, 60))
    got = api.retry(n)
    assert api.state(got) == ("sent", None, 4) and got["to"] == address, (
        f"a retry delivers to the current address without consulting the preferences again: {got}")
    assert len(delivery.to(address)) == 1, "one message reached the provider for the new address"
