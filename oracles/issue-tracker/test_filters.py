"""Listing issues (spec.md: Issues, Lists): order, pagination and filters that stay in the project."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R11")
@pytest.mark.category("api_surface")
def test_open_issues_highest_number_first_by_default(api, http):
    owner, project = api.owned()
    for _ in range(4):
        api.issue(owner, project)
    api.patch_issue(owner, project, 2, state="closed")
    page = api.ok(http.get(f"/projects/{project['id']}/issues", headers=owner.headers), 200, "list issues")
    assert [i["number"] for i in page["items"]] == [4, 3, 1] and (page["total"], page["limit"], page["offset"]) == (3, 20, 0), f"open issues, newest first, defaults echoed: {page}"
    assert api.numbers(owner, project, state="closed") == [2], "state=closed"
    assert api.numbers(owner, project, state="all") == [4, 3, 2, 1], "state=all"


@pytest.mark.requirement("R11")
@pytest.mark.category("state")
def test_pagination(api, http):
    owner, project = api.owned()
    for _ in range(5):
        api.issue(owner, project)
    page = api.ok(http.get(f"/projects/{project['id']}/issues", params={"limit": 2, "offset": 1}, headers=owner.headers), 200, "a page")
    assert ([i["number"] for i in page["items"]], page["total"], page["limit"], page["offset"]) == ([4, 3], 5, 2, 1), f"limit 2 offset 1: {page}"
    assert api.issues(owner, project, offset=5)["items"] == [], "an offset past the end gives nothing"


@pytest.mark.requirement("R11")
@pytest.mark.category("validation")
@pytest.mark.parametrize("params, field", [
    ({"state": "opened"}, "state"), ({"state": ""}, "state"), ({"state": "OPEN"}, "state"),
    ({"limit": "0"}, "limit"), ({"limit": "101"}, "limit"), ({"limit": ""}, "limit"), ({"limit": "ten"}, "limit"), ({"offset": "-1"}, "offset"),
], ids=["opened", "empty-state", "upper-state", "limit-0", "limit-101", "empty-limit", "limit-word", "offset-negative"])
def test_list_parameters_are_validated(api, http, params, field):
    owner, project = api.owned()
    problem = api.validation_problem(http.get(f"/projects/{project['id']}/issues", params=params, headers=owner.headers), [field], f"GET issues {params}")
    api.assert_no_problems([problem], "list validation")


@pytest.mark.requirement("R11")
@pytest.mark.category("state")
def test_filters_combine_with_and(api, http):
    owner, ann = api.user("owner"), api.user("ann")
    project = api.project(owner, maintainers=(ann,))
    bug, ui = api.label(owner, project), api.label(owner, project)
    ms = api.milestone(owner, project)
    api.issue(owner, project, labels=[bug["id"]])                                           # 1
    api.issue(owner, project, labels=[bug["id"], ui["id"]], assignees=[ann.id])              # 2
    api.issue(owner, project, labels=[ui["id"]], milestone_id=ms["id"], assignees=[ann.id])  # 3
    api.issue(owner, project, labels=[bug["id"]], milestone_id=ms["id"])                      # 4
    api.patch_issue(owner, project, 4, state="closed")
    assert api.numbers(owner, project, label=bug["id"]) == [2, 1], "open issues labelled bug"
    assert api.numbers(owner, project, label=bug["id"], state="all") == [4, 2, 1], "all issues labelled bug"
    assert api.numbers(owner, project, milestone=ms["id"], state="all") == [4, 3], "issues in the milestone"
    assert api.numbers(owner, project, assignee=ann.id) == [3, 2], "issues assigned to ann"
    assert api.numbers(owner, project, assignee=ann.id, label=bug["id"]) == [2], "assigned to ann AND labelled bug"
    assert api.numbers(owner, project, milestone=ms["id"], label=ui["id"], assignee=owner.id) == [], "nothing matches all three"


@pytest.mark.requirement("R11")
@pytest.mark.category("security")
@pytest.mark.cwe(639)
def test_filters_never_reach_beyond_the_project(api, http):
    owner = api.user()
    project, other = api.project(owner), api.project(owner)
    foreign_label, foreign_ms = api.label(owner, other), api.milestone(owner, other)
    api.issue(owner, other, labels=[foreign_label["id"]], milestone_id=foreign_ms["id"], assignees=[owner.id])
    api.issue(owner, project)
    for params in ({"label": foreign_label["id"]}, {"milestone": foreign_ms["id"]}):
        page = api.issues(owner, project, state="all", **params)
        assert (page["items"], page["total"]) == ([], 0), f"another project's id in {params} matches nothing here: {page}"
    assert [i["project_id"] for i in api.issues(owner, project, assignee=owner.id, state="all")["items"]] == [], "the owner is assigned only in the other project"
