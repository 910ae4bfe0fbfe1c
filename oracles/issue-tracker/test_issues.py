"""Issues and comments (spec.md: Issues)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R8")
@pytest.mark.category("api_surface")
def test_a_new_issue(api, http):
    project, owner, _, reporter = api.team()
    issue = api.ok(http.post(f"/projects/{project['id']}/issues", json={"title": "Login fails"}, headers=reporter.headers), 201, "create an issue")
    expected = {"number": 1, "project_id": project["id"], "title": "Login fails", "body": "", "state": "open", "author_id": reporter.id,
                "assignees": [], "labels": [], "milestone_id": None, "comments": 0, "closed_at": None}
    assert {k: issue.get(k) for k in expected} == expected, f"a new issue: {issue}"
    assert issue["created_at"] and issue["updated_at"], f"timestamps: {issue}"
    assert api.get_issue(owner, project, 1) == issue or api.get_issue(owner, project, 1)["title"] == "Login fails", "GET answers the issue"


@pytest.mark.requirement("R8")
@pytest.mark.category("state")
def test_numbers_are_per_project_and_never_reused(api, http):
    owner = api.user()
    a, b = api.project(owner), api.project(owner)
    assert [api.issue(owner, a)["number"] for _ in range(3)] == [1, 2, 3], "project a numbers 1, 2, 3"
    assert [api.issue(owner, b)["number"] for _ in range(2)] == [1, 2], "project b starts at 1"
    api.patch_issue(owner, a, 3, state="closed")
    assert api.issue(owner, a)["number"] == 4, "a closed issue keeps its number; the next one is 4"
    r = http.post(f"/projects/{a['id']}/issues", json={"title": " "}, headers=owner.headers)
    assert r.status_code == 422, f"a blank title: {api.brief(r)}"
    assert api.issue(owner, a)["number"] == 5, "a refused issue takes no number"


@pytest.mark.requirement("R8")
@pytest.mark.category("validation")
@pytest.mark.parametrize("body, fields", [
    ({}, ["title"]),
    ({"title": ""}, ["title"]),
    ({"title": " \t"}, ["title"]),
    ({"title": "t" * 256}, ["title"]),
    ({"title": None}, ["title"]),
    ({"title": "ok", "body": "b" * 65_536}, ["body"]),
    ({"title": "ok", "body": None}, ["body"]),
    ({"title": 5, "body": 5}, ["title", "body"]),
], ids=["missing", "empty", "blank", "too-long", "null", "long-body", "null-body", "wrong-types"])
def test_issue_fields_are_validated(api, http, body, fields):
    owner, project = api.owned()
    problem = api.validation_problem(http.post(f"/projects/{project['id']}/issues", json=body, headers=owner.headers), fields, f"POST issue {str(body)[:60]}")
    api.assert_no_problems([problem], "issue validation")
    assert api.issues(owner, project, state="all")["total"] == 0, "nothing was created"


@pytest.mark.requirement("R8")
@pytest.mark.category("validation")
def test_lengths_at_their_edges_are_accepted(api, http):
    owner, project = api.owned()
    issue = api.issue(owner, project, title="t" * 255, body="b" * 65_535)
    assert (len(issue["title"]), len(issue["body"])) == (255, 65_535), "255-character title and 65,535-character body are valid"
    assert api.issue(owner, project, title="é" * 255)["title"] == "é" * 255, "lengths count characters, not bytes"


@pytest.mark.requirement("R9")
@pytest.mark.category("api_surface")
def test_labels_milestone_and_assignees_of_the_project(api, http):
    project, owner, maintainer, reporter = api.team()
    bug, ui = api.label(owner, project, "bug", "#D73A4A"), api.label(owner, project, "ui", "#00ff00")
    ms = api.milestone(owner, project)
    issue = api.issue(maintainer, project, labels=[ui["id"], bug["id"]], milestone_id=ms["id"], assignees=[reporter.id, owner.id])
    assert issue["labels"] == [{"id": ui["id"], "name": "ui", "color": "#00ff00"}, {"id": bug["id"], "name": "bug", "color": "#d73a4a"}] or [
        (lb["id"], lb["name"], lb["color"]) for lb in issue["labels"]] == [(ui["id"], "ui", "#00ff00"), (bug["id"], "bug", "#d73a4a")], f"labels in the order given: {issue['labels']}"
    assert issue["milestone_id"] == ms["id"] and issue["assignees"] == [reporter.id, owner.id], f"milestone and assignees: {issue}"


@pytest.mark.requirement("R9")
@pytest.mark.category("validation")
def test_links_outside_the_project_get_422(api, http):
    project, owner, _, _ = api.team()
    other = api.project(owner)
    foreign_label, foreign_ms = api.label(owner, other, "bug"), api.milestone(owner, other)
    outsider = api.user("outsider")
    label = api.label(owner, project)
    path = f"/projects/{project['id']}/issues"
    cases = [
        ({"labels": [foreign_label["id"]]}, ["labels"], "another project's label"),
        ({"labels": [label["id"], label["id"]]}, ["labels"], "a repeated label"),
        ({"labels": ["no-such-label"]}, ["labels"], "an unknown label"),
        ({"labels": label["id"]}, ["labels"], "labels not a list"),
        ({"milestone_id": foreign_ms["id"]}, ["milestone_id"], "another project's milestone"),
        ({"milestone_id": 7}, ["milestone_id"], "a numeric milestone"),
        ({"assignees": [outsider.id]}, ["assignees"], "a non-member"),
        ({"assignees": [owner.id, owner.id]}, ["assignees"], "a repeated assignee"),
        ({"labels": [foreign_label["id"]], "assignees": [outsider.id], "milestone_id": foreign_ms["id"]}, ["labels", "assignees", "milestone_id"], "all three"),
    ]
    problems = [api.validation_problem(http.post(path, json={"title": "t", **body}, headers=owner.headers), fields, what) for body, fields, what in cases]
    api.assert_no_problems(problems, "links must belong to the project")
    assert api.issues(owner, project, state="all")["total"] == 0, "nothing was created"


@pytest.mark.requirement("R9")
@pytest.mark.category("validation")
def test_at_most_20_labels_and_10_assignees(api, http):
    owner = api.user()
    members = [api.user(f"m{i}") for i in range(10)]
    project = api.project(owner, reporters=tuple(members))
    labels = [api.label(owner, project)["id"] for _ in range(21)]
    everyone = [owner.id] + [m.id for m in members]
    path = f"/projects/{project['id']}/issues"
    problems = [api.validation_problem(http.post(path, json={"title": "t", "labels": labels}, headers=owner.headers), ["labels"], "21 labels"),
                api.validation_problem(http.post(path, json={"title": "t", "assignees": everyone}, headers=owner.headers), ["assignees"], "11 assignees")]
    api.assert_no_problems(problems, "list limits")
    issue = api.issue(owner, project, labels=labels[:20], assignees=everyone[:10])
    assert (len(issue["labels"]), len(issue["assignees"])) == (20, 10), "20 labels and 10 assignees are allowed"


@pytest.mark.requirement("R10")
@pytest.mark.category("state")
def test_closing_and_reopening(api, http):
    owner, project = api.owned()
    issue = api.issue(owner, project)
    closed = api.patch_issue(owner, project, issue["number"], state="closed")
    assert closed["state"] == "closed" and closed["closed_at"], f"closing sets closed_at: {closed}"
    again = api.patch_issue(owner, project, issue["number"], state="closed")
    assert again["closed_at"] == closed["closed_at"], f"closing a closed issue changes nothing: {again['closed_at']} vs {closed['closed_at']}"
    reopened = api.patch_issue(owner, project, issue["number"], state="open")
    assert reopened["state"] == "open" and reopened["closed_at"] is None, f"reopening clears closed_at: {reopened}"
    assert api.get_issue(owner, project, issue["number"])["state"] == "open", "the state is kept"


@pytest.mark.requirement("R10")
@pytest.mark.category("state")
def test_patch_replaces_fields_and_moves_updated_at(api, http):
    owner, project = api.owned()
    a, b = api.label(owner, project), api.label(owner, project)
    ms = api.milestone(owner, project)
    issue = api.issue(owner, project, title="old", body="old body", labels=[a["id"]], assignees=[owner.id], milestone_id=ms["id"])
    patched = api.patch_issue(owner, project, issue["number"], title="new", labels=[b["id"]], assignees=[], milestone_id=None)
    assert (patched["title"], patched["body"], [lb["id"] for lb in patched["labels"]], patched["assignees"], patched["milestone_id"]) == (
        "new", "old body", [b["id"]], [], None), f"PATCH replaces what it names and keeps the rest: {patched}"
    assert patched["updated_at"] != issue["updated_at"] and patched["created_at"] == issue["created_at"], f"updated_at moves, created_at stays: {patched}"
    same = api.patch_issue(owner, project, issue["number"])
    assert same["title"] == "new" and same["labels"] == patched["labels"], "an empty PATCH changes nothing"


@pytest.mark.requirement("R10")
@pytest.mark.category("validation")
def test_patch_validation_changes_nothing(api, http):
    owner, project = api.owned()
    issue = api.issue(owner, project, title="keep")
    path = f"/projects/{project['id']}/issues/{issue['number']}"
    problems = [
        api.validation_problem(http.patch(path, json={"state": "done"}, headers=owner.headers), ["state"], "an unknown state"),
        api.validation_problem(http.patch(path, json={"title": "", "state": "closed"}, headers=owner.headers), ["title"], "a blank title with a valid state"),
        api.validation_problem(http.patch(path, json={"labels": None}, headers=owner.headers), ["labels"], "labels null"),
    ]
    api.assert_no_problems(problems, "PATCH validation")
    now = api.get_issue(owner, project, issue["number"])
    assert (now["title"], now["state"]) == ("keep", "open"), f"a refused PATCH changes nothing: {now}"


@pytest.mark.requirement("R8", "R19")
@pytest.mark.category("api_surface")
@pytest.mark.parametrize("number", ["0", "-1", "99", "1.0", "abc"])
def test_an_unknown_issue_number_is_404(api, http, number):
    owner, project = api.owned()
    api.issue(owner, project)
    api.error(http.get(f"/projects/{project['id']}/issues/{number}", headers=owner.headers), 404, "not_found", f"issue {number}")


@pytest.mark.requirement("R12")
@pytest.mark.category("api_surface")
def test_comments_are_listed_oldest_first_and_counted(api, http):
    project, owner, _, reporter = api.team()
    issue = api.issue(owner, project)
    first = api.comment(reporter, project, issue["number"], "first")
    assert (first["issue_number"], first["author_id"], first["body"]) == (issue["number"], reporter.id, "first") and first["id"], f"the comment: {first}"
    api.patch_issue(owner, project, issue["number"], state="closed")
    api.comment(owner, project, issue["number"], "second, on a closed issue")
    listed = api.ok(http.get(f"/projects/{project['id']}/issues/{issue['number']}/comments", headers=reporter.headers), 200, "list comments")["items"]
    assert [c["body"] for c in listed] == ["first", "second, on a closed issue"], f"oldest first: {listed}"
    assert api.get_issue(owner, project, issue["number"])["comments"] == 2, "the issue counts its comments"


@pytest.mark.requirement("R12")
@pytest.mark.category("validation")
@pytest.mark.parametrize("body", ["", "   ", None, 3, "c" * 65_536])
def test_a_comment_body_is_validated(api, http, body):
    owner, project = api.owned()
    issue = api.issue(owner, project)
    problem = api.validation_problem(http.post(f"/projects/{project['id']}/issues/{issue['number']}/comments", json={"body": body}, headers=owner.headers), ["body"], f"comment {str(body)[:20]!r}")
    api.assert_no_problems([problem], "comment validation")
    assert api.get_issue(owner, project, issue["number"])["comments"] == 0, "nothing was added"
