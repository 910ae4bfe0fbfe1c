"""Failed requests change nothing, also when valid fields travel with the failing one.

spec.md, Errors: "A request that fails changes nothing."; Audit log: no failed request appends
an entry; Evaluation counts: "Failed requests count nothing." Each item sends a request whose
other fields are all valid beside the ONE that makes it fail (422, 409, 404 or 403), then reads
the state back (the object, the lists, configurations with their counts, the audit log, whether
a segment is still free to delete) and checks that none of the valid fields was written.
"""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = [pytest.mark.tier("r2")]

PRO = [{"attribute": "plan", "operator": "in", "values": ["pro"]}]
ENTERPRISE = [{"attribute": "plan", "operator": "in", "values": ["enterprise"]}]


def key_ids(api: Any) -> set[str]:
    """Ids of the live API keys (compared before and after one request within an item)."""
    return {k.get("id") for k in api.ok(api.http.get("/keys", headers=api.admin.headers), 200, "list keys")["items"]}


def environments(api: Any) -> list[tuple[Any, Any]]:
    """(key, name) of every environment, in creation order."""
    items = api.ok(api.http.get("/environments", headers=api.admin.headers), 200, "list environments")["items"]
    return [(e.get("key"), e.get("name")) for e in items]


def flag_state(api: Any, flag_key: str) -> dict[str, Any]:
    """The documented parts of a flag, its configurations with counts, and its audit entry ids."""
    flag = api.get_flag(flag_key)
    configs = {
        env: {k: api.config(flag_key, env).get(k) for k in ("enabled", "rollout_percentage", "rules", "served_true", "served_false")}
        for env in sorted(flag.get("environments", {}))
    }
    return {"name": flag.get("name"), "description": flag.get("description"), "configs": configs, "audit": [e.get("id") for e in api.audit(flag_key)]}


def segment_state(api: Any, segment_key: str) -> dict[str, Any]:
    """The documented parts of a segment."""
    got = api.ok(api.http.get(f"/segments/{segment_key}", headers=api.admin.headers), 200, f"read segment {segment_key}")
    return {"name": got.get("name"), "conditions": got.get("conditions")}


def free_to_delete_problem(api: Any, segment_key: str, what: str) -> str | None:
    """Why the segment cannot be deleted (a rule naming it was written), or None when it can."""
    r = api.http.delete(f"/segments/{segment_key}", headers=api.admin.headers)
    return None if r.status_code == 204 else f"{what}: no rule may name the segment, so it must be deletable: {api.brief(r)}"


# ---------------------------------------------------------------- POST /keys

INVALID_KEY = {"name": "   ", "role": "root", "environment": "nowhere"}


@pytest.mark.requirement("R4", "R26")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field", list(INVALID_KEY), ids=list(INVALID_KEY))
def test_mixed_key_creation_with_one_invalid_field_creates_no_key(api, http, admin, field):
    before = key_ids(api)
    body = {"name": api.unique("mixed-key"), "role": "sdk", "environment": "staging", field: INVALID_KEY[field]}
    also = ("environment",) if field == "role" else ()  # whether environment is valid depends on the role
    problem = api.validation_problem(http.post("/keys", json=body, headers=admin.headers), [field], f"a key whose only invalid field is {field}", also)
    assert problem is None, problem
    assert key_ids(api) == before, "a rejected key creation must create no key"


@pytest.mark.requirement("R4", "R6", "R26")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("role", ["editor", "viewer", "sdk"])
def test_mixed_key_creation_by_a_non_admin_creates_no_key(api, http, role):
    caller = api.key(role, "production" if role == "sdk" else None)
    before = key_ids(api)
    for body in ({"name": api.unique("sneaky"), "role": "admin"}, {"name": api.unique("sneaky"), "role": "sdk", "environment": "production"}):
        api.error(http.post("/keys", json=body, headers=caller.headers), 403, "forbidden", f"a {role} key creating a valid key {body}")
    assert key_ids(api) == before, f"a {role} key's refused key creation must create no key"


# ---------------------------------------------------------------- POST /environments, DELETE /environments/{env_key}


@pytest.mark.requirement("R7", "R8", "R26")
@pytest.mark.category("validation")
def test_mixed_environment_creation_with_an_invalid_name_creates_nothing(api, http, admin):
    flag = api.flag()
    before = (environments(api), flag_state(api, flag["key"]))
    env_key = api.unique("env")
    for name in ("   ", "n" * 61, 7):
        problem = api.validation_problem(http.post("/environments", json={"key": env_key, "name": name}, headers=admin.headers), ["name"], f"an environment with a valid key and name={str(name)[:12]!r}")
        assert problem is None, problem
    assert (environments(api), flag_state(api, flag["key"])) == before, "a rejected environment must not be created nor give flags a configuration"
    api.environment(env_key)
    api.delete_environment(env_key)


