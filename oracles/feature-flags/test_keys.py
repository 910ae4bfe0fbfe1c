"""Health, API keys, authentication and roles (spec.md: Running, API keys and roles)."""

from __future__ import annotations

import pytest

from pytest_backendbench.http.account_items import health_item, json_object_body_item, token_required_item

pytestmark = [pytest.mark.tier("base")]


test_health_needs_no_authentication = health_item("R1")


@pytest.mark.requirement("R3", "R2")
@pytest.mark.category("api_surface")
def test_me_with_the_bootstrap_key(api, http, admin):
    r = http.get("/me", headers=admin.headers)
    assert r.status_code == 200, f"GET /me with ADMIN_API_KEY: {api.brief(r)}"
    got = {k: r.json().get(k, "<missing>") for k in ("id", "name", "role", "environment")}
    assert got == {"id": "bootstrap", "name": "bootstrap", "role": "admin", "environment": None}, f"the bootstrap key's identity: {got}"


@pytest.mark.requirement("R3", "R4")
@pytest.mark.category("api_surface")
@pytest.mark.parametrize("role, environment", [("admin", None), ("editor", None), ("viewer", None), ("sdk", "staging")])
def test_me_with_a_created_key(api, http, role, environment):
    key = api.key(role, environment, name=f"my {role} key")
    r = http.get("/me", headers=key.headers)
    assert r.status_code == 200, f"GET /me with a new {role} key: {api.brief(r)}"
    got = {k: r.json().get(k, "<missing>") for k in ("id", "name", "role", "environment")}
    assert got == {"id": key.id, "name": f"my {role} key", "role": role, "environment": environment}, f"GET /me answers the key: {got}"


def _all_endpoints(values, flag):
    return (
        ("GET", "/me", None), ("GET", "/keys", None), ("GET", "/environments", None), ("GET", "/flags", None),
        ("POST", "/flags", {"key": values["api"].unique("x")}), ("GET", f"/flags/{flag['key']}", None),
        ("PATCH", f"/flags/{flag['key']}/environments/production", {"enabled": True}), ("GET", "/segments", None),
        ("POST", f"/environments/production/flags/{flag['key']}/evaluate", {"user_id": "u1"}), ("GET", "/audit", None),
    )


def _flag_still_off(values, flag):
    assert values["api"].config(flag["key"], "production").get("enabled") is False, "an unauthenticated PATCH enabled the flag"


test_requests_without_a_valid_key_get_401 = token_required_item(
    "R2", name="test_requests_without_a_valid_key_get_401",
    headers={"missing": {}, "basic-scheme": {"Authorization": "Basic YWRtaW46YWRtaW4="}, "empty-bearer": {"Authorization": "Bearer"},
             "unknown-secret": {"Authorization": "Bearer ffk_not_a_real_key_at_all"}},
    setup=lambda values: values["api"].flag(), calls=_all_endpoints, after=_flag_still_off,
)


@pytest.mark.requirement("R4")
@pytest.mark.category("api_surface")
def test_create_key_returns_a_working_secret(api, http, admin):
    r = http.post("/keys", json={"name": "CI pipeline", "role": "editor"}, headers=admin.headers)
    assert r.status_code == 201, f"creating an editor key: {api.brief(r)}"
    body = r.json()
    assert (body.get("name"), body.get("role"), body.get("environment")) == ("CI pipeline", "editor", None), f"the new key: {body}"
    assert isinstance(body.get("secret"), str) and len(body["secret"]) >= 20, f"a secret of at least 20 characters: {body.get('secret')!r}"
    me = http.get("/me", headers={"Authorization": f"Bearer {body['secret']}"})
    assert me.status_code == 200 and me.json().get("id") == body.get("id"), f"the secret works at once: {api.brief(me)}"


