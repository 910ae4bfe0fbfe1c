"""Rules checked from a second side (tier r1): conventions, precedence, counts that agree with lists."""

from __future__ import annotations

import pytest
import requests

pytestmark = [pytest.mark.tier("r1")]


@pytest.mark.requirement("R19")
@pytest.mark.category("api_surface")
def test_json_answers_are_labelled_and_204_answers_are_empty(api, http, checks):
    owner, project = api.owned()
    label = api.label(owner, project)
    base = f"/projects/{project['id']}"
    problems = checks.answer_problems(http.get("/health"), 200, "GET /health")
    problems += checks.answer_problems(http.get("/me"), 401, "GET /me without a token")
    problems += checks.answer_problems(http.post(f"{base}/issues", json={"title": "t"}, headers=owner.headers), 201, "create an issue")
    problems += checks.answer_problems(http.post(f"{base}/issues", json={}, headers=owner.headers), 422, "an invalid issue")
    problems += checks.answer_problems(http.delete(f"{base}/labels/{label['id']}", headers=owner.headers), 204, "DELETE a label")
    problems += checks.answer_problems(http.get(f"{base}/issues/77", headers=owner.headers), 404, "an unknown issue")
    assert not problems, "answer conventions:\n" + "\n".join(problems)


@pytest.mark.requirement("R19")
@pytest.mark.category("api_surface")
def test_a_method_a_path_does_not_have_gets_405(api, http, service, checks):
    owner, project = api.owned()
    problems = checks.wrong_method_problems(service, http.timeout_s, "/health", owner.headers)
    problems += checks.wrong_method_problems(service, http.timeout_s, f"/projects/{project['id']}/issues", owner.headers, ("PUT", "DELETE"))
    assert not problems, "wrong methods:\n" + "\n".join(problems)


@pytest.mark.requirement("R19")
@pytest.mark.category("authorization")
def test_401_comes_before_404(api, http):
    for method, path in (("GET", "/projects/no-such-project"), ("POST", "/projects/no-such-project/issues"), ("GET", "/projects/x/hooks/y/deliveries")):
        r = http.request(method, path, json={"title": "t"} if method == "POST" else None)
        assert r.status_code == 401, f"{method} {path} without a token: {api.brief(r)}"


@pytest.mark.requirement("R19")
@pytest.mark.category("validation")
def test_422_comes_before_409(api, http, receiver):
    owner, ann = api.user("owner"), api.user("ann")
    project = api.project(owner, reporters=(ann,))
    api.label(owner, project, "dup")
    problems = [
        api.validation_problem(http.post(f"/projects/{project['id']}/members", json={"user_id": ann.id, "role": "boss"}, headers=owner.headers), ["role"], "an existing member with an invalid role"),
        api.validation_problem(http.post(f"/projects/{project['id']}/labels", json={"name": "DUP", "color": "blue"}, headers=owner.headers), ["color"], "a taken name with an invalid colour"),
        api.validation_problem(http.post("/users", json={"username": ann.username, "password": "short"}, headers=api.admin.headers), ["password"], "a taken username with a short password"),
        api.validation_problem(http.patch(f"/projects/{project['id']}/members/{owner.id}", json={"role": "boss"}, headers=owner.headers), ["role"], "the owner with an invalid role"),
    ]
    for _ in range(5):
        api.hook(owner, project)
    problems.append(api.validation_problem(http.post(f"/projects/{project['id']}/hooks", json={"url": "http://169.254.169.254/", "secret": "long enough"}, headers=owner.headers), ["url"], "a sixth hook with a bad url"))
    api.assert_no_problems(problems, "validation before conflicts")


@pytest.mark.requirement("R20")
@pytest.mark.category("validation")
@pytest.mark.parametrize("raw", ["not json", "[]", '"text"', "null", "42", ""], ids=["garbage", "array", "string", "null", "number", "empty"])
def test_a_body_that_is_not_a_json_object_gets_422(api, http, raw):
    owner, project = api.owned()
    url = f"{http.base_url}/projects/{project['id']}/issues"
    r = requests.post(url, data=raw.encode(), headers={**owner.headers, "Content-Type": "application/json"}, timeout=http.timeout_s)
    assert r.status_code == 422 and r.json().get("error") == "validation_error", f"POST issues with {raw!r}: {r.status_code} {r.text[:200]}"
    assert api.issues(owner, project, state="all")["total"] == 0, "nothing was created"


@pytest.mark.requirement("R20")
@pytest.mark.category("validation")
def test_defined_fields_of_the_wrong_type_get_422(api, http):
    owner, project = api.owned()
    issue = api.issue(owner, project)
    ms = api.milestone(owner, project)
    base = f"/projects/{project['id']}"
    problems = [
        api.validation_problem(http.patch(f"{base}/issues/{issue['number']}", json={"title": ["t"], "state": True}, headers=owner.headers), ["title", "state"], "issue PATCH types"),
        api.validation_problem(http.post(f"{base}/labels", json={"name": 1, "color": 1}, headers=owner.headers), ["name", "color"], "label types"),
        api.validation_problem(http.patch(f"{base}/milestones/{ms['id']}", json={"title": None, "description": None}, headers=owner.headers), ["title", "description"], "milestone nulls"),
        api.validation_problem(http.post("/projects", json={"name": {"n": 1}}, headers=owner.headers), ["name"], "project name object"),
        api.validation_problem(http.post(f"{base}/issues", json={"title": "t", "assignees": [5]}, headers=owner.headers), ["assignees"], "a numeric assignee"),
    ]
    api.assert_no_problems(problems, "wrong JSON types")