@pytest.mark.requirement("R7", "R26")
@pytest.mark.category("state")
def test_mixed_environment_creation_with_a_taken_key_changes_nothing(api, http, admin):
    env_key = api.unique("env")
    api.environment(env_key, name="Original")
    try:
        before = environments(api)
        api.error(http.post("/environments", json={"key": env_key, "name": "Replacement"}, headers=admin.headers), 409, "conflict", "an environment with a taken key and a valid name")
        api.error(http.post("/environments", json={"key": "staging", "name": "Renamed staging"}, headers=admin.headers), 409, "conflict", "a default environment's key with a valid name")
        assert environments(api) == before, "a refused environment must change no environment's name or order"
    finally:
        api.delete_environment(env_key)


@pytest.mark.requirement("R6", "R9", "R26")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("role", ["editor", "viewer"])
def test_mixed_environment_changes_by_a_non_admin_change_nothing(api, http, role):
    caller = api.key(role)
    env_key = api.unique("env")
    api.environment(env_key, name="Kept")
    try:
        flag = api.flag()
        api.configure(flag["key"], env_key, enabled=True, rollout_percentage=30)
        sdk = api.key("sdk", environment=env_key)
        before = (environments(api), flag_state(api, flag["key"]))
        new_key = api.unique("env")
        api.error(http.post("/environments", json={"key": new_key, "name": "New"}, headers=caller.headers), 403, "forbidden", f"a {role} key creating a valid environment")
        api.error(http.delete(f"/environments/{env_key}", headers=caller.headers), 403, "forbidden", f"a {role} key deleting an environment")
        assert (environments(api), flag_state(api, flag["key"])) == before, f"a {role} key's refused environment changes changed environments or configurations"
        assert http.get("/me", headers=sdk.headers).status_code == 200, "the environment's sdk key must not be revoked by a refused deletion"
    finally:
        api.delete_environment(env_key)


# ---------------------------------------------------------------- POST /flags, PATCH /flags/{flag_key}

INVALID_FLAG = {"name": "", "description": "d" * 1001}


@pytest.mark.requirement("R10", "R25", "R26")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field", list(INVALID_FLAG), ids=list(INVALID_FLAG))
def test_mixed_flag_creation_with_one_invalid_field_creates_nothing(api, http, editor, field):
    flag_key = api.unique("mixed")
    body = {"key": flag_key, "name": "Checkout", "description": "the new checkout", field: INVALID_FLAG[field]}
    problem = api.validation_problem(http.post("/flags", json=body, headers=editor.headers), [field], f"a flag whose only invalid field is {field}")
    assert problem is None, problem
    api.error(http.get(f"/flags/{flag_key}", headers=editor.headers), 404, "not_found", "reading the flag a 422 must not have created")
    assert api.audit(flag_key) == [], f"a rejected creation must not be audited: {api.audit(flag_key)}"
    r = http.post("/flags", json={"key": flag_key}, headers=editor.headers)
    assert r.status_code == 201, f"the key of a rejected flag must still be free: {api.brief(r)}"


@pytest.mark.requirement("R10", "R25", "R26")
@pytest.mark.category("state")
def test_mixed_flag_creation_with_a_taken_key_changes_nothing(api, http, editor):
    flag = api.flag(name="Original", description="kept")
    api.configure(flag["key"], "production", enabled=True, rollout_percentage=25)
    before = flag_state(api, flag["key"])
    api.error(http.post("/flags", json={"key": flag["key"], "name": "Replacement", "description": "new"}, headers=editor.headers), 409, "conflict",
              "a flag with a taken key and a valid name and description")
    assert flag_state(api, flag["key"]) == before, "the 409 must leave the flag, its configurations and its audit log as they were"


@pytest.mark.requirement("R6", "R25", "R26")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("role", ["viewer", "sdk"])
def test_mixed_flag_creation_by_a_reader_creates_nothing(api, http, role):
    caller = api.key(role, "production" if role == "sdk" else None)
    flag_key = api.unique("refused")
    api.error(http.post("/flags", json={"key": flag_key, "name": "Valid", "description": "valid"}, headers=caller.headers), 403, "forbidden", f"a {role} key creating a valid flag")
    api.error(http.get(f"/flags/{flag_key}", headers=api.admin.headers), 404, "not_found", "reading the flag a 403 must not have created")
    assert api.audit(flag_key) == [], "a refused creation must not be audited"


