"""Environments and what creating or deleting one does to flags and keys (spec.md: Environments)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]

DISABLED = {"enabled": False, "rollout_percentage": 0, "rules": []}
DEFAULT_ENVS = ["development", "staging", "production"]


@pytest.mark.requirement("R7")
@pytest.mark.category("api_surface")
def test_default_environments(api, http, viewer):
    r = http.get("/environments", headers=viewer.headers)
    assert r.status_code == 200, f"a viewer listing environments: {api.brief(r)}"
    first = [(e.get("key"), e.get("name")) for e in r.json().get("items", [])[:3]]
    assert first == [("development", "Development"), ("staging", "Staging"), ("production", "Production")], (
        f"the service starts with development, staging, production (oldest first): {first}"
    )


@pytest.mark.requirement("R7")
@pytest.mark.category("api_surface")
def test_create_environment(api, http, admin):
    key = api.unique("qa")
    r = http.post("/environments", json={"key": key}, headers=admin.headers)
    assert r.status_code == 201, f"creating an environment: {api.brief(r)}"
    assert (r.json().get("key"), r.json().get("name")) == (key, key), f"name defaults to the key: {r.text[:200]}"
    named = api.environment(name="Load testing")
    # Other items create environments too: only the order of this item's own two is checked.
    keys = [e.get("key") for e in http.get("/environments", headers=admin.headers).json()["items"]]
    assert key in keys and named["key"] in keys and keys.index(key) < keys.index(named["key"]), f"environments are listed in creation order: {keys}"
    assert named.get("name") == "Load testing", f"an explicit name is kept: {named}"


@pytest.mark.requirement("R7", "R27")
@pytest.mark.category("validation")
@pytest.mark.parametrize(
    "body, field",
    [({}, "key"), ({"key": "Prod"}, "key"), ({"key": "1env"}, "key"), ({"key": "a"}, "key"), ({"key": "e" * 33}, "key"),
     ({"key": "has_underscore"}, "key"), ({"key": 7}, "key"), ({"key": "valid-env", "name": " "}, "name"), ({"key": "valid-env", "name": None}, "name")],
    ids=["missing", "upper", "digit-first", "one-char", "33-chars", "underscore", "number", "blank-name", "null-name"],
)
def test_create_environment_validation(api, http, admin, body, field):
    problem = api.validation_problem(http.post("/environments", json=body, headers=admin.headers), [field], f"creating an environment with {body}")
    assert problem is None, problem


@pytest.mark.requirement("R7")
@pytest.mark.category("state")
def test_taken_environment_key_gets_409(api, http, admin):
    api.error(http.post("/environments", json={"key": "production"}, headers=admin.headers), 409, "conflict", "creating 'production' again")
    env = api.environment()
    api.error(http.post("/environments", json={"key": env["key"], "name": "again"}, headers=admin.headers), 409, "conflict", "creating a taken key")


@pytest.mark.requirement("R8")
@pytest.mark.category("side_effects")
def test_new_environment_gives_existing_flags_a_disabled_configuration(api, http, admin, checks):
    flag = api.flag()
    api.configure(flag["key"], "production", enabled=True, rollout_percentage=40)
    env = api.environment()
    got = api.get_flag(flag["key"]).get("environments", {})
    assert checks.documented(got.get(env["key"]), DISABLED) == DISABLED, f"the new environment's configuration of an existing flag: {got.get(env['key'])}"
    assert got.get("production", {}).get("rollout_percentage") == 40, "other environments keep their configuration"
    config = api.config(flag["key"], env["key"])
    assert (config.get("served_true"), config.get("served_false")) == (0, 0), f"a new configuration has no counts: {config}"


@pytest.mark.requirement("R8", "R10")
@pytest.mark.category("side_effects")
def test_new_flags_cover_created_environments(api, http, checks):
    env = api.environment()
    flag = api.flag()
    envs = flag.get("environments", {})
    missing = [e for e in DEFAULT_ENVS + [env["key"]] if checks.documented(envs.get(e), DISABLED) != DISABLED]
    assert not missing, f"a new flag has a disabled configuration in every environment; wrong or missing for {missing}: {envs}"


@pytest.mark.requirement("R9")
@pytest.mark.category("side_effects")
def test_deleting_an_environment_removes_its_configurations(api, http, admin):
    env = api.environment()
    flag = api.flag()
    api.configure(flag["key"], env["key"], enabled=True)
    api.evaluate(env["key"], flag["key"], "u-1")
    r = http.delete(f"/environments/{env['key']}", headers=admin.headers)
    assert r.status_code == 204, f"deleting an environment: {api.brief(r)}"
    assert env["key"] not in api.get_flag(flag["key"]).get("environments", {}), "the flag still has a configuration for the deleted environment"
    assert env["key"] not in [e.get("key") for e in http.get("/environments", headers=admin.headers).json()["items"]], "the environment is still listed"
    for method, path in (("GET", f"/flags/{flag['key']}/environments/{env['key']}"), ("DELETE", f"/environments/{env['key']}")):
        api.error(http.request(method, path, headers=admin.headers), 404, "not_found", f"{method} {path} after deletion")
    api.error(http.post(f"/environments/{env['key']}/flags/{flag['key']}/evaluate", json={"user_id": "u"}, headers=admin.headers), 404, "not_found", "evaluating in a deleted environment")


@pytest.mark.requirement("R9", "R23")
@pytest.mark.category("side_effects")
def test_deleting_an_environment_revokes_its_sdk_keys(api, http, admin):
    env = api.environment()
    doomed = api.key("sdk", environment=env["key"])
    other = api.key("sdk", environment="staging")
    api.delete_environment(env["key"])
    api.error(http.get("/me", headers=doomed.headers), 401, "unauthorized", "an sdk key of the deleted environment")
    assert http.get("/me", headers=other.headers).status_code == 200, "sdk keys of other environments keep working"
    ids = [k.get("id") for k in http.get("/keys", headers=admin.headers).json()["items"]]
    assert doomed.id not in ids and other.id in ids, f"the revoked sdk key is no longer listed: {ids}"


@pytest.mark.requirement("R6")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("role", ["editor", "viewer", "sdk"])
def test_only_admins_create_and_delete_environments(api, http, role):
    caller = api.key(role, "production" if role == "sdk" else None)
    target = api.environment()
    api.error(http.post("/environments", json={"key": api.unique("nope")}, headers=caller.headers), 403, "forbidden", f"a {role} creating an environment")
    api.error(http.delete(f"/environments/{target['key']}", headers=caller.headers), 403, "forbidden", f"a {role} deleting an environment")
    keys = [e.get("key") for e in http.get("/environments", headers=api.admin.headers).json()["items"]]
    assert target["key"] in keys, "the environment was deleted by a non-admin"

