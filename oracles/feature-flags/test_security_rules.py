"""Security items derived rule by rule from spec.md (issue 24; REVIEW.md "Security rules").

Each item exercises one rule, one role or one hostile-value path at a time. Every answer any
item of this module receives is also checked for the secret of a key created in the item
("`secret` … appears only in this response": the 201 of `POST /keys`).
"""

from __future__ import annotations

import json

import pytest
import requests

from pytest_backendbench.http.hostile import HOSTILE_VALUES, hostile_findings

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]


def secret_shown_once_check():
    """A response check: a secret answered by `POST /keys` (201) appears in no other answer."""
    shown: set[str] = set()

    def check(response: requests.Response) -> list[str]:
        request = response.request
        if request.method == "POST" and request.path_url.split("?")[0] == "/keys" and response.status_code == 201:
            try:
                secret = response.json().get("secret")
            except (ValueError, AttributeError):
                return []
            if isinstance(secret, str) and secret:
                shown.add(secret)
            return []
        return [f"{request.method} {request.path_url} -> {response.status_code} shows a key's secret" for secret in shown if secret in response.text]

    check.cwe = 200
    return check


@pytest.fixture
def http_response_checks():
    """API keys: "`secret` … appears only in this response." — on every answer."""
    return [secret_shown_once_check()]


@pytest.mark.requirement("R4", "R5")
@pytest.mark.cwe(200)
def test_a_secret_appears_only_in_its_creation_answer(api, http, admin):
    env = api.environment()
    keys = [api.key(role, environment=env["key"] if role == "sdk" else None) for role in ("admin", "editor", "viewer", "sdk")]
    flag = api.flag(by=keys[1])
    api.configure(flag["key"], env["key"], by=keys[1], enabled=True)
    answers = [http.get("/keys", headers=admin.headers), http.get("/audit", params={"flag_key": flag["key"]}, headers=admin.headers),
               http.get("/environments", headers=keys[0].headers)]
    answers += [http.get("/me", headers=key.headers) for key in keys]
    answers.append(http.post(f"/environments/{env['key']}/evaluate", json={"user_id": "u1"}, headers=keys[3].headers))
    leaks = [f"{api.brief(a)[:80]} shows the {key.role} key's secret" for a in answers for key in keys if key.secret in a.text]
    assert all(a.status_code == 200 for a in answers), [api.brief(a) for a in answers if a.status_code != 200]
    assert not leaks, "a key's secret appears only in the answer that created it:\n" + "\n".join(leaks)
    assert len({key.secret for key in keys}) == 4 and all(len(key.secret) >= 20 for key in keys), "secrets are new strings of 20+ characters"


SECRET_EDGES = {
    "upper-cased": lambda s: s.upper() if s.upper() != s else s.lower(),
    "last-character-dropped": lambda s: s[:-1],
    "one-character-more": lambda s: s + "x",
    "first-20-characters": lambda s: s[:20],
    "wildcard-appended": lambda s: s[:-1] + "%",
}


@pytest.mark.requirement("R2")
@pytest.mark.cwe(287)
@pytest.mark.parametrize("edge", sorted(SECRET_EDGES))
def test_a_secret_wrong_only_at_its_edge_gets_401(api, http, edge):
    key = api.key("admin")
    for secret, who in ((key.secret, "a created admin key"), (api.admin.secret, "the bootstrap key")):
        wrong = SECRET_EDGES[edge](secret)
        assert wrong != secret
        api.error(http.get("/me", headers={"Authorization": f"Bearer {wrong}"}), 401, "unauthorized", f"{who}'s secret {edge}")
        api.error(http.get("/keys", headers={"Authorization": f"Bearer {wrong}"}), 401, "unauthorized", f"GET /keys with {who}'s secret {edge}")
    assert api.ok(http.get("/me", headers=key.headers), 200, "the exact secret")["id"] == key.id