@pytest.mark.requirement("R12", "R25", "R26")
@pytest.mark.category("validation")
@pytest.mark.parametrize("name", ["", "   ", "n" * 101, None], ids=["empty", "blank", "too-long", "null"])
def test_mixed_flag_update_with_an_invalid_name_changes_nothing(api, http, editor, name):
    flag = api.flag(name="Before", description="before")
    before = flag_state(api, flag["key"])
    body = {"name": name, "description": "after", "key": api.unique("ignored")}
    problem = api.validation_problem(http.patch(f"/flags/{flag['key']}", json=body, headers=editor.headers), ["name"], f"a flag update with a valid description and name={str(name)[:12]!r}")
    assert problem is None, problem
    assert flag_state(api, flag["key"]) == before, "a rejected flag update must change nothing and not be audited"


# ---------------------------------------------------------------- PATCH /flags/{flag_key}/environments/{env_key}


@pytest.mark.requirement("R13", "R16", "R25", "R26")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field", ["enabled", "rollout_percentage", "rules"])
def test_mixed_configuration_with_one_invalid_field_changes_nothing(api, http, editor, field):
    flag = api.flag()
    segment = api.segment(PRO)
    api.evaluate("production", flag["key"], "counted-user")
    before = flag_state(api, flag["key"])
    body = {"enabled": True, "rollout_percentage": 40, "rules": [{"segment_key": segment["key"], "value": True}]}
    body[field] = {"enabled": "yes", "rollout_percentage": 101, "rules": [{"segment_key": segment["key"], "value": True}, {"segment_key": "missing-segment", "value": False}]}[field]
    r = http.patch(f"/flags/{flag['key']}/environments/production", json=body, headers=editor.headers)
    problem = api.validation_problem(r, [field], f"a configuration whose only invalid field is {field}")
    assert problem is None, problem
    assert flag_state(api, flag["key"]) == before, "a rejected configuration must change no configuration, count or audit entry"
    problem = free_to_delete_problem(api, segment["key"], f"after a configuration rejected for {field}")
    assert problem is None, problem


@pytest.mark.requirement("R13", "R16", "R25", "R26")
@pytest.mark.category("state")
def test_mixed_configuration_of_an_unknown_environment_or_flag_changes_nothing(api, http, editor):
    flag = api.flag()
    segment = api.segment(PRO)
    before = flag_state(api, flag["key"])
    body = {"enabled": True, "rollout_percentage": 40, "rules": [{"segment_key": segment["key"], "value": True}]}
    api.error(http.patch(f"/flags/{flag['key']}/environments/{api.unique('nowhere')}", json=body, headers=editor.headers), 404, "not_found", "a valid configuration in an unknown environment")
    missing = api.unique("missing")
    api.error(http.patch(f"/flags/{missing}/environments/production", json=body, headers=editor.headers), 404, "not_found", "a valid configuration of an unknown flag")
    assert flag_state(api, flag["key"]) == before, "a configuration answered 404 must change no other configuration"
    assert api.audit(missing) == [], "a configuration answered 404 must not be audited"
    problem = free_to_delete_problem(api, segment["key"], "after configurations answered 404")
    assert problem is None, problem


# ---------------------------------------------------------------- POST /segments, PATCH /segments/{segment_key}

INVALID_SEGMENT = {"name": "  ", "conditions": PRO + [{"attribute": "plan", "operator": "like", "values": ["p%"]}]}


def rule_outcome(api: Any, flag_key: str, plan: str) -> tuple[Any, ...]:
    """The evaluation of ``flag_key`` in development for a user on ``plan``."""
    return api.outcome(api.evaluate("development", flag_key, f"user-{plan}", {"plan": plan}))


@pytest.mark.requirement("R14", "R15", "R26")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field", list(INVALID_SEGMENT), ids=list(INVALID_SEGMENT))
def test_mixed_segment_creation_with_one_invalid_field_creates_nothing(api, http, editor, field):
    segment_key = api.unique("mixseg")
    body = {"key": segment_key, "name": "Pro users", "conditions": PRO, field: INVALID_SEGMENT[field]}
    problem = api.validation_problem(http.post("/segments", json=body, headers=editor.headers), [field], f"a segment whose only invalid field is {field}")
    assert problem is None, problem
    api.error(http.get(f"/segments/{segment_key}", headers=editor.headers), 404, "not_found", "reading the segment a 422 must not have created")
    r = http.post("/segments", json={"key": segment_key, "conditions": ENTERPRISE}, headers=editor.headers)
    assert r.status_code == 201, f"the key of a rejected segment must still be free: {api.brief(r)}"


