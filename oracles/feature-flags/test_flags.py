"""Flags and their per-environment configuration (spec.md: Flags, Configuration per environment)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]

DEFAULTS = ["development", "staging", "production"]
DISABLED = {"enabled": False, "rollout_percentage": 0, "rules": []}


@pytest.mark.requirement("R10")
@pytest.mark.category("api_surface")
def test_create_flag_with_defaults(api, http, editor, checks):
    key = api.unique("checkout.v2")
    r = http.post("/flags", json={"key": key}, headers=editor.headers)
    assert r.status_code == 201, f"an editor creating a flag: {api.brief(r)}"
    flag = r.json()
    assert (flag.get("key"), flag.get("name"), flag.get("description")) == (key, key, ""), f"name defaults to the key, description to '': {flag}"
    envs = flag.get("environments", {})
    wrong = {e: envs.get(e) for e in DEFAULTS if checks.documented(envs.get(e), DISABLED) != DISABLED}
    assert not wrong, f"a new flag is disabled with rollout 0 and no rules everywhere; differs in {wrong}"
    fetched = api.get_flag(key)
    assert checks.documented(fetched.get("environments", {}).get("production"), DISABLED) == DISABLED, f"GET answers the same flag: {fetched}"


@pytest.mark.requirement("R10", "R27")
@pytest.mark.category("validation")
@pytest.mark.parametrize(
    "body, field",
    [({}, "key"), ({"key": "Upper"}, "key"), ({"key": "-dash-first"}, "key"), ({"key": "has space"}, "key"), ({"key": "k" * 65}, "key"),
     ({"key": 12}, "key"), ({"key": "fine-key", "name": ""}, "name"), ({"key": "fine-key", "name": "n" * 101}, "name"),
     ({"key": "fine-key", "description": "d" * 1001}, "description"), ({"key": "fine-key", "description": None}, "description")],
    ids=["missing", "upper", "dash-first", "space", "65-chars", "number", "empty-name", "long-name", "long-description", "null-description"],
)
def test_create_flag_validation(api, http, editor, body, field):
    problem = api.validation_problem(http.post("/flags", json=body, headers=editor.headers), [field], f"creating a flag with {str(body)[:60]}")
    assert problem is None, problem


@pytest.mark.requirement("R10")
@pytest.mark.category("validation")
def test_flag_key_boundaries(api, http, editor):
    for key in ("9" + api.unique("")[-12:], "a" + "." * 10 + "_-" + api.unique("b")[:40], "k" * 52 + api.unique("")[-12:]):
        r = http.post("/flags", json={"key": key}, headers=editor.headers)
        assert r.status_code == 201, f"flag key {key!r} ({len(key)} characters) is valid: {api.brief(r)}"


@pytest.mark.requirement("R10")
@pytest.mark.category("state")
def test_taken_flag_key_gets_409(api, http, editor):
    flag = api.flag(name="Original")
    api.error(http.post("/flags", json={"key": flag["key"], "name": "Copy"}, headers=editor.headers), 409, "conflict", "creating a taken flag key")
    assert api.get_flag(flag["key"]).get("name") == "Original", "the conflicting create changed the flag"


@pytest.mark.requirement("R10", "R12")
@pytest.mark.category("state")
def test_deleted_flag_key_can_be_reused(api, http, editor, checks):
    flag = api.flag(description="first life")
    api.configure(flag["key"], "staging", enabled=True)
    api.ok(http.delete(f"/flags/{flag['key']}", headers=editor.headers), 204, "delete the flag")
    again = api.flag(flag["key"])
    assert again.get("description") == "" and checks.documented(again.get("environments", {}).get("staging"), DISABLED) == DISABLED, (
        f"a flag created with a deleted flag's key starts fresh: {again}"
    )


@pytest.mark.requirement("R11")
@pytest.mark.category("api_surface")
def test_flags_are_listed_by_key_with_prefix(api, http, viewer):
    prefix = api.unique("list")
    for suffix in ("b", "a", "c.z", "c-a", "0"):
        api.flag(f"{prefix}.{suffix}")
    api.flag(api.unique("other"))
    r = http.get("/flags", params={"prefix": prefix + "."}, headers=viewer.headers)
    assert r.status_code == 200, f"a viewer listing flags: {api.brief(r)}"
    keys = [f.get("key") for f in r.json().get("items", [])]
    expected = sorted(f"{prefix}.{s}" for s in ("b", "a", "c.z", "c-a", "0"))
    assert keys == expected and r.json().get("total") == 5, f"flags with the prefix, by key ascending: expected {expected}, got {keys}"


@pytest.mark.requirement("R11")
@pytest.mark.category("api_surface")
def test_flag_pagination(api, http, viewer):
    prefix = api.unique("page")
    keys = sorted(api.flag(f"{prefix}-{i}")["key"] for i in range(5))
    first = http.get("/flags", params={"prefix": prefix, "limit": 2}, headers=viewer.headers).json()
    assert [f["key"] for f in first["items"]] == keys[:2] and (first["total"], first["limit"], first["offset"]) == (5, 2, 0), f"limit=2: {first}"
    last = http.get("/flags", params={"prefix": prefix, "limit": 2, "offset": 4}, headers=viewer.headers).json()
    assert [f["key"] for f in last["items"]] == keys[4:], f"offset=4: {last}"
    default = http.get("/flags", params={"prefix": prefix, "offset": 5}, headers=viewer.headers).json()
    assert default["items"] == [] and (default["limit"], default["offset"]) == (20, 5), f"offset at the end, default limit: {default}"


@pytest.mark.requirement("R11")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field, values", [("limit", [0, 101, "ten"]), ("offset", [-1, "x"])], ids=["limit", "offset"])
def test_invalid_flag_paging_gets_422(api, http, viewer, field, values):
    problems = [api.validation_problem(http.get("/flags", params={field: v}, headers=viewer.headers), [field], f"{field}={v!r}") for v in values]
    api.assert_no_problems(problems, f"invalid {field} values were not rejected")


@pytest.mark.requirement("R12")
@pytest.mark.category("state")
def test_update_flag(api, http, editor):
    flag = api.flag()
    r = http.patch(f"/flags/{flag['key']}", json={"name": "Checkout v2", "description": "new flow", "key": "renamed"}, headers=editor.headers)
    assert r.status_code == 200, f"updating a flag: {api.brief(r)}"
    got = api.get_flag(flag["key"])
    assert (got.get("key"), got.get("name"), got.get("description")) == (flag["key"], "Checkout v2", "new flow"), f"name and description change, the key does not: {got}"
    api.error(http.get("/flags/renamed", headers=editor.headers), 404, "not_found", "the key sent in the update must be ignored")


@pytest.mark.requirement("R12", "R27")
@pytest.mark.category("validation")
def test_update_flag_validation(api, http, editor):
    flag = api.flag(name="Stable")
    cases = [({"name": " "}, ["name"]), ({"name": 5}, ["name"]), ({"description": "d" * 1001}, ["description"]), ({"name": None, "description": []}, ["name", "description"])]
    problems = [api.validation_problem(http.patch(f"/flags/{flag['key']}", json=b, headers=editor.headers), f, f"update {str(b)[:50]}") for b, f in cases]
    api.assert_no_problems(problems, "invalid flag updates were not rejected")
    assert api.get_flag(flag["key"]).get("name") == "Stable", "rejected updates changed the flag"


@pytest.mark.requirement("R12")
@pytest.mark.category("state")
def test_delete_flag(api, http, editor):
    flag = api.flag()
    r = http.delete(f"/flags/{flag['key']}", headers=editor.headers)
    assert r.status_code == 204, f"deleting a flag: {api.brief(r)}"
    for method, path in (("GET", f"/flags/{flag['key']}"), ("GET", f"/flags/{flag['key']}/environments/staging"), ("DELETE", f"/flags/{flag['key']}")):
        api.error(http.request(method, path, headers=editor.headers), 404, "not_found", f"{method} {path} after deletion")
    api.error(http.post(f"/environments/staging/flags/{flag['key']}/evaluate", json={"user_id": "u"}, headers=editor.headers), 404, "not_found", "evaluating a deleted flag")


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_configure_a_flag_in_one_environment(api, http, editor, checks):
    flag = api.flag()
    segment = api.segment([{"attribute": "plan", "operator": "in", "values": ["pro"]}])
    r = http.patch(f"/flags/{flag['key']}/environments/staging", json={"enabled": True, "rollout_percentage": 25, "rules": [{"segment_key": segment["key"], "value": True}]}, headers=editor.headers)
    assert r.status_code == 200, f"configuring staging: {api.brief(r)}"
    expected = {"flag_key": flag["key"], "environment": "staging", "enabled": True, "rollout_percentage": 25, "rules": [{"segment_key": segment["key"], "value": True}]}
    assert {k: r.json().get(k) for k in expected} == expected, f"the configuration answer: {r.text[:300]}"
    api.configure(flag["key"], "staging", by=editor, rollout_percentage=60)
    got = api.config(flag["key"], "staging")
    assert (got.get("enabled"), got.get("rollout_percentage"), got.get("rules")) == (True, 60, expected["rules"]), f"fields not sent keep their values: {got}"
    envs = api.get_flag(flag["key"])["environments"]
    assert checks.documented(envs.get("production"), DISABLED) == DISABLED and envs.get("staging", {}).get("rollout_percentage") == 60, f"only staging changed: {envs}"


@pytest.mark.requirement("R13", "R27")
@pytest.mark.category("validation")
@pytest.mark.parametrize(
    "field, values",
    [
        ("enabled", ["true", 1, None]),
        ("rollout_percentage", [-1, 101, 12.5, "50", True, None]),
        ("rules", [{"segment_key": "x", "value": True}, [{"segment_key": "no-such-segment", "value": True}], [{"value": True}], "SEGMENT", None]),
    ],
    ids=["enabled", "rollout_percentage", "rules"],
)
def test_configuration_validation(api, http, editor, field, values):
    flag = api.flag()
    problems = [
        api.validation_problem(http.patch(f"/flags/{flag['key']}/environments/development", json={field: v}, headers=editor.headers), [field], f"{field}={v!r}")
        for v in values
    ]
    segment = api.segment([{"attribute": "a", "operator": "in", "values": ["b"]}])
    if field == "rules":
        for bad in ([{"segment_key": segment["key"], "value": "yes"}], [{"segment_key": segment["key"], "value": True}] * 21):
            problems.append(api.validation_problem(http.patch(f"/flags/{flag['key']}/environments/development", json={"rules": bad}, headers=editor.headers), ["rules"], f"rules {str(bad)[:60]}"))
    api.assert_no_problems(problems, f"invalid {field} values were not rejected")
    config = api.config(flag["key"], "development")
    got = (config.get("enabled"), config.get("rollout_percentage"), config.get("rules"))
    assert got == (False, 0, []), f"rejected configurations changed the flag: {config}"


@pytest.mark.requirement("R13")
@pytest.mark.category("api_surface")
def test_configuration_of_unknown_flag_or_environment_is_not_found(api, http, editor):
    flag = api.flag()
    for method, path, body in (
        ("GET", f"/flags/{flag['key']}/environments/nowhere", None), ("PATCH", f"/flags/{flag['key']}/environments/nowhere", {"enabled": True}),
        ("GET", "/flags/no-such-flag/environments/production", None), ("PATCH", "/flags/no-such-flag/environments/production", {"enabled": True}),
    ):
        api.error(http.request(method, path, json=body, headers=editor.headers), 404, "not_found", f"{method} {path}")


@pytest.mark.requirement("R6")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("role", ["viewer", "sdk"])
@pytest.mark.parametrize("action", ["create-flag", "update-flag", "delete-flag", "configure", "create-segment", "delete-segment"])
def test_viewers_and_sdk_keys_cannot_change_anything(api, http, role, action):
    caller = api.key(role, "production" if role == "sdk" else None)
    flag = api.flag(name="Untouched")
    segment = api.segment([{"attribute": "a", "operator": "in", "values": ["b"]}])
    method, path, body = {
        "create-flag": ("POST", "/flags", {"key": api.unique("nope")}),
        "update-flag": ("PATCH", f"/flags/{flag['key']}", {"name": "Touched"}),
        "delete-flag": ("DELETE", f"/flags/{flag['key']}", None),
        "configure": ("PATCH", f"/flags/{flag['key']}/environments/production", {"enabled": True}),
        "create-segment": ("POST", "/segments", {"key": api.unique("nope"), "conditions": [{"attribute": "a", "operator": "in", "values": ["b"]}]}),
        "delete-segment": ("DELETE", f"/segments/{segment['key']}", None),
    }[action]
    api.error(http.request(method, path, json=body, headers=caller.headers), 403, "forbidden", f"a {role} key: {action}")
    got = api.get_flag(flag["key"])
    assert got.get("name") == "Untouched" and got["environments"].get("production", {}).get("enabled") is False, f"the refused request changed the flag: {got}"
    assert http.get(f"/segments/{segment['key']}", headers=api.admin.headers).status_code == 200, "the refused request deleted the segment"


@pytest.mark.requirement("R6")
@pytest.mark.category("authorization")
def test_sdk_keys_cannot_read_management_data(api, http, sdk):
    flag = api.flag()
    for path in ("/environments", "/flags", f"/flags/{flag['key']}", f"/flags/{flag['key']}/environments/production", "/segments", "/audit"):
        api.error(http.get(path, headers=sdk.headers), 403, "forbidden", f"an sdk key reading {path}")
