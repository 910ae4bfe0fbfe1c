"""The spec's own examples, each an item checked exactly (issue 35).

spec.md: "`progress` is `floor(100 × closed_issues / (open_issues + closed_issues))`, `0` with no
issues"; "**Dates** (`due_on`) are `YYYY-MM-DD` and must be real calendar dates"; "`Bug` and
`bug` clash: `409`; other projects may use it"; "A reporter's issue `POST` or `PATCH` that
defines `labels`, `milestone_id` or `assignees` (even as `[]` or `null`), or a `PATCH` that
defines `state`, gets `403`"; "a URL where `WEBHOOKS_URL` is followed by `@`, `:` or `.` rather
than `/`) gets `422`"; "(also `..`, `%2e%2e%2f`, `*`, `0`, `-1` or an SQL fragment) gets `404`";
"**Timestamps** are RFC 3339 strings in UTC, e.g. `2025-03-01T12:00:00.123Z`".
"""

from __future__ import annotations

import pytest

from pytest_backendbench.http.timestamps import rfc3339_utc_problems

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R14")
@pytest.mark.category("state")
def test_progress_is_floored(api, http):
    owner, project = api.owned()
    milestone = api.milestone(owner, project)
    assert api.get_milestone(owner, project, milestone)["progress"] == 0, "0 with no issues"
    numbers = [api.issue(owner, project, milestone_id=milestone["id"])["number"] for _ in range(3)]
    seen = []
    for number in numbers:
        api.patch_issue(owner, project, number, state="closed")
        got = api.get_milestone(owner, project, milestone)
        seen.append((got["open_issues"], got["closed_issues"], got["progress"]))
    assert seen == [(2, 1, 33), (1, 2, 66), (0, 3, 100)], f"floor(100 x closed / all): 33, 66 (not 67), 100; got {seen}"


@pytest.mark.requirement("R14")
@pytest.mark.category("validation")
@pytest.mark.parametrize("due_on, real", [("2024-02-29", True), ("2025-02-29", False), ("2025-04-31", False), ("2025-13-01", False)])
def test_due_on_must_be_a_real_calendar_date(api, http, due_on, real):
    owner, project = api.owned()
    r = http.post(f"/projects/{project['id']}/milestones", json={"title": "Dated", "due_on": due_on}, headers=owner.headers)
    if real:
        assert api.ok(r, 201, f"a milestone due {due_on}")["due_on"] == due_on
    else:
        api.assert_no_problems([api.validation_problem(r, ["due_on"], f"due_on {due_on} (no such day)")], "due_on")


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_bug_and_bug_clash_in_one_project_only(api, http):
    owner, project = api.owned()
    api.label(owner, project, "Bug")
    r = http.post(f"/projects/{project['id']}/labels", json={"name": "bug", "color": "#ffffff"}, headers=owner.headers)
    api.error(r, 409, "conflict", "a label bug beside Bug")
    assert api.label(owner, api.project(owner), "bug")["name"] == "bug", "another project may use the name"


@pytest.mark.requirement("R7")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("method, fields", [("POST", {"labels": []}), ("POST", {"assignees": []}), ("POST", {"milestone_id": None}),
                                            ("PATCH", {"labels": []}), ("PATCH", {"milestone_id": None}), ("PATCH", {"state": "open"})],
                         ids=["post-labels-empty", "post-assignees-empty", "post-milestone-null", "patch-labels-empty", "patch-milestone-null", "patch-same-state"])
def test_a_reporter_defining_a_link_even_empty_gets_403(api, http, method, fields):
    project, _, _, reporter = api.team()
    own = api.issue(reporter, project, "Reported")
    path = f"/projects/{project['id']}/issues" + (f"/{own['number']}" if method == "PATCH" else "")
    api.error(http.request(method, path, json={"title": "Reported again", **fields}, headers=reporter.headers), 403, "forbidden", f"a reporter's {method} with {fields}")
    assert api.numbers(reporter, project, state="all") == [own["number"]] and api.get_issue(reporter, project, own["number"])["title"] == "Reported"


@pytest.mark.requirement("R15")
@pytest.mark.category("security")
@pytest.mark.cwe(918)
@pytest.mark.parametrize("joint", ["@", ":", "."])
def test_webhooks_url_followed_by_anything_but_a_slash_is_refused(api, http, joint):
    owner, project = api.owned()
    url = api.receiver.url("") + joint + "evil.example/hook"
    r = http.post(f"/projects/{project['id']}/hooks", json={"url": url, "secret": "long-secret-1"}, headers=owner.headers)
    api.assert_no_problems([api.validation_problem(r, ["url"], f"url {url}")], "a hook URL must be WEBHOOKS_URL followed by /")


@pytest.mark.requirement("R21")
@pytest.mark.category("api_surface")
@pytest.mark.parametrize("number", ["0", "-1"])
def test_issue_number_0_and_minus_1_name_nothing(api, http, number):
    owner, project = api.owned()
    api.issue(owner, project)
    api.error(http.get(f"/projects/{project['id']}/issues/{number}", headers=owner.headers), 404, "not_found", f"issue {number}")


@pytest.mark.requirement("R8", "R12")
@pytest.mark.category("api_surface")
def test_timestamps_are_rfc_3339_in_utc(api, http):
    owner, project = api.owned()
    issue = api.patch_issue(owner, project, api.issue(owner, project)["number"], state="closed")
    comment = api.comment(owner, project, issue["number"])
    problems = rfc3339_utc_problems((("issue.created_at", issue["created_at"]), ("issue.updated_at", issue["updated_at"]), ("issue.closed_at", issue["closed_at"]),
                        ("comment.created_at", comment["created_at"]), ("project.created_at", project["created_at"])))
    assert not problems, "\n".join(problems)