@pytest.mark.requirement("R4", "R27")
@pytest.mark.category("validation")
@pytest.mark.parametrize(
    "body, field",
    [
        ({"role": "viewer"}, "name"), ({"name": "  ", "role": "viewer"}, "name"), ({"name": "n" * 61, "role": "viewer"}, "name"),
        ({"name": "k"}, "role"), ({"name": "k", "role": "owner"}, "role"), ({"name": "k", "role": "SDK", "environment": "production"}, "role"),
        ({"name": "k", "role": "sdk"}, "environment"), ({"name": "k", "role": "sdk", "environment": "nowhere"}, "environment"),
        ({"name": "k", "role": "sdk", "environment": None}, "environment"), ({"name": "k", "role": "editor", "environment": "production"}, "environment"),
    ],
    ids=["no-name", "blank-name", "long-name", "no-role", "unknown-role", "upper-role", "sdk-without-env", "sdk-unknown-env", "sdk-null-env", "editor-with-env"],
)
def test_create_key_validation(api, http, admin, body, field):
    # Whether an environment is required or forbidden depends on the role: with an invalid role
    # a service may list environment too.
    also = ("environment",) if field == "role" else ()
    problem = api.validation_problem(http.post("/keys", json=body, headers=admin.headers), [field], f"creating a key with {body}", also)
    assert problem is None, problem


@pytest.mark.requirement("R5")
@pytest.mark.category("api_surface")
def test_keys_are_listed_without_secrets(api, http, admin):
    first = api.key("viewer")
    second = api.key("sdk", environment="development")
    r = http.get("/keys", headers=admin.headers)
    assert r.status_code == 200, f"listing keys: {api.brief(r)}"
    items = r.json().get("items", [])
    ids = [k.get("id") for k in items]
    assert first.id in ids and second.id in ids and ids.index(first.id) < ids.index(second.id), f"keys are listed oldest first: {ids}"
    assert "bootstrap" not in ids, "the bootstrap key is not listed"
    leaked = [k for k in items if "secret" in k or first.secret in str(k) or second.secret in str(k)]
    assert not leaked, f"listed keys must not carry secrets: {leaked[:2]}"
    listed = next(k for k in items if k.get("id") == second.id)
    assert (listed.get("role"), listed.get("environment")) == ("sdk", "development"), f"the sdk key as listed: {listed}"


@pytest.mark.requirement("R5")
@pytest.mark.category("state")
def test_revoked_key_gets_401(api, http, admin):
    doomed = api.key("editor")
    kept = api.key("editor")
    r = http.delete(f"/keys/{doomed.id}", headers=admin.headers)
    assert r.status_code == 204, f"revoking a key: {api.brief(r)}"
    api.error(http.get("/me", headers=doomed.headers), 401, "unauthorized", "using a revoked key")
    assert http.get("/me", headers=kept.headers).status_code == 200, "other keys keep working"
    ids = [k.get("id") for k in http.get("/keys", headers=admin.headers).json().get("items", [])]
    assert doomed.id not in ids and kept.id in ids, f"the revoked key is no longer listed: {ids}"
    api.error(http.delete(f"/keys/{doomed.id}", headers=admin.headers), 404, "not_found", "revoking an already revoked key")


@pytest.mark.requirement("R5")
@pytest.mark.category("api_surface")
def test_unknown_and_bootstrap_key_ids_are_not_found(api, http, admin):
    api.error(http.delete("/keys/key_does_not_exist", headers=admin.headers), 404, "not_found", "revoking an unknown key id")
    api.error(http.delete("/keys/bootstrap", headers=admin.headers), 404, "not_found", "revoking the bootstrap key")
    assert http.get("/me", headers=admin.headers).status_code == 200, "the bootstrap key must keep working"


@pytest.mark.requirement("R6")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("role", ["editor", "viewer", "sdk"])
def test_only_admins_manage_keys(api, http, role):
    caller = api.key(role, "production" if role == "sdk" else None)
    victim = api.key("viewer")
    for method, path, body in (("GET", "/keys", None), ("POST", "/keys", {"name": "sneaky", "role": "admin"}), ("DELETE", f"/keys/{victim.id}", None)):
        api.error(http.request(method, path, json=body, headers=caller.headers), 403, "forbidden", f"a {role} key: {method} {path}")
    assert http.get("/me", headers=victim.headers).status_code == 200, "the victim key was revoked by a non-admin"


test_body_must_be_a_json_object = json_object_body_item("R27", caller="admin", paths=("/flags", "/segments", "/keys", "/environments/production/evaluate"),
                                                        raws={"malformed": "{oops", "array": "[]", "string": '"flag"', "null": "null"})
