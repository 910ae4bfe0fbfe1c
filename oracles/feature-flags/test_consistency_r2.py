"""R2 (evolved) items: evaluation consistency, cascades over time, concurrency."""

from __future__ import annotations

import threading

import pytest
import requests

pytestmark = [pytest.mark.tier("r2")]


@pytest.mark.requirement("R20", "R21", "R22", "R24")
@pytest.mark.category("state")
def test_single_and_bulk_evaluation_agree(api, http, viewer):
    prefix = api.unique("agree")
    segment = api.segment([{"attribute": "plan", "operator": "in", "values": ["pro"]}])
    flags = [api.flag(f"{prefix}-{i}")["key"] for i in range(3)]
    api.configure(flags[0], "staging", enabled=True, rollout_percentage=30)
    api.configure(flags[1], "staging", enabled=True, rollout_percentage=70, rules=[{"segment_key": segment["key"], "value": False}])
    users = [(f"u{i}", {"plan": "pro" if i % 3 == 0 else "free"}) for i in range(15)]
    mismatches = []
    for user, attributes in users:
        bulk = {r["flag_key"]: api.outcome(r) for r in api.evaluate_many("staging", user, flags=flags, attributes=attributes, by=viewer)["results"]}
        for key in flags:
            single = api.outcome(api.evaluate("staging", key, user, attributes, by=viewer))
            if bulk.get(key) != single:
                mismatches.append(f"{key} for {user}: bulk {bulk.get(key)} vs single {single}")
    assert not mismatches, "bulk and single evaluation must agree:\n" + "\n".join(mismatches[:8])
    totals = [sum(api.config(key, "staging")[f] for f in ("served_true", "served_false")) for key in flags]
    assert totals == [30, 30, 30], f"each flag was served 15 times in bulk and 15 times singly: {totals}"


@pytest.mark.requirement("R14", "R18", "R19")
@pytest.mark.category("side_effects")
def test_segment_changes_apply_to_later_evaluations(api, http, editor):
    segment = api.segment([{"attribute": "country", "operator": "in", "values": ["DE"]}])
    flag = api.flag()
    api.configure(flag["key"], "production", enabled=True, rules=[{"segment_key": segment["key"], "value": True}])
    assert api.evaluate("production", flag["key"], "u", {"country": "FR"}).get("reason") == "rollout", "FR is not in the segment yet"
    api.ok(http.patch(f"/segments/{segment['key']}", json={"conditions": [{"attribute": "country", "operator": "in", "values": ["DE", "FR"]}]}, headers=editor.headers), 200, "widen the segment")
    assert api.outcome(api.evaluate("production", flag["key"], "u", {"country": "FR"})) == (True, "rule", None, segment["key"]), "FR matches the widened segment"


@pytest.mark.requirement("R8", "R9", "R24")
@pytest.mark.category("side_effects")
def test_recreating_an_environment_starts_fresh(api, http):
    env = api.environment()
    flag = api.flag()
    api.configure(flag["key"], env["key"], enabled=True, rollout_percentage=100)
    api.evaluate(env["key"], flag["key"], "u")
    api.delete_environment(env["key"])
    api.environment(env["key"])
    config = api.config(flag["key"], env["key"])
    got = (config.get("enabled"), config.get("rollout_percentage"), config.get("rules"), config.get("served_true"), config.get("served_false"))
    assert got == (False, 0, [], 0, 0), f"an environment recreated with the same key has a fresh configuration without counts: {config}"


@pytest.mark.requirement("R9", "R16")
@pytest.mark.category("workflow")
def test_deleting_an_environment_frees_its_segments(api, http, editor):
    env = api.environment()
    segment = api.segment([{"attribute": "a", "operator": "in", "values": ["b"]}])
    flag = api.flag()
    api.configure(flag["key"], env["key"], rules=[{"segment_key": segment["key"], "value": True}])
    api.error(http.delete(f"/segments/{segment['key']}", headers=editor.headers), 409, "conflict", "deleting a segment the temporary environment uses")
    api.delete_environment(env["key"])
    r = http.delete(f"/segments/{segment['key']}", headers=editor.headers)
    assert r.status_code == 204, f"the deleted environment's rules no longer hold the segment: {api.brief(r)}"


@pytest.mark.requirement("R10", "R12", "R24", "R25")
@pytest.mark.category("workflow")
def test_a_recreated_flag_has_fresh_counts_and_shared_history(api, http, editor):
    flag = api.flag(by=editor)
    api.configure(flag["key"], "production", enabled=True, rollout_percentage=100)
    api.evaluate("production", flag["key"], "u")
    api.ok(http.delete(f"/flags/{flag['key']}", headers=editor.headers), 204, "delete the flag")
    api.flag(flag["key"], by=editor)
    config = api.config(flag["key"], "production")
    assert (config.get("enabled"), config.get("served_true"), config.get("served_false")) == (False, 0, 0), f"the new flag starts disabled without counts: {config}"
    actions = [e.get("action") for e in api.audit(flag["key"])]
    assert actions == ["flag_created", "flag_deleted", "flag_config_updated", "flag_created"], f"the audit log keeps both lives of the key: {actions}"


@pytest.mark.requirement("R24")
@pytest.mark.category("state")
def test_concurrent_evaluations_are_all_counted(api, http, service, sdk, checks):
    flag = api.flag()
    api.configure(flag["key"], "production", enabled=True, rollout_percentage=50)
    users = [f"c{i}" for i in range(16)]
    statuses: list[int] = []
    lock = threading.Lock()

    def run(user: str) -> None:
        with requests.Session() as session:
            r = session.post(f"{service.base_url}/environments/production/flags/{flag['key']}/evaluate", json={"user_id": user}, headers=sdk.headers, timeout=http.timeout_s)
        with lock:
            statuses.append(r.status_code)

    checks.concurrently(run, list(users), 2 * http.timeout_s)
    assert statuses == [200] * 16, f"every concurrent evaluation answers 200: {statuses}"
    expected_true = sum(api.bucket(flag["key"], u) < 50 for u in users)
    config = api.config(flag["key"], "production")
    assert (config.get("served_true"), config.get("served_false")) == (expected_true, 16 - expected_true), f"every concurrent evaluation is counted once: {config}"


@pytest.mark.requirement("R9", "R23", "R2")
@pytest.mark.category("authorization")
def test_sdk_keys_do_not_come_back_with_their_environment(api, http):
    env = api.environment()
    old = api.key("sdk", environment=env["key"])
    api.delete_environment(env["key"])
    api.environment(env["key"])
    api.error(http.get("/me", headers=old.headers), 401, "unauthorized", "an sdk key of a deleted environment after the key is reused")
    new = api.key("sdk", environment=env["key"])
    assert http.get("/me", headers=new.headers).status_code == 200, "a new sdk key for the recreated environment works"
