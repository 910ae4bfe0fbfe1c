"""Refusals at each field, the segment-in-use guard condition by condition, references in bodies (issue 35).

spec.md: "A request that fails changes nothing"; "A segment that a rule of any flag in any
environment names cannot be deleted: 409"; rules name "an existing segment"; a key's
`environment` "must be the key of an existing environment"; "A key in `flags` that names no flag
gets ... reason: unknown_flag". Each guard case reaches the state through the API, checks the
refusal, then undoes the one condition through the API and checks the request now succeeds.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_backendbench.http.refusals import one_invalid_field, unchanged

pytestmark = [pytest.mark.tier("r1")]

PRO = [{"attribute": "plan", "operator": "in", "values": ["pro"]}]
FLAG_UPDATE = {"name": "After", "description": "after"}


def flag_read(api, flag_key: str, env: str = "production"):
    """What a refused flag or configuration request must not move: the flag, one configuration with its counts, its audit entries."""
    def read() -> dict[str, Any]:
        flag = api.get_flag(flag_key)
        config = api.config(flag_key, env)
        return {"name": flag.get("name"), "description": flag.get("description"), "updated_at": flag.get("updated_at"),
                "config": {k: config.get(k) for k in ("enabled", "rollout_percentage", "rules", "served_true", "served_false")},
                "audit": [e.get("id") for e in api.audit(flag_key)]}
    return read


def live_keys(api) -> list[Any]:
    """The live API keys as GET /keys lists them."""
    return [k.get("id") for k in api.ok(api.http.get("/keys", headers=api.admin.headers), 200, "list keys")["items"]]


@pytest.mark.requirement("R12", "R25", "R26")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field,body", one_invalid_field(FLAG_UPDATE, {"name": ["", "n" * 101, None], "description": ["d" * 1001, 5, None]}))
def test_a_refused_flag_update_changes_nothing_whichever_field_is_invalid(api, http, editor, field, body):
    flag = api.flag(name="Before", description="before")
    with unchanged(flag_read(api, flag["key"]), f"a flag update with an invalid {field}"):
        problem = api.validation_problem(http.patch(f"/flags/{flag['key']}", json=body, headers=editor.headers), [field], f"a flag update whose only invalid field is {field}")
        assert problem is None, problem


# ---------------------------------------------------------------- the segment-in-use guard, condition by condition


def in_use(api, case: str) -> tuple[str, list[tuple[str, str, list[Any]]]]:
    """Set up ``case``: the segment key and the configuration changes (flag, env, rules) that free it."""
    segment, other, flag = api.segment(PRO)["key"], api.segment(PRO)["key"], api.flag()["key"]
    if case == "named-by-a-later-rule":
        api.configure(flag, "development", rules=[{"segment_key": other, "value": True}, {"segment_key": segment, "value": False}])
        return segment, [(flag, "development", [{"segment_key": other, "value": True}])]
    if case == "named-in-a-created-environment":
        env = api.environment()["key"]
        api.configure(flag, env, rules=[{"segment_key": segment, "value": True}])
        return segment, [(flag, env, [])]
    if case == "left-in-staging-after-removal-from-development":
        for env in ("development", "staging"):
            api.configure(flag, env, rules=[{"segment_key": segment, "value": True}])
        api.configure(flag, "development", rules=[])
        return segment, [(flag, "staging", [])]
    raise AssertionError(case)


@pytest.mark.requirement("R16")
@pytest.mark.category("state")
@pytest.mark.parametrize("case", ["named-by-a-later-rule", "named-in-a-created-environment", "left-in-staging-after-removal-from-development"])
def test_a_segment_named_by_any_rule_cannot_be_deleted_until_no_rule_names_it(api, http, editor, case):
    segment, frees = in_use(api, case)

    def read() -> Any:
        return api.ok(http.get(f"/segments/{segment}", headers=editor.headers), 200, "read the segment")

    try:
        with unchanged(read, f"deleting the segment ({case})"):
            api.error(http.delete(f"/segments/{segment}", headers=editor.headers), 409, "conflict", f"deleting a segment a rule names ({case})")
        for flag, env, rules in frees:
            api.configure(flag, env, rules=rules)
        r = http.delete(f"/segments/{segment}", headers=editor.headers)
        assert r.status_code == 204, f"{case}: once no rule names the segment it can be deleted: {api.brief(r)}"
    finally:
        if case == "named-in-a-created-environment":  # environments are shared by every item: leave none behind
            api.delete_environment(frees[0][1])


# ---------------------------------------------------------------- ids in bodies


def gone_segment(api) -> str:
    segment = api.segment(PRO)["key"]
    api.ok(api.http.delete(f"/segments/{segment}", headers=api.admin.headers), 204, "delete the segment")
    return segment


def gone_environment(api) -> str:
    env = api.environment()["key"]
    api.delete_environment(env)
    return env


SEGMENT_REFERENCES = {"deleted-segment": gone_segment, "flag-key": lambda api: api.flag()["key"],
                      "environment-key": lambda api: "production"}


@pytest.mark.requirement("R13", "R16", "R25")
@pytest.mark.category("validation")
@pytest.mark.parametrize("kind", list(SEGMENT_REFERENCES))
def test_a_rule_naming_no_existing_segment_is_refused(api, http, editor, kind):
    flag = api.flag()["key"]
    wrong = SEGMENT_REFERENCES[kind](api)
    if kind == "environment-key":
        assert api.http.get(f"/segments/{wrong}", headers=editor.headers).status_code == 404, "setup: no segment has the key production"
    body = {"enabled": True, "rules": [{"segment_key": api.segment(PRO)["key"], "value": True}, {"segment_key": wrong, "value": True}]}
    with unchanged(flag_read(api, flag), f"a rule naming a {kind}"):
        problem = api.validation_problem(http.patch(f"/flags/{flag}/environments/production", json=body, headers=editor.headers), ["rules"], f"a rule naming a {kind} ({wrong})")
        assert problem is None, problem


KEY_REFERENCES = {"deleted-environment": gone_environment, "flag-key": lambda api: api.flag()["key"], "segment-key": lambda api: api.segment(PRO)["key"]}


@pytest.mark.requirement("R4", "R9")
@pytest.mark.category("validation")
@pytest.mark.parametrize("kind", list(KEY_REFERENCES))
def test_an_sdk_key_for_no_existing_environment_is_refused(api, http, admin, kind):
    wrong = KEY_REFERENCES[kind](api)
    with unchanged(lambda: live_keys(api), f"an sdk key for a {kind}"):
        r = http.post("/keys", json={"name": api.unique("sdk"), "role": "sdk", "environment": wrong}, headers=admin.headers)
        problem = api.validation_problem(r, ["environment"], f"an sdk key whose environment is a {kind} ({wrong})")
        assert problem is None, problem


@pytest.mark.requirement("R22", "R24")
@pytest.mark.category("state")
def test_bulk_evaluation_of_a_deleted_flag_or_a_segment_key_answers_unknown_flag(api, http, viewer):
    kept, gone, segment = api.flag()["key"], api.flag()["key"], api.segment(PRO)["key"]
    api.ok(http.delete(f"/flags/{gone}", headers=api.admin.headers), 204, "delete the flag")
    got = api.evaluate_many("production", "user-1", flags=[gone, segment, kept], by=viewer)
    unknown = {"value": False, "reason": "unknown_flag", "bucket": None, "segment_key": None}
    expected = sorted([{"flag_key": gone, **unknown}, {"flag_key": segment, **unknown},
                       {"flag_key": kept, "value": False, "reason": "disabled", "bucket": None, "segment_key": None}], key=lambda r: r["flag_key"])
    results = [{k: r.get(k) for k in ("flag_key", "value", "reason", "bucket", "segment_key")} for r in got.get("results", [])]
    assert results == expected, f"a deleted flag and a segment's key name no flag:\nexpected {expected}\ngot      {results}"
    config = api.config(kept, "production")
    assert (config.get("served_true"), config.get("served_false")) == (0, 1), f"only the existing flag counts: {config}"
