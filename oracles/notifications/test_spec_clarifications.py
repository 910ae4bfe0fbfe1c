"""Passages careful readers found open (issue 15): settled in spec.md, or items that accept every reading.

- Errors: "a path that exists but not with the request's method gets `405` (`method_not_allowed`)".
- Lists: "An empty value (`limit=`, `offset=`) is invalid too: only an absent parameter takes its default."
- Request bodies: "A `PATCH` body may define none of the fields (`{}`): it changes nothing and answers `200`".
- Sending: "a `username` in `data` is ignored for rendering, but like every value of `data` it must be a string".
- Open on purpose: a user naming a template id that does not exist. "404 (existence) before 403 (role)" and
  "users get 403 on every template endpoint" are both readings, so either answer passes.
"""

from __future__ import annotations

import pytest

from pytest_backendbench.http.account_items import empty_paging_item, wrong_method_item

pytestmark = [pytest.mark.tier("base")]


test_a_method_a_path_does_not_have_gets_405 = wrong_method_item("R26", caller=lambda api: api.user())


test_an_empty_limit_or_offset_is_invalid_not_the_default = empty_paging_item("R23", "R26", caller=lambda api: api.user(), path="/me/notifications", other_path="/templates", other_caller="admin")


@pytest.mark.requirement("R4", "R9")
@pytest.mark.category("api_surface")
def test_an_empty_patch_changes_nothing(api, http, admin):
    user = api.user()
    r = http.patch("/me", json={}, headers=user.headers)
    assert r.status_code == 200, f"PATCH /me with {{}}: expected 200, got {r.status_code} {r.text[:300]}"
    got = api.ok(http.get("/me", headers=user.headers), 200, "read me")
    assert (got.get("email"), got.get("phone")) == (user.email, user.phone), f"an empty PATCH /me changed the addresses: {got}"
    template = api.template(subject="Keep {{username}}", body="Keep this body")
    r = http.patch(f"/templates/{template['id']}", json={}, headers=admin.headers)
    assert r.status_code == 200, f"PATCH /templates/{{id}} with {{}}: expected 200, got {r.status_code} {r.text[:300]}"
    got = api.ok(http.get(f"/templates/{template['id']}", headers=admin.headers), 200, "read the template")
    assert (got.get("category"), got.get("subject"), got.get("body")) == (template["category"], "Keep {{username}}", "Keep this body"), (
        f"an empty PATCH changed the template: {got}"
    )
    problem = api.validation_problem(http.patch(f"/templates/{template['id']}", json={"body": ""}, headers=admin.headers), ["body"], "PATCH with a blank body")
    assert problem is None, problem


@pytest.mark.requirement("R11")
@pytest.mark.category("validation")
def test_a_username_in_data_must_be_a_string_and_is_ignored(api, http, admin):
    user = api.user()
    template = api.template(subject="For {{username}}", body="Hello {{username}}, {{item}} is ready.")
    problems = [
        api.validation_problem(api.try_send(user, template, {"item": "parcel", "username": 5}), ["data"], "data.username 5"),
        api.validation_problem(api.try_send(user, template, {"item": "parcel", "username": None}), ["data"], "data.username null"),
    ]
    problems = [p for p in problems if p]
    assert not problems, "a non-string username in data:\n" + "\n".join(problems)
    assert api.mine(user)["total"] == 0, "a refused send must create no notification"
    sent = api.send(user, template, {"item": "parcel", "username": "someone else"})
    assert (sent.get("subject"), sent.get("body")) == (f"For {user.username}", f"Hello {user.username}, parcel is ready."), (
        f"a string username in data is ignored for rendering: {sent}"
    )


@pytest.mark.requirement("R7", "R26")
@pytest.mark.category("authorization")
def test_a_user_naming_an_unknown_template_gets_403_or_404(api, http):
    user = api.user()
    codes = {403: "forbidden", 404: "not_found"}
    problems = []
    for method, body in (("get", None), ("patch", {"body": "x"}), ("delete", None)):
        r = http.request(method, "/templates/no-such-template", json=body, headers=user.headers)
        try:
            code = r.json().get("error")
        except (ValueError, AttributeError):
            code = None
        if r.status_code not in codes or code != codes[r.status_code]:
            problems.append(f"{method.upper()} /templates/no-such-template by a user: expected 403 forbidden or 404 not_found, got {r.status_code} {r.text[:150]}")
    assert not problems, "a user naming a template that does not exist (either precedence reading passes):\n" + "\n".join(problems)
