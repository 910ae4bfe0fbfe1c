"""Deliveries seen from a second side (tier r1): who acted, which hook recorded what, what a comment carries."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r1"), pytest.mark.category("side_effects")]


@pytest.mark.requirement("R16")
def test_the_sender_is_whoever_made_the_change(api, http, receiver):
    project, owner, maintainer, reporter = api.team()
    _, path, _ = api.hook(owner, project, events=["issues"])
    issue = api.issue(reporter, project)
    api.patch_issue(reporter, project, issue["number"], body="details")
    api.patch_issue(maintainer, project, issue["number"], state="closed")
    got = [g["json"] for g in receiver.got(path)]
    assert [(g["action"], g["sender"]["id"], g["sender"]["username"]) for g in got] == [
        ("opened", reporter.id, reporter.username), ("edited", reporter.id, reporter.username), ("closed", maintainer.id, maintainer.username)], f"senders: {[g['sender'] for g in got]}"
    assert all(g["issue"]["author_id"] == reporter.id for g in got), "the issue's author stays the reporter"


@pytest.mark.requirement("R18")
def test_each_hook_records_only_its_own_deliveries(api, http, receiver):
    owner, project = api.owned()
    both, _, _ = api.hook(owner, project)
    comments, _, _ = api.hook(owner, project, events=["issue_comment"])
    issue = api.issue(owner, project)
    api.comment(owner, project, issue["number"])
    assert [(d["event"], d["action"]) for d in api.deliveries(owner, project, both)] == [("issues", "opened"), ("issue_comment", "created")], "the default hook recorded both"
    assert [(d["event"], d["action"]) for d in api.deliveries(owner, project, comments)] == [("issue_comment", "created")], "the comment hook recorded only the comment"


@pytest.mark.requirement("R16", "R12")
def test_a_comment_delivery_carries_the_comment_as_answered(api, http, receiver):
    owner, project = api.owned()
    _, path, _ = api.hook(owner, project, events=["issue_comment"])
    issue = api.issue(owner, project)
    comment = api.comment(owner, project, issue["number"], "Fixed in \"main\" — see <abc>")
    (delivery,) = receiver.got(path)
    sent = delivery["json"]["comment"]
    assert {k: sent.get(k) for k in ("id", "issue_number", "author_id", "body", "created_at")} == {k: comment[k] for k in ("id", "issue_number", "author_id", "body", "created_at")}, f"the comment as the API answered it: {sent} vs {comment}"
    assert delivery["json"]["issue"]["number"] == issue["number"] and delivery["json"]["action"] == "created"


@pytest.mark.requirement("R16")
def test_a_hook_gets_only_events_after_it_was_created(api, http, receiver):
    owner, project = api.owned()
    api.issue(owner, project)
    hook, path, _ = api.hook(owner, project)
    assert receiver.got(path) == [] and api.deliveries(owner, project, hook) == [], "nothing is delivered for earlier events"
    api.patch_issue(owner, project, 1, title="later")
    assert [g["json"]["action"] for g in receiver.got(path)] == ["edited"], "the next event is delivered"
