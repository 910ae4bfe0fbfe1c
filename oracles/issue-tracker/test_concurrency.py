"""Requests that arrive at once (spec.md: "Requests may arrive concurrently").

Rules with a limit, sent as bursts released together (http/concurrency.py): a project has at
most 5 hooks, and each hook that exists gets one delivery per event while a refused one gets
none; a label name is unique in its project, compared case-insensitively.
"""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http.concurrency import at_once, one_winner

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("state")]


@pytest.mark.requirement("R15")
def test_hooks_created_at_once_stop_at_five_and_each_gets_one_delivery(api, http, receiver):
    owner, project = api.owned()
    paths = [receiver.fresh_path() for _ in range(8)]
    answers = at_once(http.base_url, lambda path: http.post(f"/projects/{project['id']}/hooks", headers=owner.headers,
                                                            json={"url": receiver.url(path), "secret": "s3cret-" + uuid.uuid4().hex}),
                      paths, http.timeout_s)
    one_winner(answers, "eight hooks created at once on a project without hooks (at most 5)", allowed=5, code="conflict")
    listed = api.ok(http.get(f"/projects/{project['id']}/hooks", headers=owner.headers), 200, "list the hooks")["items"]
    assert len(listed) == 5, f"the project has exactly 5 hooks: {[h['url'] for h in listed]}"
    api.issue(owner, project)
    got = {path: len(receiver.got(path)) for path in paths}
    created = {path for path, answer in zip(paths, answers) if answer.status_code == 201}
    assert got == {path: int(path in created) for path in paths}, f"one delivery to each created hook, none to a refused one: {got}"


@pytest.mark.requirement("R13")
def test_a_label_name_claimed_at_once_in_any_case_is_taken_once(api, http):
    owner, project = api.owned()
    names = ["Bug", "bug", "BUG", "bUg", "Bug", "bug"]
    answers = at_once(http.base_url, lambda name: http.post(f"/projects/{project['id']}/labels", json={"name": name, "color": "#d73a4a"},
                                                            headers=owner.headers), names, http.timeout_s)
    one_winner(answers, "one label name in six spellings created at once", code="conflict")
    labels = api.ok(http.get(f"/projects/{project['id']}/labels", headers=owner.headers), 200, "list the labels")["items"]
    assert [label["name"].lower() for label in labels] == ["bug"], f"the project has the label once: {labels}"
