"""Security items (spec.md: Authentication, Roles, Limits and hostile input), each tagged with its CWE."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]

DISABLED = {"enabled": False, "rollout_percentage": 0, "rules": []}


@pytest.mark.requirement("R23", "R24")
@pytest.mark.cwe(639)
def test_an_sdk_key_reaches_no_other_environment(api, http):
    flag = api.flag()
    api.configure(flag["key"], "production", enabled=True, rollout_percentage=100)
    sdk = api.key("sdk", environment="development")
    for env in ("production", "staging", "no-such-env"):
        api.error(http.post(f"/environments/{env}/flags/{flag['key']}/evaluate", json={"user_id": "u1"}, headers=sdk.headers), 403, "forbidden",
                  f"a development sdk key evaluating in {env}")
        api.error(http.post(f"/environments/{env}/evaluate", json={"user_id": "u1"}, headers=sdk.headers), 403, "forbidden",
                  f"a development sdk key evaluating everything in {env}")
    for method, path, body in (("GET", f"/flags/{flag['key']}", None), ("PATCH", f"/flags/{flag['key']}/environments/production", {"enabled": False}),
                               ("GET", "/keys", None), ("GET", "/audit", None)):
        api.error(http.request(method, path, json=body, headers=sdk.headers), 403, "forbidden", f"an sdk key: {method} {path}")
    config = api.config(flag["key"], "production")
    assert (config["enabled"], config.get("served_true"), config.get("served_false")) == (True, 0, 0), f"refused evaluations must count nothing: {config}"


@pytest.mark.requirement("R4", "R10", "R13")
@pytest.mark.cwe(915)
def test_secrets_configurations_and_counts_cannot_be_assigned(api, http, checks):
    chosen = "chosen-secret-" + "x" * 20
    r = http.post("/keys", json={"name": api.unique("k"), "role": "viewer", "secret": chosen, "id": "forged"}, headers=api.admin.headers)
    assert r.status_code == 201, f"fields the client may not set are ignored: {api.brief(r)}"
    assert r.json().get("secret") != chosen and r.json().get("id") != "forged", f"the client chose the secret or id: {r.json()}"
    api.error(http.get("/me", headers={"Authorization": f"Bearer {chosen}"}), 401, "unauthorized", "the secret the client proposed")
    key = api.unique("mass")
    r = http.post("/flags", json={"key": key, "environments": {"production": {"enabled": True, "rollout_percentage": 100}}}, headers=api.admin.headers)
    assert r.status_code == 201, f"creating a flag with forged configurations: {api.brief(r)}"
    prod = checks.documented(api.get_flag(key).get("environments", {}).get("production"), DISABLED)
    assert prod == DISABLED, f"a new flag is disabled everywhere whatever the body says: {prod}"
    r = http.patch(f"/flags/{key}/environments/production", json={"served_true": 1000, "served_false": 7, "flag_key": "other"}, headers=api.admin.headers)
    assert r.status_code == 200, f"a configuration PATCH of undefined fields ignores them: {api.brief(r)}"
    config = api.config(key, "production")
    assert (config.get("served_true"), config.get("served_false"), config.get("flag_key")) == (0, 0, key), f"counts are the service's: {config}"


@pytest.mark.requirement("R10", "R11", "R19", "R28")
@pytest.mark.cwe(89)
def test_hostile_text_is_stored_verbatim_and_filters_never_widen(api, http, checks):
    for text in checks.injection_texts:
        flag = api.flag(name=text[:100], description=text)
        got = api.get_flag(flag["key"])
        assert (got["name"], got["description"]) == (text[:100], text), f"the text must come back verbatim: sent {text!r}, got {got['name']!r}"
    api.flag()
    for prefix in ("%", "_", "*", ".*", "' OR '1'='1", "a%"):
        r = http.get("/flags", params={"prefix": prefix}, headers=api.admin.headers)
        if r.status_code == 422:
            continue
        assert r.status_code == 200, f"GET /flags?prefix={prefix!r}: {api.brief(r)}"
        keys = [f.get("key") for f in r.json().get("items", [])]
        assert all(k.startswith(prefix) for k in keys), f"prefix {prefix!r} matches only keys starting with it literally, got {keys[:5]}"
    segment = api.segment([{"attribute": "plan", "operator": "in", "values": ["' OR '1'='1"]}])
    flag = api.flag()
    api.configure(flag["key"], "staging", enabled=True, rollout_percentage=0, rules=[{"segment_key": segment["key"], "value": True}])
    for plan, expected in (("pro", False), ("' OR '1'='1", True), ("%", False), (".*", False)):
        got = api.evaluate("staging", flag["key"], "u-" + api.unique("x"), {"plan": plan})
        assert got.get("value") is expected, f"a condition value matches only itself: plan {plan!r} gave {got}"


@pytest.mark.requirement("R28")
@pytest.mark.cwe(400)
def test_oversized_and_deeply_nested_bodies_are_refused(api, http, service, checks):
    key = api.unique("big")
    problems = checks.hostile_body_problems(service, http.timeout_s, "POST", "/flags", api.admin.headers, {"key": key}, "description")
    flag = api.flag(description="kept")
    problems += checks.hostile_body_problems(service, http.timeout_s, "PATCH", f"/flags/{flag['key']}", api.admin.headers, {"name": "changed"}, "description")
    problems += checks.hostile_body_problems(service, http.timeout_s, "POST", f"/environments/production/flags/{flag['key']}/evaluate", api.admin.headers,
                                             {"user_id": "u1"}, "attributes")
    assert not problems, "limits on request bodies:\n" + "\n".join(problems)
    api.error(http.get(f"/flags/{key}", headers=api.admin.headers), 404, "not_found", "a refused create must create nothing")
    got = api.get_flag(flag["key"])
    assert (got["name"], got["description"]) == (flag["name"], "kept"), f"a refused PATCH must change nothing: {got}"


@pytest.mark.requirement("R2", "R5")
@pytest.mark.cwe(287)
def test_revoked_and_tampered_keys_get_401(api, http, checks):
    editor = api.key("editor")
    problems = checks.token_problems(http, "POST", "/flags", editor.secret, {"key": api.unique("forged")})
    api.ok(http.delete(f"/keys/{editor.id}", headers=api.admin.headers), 204, "revoke the editor key")
    for method, path, body in (("GET", "/me", None), ("GET", "/flags", None), ("POST", "/flags", {"key": api.unique("revoked")})):
        r = http.request(method, path, json=body, headers=editor.headers)
        if r.status_code != 401:
            problems.append(f"{method} {path} with a revoked key: expected 401, got {api.brief(r)}")
    assert not problems, "key misuse was not refused:\n" + "\n".join(problems)


@pytest.mark.requirement("R12", "R28")
@pytest.mark.cwe(22)
def test_path_traversal_in_keys_gets_404(api, http, service, checks):
    flag = api.flag()
    problems = checks.traversal_problems(service, http.timeout_s, "/flags/", api.admin.headers)
    problems += checks.traversal_problems(service, http.timeout_s, "/segments/", api.admin.headers)
    problems += checks.traversal_problems(service, http.timeout_s, f"/flags/{flag['key']}/environments/", api.admin.headers)
    assert not problems, "keys that climb out of their path must name nothing:\n" + "\n".join(problems)