@pytest.mark.requirement("R10", "R13", "R14", "R15", "R20")
@pytest.mark.category("state")
def test_an_empty_patch_changes_nothing(api, http):
    owner = api.user("owner")
    project = api.project(owner)
    label, ms = api.label(owner, project, "keep", "#ABCDEF", description="d"), api.milestone(owner, project, "m", due_on="2031-01-31")
    hook, _, _ = api.hook(owner, project, events=["issues"])
    base = f"/projects/{project['id']}"
    got_label = api.ok(http.patch(f"{base}/labels/{label['id']}", json={}, headers=owner.headers), 200, "empty label PATCH")
    got_ms = api.ok(http.patch(f"{base}/milestones/{ms['id']}", json={}, headers=owner.headers), 200, "empty milestone PATCH")
    got_hook = api.ok(http.patch(f"{base}/hooks/{hook['id']}", json={}, headers=owner.headers), 200, "empty hook PATCH")
    assert (got_label["name"], got_label["color"], got_label["description"]) == ("keep", "#abcdef", "d"), f"label: {got_label}"
    assert (got_ms["title"], got_ms["due_on"], got_ms["state"]) == ("m", "2031-01-31", "open"), f"milestone: {got_ms}"
    assert (got_hook["events"], got_hook["active"], got_hook["url"]) == (["issues"], True, hook["url"]), f"hook: {got_hook}"


@pytest.mark.requirement("R14", "R11")
@pytest.mark.category("state")
def test_milestone_counts_agree_with_the_filtered_list(api, http):
    owner, project = api.owned()
    ms = api.milestone(owner, project)
    for i in range(5):
        issue = api.issue(owner, project, milestone_id=ms["id"])
        if i % 2:
            api.patch_issue(owner, project, issue["number"], state="closed")
    got = api.get_milestone(owner, project, ms)
    listed_open = api.issues(owner, project, milestone=ms["id"])["total"]
    listed_closed = api.issues(owner, project, milestone=ms["id"], state="closed")["total"]
    assert (got["open_issues"], got["closed_issues"], got["progress"]) == (listed_open, listed_closed, 40) == (3, 2, 40), f"counts {got} vs lists {listed_open}/{listed_closed}"


@pytest.mark.requirement("R6", "R9")
@pytest.mark.category("state")
def test_a_removed_member_cannot_be_assigned_until_added_again(api, http):
    owner, ann = api.user("owner"), api.user("ann")
    project = api.project(owner, reporters=(ann,))
    issue = api.issue(owner, project, assignees=[ann.id])
    assert http.delete(f"/projects/{project['id']}/members/{ann.id}", headers=owner.headers).status_code == 204
    assert api.issues(owner, project, assignee=ann.id)["items"] == [], "ann is assigned to nothing"
    problem = api.validation_problem(http.patch(f"/projects/{project['id']}/issues/{issue['number']}", json={"assignees": [ann.id]}, headers=owner.headers), ["assignees"], "assigning a former member")
    api.assert_no_problems([problem], "assignees are members")
    api.add_member(owner, project, ann, "maintainer")
    assert api.patch_issue(owner, project, issue["number"], assignees=[ann.id])["assignees"] == [ann.id], "a member again can be assigned"


@pytest.mark.requirement("R8")
@pytest.mark.category("state")
def test_concurrent_issues_get_distinct_numbers(api, http, checks):
    owner, project = api.owned()
    url = f"{http.base_url}/projects/{project['id']}/issues"
    answers = checks.concurrently(lambda i: requests.post(url, json={"title": f"race {i}"}, headers=owner.headers, timeout=30), list(range(8)))
    assert [a.status_code for a in answers] == [201] * 8, f"every issue is created: {[a.status_code for a in answers]}"
    assert sorted(a.json()["number"] for a in answers) == list(range(1, 9)), f"numbers 1..8, each once: {sorted(a.json()['number'] for a in answers)}"
    assert api.issue(owner, project)["number"] == 9, "the next issue is 9"


@pytest.mark.requirement("R16", "R13")
@pytest.mark.category("side_effects")
def test_deliveries_carry_current_label_names_and_milestone(api, http, receiver):
    owner, project, _, path = api.hooked()
    label, ms = api.label(owner, project, "bug", "#FF0000"), api.milestone(owner, project)
    issue = api.issue(owner, project, labels=[label["id"]])
    api.ok(http.patch(f"/projects/{project['id']}/labels/{label['id']}", json={"name": "defect"}, headers=owner.headers), 200, "rename")
    api.patch_issue(owner, project, issue["number"], milestone_id=ms["id"])
    first, second = (g["json"]["issue"] for g in receiver.got(path))
    assert [(lb["name"], lb["color"]) for lb in first["labels"]] == [("bug", "#ff0000")] and first["milestone_id"] is None, f"opened: {first}"
    assert [lb["name"] for lb in second["labels"]] == ["defect"] and second["milestone_id"] == ms["id"], f"edited: {second}"
