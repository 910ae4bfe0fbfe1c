"""Security items (spec.md: Accounts, Projects and roles, Webhooks, Limits and hostile input), each with its CWE."""

from __future__ import annotations

import base64

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]


@pytest.mark.requirement("R15")
@pytest.mark.cwe(918)
def test_hooks_deliver_only_to_the_webhook_receiver(api, http, receiver, service):
    owner, project = api.owned()
    base = receiver.service_base
    path = f"/projects/{project['id']}/hooks"
    urls = [
        "http://169.254.169.254/latest/meta-data/",
        "http://localhost:8000/projects",
        "http://127.0.0.1:8000/health",
        "http://service:8000/health",
        "file:///etc/passwd",
        base,
        base + "@evil.example/x",
        base + ".evil.example/x",
        base + "0/x",
        "x" + base + "/x",
        " " + base + "/x",
        base.replace("http://", "https://", 1) + "/x",
    ]
    problems = [api.validation_problem(http.post(path, json={"url": url, "secret": "long enough"}, headers=owner.headers), ["url"], f"hook url {url!r}") for url in urls]
    api.assert_no_problems(problems, "a hook url must start with WEBHOOKS_URL followed by /")
    assert api.ok(http.get(path, headers=owner.headers), 200, "list hooks")["items"] == [], "no hook was created"
    hook, good, _ = api.hook(owner, project)
    r = http.patch(f"{path}/{hook['id']}", json={"url": "http://169.254.169.254/latest/meta-data/"}, headers=owner.headers)
    api.assert_no_problems([api.validation_problem(r, ["url"], "PATCH to a metadata address")], "PATCH url")
    api.issue(owner, project)
    assert len(receiver.got(good)) == 1, "the hook still delivers to its receiver URL"


@pytest.mark.requirement("R5", "R13", "R14", "R15")
@pytest.mark.cwe(639)
def test_another_projects_objects_cannot_be_reached_through_my_project(api, http, receiver):
    victim, mallory = api.user("victim"), api.user("mallory")
    theirs, mine = api.project(victim), api.project(mallory)
    label, ms = api.label(victim, theirs, "secret-label"), api.milestone(victim, theirs, "secret plan")
    hook, _, _ = api.hook(victim, theirs)
    api.issue(victim, theirs, title="private issue")
    base = f"/projects/{mine['id']}"
    for method, path, body in (
        ("PATCH", f"{base}/labels/{label['id']}", {"name": "pwned"}), ("DELETE", f"{base}/labels/{label['id']}", None),
        ("GET", f"{base}/milestones/{ms['id']}", None), ("PATCH", f"{base}/milestones/{ms['id']}", {"title": "pwned"}),
        ("DELETE", f"{base}/milestones/{ms['id']}", None), ("PATCH", f"{base}/hooks/{hook['id']}", {"active": False}),
        ("GET", f"{base}/hooks/{hook['id']}/deliveries", None), ("DELETE", f"{base}/hooks/{hook['id']}", None),
        ("PATCH", f"{base}/members/{victim.id}", {"role": "reporter"}),
    ):
        api.error(http.request(method, path, json=body, headers=mallory.headers), 404, "not_found", f"mallory: {method} {path}")
    assert api.issues(mallory, mine, state="all")["items"] == [], "mallory's project has no issues"
    api.error(http.get(f"/projects/{theirs['id']}/issues/1", headers=mallory.headers), 404, "not_found", "mallory reading the victim's issue")
    assert api.label(victim, theirs, "other")["name"] == "other"
    names = [lb["name"] for lb in api.ok(http.get(f"/projects/{theirs['id']}/labels", headers=victim.headers), 200, "labels")["items"]]
    assert names == ["secret-label", "other"], f"the victim's labels are untouched: {names}"
    assert api.get_milestone(victim, theirs, ms)["title"] == "secret plan", "the victim's milestone is untouched"


@pytest.mark.requirement("R7", "R6")
@pytest.mark.cwe(285)
def test_members_cannot_raise_their_own_role(api, http):
    project, owner, maintainer, reporter = api.team()
    base = f"/projects/{project['id']}/members"
    for who, caller in (("reporter", reporter), ("maintainer", maintainer)):
        api.error(http.patch(f"{base}/{caller.id}", json={"role": "maintainer"}, headers=caller.headers), 403, "forbidden", f"the {who} promoting themself")
        api.error(http.delete(f"{base}/{owner.id}", headers=caller.headers), 403, "forbidden", f"the {who} removing the owner")
    r = http.post("/projects/" + project["id"] + "/members", json={"user_id": reporter.id, "role": "owner"}, headers=reporter.headers)
    assert r.status_code == 403, f"a reporter re-adding themself as owner: {api.brief(r)}"
    roles = {m["user_id"]: m["role"] for m in api.ok(http.get(base, headers=owner.headers), 200, "members")["items"]}
    assert roles == {owner.id: "owner", maintainer.id: "maintainer", reporter.id: "reporter"}, f"no role changed: {roles}"


