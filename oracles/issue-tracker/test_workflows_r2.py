"""Whole workflows (tier r2): several rules together, as a team uses the tracker."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r2"), pytest.mark.category("workflow")]


@pytest.mark.requirement("R7", "R10", "R12", "R14", "R16", "R17")
def test_triage_of_a_reported_bug(api, http, receiver):
    project, owner, maintainer, reporter = api.team()
    _, path, secret = api.hook(owner, project)
    bug = api.label(maintainer, project, "Bug", "#D73A4A")
    release = api.milestone(maintainer, project, "1.0", due_on="2030-06-30")
    issue = api.issue(reporter, project, title="Crash when saving", body="Steps: 1. save")
    api.comment(maintainer, project, issue["number"], "Reproduced")
    api.patch_issue(maintainer, project, issue["number"], labels=[bug["id"]], milestone_id=release["id"], assignees=[maintainer.id])
    api.patch_issue(reporter, project, issue["number"], body="Steps: 1. save 2. crash")
    done = api.patch_issue(maintainer, project, issue["number"], state="closed")
    assert (done["state"], done["comments"], done["assignees"], [lb["name"] for lb in done["labels"]]) == ("closed", 1, [maintainer.id], ["Bug"]), f"the triaged issue: {done}"
    got = receiver.got(path)
    assert [(g["headers"].get("x-tracker-event"), g["json"]["action"]) for g in got] == [
        ("issues", "opened"), ("issue_comment", "created"), ("issues", "edited"), ("issues", "edited"), ("issues", "closed")], "the deliveries of the whole triage"
    assert [g["json"]["sender"]["id"] for g in got] == [reporter.id, maintainer.id, maintainer.id, reporter.id, maintainer.id], "each sender is who acted"
    assert all(g["headers"].get("x-tracker-signature") == receiver.signature(secret, receiver.raw(g)) for g in got), "every delivery is signed"
    ms = api.get_milestone(reporter, project, release)
    assert (ms["open_issues"], ms["closed_issues"], ms["progress"]) == (0, 1, 100), f"the milestone is complete: {ms}"


@pytest.mark.requirement("R11", "R14", "R10")
def test_a_release_milestone_fills_up_and_closes(api, http):
    owner, project = api.owned()
    release = api.milestone(owner, project, "2.0")
    later = api.milestone(owner, project, "3.0")
    numbers = [api.issue(owner, project, title=f"feature {i}", milestone_id=release["id"])["number"] for i in range(4)]
    api.patch_issue(owner, project, numbers[3], milestone_id=later["id"])
    progress = []
    for n in numbers[:3]:
        api.patch_issue(owner, project, n, state="closed")
        progress.append(api.get_milestone(owner, project, release)["progress"])
    assert progress == [33, 66, 100], f"progress as issues close: {progress}"
    closed = api.ok(http.patch(f"/projects/{project['id']}/milestones/{release['id']}", json={"state": "closed"}, headers=owner.headers), 200, "close the milestone")
    assert (closed["state"], closed["closed_issues"]) == ("closed", 3), f"closed milestone: {closed}"
    assert api.numbers(owner, project, milestone=later["id"]) == [numbers[3]], "the moved issue is in 3.0"
    assert api.numbers(owner, project, milestone=release["id"], state="closed") == [3, 2, 1], "2.0's closed issues, highest first"


@pytest.mark.requirement("R6", "R11", "R16")
def test_a_member_leaves_the_team(api, http, receiver):
    owner, ann, bob = api.user("owner"), api.user("ann"), api.user("bob")
    project = api.project(owner, maintainers=(ann, bob))
    _, path, _ = api.hook(owner, project)
    for _ in range(3):
        api.issue(ann, project, assignees=[ann.id, bob.id])
    assert http.delete(f"/projects/{project['id']}/members/{ann.id}", headers=owner.headers).status_code == 204
    assert api.numbers(owner, project, assignee=ann.id) == [] and api.numbers(owner, project, assignee=bob.id) == [3, 2, 1], "ann is unassigned, bob stays"
    api.error(http.post(f"/projects/{project['id']}/issues", json={"title": "late"}, headers=ann.headers), 404, "not_found", "ann after leaving")
    assert len(receiver.got(path)) == 3, "removing a member delivers nothing"
    issue = api.get_issue(owner, project, 1)
    assert issue["author_id"] == ann.id, "the issues ann wrote stay hers"


@pytest.mark.requirement("R18", "R16")
def test_a_receiver_outage_and_recovery(api, http, receiver):
    owner, project, hook, path = api.hooked()
    receiver.answer(path, 503)
    first = api.issue(owner, project)
    api.comment(owner, project, first["number"])
    receiver.answer(path, 0)
    api.patch_issue(owner, project, first["number"], title="still works")
    receiver.answer(path, 200)
    api.issue(owner, project)
    records = api.deliveries(owner, project, hook)
    assert [(d["action"], d["status_code"], d["success"]) for d in records] == [("opened", 503, False), ("created", 503, False), ("edited", None, False), ("opened", 200, True)], f"the hook's history: {records}"
    assert api.issues(owner, project)["total"] == 2 and api.get_issue(owner, project, 1)["title"] == "still works", "every request succeeded"


@pytest.mark.requirement("R5", "R11", "R13")
def test_two_teams_with_the_same_label_names(api, http):
    ann, bob = api.user("ann"), api.user("bob")
    a, b = api.project(ann), api.project(bob)
    bug_a, bug_b = api.label(ann, a, "bug"), api.label(bob, b, "Bug")
    api.issue(ann, a, labels=[bug_a["id"]])
    api.issue(bob, b, labels=[bug_b["id"]])
    api.issue(bob, b, labels=[bug_b["id"]])
    assert api.numbers(ann, a, label=bug_a["id"]) == [1] and api.numbers(bob, b, label=bug_b["id"]) == [2, 1], "each team sees its own"
    assert api.numbers(ann, a, label=bug_b["id"]) == [], "bob's label id matches nothing in ann's project"
    api.error(http.get(f"/projects/{b['id']}/issues", headers=ann.headers), 404, "not_found", "ann listing bob's project")
    assert http.delete(f"/projects/{a['id']}/labels/{bug_a['id']}", headers=ann.headers).status_code == 204
    assert [lb["name"] for lb in api.get_issue(bob, b, 1)["labels"]] == ["Bug"], "deleting ann's label leaves bob's alone"


@pytest.mark.requirement("R15", "R16", "R17")
def test_rewiring_a_hook(api, http, receiver):
    owner, project = api.owned()
    hook, old_path, _ = api.hook(owner, project, events=["issue_comment"])
    issue = api.issue(owner, project)
    new_path = receiver.fresh_path()
    api.ok(http.patch(f"/projects/{project['id']}/hooks/{hook['id']}", json={"url": receiver.url(new_path), "events": ["issues", "issue_comment"], "secret": "new-secret-99"}, headers=owner.headers), 200, "rewire")
    api.comment(owner, project, issue["number"])
    api.patch_issue(owner, project, issue["number"], state="closed")
    assert receiver.got(old_path) == [], "the old URL got nothing (the hook ignored the opened issue)"
    got = receiver.got(new_path)
    assert [g["json"]["action"] for g in got] == ["created", "closed"], f"the new URL gets both events: {[g['json']['action'] for g in got]}"
    assert all(g["headers"].get("x-tracker-signature") == receiver.signature("new-secret-99", receiver.raw(g)) for g in got), "signed with the new secret"
    assert [d["action"] for d in api.deliveries(owner, project, hook)] == ["created", "closed"], "the hook's deliveries"
