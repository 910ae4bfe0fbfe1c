"""What each role may do (spec.md: Projects and roles, the table; Errors: precedence)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("authorization")]


@pytest.mark.requirement("R7")
def test_a_reporter_files_and_comments_but_sets_no_links(api, http):
    project, owner, _, reporter = api.team()
    label = api.label(owner, project)
    ms = api.milestone(owner, project)
    path = f"/projects/{project['id']}/issues"
    issue = api.issue(reporter, project, body="steps")
    api.comment(reporter, project, issue["number"])
    for extra in ({"labels": [label["id"]]}, {"labels": []}, {"milestone_id": ms["id"]}, {"milestone_id": None}, {"assignees": [reporter.id]}):
        api.error(http.post(path, json={"title": "t", **extra}, headers=reporter.headers), 403, "forbidden", f"a reporter creating an issue with {extra}")
    assert api.issues(owner, project, state="all")["total"] == 1, "no refused issue was created"


@pytest.mark.requirement("R7")
def test_a_reporter_edits_only_the_text_of_their_own_issues(api, http):
    project, owner, _, reporter = api.team()
    mine = api.issue(reporter, project, title="mine")
    theirs = api.issue(owner, project, title="theirs")
    edited = api.patch_issue(reporter, project, mine["number"], title="mine, edited", body="more")
    assert (edited["title"], edited["body"]) == ("mine, edited", "more"), f"a reporter edits their own issue's text: {edited}"
    base = f"/projects/{project['id']}/issues"
    api.error(http.patch(f"{base}/{theirs['number']}", json={"title": "hijacked"}, headers=reporter.headers), 403, "forbidden", "a reporter editing someone else's issue")
    for change in ({"state": "closed"}, {"assignees": [reporter.id]}, {"labels": []}, {"milestone_id": None}):
        api.error(http.patch(f"{base}/{mine['number']}", json=change, headers=reporter.headers), 403, "forbidden", f"a reporter changing {change} on their own issue")
    assert api.get_issue(owner, project, theirs["number"])["title"] == "theirs", "the other issue is unchanged"
    assert api.get_issue(owner, project, mine["number"])["state"] == "open", "the reporter's issue stays open"


@pytest.mark.requirement("R7")
def test_a_reporter_manages_no_labels_or_milestones(api, http):
    project, owner, _, reporter = api.team()
    label, ms = api.label(owner, project), api.milestone(owner, project)
    base = f"/projects/{project['id']}"
    calls = [
        ("POST", f"{base}/labels", {"name": "mine", "color": "#000000"}), ("PATCH", f"{base}/labels/{label['id']}", {"name": "x"}),
        ("DELETE", f"{base}/labels/{label['id']}", None), ("POST", f"{base}/milestones", {"title": "mine"}),
        ("PATCH", f"{base}/milestones/{ms['id']}", {"state": "closed"}), ("DELETE", f"{base}/milestones/{ms['id']}", None),
    ]
    for method, path, body in calls:
        api.error(http.request(method, path, json=body, headers=reporter.headers), 403, "forbidden", f"a reporter: {method} {path}")
    listed = api.ok(http.get(f"{base}/labels", headers=reporter.headers), 200, "a reporter reads labels")["items"]
    assert [(lb["id"], lb["name"]) for lb in listed] == [(label["id"], label["name"])], f"the label is unchanged and nothing was added: {listed}"
    assert api.get_milestone(reporter, project, ms)["state"] == "open", "the milestone is unchanged"


@pytest.mark.requirement("R7")
def test_a_maintainer_runs_issues_but_not_members_or_hooks(api, http, receiver):
    project, owner, maintainer, reporter = api.team()
    label = api.label(maintainer, project)
    ms = api.milestone(maintainer, project)
    theirs = api.issue(reporter, project)
    patched = api.patch_issue(maintainer, project, theirs["number"], title="triaged", state="closed", labels=[label["id"]], milestone_id=ms["id"], assignees=[reporter.id])
    assert (patched["title"], patched["state"], patched["assignees"]) == ("triaged", "closed", [reporter.id]), f"a maintainer changes anything on an issue: {patched}"
    other = api.user("other")
    base = f"/projects/{project['id']}"
    hook, _, _ = api.hook(owner, project)
    calls = [
        ("POST", f"{base}/members", {"user_id": other.id, "role": "reporter"}), ("PATCH", f"{base}/members/{reporter.id}", {"role": "maintainer"}),
        ("DELETE", f"{base}/members/{reporter.id}", None), ("GET", f"{base}/hooks", None),
        ("POST", f"{base}/hooks", {"url": receiver.url(receiver.fresh_path()), "secret": "maintainer-secret"}),
        ("PATCH", f"{base}/hooks/{hook['id']}", {"active": False}), ("DELETE", f"{base}/hooks/{hook['id']}", None),
        ("GET", f"{base}/hooks/{hook['id']}/deliveries", None),
    ]
    for method, path, body in calls:
        api.error(http.request(method, path, json=body, headers=maintainer.headers), 403, "forbidden", f"a maintainer: {method} {path}")
    roles = {m["user_id"]: m["role"] for m in api.ok(http.get(f"{base}/members", headers=owner.headers), 200, "members")["items"]}
    assert roles == {owner.id: "owner", maintainer.id: "maintainer", reporter.id: "reporter"}, f"members unchanged: {roles}"


@pytest.mark.requirement("R7")
def test_a_demoted_member_loses_their_rights_at_once(api, http):
    project, owner, maintainer, _ = api.team()
    api.label(maintainer, project)
    api.ok(http.patch(f"/projects/{project['id']}/members/{maintainer.id}", json={"role": "reporter"}, headers=owner.headers), 200, "demote")
    api.error(http.post(f"/projects/{project['id']}/labels", json={"name": "late", "color": "#123456"}, headers=maintainer.headers), 403, "forbidden", "a demoted maintainer")


@pytest.mark.requirement("R19")
def test_existence_is_checked_before_the_role(api, http):
    project, _, maintainer, reporter = api.team()
    base = f"/projects/{project['id']}"
    for method, path, body, who in (
        ("PATCH", f"{base}/labels/no-such-label", {"name": "x"}, reporter),
        ("DELETE", f"{base}/milestones/no-such-milestone", None, reporter),
        ("PATCH", f"{base}/hooks/no-such-hook", {"active": False}, maintainer),
        ("PATCH", f"{base}/issues/999", {"title": "x"}, reporter),
    ):
        api.error(http.request(method, path, json=body, headers=who.headers), 404, "not_found", f"{method} {path} by someone who may not do it either")


@pytest.mark.requirement("R19")
def test_the_role_is_checked_before_validation(api, http):
    project, owner, _, reporter = api.team()
    base = f"/projects/{project['id']}"
    theirs = api.issue(owner, project)
    for method, path, body in (
        ("POST", f"{base}/labels", {"name": "", "color": "nope"}), ("POST", f"{base}/milestones", {"title": 5}),
        ("PATCH", f"{base}/issues/{theirs['number']}", {"title": ""}), ("POST", f"{base}/members", {"user_id": 5}),
        ("POST", f"{base}/hooks", {"url": "ftp://x"}),
    ):
        api.error(http.request(method, path, json=body, headers=reporter.headers), 403, "forbidden", f"{method} {path} invalid and forbidden")
    user = api.user()
    api.error(http.post("/users", json={"username": "X"}, headers=user.headers), 403, "forbidden", "an invalid user by a non-administrator")