@pytest.mark.requirement("R14", "R18", "R26")
@pytest.mark.category("state")
def test_mixed_segment_creation_with_a_taken_key_changes_nothing(api, http, editor):
    segment = api.segment(PRO, name="Pro users")
    flag = api.flag()
    api.configure(flag["key"], "development", enabled=True, rules=[{"segment_key": segment["key"], "value": True}])
    before = (segment_state(api, segment["key"]), rule_outcome(api, flag["key"], "pro"), rule_outcome(api, flag["key"], "enterprise"))
    api.error(http.post("/segments", json={"key": segment["key"], "name": "Enterprise users", "conditions": ENTERPRISE}, headers=editor.headers), 409, "conflict",
              "a segment with a taken key and a valid name and conditions")
    after = (segment_state(api, segment["key"]), rule_outcome(api, flag["key"], "pro"), rule_outcome(api, flag["key"], "enterprise"))
    assert after == before, f"the 409 must leave the segment and the evaluations it decides as they were:\nbefore {before}\nafter  {after}"


@pytest.mark.requirement("R14", "R15", "R18", "R26")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field", list(INVALID_SEGMENT), ids=list(INVALID_SEGMENT))
def test_mixed_segment_update_with_one_invalid_field_changes_nothing(api, http, editor, field):
    segment = api.segment(PRO, name="Pro users")
    flag = api.flag()
    api.configure(flag["key"], "development", enabled=True, rules=[{"segment_key": segment["key"], "value": True}])
    before = (segment_state(api, segment["key"]), rule_outcome(api, flag["key"], "pro"), rule_outcome(api, flag["key"], "enterprise"))
    body = {"name": "Enterprise users", "conditions": ENTERPRISE, field: INVALID_SEGMENT[field]}
    problem = api.validation_problem(http.patch(f"/segments/{segment['key']}", json=body, headers=editor.headers), [field], f"a segment update whose only invalid field is {field}")
    assert problem is None, problem
    after = (segment_state(api, segment["key"]), rule_outcome(api, flag["key"], "pro"), rule_outcome(api, flag["key"], "enterprise"))
    assert after == before, f"a rejected segment update must change neither the segment nor the evaluations it decides:\nbefore {before}\nafter  {after}"


@pytest.mark.requirement("R6", "R14", "R26")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("role", ["viewer", "sdk"])
def test_mixed_segment_changes_by_a_reader_change_nothing(api, http, role):
    caller = api.key(role, "production" if role == "sdk" else None)
    segment = api.segment(PRO, name="Pro users")
    before = segment_state(api, segment["key"])
    new_key = api.unique("refused")
    api.error(http.patch(f"/segments/{segment['key']}", json={"name": "Enterprise users", "conditions": ENTERPRISE}, headers=caller.headers), 403, "forbidden",
              f"a {role} key updating a segment with a valid body")
    api.error(http.post("/segments", json={"key": new_key, "name": "New", "conditions": ENTERPRISE}, headers=caller.headers), 403, "forbidden",
              f"a {role} key creating a valid segment")
    assert segment_state(api, segment["key"]) == before, f"a {role} key's refused update changed the segment"
    api.error(http.get(f"/segments/{new_key}", headers=api.admin.headers), 404, "not_found", "reading the segment a 403 must not have created")


# ---------------------------------------------------------------- POST evaluate (single and bulk): failed requests count nothing


@pytest.mark.requirement("R21", "R22", "R24")
@pytest.mark.category("side_effects")
def test_mixed_failed_evaluations_count_nothing(api, http, viewer):
    flag = api.flag()
    api.configure(flag["key"], "production", enabled=True, rollout_percentage=100)
    before = flag_state(api, flag["key"])
    single = f"/environments/production/flags/{flag['key']}/evaluate"
    cases = [
        (single, {"user_id": "u1", "attributes": {"plan": ["pro"]}}, ["attributes"]),
        (single, {"user_id": "u" * 257, "attributes": {"plan": "pro"}}, ["user_id"]),
        ("/environments/production/evaluate", {"user_id": "", "flags": [flag["key"]]}, ["user_id"]),
        ("/environments/production/evaluate", {"user_id": "u1", "flags": [flag["key"]], "attributes": {"plan": {"tier": 1}}}, ["attributes"]),
        ("/environments/production/evaluate", {"user_id": "u1", "flags": [flag["key"], 7]}, ["flags"]),
    ]
    problems = [api.validation_problem(http.post(path, json=body, headers=viewer.headers), fields, f"POST {path} with {str(body)[:80]}") for path, body, fields in cases]
    api.assert_no_problems(problems, "evaluations with one invalid field were not rejected")
    nowhere = api.unique("nowhere")
    for path, body in ((f"/environments/{nowhere}/flags/{flag['key']}/evaluate", {"user_id": "u1"}), (f"/environments/{nowhere}/evaluate", {"user_id": "u1", "flags": [flag["key"]]})):
        api.error(http.post(path, json=body, headers=viewer.headers), 404, "not_found", f"a valid evaluation in an unknown environment: POST {path}")
    assert flag_state(api, flag["key"]) == before, "failed evaluations must count nothing"