@pytest.mark.requirement("R5", "R7")
@pytest.mark.cwe(862)
def test_a_stranger_changes_nothing_in_a_project(api, http, receiver):
    owner, stranger = api.user("owner"), api.user("stranger")
    project = api.project(owner)
    _, path, _ = api.hook(owner, project)
    issue = api.issue(owner, project, title="keep me")
    base = f"/projects/{project['id']}"
    for method, url, body in (
        ("POST", f"{base}/issues", {"title": "spam"}), ("PATCH", f"{base}/issues/{issue['number']}", {"state": "closed"}),
        ("POST", f"{base}/issues/{issue['number']}/comments", {"body": "spam"}), ("POST", f"{base}/members", {"user_id": stranger.id, "role": "maintainer"}),
        ("POST", f"{base}/labels", {"name": "spam", "color": "#000000"}), ("POST", f"{base}/hooks", {"url": receiver.url("/x"), "secret": "long enough"}),
    ):
        api.error(http.request(method, url, json=body, headers=stranger.headers), 404, "not_found", f"a stranger: {method} {url}")
    now = api.get_issue(owner, project, issue["number"])
    assert (now["state"], now["comments"], api.issues(owner, project, state="all")["total"]) == ("open", 0, 1), f"nothing changed: {now}"
    assert len(receiver.got(path)) == 1, "nothing was delivered for the refused requests"


@pytest.mark.requirement("R4", "R15")
@pytest.mark.cwe(200)
def test_passwords_and_hook_secrets_are_never_answered_or_delivered(api, http, receiver):
    owner = api.user()
    member = api.user("member")
    project = api.project(owner, reporters=(member,))
    hook, path, secret = api.hook(owner, project, secret="hook-secret-" + owner.password[-8:])
    issue = api.issue(owner, project, assignees=[owner.id])
    api.comment(member, project, issue["number"])
    answers = [
        http.post("/auth/token", json={"username": owner.username, "password": owner.password}), http.get("/me", headers=owner.headers),
        http.get(f"/projects/{project['id']}/members", headers=member.headers), http.get(f"/projects/{project['id']}/hooks", headers=owner.headers),
        http.get(f"/projects/{project['id']}/hooks/{hook['id']}/deliveries", headers=owner.headers),
        http.get(f"/projects/{project['id']}/issues/{issue['number']}", headers=owner.headers),
    ]
    for response in answers:
        assert response.status_code == 200, api.brief(response)
        for leaked, what in ((owner.password, "a password"), (member.password, "a password"), (secret, "the hook secret")):
            assert leaked not in response.text, f"{what} in an answer: {api.brief(response)}"
    for delivery in receiver.got(path):
        body = base64.b64decode(delivery["body_base64"]).decode("utf-8", "replace")
        assert secret not in body and owner.password not in body and member.password not in body, f"a secret in a delivery body: {body[:200]}"


@pytest.mark.requirement("R20")
@pytest.mark.cwe(915)
def test_clients_cannot_set_ids_authors_roles_or_counts(api, http):
    owner, other = api.user("owner"), api.user("other")
    r = http.post("/users", json={"username": api.unique("mass"), "password": "long enough", "is_admin": True, "id": "usr_admin"}, headers=api.admin.headers)
    created = api.ok(r, 201, "undefined fields are ignored")
    assert created["is_admin"] is False and created["id"] != "usr_admin", f"is_admin and id cannot be set: {created}"
    project = api.ok(http.post("/projects", json={"name": "P", "owner_id": other.id, "id": "prj_x"}, headers=owner.headers), 201, "create a project")
    assert project["owner_id"] == owner.id and project["id"] != "prj_x", f"owner_id and id cannot be set: {project}"
    issue = api.issue(owner, project, number=42, author_id=other.id, state="closed", comments=9, closed_at="2020-01-01T00:00:00Z")
    assert (issue["number"], issue["author_id"], issue["state"], issue["comments"], issue["closed_at"]) == (1, owner.id, "open", 0, None), f"fields the client cannot set: {issue}"
    patched = api.ok(http.patch(f"/projects/{project['id']}/issues/1", json={"number": 7, "author_id": other.id, "comments": 5}, headers=owner.headers), 200, "PATCH undefined fields")
    assert (patched["number"], patched["author_id"], patched["comments"]) == (1, owner.id, 0), f"a PATCH cannot set them either: {patched}"
    ms = api.milestone(owner, project, open_issues=10, progress=90)
    assert (ms["open_issues"], ms["progress"]) == (0, 0), f"milestone counts cannot be set: {ms}"


