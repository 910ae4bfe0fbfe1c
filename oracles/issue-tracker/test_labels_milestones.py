"""Labels and milestones (spec.md: Labels and milestones)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R13")
@pytest.mark.category("api_surface")
def test_a_label_answers_its_colour_in_lower_case(api, http):
    owner, project = api.owned()
    label = api.ok(http.post(f"/projects/{project['id']}/labels", json={"name": "Bug", "color": "#A1B2C3", "description": "broken"}, headers=owner.headers), 201, "create a label")
    assert (label["name"], label["color"], label["description"]) == ("Bug", "#a1b2c3", "broken") and label["id"], f"the label: {label}"
    plain = api.label(owner, project, "plain", "#000000")
    assert plain["description"] == "", f"description defaults to an empty string: {plain}"
    listed = [lb["id"] for lb in api.ok(http.get(f"/projects/{project['id']}/labels", headers=owner.headers), 200, "list labels")["items"]]
    assert listed == [label["id"], plain["id"]], f"oldest first: {listed}"


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_label_names_are_unique_per_project_ignoring_case(api, http):
    owner = api.user()
    project, other = api.project(owner), api.project(owner)
    bug = api.label(owner, project, "Bug")
    for name in ("Bug", "bug", "BUG"):
        api.error(http.post(f"/projects/{project['id']}/labels", json={"name": name, "color": "#ffffff"}, headers=owner.headers), 409, "conflict", f"label {name!r} after 'Bug'")
    assert api.label(owner, other, "bug")["name"] == "bug", "another project may use the name"
    feature = api.label(owner, project, "feature")
    api.error(http.patch(f"/projects/{project['id']}/labels/{feature['id']}", json={"name": "BUG"}, headers=owner.headers), 409, "conflict", "renaming onto another label's name")
    renamed = api.ok(http.patch(f"/projects/{project['id']}/labels/{bug['id']}", json={"name": "BUG"}, headers=owner.headers), 200, "renaming a label to its own name in another case")
    assert renamed["name"] == "BUG", f"the rename: {renamed}"


@pytest.mark.requirement("R13")
@pytest.mark.category("validation")
@pytest.mark.parametrize("body, fields", [
    ({"name": "x", "color": "red"}, ["color"]),
    ({"name": "x", "color": "#12345"}, ["color"]),
    ({"name": "x", "color": "#1234567"}, ["color"]),
    ({"name": "x", "color": "#12345g"}, ["color"]),
    ({"name": "x", "color": "123456"}, ["color"]),
    ({"name": "", "color": "#123456"}, ["name"]),
    ({"name": "n" * 51, "color": "#123456"}, ["name"]),
    ({"name": "x", "color": "#123456", "description": "d" * 201}, ["description"]),
    ({"color": None}, ["name", "color"]),
], ids=["word", "short", "long", "not-hex", "no-hash", "empty-name", "long-name", "long-description", "missing"])
def test_label_fields_are_validated(api, http, body, fields):
    owner, project = api.owned()
    problem = api.validation_problem(http.post(f"/projects/{project['id']}/labels", json=body, headers=owner.headers), fields, f"label {body}")
    api.assert_no_problems([problem], "label validation")


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_a_deleted_label_leaves_every_issue_and_a_renamed_one_shows_its_new_name(api, http):
    owner, project = api.owned()
    bug, ui = api.label(owner, project, "bug"), api.label(owner, project, "ui", "#00FF00")
    issue = api.issue(owner, project, labels=[bug["id"], ui["id"]])
    api.ok(http.patch(f"/projects/{project['id']}/labels/{ui['id']}", json={"name": "frontend", "color": "#0000FF"}, headers=owner.headers), 200, "rename ui")
    r = http.delete(f"/projects/{project['id']}/labels/{bug['id']}", headers=owner.headers)
    assert r.status_code == 204, f"delete a label: {api.brief(r)}"
    labels = api.get_issue(owner, project, issue["number"])["labels"]
    assert [(lb["id"], lb["name"], lb["color"]) for lb in labels] == [(ui["id"], "frontend", "#0000ff")], f"the issue's labels: {labels}"
    assert api.issues(owner, project, label=bug["id"])["items"] == [], "no issue carries the deleted label"
    api.error(http.delete(f"/projects/{project['id']}/labels/{bug['id']}", headers=owner.headers), 404, "not_found", "deleting it again")


@pytest.mark.requirement("R14")
@pytest.mark.category("api_surface")
def test_a_new_milestone(api, http):
    owner, project = api.owned()
    ms = api.ok(http.post(f"/projects/{project['id']}/milestones", json={"title": "v1.0", "due_on": "2030-02-28"}, headers=owner.headers), 201, "create a milestone")
    expected = {"title": "v1.0", "description": "", "due_on": "2030-02-28", "state": "open", "open_issues": 0, "closed_issues": 0, "progress": 0}
    assert {k: ms.get(k) for k in expected} == expected and ms["id"], f"the milestone: {ms}"
    bare = api.milestone(owner, project, "v2")
    assert bare["due_on"] is None, f"due_on defaults to null: {bare}"
    listed = [m["id"] for m in api.ok(http.get(f"/projects/{project['id']}/milestones", headers=owner.headers), 200, "list")["items"]]
    assert listed == [ms["id"], bare["id"]], f"oldest first: {listed}"


@pytest.mark.requirement("R14")
@pytest.mark.category("validation")
@pytest.mark.parametrize("due_on", ["2030-02-30", "2031-02-29", "2030-13-01", "30-01-2030", "2030-1-5", "tomorrow", 20300101, "2030-01-01T00:00:00Z"])
def test_due_on_must_be_a_real_date(api, http, due_on):
    owner, project = api.owned()
    problem = api.validation_problem(http.post(f"/projects/{project['id']}/milestones", json={"title": "v1", "due_on": due_on}, headers=owner.headers), ["due_on"], f"due_on {due_on!r}")
    api.assert_no_problems([problem], "milestone validation")


@pytest.mark.requirement("R14")
@pytest.mark.category("validation")
def test_milestone_title_description_and_state_are_validated(api, http):
    owner, project = api.owned()
    path = f"/projects/{project['id']}/milestones"
    ms = api.milestone(owner, project, due_on="2032-02-29")
    assert ms["due_on"] == "2032-02-29", "a leap day is a real date"
    problems = [
        api.validation_problem(http.post(path, json={"title": " "}, headers=owner.headers), ["title"], "a blank title"),
        api.validation_problem(http.post(path, json={"title": "t" * 101}, headers=owner.headers), ["title"], "a 101-character title"),
        api.validation_problem(http.post(path, json={"title": "ok", "description": "d" * 1001}, headers=owner.headers), ["description"], "a long description"),
        api.validation_problem(http.patch(f"{path}/{ms['id']}", json={"state": "done"}, headers=owner.headers), ["state"], "an unknown state"),
    ]
    api.assert_no_problems(problems, "milestone validation")


@pytest.mark.requirement("R14")
@pytest.mark.category("state")
def test_counts_and_progress_follow_the_issues(api, http):
    owner, project = api.owned()
    ms = api.milestone(owner, project)
    numbers = [api.issue(owner, project, milestone_id=ms["id"])["number"] for _ in range(3)]
    api.issue(owner, project)  # not in the milestone

    def counts():
        got = api.get_milestone(owner, project, ms)
        return got["open_issues"], got["closed_issues"], got["progress"]

    assert counts() == (3, 0, 0), "three open issues"
    api.patch_issue(owner, project, numbers[0], state="closed")
    assert counts() == (2, 1, 33), "progress is floor(100 * 1 / 3)"
    api.patch_issue(owner, project, numbers[1], state="closed")
    assert counts() == (1, 2, 66), "progress is floor(100 * 2 / 3)"
    api.patch_issue(owner, project, numbers[2], milestone_id=None)
    assert counts() == (0, 2, 100), "an issue moved out no longer counts"
    api.patch_issue(owner, project, numbers[0], state="open")
    assert counts() == (1, 1, 50), "a reopened issue counts as open"


@pytest.mark.requirement("R14")
@pytest.mark.category("state")
def test_closing_and_deleting_a_milestone(api, http):
    owner, project = api.owned()
    ms = api.milestone(owner, project)
    issue = api.issue(owner, project, milestone_id=ms["id"])
    closed = api.ok(http.patch(f"/projects/{project['id']}/milestones/{ms['id']}", json={"state": "closed", "due_on": None, "title": "v1.0 final"}, headers=owner.headers), 200, "close")
    assert (closed["state"], closed["due_on"], closed["title"], closed["open_issues"]) == ("closed", None, "v1.0 final", 1), f"the closed milestone: {closed}"
    r = http.delete(f"/projects/{project['id']}/milestones/{ms['id']}", headers=owner.headers)
    assert r.status_code == 204, f"delete: {api.brief(r)}"
    assert api.get_issue(owner, project, issue["number"])["milestone_id"] is None, "its issue has no milestone any more"
    api.error(http.get(f"/projects/{project['id']}/milestones/{ms['id']}", headers=owner.headers), 404, "not_found", "the deleted milestone")