def _forbidden_cases():
    """(role, method, path template, body) for every request the role table does not give that role."""
    flag_body, seg_body = {"key": "zz-forbidden-flag"}, {"key": "zz-forbidden-seg", "conditions": [{"attribute": "a", "operator": "in", "values": ["b"]}]}
    keys_and_envs = [("POST", "/keys", {"name": "k", "role": "admin"}), ("GET", "/keys", None), ("DELETE", "/keys/{key}", None),
                     ("POST", "/environments", {"key": "zz-forbidden-env"}), ("DELETE", "/environments/{env}", None)]
    writes = [("POST", "/flags", flag_body), ("PATCH", "/flags/{flag}", {"name": "changed"}), ("DELETE", "/flags/{flag}", None),
              ("PATCH", "/flags/{flag}/environments/{env}", {"enabled": True}), ("POST", "/segments", seg_body),
              ("PATCH", "/segments/{segment}", {"name": "changed"}), ("DELETE", "/segments/{segment}", None)]
    reads = [("GET", "/environments", None), ("GET", "/flags", None), ("GET", "/flags/{flag}", None), ("GET", "/flags/{flag}/environments/{env}", None),
             ("GET", "/segments", None), ("GET", "/segments/{segment}", None), ("GET", "/audit", None)]
    cases = [("editor", *case) for case in keys_and_envs]
    cases += [("viewer", *case) for case in keys_and_envs + writes]
    cases += [("sdk", *case) for case in keys_and_envs + writes + reads]
    return cases


FORBIDDEN = _forbidden_cases()


@pytest.mark.requirement("R6", "R26")
@pytest.mark.cwe(863)
@pytest.mark.parametrize(("role", "method", "path", "body"), FORBIDDEN, ids=[f"{r}-{m}-{p}" for r, m, p, _ in FORBIDDEN])
def test_a_role_gets_403_for_each_request_the_role_table_denies_it(api, http, role, method, path, body):
    env = api.environment()
    flag = api.flag()
    segment = api.segment([{"attribute": "plan", "operator": "in", "values": ["pro"]}])
    victim = api.key("viewer")
    caller = api.key(role, environment=env["key"] if role == "sdk" else None)
    target = path.format(flag=flag["key"], env=env["key"], segment=segment["key"], key=victim.id)
    api.error(http.request(method, target, json=body, headers=caller.headers), 403, "forbidden", f"{role}: {method} {target}")
    admin = api.admin.headers
    got = api.get_flag(flag["key"])
    assert (got["name"], api.config(flag["key"], env["key"])["enabled"]) == (flag["name"], False), f"a refused request changes nothing: {got}"
    assert api.ok(http.get(f"/segments/{segment['key']}", headers=admin), 200, "the segment is still there")["name"] == segment["name"]
    assert api.ok(http.get("/me", headers=victim.headers), 200, "the other key still works")["id"] == victim.id
    api.error(http.get("/flags/zz-forbidden-flag", headers=admin), 404, "not_found", "no flag was created")
    api.error(http.get("/segments/zz-forbidden-seg", headers=admin), 404, "not_found", "no segment was created")
    envs = [e["key"] for e in api.ok(http.get("/environments", headers=admin), 200, "list environments")["items"]]
    assert env["key"] in envs and "zz-forbidden-env" not in envs, f"environments: {envs}"


@pytest.mark.requirement("R23", "R26")
@pytest.mark.cwe(203)
def test_the_role_is_decided_before_anything_in_the_path_is_looked_up(api, http):
    viewer, editor, sdk = api.key("viewer"), api.key("editor"), api.key("sdk", environment="production")
    missing = api.unique("nope")
    problems = []
    for who, method, path, body in (
        (sdk, "POST", f"/environments/{missing}/flags/{missing}/evaluate", {"user_id": "u"}),
        (sdk, "POST", f"/environments/{missing}/evaluate", {"user_id": "u"}),
        (sdk, "POST", f"/environments/staging/flags/{missing}/evaluate", {"user_id": "u"}),
        (sdk, "GET", f"/flags/{missing}", None),
        (viewer, "DELETE", f"/flags/{missing}", None),
        (viewer, "PATCH", f"/flags/{missing}/environments/{missing}", {"enabled": "not a boolean"}),
        (viewer, "POST", "/flags", {"key": "NOT VALID"}),
        (editor, "DELETE", f"/keys/{missing}", None),
        (editor, "DELETE", f"/environments/{missing}", None),
    ):
        r = http.request(method, path, json=body, headers=who.headers)
        if r.status_code != 403:
            problems.append(f"{who.role}: {method} {path}: expected 403 (the role, before 404 and 422), got {api.brief(r)}")
    assert not problems, "a denied role learns nothing about what exists:\n" + "\n".join(problems)