@pytest.mark.requirement("R11", "R21")
@pytest.mark.cwe(943)
@pytest.mark.parametrize("field", ["label", "milestone", "assignee"])
def test_filter_values_match_only_literally(api, http, checks, field):
    owner, project = api.owned()
    label, ms = api.label(owner, project), api.milestone(owner, project)
    api.issue(owner, project, labels=[label["id"]], milestone_id=ms["id"], assignees=[owner.id])
    real = {"label": label["id"], "milestone": ms["id"], "assignee": owner.id}[field]
    values = [*checks.injection_texts, "' OR 1=1 --", f"{real}' OR '1'='1", f"{real}%", real[:-1], real.upper(), f"[{real}]", '{"$ne": ""}', ".*"]
    for value in values:
        if value in (real, ""):
            continue  # an empty value: the spec does not say whether it filters at all
        page = api.issues(owner, project, state="all", **{field: value})
        assert (page["items"], page["total"]) == ([], 0), f"{field}={value!r} must match nothing, got {[i['number'] for i in page['items']]}"
    assert api.numbers(owner, project, state="all", **{field: real}) == [1], "the literal id still matches"


@pytest.mark.requirement("R21")
@pytest.mark.cwe(400)
def test_oversized_and_deeply_nested_bodies_are_refused(api, http, service, checks):
    owner, project = api.owned()
    issue = api.issue(owner, project, title="stay")
    base = f"/projects/{project['id']}"
    problems = checks.hostile_body_problems(service, http.timeout_s, "POST", f"{base}/issues", owner.headers, {"title": "t"}, "body")
    problems += checks.hostile_body_problems(service, http.timeout_s, "PATCH", f"{base}/issues/{issue['number']}", owner.headers, {"title": "t2"}, "title")
    problems += checks.hostile_body_problems(service, http.timeout_s, "POST", f"{base}/issues/{issue['number']}/comments", owner.headers, {"body": "c"}, "body")
    assert not problems, "limits on request bodies:\n" + "\n".join(problems)
    now = api.get_issue(owner, project, issue["number"])
    assert (now["title"], now["comments"], api.issues(owner, project, state="all")["total"]) == ("stay", 0, 1), f"refused requests change nothing: {now}"


@pytest.mark.requirement("R2")
@pytest.mark.cwe(287)
def test_tampered_tokens_get_401(api, http, checks):
    owner, project = api.owned()
    problems = checks.token_problems(http, "POST", f"/projects/{project['id']}/issues", owner.token, {"title": "forged"})
    problems += checks.token_problems(http, "POST", "/users", api.admin.token, {"username": api.unique("forged"), "password": "long enough"})
    assert not problems, "token misuse was not refused:\n" + "\n".join(problems)
    assert api.issues(owner, project, state="all")["total"] == 0, "a request with a bad token created an issue"


@pytest.mark.requirement("R21")
@pytest.mark.cwe(22)
def test_hostile_ids_in_paths_get_404(api, http, service, checks):
    owner, project = api.owned()
    api.issue(owner, project)
    base = f"/projects/{project['id']}"
    problems = checks.traversal_problems(service, http.timeout_s, "/projects/", owner.headers)
    problems += checks.traversal_problems(service, http.timeout_s, f"{base}/issues/", owner.headers, extra_ids=("0", "-1", "1%20OR%201%3D1", "01x"))
    problems += checks.traversal_problems(service, http.timeout_s, f"{base}/labels/", owner.headers, method="PATCH", body={"name": "x"})
    problems += checks.traversal_problems(service, http.timeout_s, f"{base}/milestones/", owner.headers)
    assert not problems, "ids that climb out of their path must name nothing:\n" + "\n".join(problems)


@pytest.mark.requirement("R8", "R13", "R21")
@pytest.mark.cwe(116)
def test_hostile_text_is_stored_verbatim(api, http, checks, receiver):
    owner, project, _, path = api.hooked()
    for text in checks.injection_texts:
        issue = api.issue(owner, project, title=text, body=text + "\n{{7*7}} ${7*7}")
        assert (issue["title"], issue["body"]) == (text, text + "\n{{7*7}} ${7*7}"), f"stored verbatim: {issue['title']!r}"
        assert api.get_issue(owner, project, issue["number"])["title"] == text
    label = api.label(owner, project, name="' OR '1'='1", description="<script>alert(1)</script>")
    assert (label["name"], label["description"]) == ("' OR '1'='1", "<script>alert(1)</script>"), f"label text verbatim: {label}"
    delivered = [d["json"]["issue"]["title"] for d in receiver.got(path)]
    assert delivered == list(checks.injection_texts), f"deliveries carry the text verbatim: {delivered}"
