"""Security items (spec.md: Roles, Time entries, Timesheets, Reports, Limits and hostile input), each tagged with its CWE."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]


@pytest.mark.requirement("R15", "R16", "R17")
@pytest.mark.cwe(639)
def test_an_employee_cannot_reach_another_employees_time_by_id(api, http, work):
    owner, intruder = api.staff(), api.staff()
    e = api.entry(owner, work, description="private")
    for method, path, body in (("GET", f"/entries/{e['id']}", None), ("PATCH", f"/entries/{e['id']}", {"description": "mine", "duration_minutes": 1}),
                               ("DELETE", f"/entries/{e['id']}", None), ("GET", api.sheet_path(owner), None), ("POST", api.sheet_path(owner, action="submit"), None)):
        api.error(http.request(method, path, json=body, headers=intruder.headers), 404, "not_found", f"another employee: {method} {path}")
    got = api.get(f"/entries/{e['id']}", by=owner)
    assert (got["description"], got["duration_minutes"]) == ("private", 60), f"the entry changed: {got}"
    assert api.sheet(owner)["status"] == "open", "another employee submitted the week"


@pytest.mark.requirement("R19")
@pytest.mark.cwe(285)
def test_a_manager_decides_only_their_teams_weeks_never_their_own(api, http, work):
    manager, (member,) = api.team(1)
    stranger = api.staff()
    for user in (manager, stranger, member):
        api.entry(user, work)
        api.submitted(user)
    api.error(api.act(stranger, "approve", manager), 404, "not_found", "approving a week outside the team")
    api.error(api.act(stranger, "reject", manager, reason="no"), 404, "not_found", "rejecting a week outside the team")
    api.error(api.act(manager, "approve", manager), 403, "forbidden", "a manager approving their own week")
    api.error(api.act(member, "approve", member), 403, "forbidden", "an employee approving their own week")
    assert [api.sheet(u)["status"] for u in (manager, stranger, member)] == ["submitted"] * 3, "a refused decision changed a week"
    assert api.ok(api.act(member, "approve", manager), 200, "approving the team member")["status"] == "approved"


@pytest.mark.requirement("R10", "R16", "R18", "R25")
@pytest.mark.cwe(915)
def test_owners_statuses_and_totals_cannot_be_assigned(api, http, admin, work):
    user, victim = api.staff(), api.staff()
    r = api.post_entry(user, work, duration=30, user_id=victim.id, id="e_forged", created_at="2001-01-01T00:00:00Z", status="approved")
    assert r.status_code == 201, f"undefined fields are ignored: {api.brief(r)}"
    e = r.json()
    assert (e.get("user_id"), e.get("duration_minutes")) == (user.id, 30) and e.get("id") != "e_forged", f"the client assigned server-owned fields: {e}"
    assert api.entries(victim) == [] and api.sheet(victim)["entry_count"] == 0, "the entry was booked on another user"
    patched = api.ok(http.patch(f"/entries/{e['id']}", json={"user_id": victim.id, "description": "moved?"}, headers=user.headers), 200, "PATCH with user_id")
    assert patched["user_id"] == user.id, f"PATCH moved the entry to another user: {patched}"
    sheet = api.ok(http.post(api.sheet_path(user, action="submit"), json={"status": "approved", "decided_by": admin.id}, headers=user.headers), 200, "submit with a forged status")
    assert (sheet["status"], sheet["decided_by"]) == ("submitted", None), f"a submission set its own decision: {sheet}"
    project = api.ok(http.post("/projects", json={"customer_id": work.customer["id"], "name": "P", "used_minutes": 999, "active": False}, headers=admin.headers), 201, "project")
    assert (project["used_minutes"], project["active"]) == (0, True), f"server-owned project fields were assigned: {project}"


@pytest.mark.requirement("R14", "R22", "R26")
@pytest.mark.cwe(639)
def test_hostile_user_filters_never_widen_to_other_users(api, http, work):
    user, other = api.staff(), api.staff()
    api.entry(other, work, description="not yours")
    mine = api.entry(user, work, description="yours")
    for value in (other.id, "*", "%", "' OR '1'='1", other.id + "' OR '1'='1", '{"$ne": null}', other.id.upper(), f" {other.id}"):
        r = http.get("/entries", params={"user_id": value}, headers=user.headers)
        assert r.status_code == 403, f"GET /entries?user_id={value!r}: expected 403, got {api.brief(r)}"
        r = http.get("/reports/summary", params={"from": api.day(0), "to": api.day(6), "group_by": "user", "user_id": value}, headers=user.headers)
        assert r.status_code == 403, f"a report with user_id={value!r}: expected 403, got {api.brief(r)}"
    for params in ({"project_id": "*"}, {"project_id": "' OR '1'='1"}, {"activity_id": "%"}):
        r = http.get("/entries", params=params, headers=user.headers)
        assert r.status_code == 200 and r.json().get("items") == [], f"GET /entries with {params} matches nothing: {api.brief(r)}"
    assert [x["id"] for x in api.entries(user)] == [mine["id"]], "the caller's own entries only"


@pytest.mark.requirement("R14", "R26")
@pytest.mark.cwe(89)
def test_description_search_is_literal_and_text_is_stored_verbatim(api, http, checks, work):
    user = api.staff()
    made = [api.entry(user, work, api.day(i % 7), duration=1, description=f"{i} {text}") for i, text in enumerate(checks.injection_texts)]
    plain = api.entry(user, work, api.day(6), duration=1, description="plain meeting")
    for e in made:
        assert api.get(f"/entries/{e['id']}", by=user)["description"] == e["description"], f"stored verbatim: {e['description']!r}"
    everything = made + [plain]
    for q in ("%", "_", "' OR '1'='1", "*", '{"$gt": ""}', "%_%", "$where", ".*", "DROP TABLE"):
        got = {x["id"] for x in api.entries(user, q=q)}
        want = {e["id"] for e in everything if q.casefold() in e["description"].casefold()}
        assert got == want, f"q={q!r} is a literal substring: got {len(got)} entries, want {len(want)}"
    other = api.staff()
    api.entry(other, work, description="' OR '1'='1")
    assert all(x["user_id"] == user.id for x in api.entries(user, q="' OR '1'='1")), "a search reached another user's entries"
    r = http.get("/entries", params={"q": "'\""}, headers=user.headers)
    assert r.status_code == 200 and r.json().get("items") == [], f"quotes are literal text that nothing contains: {api.brief(r)}"


@pytest.mark.requirement("R26", "R23", "R14")
@pytest.mark.cwe(400)
def test_oversized_nested_bodies_and_unbounded_queries_are_refused(api, http, service, checks, work):
    user = api.staff()
    body = {"project_id": work.project["id"], "activity_id": work.activity["id"], "date": api.day(), "duration_minutes": 5}
    problems = checks.hostile_body_problems(service, http.timeout_s, "POST", "/entries", user.headers, body, "description")
    e = api.entry(user, work, api.day(1), description="kept")
    problems += checks.hostile_body_problems(service, http.timeout_s, "PATCH", f"/entries/{e['id']}", user.headers, {"duration_minutes": 7}, "description")
    assert not problems, "limits on request bodies:\n" + "\n".join(problems)
    assert [x["id"] for x in api.entries(user)] == [e["id"]], "a refused create must create nothing"
    got = api.get(f"/entries/{e['id']}", by=user)
    assert (got["description"], got["duration_minutes"]) == ("kept", 60), f"a refused PATCH must change nothing: {got}"
    for params, field in (({"from": "2000-01-01", "to": "2099-12-31", "group_by": "user"}, "to"),):
        problem = api.validation_problem(http.get("/reports/summary", params=params, headers=user.headers), [field], "a report over a century")
        assert problem is None, problem
    problem = api.validation_problem(http.get("/entries", params={"limit": "1000000"}, headers=user.headers), ["limit"], "limit=1000000")
    assert problem is None, problem


@pytest.mark.requirement("R5", "R2", "R3")
@pytest.mark.cwe(200)
def test_no_answer_carries_a_password_hash_or_salt(api, http, admin, checks):
    manager = api.staff("manager")
    password = "Very-Secret-pw-42"
    username = api.unique("sec")
    answers = [http.post("/users", json={"username": username, "password": password, "role": "employee", "manager_id": manager.id}, headers=admin.headers)]
    answers.append(http.post("/auth/token", json={"username": username, "password": password}))
    token = answers[-1].json().get("token", "")
    answers += [http.get("/me", headers={"Authorization": f"Bearer {token}"}), http.get("/users", headers=admin.headers), http.get("/users", headers=manager.headers)]
    answers.append(http.patch(f"/users/{answers[0].json().get('id')}", json={"active": True}, headers=admin.headers))
    problems = []
    for r in answers:
        if r.status_code >= 300:
            problems.append(f"{api.brief(r)}: expected success")
        leaks = checks.password_leaks(r.text, password)
        if leaks:
            problems.append(f"{r.request.method} {r.request.path_url} reveals {leaks}")
        keys = set()
        stack = [r.json()] if r.content else []
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                keys |= {k.lower() for k in node}
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
        bad = sorted(keys & {"password", "password_hash", "hashed_password", "passwordhash", "hash", "salt", "password_salt"})
        if bad:
            problems.append(f"{r.request.method} {r.request.path_url} has secret fields {bad}")
    assert not problems, "secrets in answers:\n" + "\n".join(problems)


@pytest.mark.requirement("R2", "R4")
@pytest.mark.cwe(287)
def test_tampered_and_inactive_tokens_get_401(api, http, checks, work):
    user = api.staff()
    problems = checks.token_problems(http, "POST", "/entries", user.token, {"project_id": work.project["id"], "activity_id": work.activity["id"], "date": api.day(), "duration_minutes": 5})
    api.patch_user(user, active=False)
    for method, path in (("GET", "/me"), ("GET", "/entries"), ("GET", api.sheet_path(user))):
        r = http.request(method, path, headers=user.headers)
        if r.status_code != 401:
            problems.append(f"{method} {path} with an inactive user's token: expected 401, got {api.brief(r)}")
    assert not problems, "token misuse was not refused:\n" + "\n".join(problems)
    api.patch_user(user, active=True)
    fresh = api.login(user.username, user.password)["token"]
    r = http.get("/entries", headers={"Authorization": f"Bearer {fresh}"})
    assert r.status_code == 200 and r.json().get("items") == [], f"a refused token recorded time: {api.brief(r)}"
    assert api.get("/projects/" + work.project["id"])["used_minutes"] == 0, "a refused token recorded time on the project"


@pytest.mark.requirement("R26", "R15", "R17")
@pytest.mark.cwe(22)
def test_hostile_ids_and_weeks_in_paths_get_404(api, http, service, checks, work):
    user = api.staff()
    api.entry(user, work)
    problems = checks.traversal_problems(service, http.timeout_s, "/entries/", user.headers)
    problems += checks.traversal_problems(service, http.timeout_s, "/timesheets/", user.headers, "/2026-W10")
    problems += checks.traversal_problems(service, http.timeout_s, f"/timesheets/{user.id}/", user.headers, extra_ids=("2026-W10'--", "2026-W10%20OR%201=1"))
    problems += checks.traversal_problems(service, http.timeout_s, "/projects/", user.headers)
    assert not problems, "ids that climb out of their path must name nothing:\n" + "\n".join(problems)


@pytest.mark.requirement("R6", "R19")
@pytest.mark.cwe(863)
def test_employees_cannot_grant_themselves_powers(api, http, work):
    manager, (member,) = api.team(1)
    for method, path, body in (("PATCH", f"/users/{member.id}", {"role": "manager"}), ("PATCH", f"/users/{member.id}", {"manager_id": None}),
                               ("POST", "/users", {"username": api.unique("sneak"), "password": "abcdefgh1", "role": "admin"}),
                               ("PATCH", f"/projects/{work.project['id']}", {"budget_minutes": 10_000_000})):
        api.error(http.request(method, path, json=body, headers=member.headers), 403, "forbidden", f"an employee: {method} {path}")
    me = api.get("/me", by=member)
    assert (me["role"], me["manager_id"]) == ("employee", manager.id), f"the employee changed themself: {me}"