@pytest.mark.requirement("R9")
@pytest.mark.cwe(613)
def test_deleting_an_environment_revokes_only_its_sdk_keys(api, http):
    doomed, kept = api.environment(), api.environment()
    gone, stays = api.key("sdk", environment=doomed["key"]), api.key("sdk", environment=kept["key"])
    editor = api.key("editor")
    api.delete_environment(doomed["key"])
    api.error(http.get("/me", headers=gone.headers), 401, "unauthorized", "the sdk key of the deleted environment")
    r = http.post(f"/environments/{kept['key']}/evaluate", json={"user_id": "u"}, headers=gone.headers)
    api.error(r, 401, "unauthorized", "the revoked sdk key evaluating elsewhere")
    assert api.ok(http.get("/me", headers=stays.headers), 200, "the sdk key of another environment")["id"] == stays.id
    assert api.ok(http.get("/me", headers=editor.headers), 200, "an editor key")["id"] == editor.id
    listed = [k["id"] for k in api.ok(http.get("/keys", headers=api.admin.headers), 200, "list keys")["items"]]
    assert gone.id not in listed and stays.id in listed


INVALID_KEY_BODIES = {
    "role-superadmin": ({"role": "superadmin"}, "role"),
    "role-upper-case": ({"role": "ADMIN"}, "role"),
    "role-trailing-space": ({"role": "admin "}, "role"),
    "role-sql": ({"role": "viewer' OR '1'='1"}, "role"),
    "admin-with-environment": ({"role": "admin", "environment": "production"}, "environment"),
    "editor-with-environment": ({"role": "editor", "environment": "production"}, "environment"),
    "viewer-with-environment": ({"role": "viewer", "environment": "production"}, "environment"),
    "sdk-without-environment": ({"role": "sdk"}, "environment"),
    "sdk-with-unknown-environment": ({"role": "sdk", "environment": "no-such-env"}, "environment"),
}


@pytest.mark.requirement("R4")
@pytest.mark.cwe(269)
@pytest.mark.parametrize("case", sorted(INVALID_KEY_BODIES))
def test_a_key_gets_no_role_or_scope_outside_the_table(api, http, case):
    body, field = INVALID_KEY_BODIES[case]
    name = api.unique("bad")
    r = http.post("/keys", json={"name": name, **body}, headers=api.admin.headers)
    assert not (why := api.validation_problem(r, [field], f"POST /keys {body}")), why
    names = [k.get("name") for k in api.ok(http.get("/keys", headers=api.admin.headers), 200, "list keys")["items"]]
    assert name not in names, "a refused key is not created"


@pytest.mark.requirement("R11", "R14", "R25", "R28")
@pytest.mark.cwe(943)
def test_prefix_and_flag_key_filters_match_literally(api, http):
    stem = api.unique("zq")  # zq-<hex>
    dotted, plain = api.flag(f"{stem}.a"), api.flag(f"{stem}xa")
    api.segment([{"attribute": "a", "operator": "in", "values": ["b"]}], key=f"{stem}.s")
    api.segment([{"attribute": "a", "operator": "in", "values": ["b"]}], key=f"{stem}xs")
    problems = []
    for prefix, flags, segments in ((f"{stem}.", [dotted["key"]], [f"{stem}.s"]), (f"{stem}_", [], []), (f"{stem}%", [], []),
                                    (stem[:-1] + "_", [], []), (f"{stem}.*", [], []), (f"{stem}X", [], [])):
        r = http.get("/flags", params={"prefix": prefix, "limit": 100}, headers=api.admin.headers)
        got = [f.get("key") for f in r.json().get("items", [])] if r.status_code == 200 else r.status_code
        if got != flags:
            problems.append(f"GET /flags?prefix={prefix!r}: expected {flags}, got {got}")
        r = http.get("/segments", params={"prefix": prefix}, headers=api.admin.headers)
        got = [s.get("key") for s in r.json().get("items", [])] if r.status_code == 200 else r.status_code
        if got != segments:
            problems.append(f"GET /segments?prefix={prefix!r}: expected {segments}, got {got}")
    for value in (f"{stem}_a", f"{stem}%", stem, f"{stem}.*", dotted["key"].upper()):
        r = http.get("/audit", params={"flag_key": value}, headers=api.admin.headers)
        if r.status_code != 200 or r.json().get("items") != []:
            problems.append(f"GET /audit?flag_key={value!r}: expected no entries, got {api.brief(r)}")
    assert not problems, "prefixes and flag_key match only as literal text:\n" + "\n".join(problems)
    assert [e.get("flag_key") for e in api.audit(plain["key"])] == [plain["key"]]


OPERATOR_CASES = {
    "starts_with-dot": ("starts_with", ["a.c"], "abcdef", "a.cdef"),
    "starts_with-star": ("starts_with", ["ab*"], "abbbb", "ab*b"),
    "starts_with-percent": ("starts_with", ["a%"], "abc", "a%c"),
    "ends_with-dot": ("ends_with", ["x.z"], "wxyz", "wx.z"),
    "ends_with-underscore": ("ends_with", ["_z"], "wyz", "w_z"),
    "in-dot-star": ("in", [".*"], "anything", ".*"),
    "in-case": ("in", ["Pro"], "pro", "Pro"),
    "not_in-case": ("not_in", ["pro"], "pro", "Pro"),
}


@pytest.mark.requirement("R19", "R28")
@pytest.mark.cwe(625)
@pytest.mark.parametrize("case", sorted(OPERATOR_CASES))
def test_string_operators_compare_exactly_never_as_patterns(api, http, case):
    operator, values, miss, hit = OPERATOR_CASES[case]
    segment = api.segment([{"attribute": "plan", "operator": operator, "values": values}])
    flag = api.flag()
    api.configure(flag["key"], "staging", enabled=True, rollout_percentage=0, rules=[{"segment_key": segment["key"], "value": True}])
    missed = api.evaluate("staging", flag["key"], "u-1", {"plan": miss})
    assert api.outcome(missed) == (False, "rollout", api.bucket(flag["key"], "u-1"), None), f"{operator} {values} must not hold for {miss!r}: {missed}"
    matched = api.evaluate("staging", flag["key"], "u-1", {"plan": hit})
    assert api.outcome(matched) == (True, "rule", None, segment["key"]), f"{operator} {values} holds for {hit!r}: {matched}"


@pytest.mark.requirement("R4", "R10", "R14", "R15", "R28")
@pytest.mark.cwe(116)
def test_hostile_text_in_names_and_condition_values_is_stored_verbatim(api, http):
    admin = api.admin.headers
    found = hostile_findings(lambda body: http.post("/keys", json=body, headers=admin), {"name": "k", "role": "viewer"}, fields=["name"],
                             verbatim=["name"], accepted=[201])
    found += hostile_findings(lambda body: http.post("/segments", json={**body, "key": api.unique("hs")}, headers=admin),
                              {"name": "n", "conditions": [{"attribute": "plan", "operator": "in", "values": ["v"]}]},
                              fields=["name", "conditions[0].values[0]"], verbatim=["name", "conditions[0].values[0]"], accepted=[201])
    found += hostile_findings(lambda body: http.post("/environments", json={**body, "key": api.unique("he")}, headers=admin), {"name": "n"},
                              verbatim=["name"], accepted=[201])
    assert not found, "text is stored and answered exactly as sent:\n" + "\n".join(found)
    names = {k.get("name") for k in api.ok(http.get("/keys", headers=admin), 200, "list keys")["items"]}
    assert set(HOSTILE_VALUES) <= names, f"every hostile key name is listed as sent: {json.dumps(sorted(map(str, names)))[:300]}"
