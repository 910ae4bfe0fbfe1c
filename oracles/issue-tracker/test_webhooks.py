"""Webhooks (spec.md: Webhooks): what reaches the receiver, signed, before the API answers."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest

pytestmark = [pytest.mark.tier("base")]

ISSUE_FIELDS = ("number", "project_id", "title", "body", "state", "author_id", "assignees", "labels", "milestone_id", "comments", "closed_at")


def payload(delivery):
    """The JSON body of a delivery (parsed from its exact bytes)."""
    return json.loads(base64.b64decode(delivery["body_base64"]))


@pytest.mark.requirement("R16")
@pytest.mark.category("side_effects")
def test_an_opened_issue_is_delivered_before_the_answer(api, http, receiver):
    owner, project, _, path = api.hooked()
    issue = api.issue(owner, project, title="Crash on start", body="trace")
    got = receiver.got(path)
    assert len(got) == 1 and got[0]["method"] == "POST", f"one POST reached the receiver before the answer: {[(g['method'], g['path']) for g in got]}"
    headers, body = got[0]["headers"], payload(got[0])
    assert headers.get("content-type", "").split(";")[0].strip() == "application/json", f"Content-Type: {headers}"
    assert headers.get("x-tracker-event") == "issues" and headers.get("x-tracker-delivery"), f"event and delivery headers: {headers}"
    assert body.get("action") == "opened", f"action: {body.get('action')!r}"
    assert body.get("project") == {"id": project["id"], "name": project["name"]} or {k: body["project"].get(k) for k in ("id", "name")} == {"id": project["id"], "name": project["name"]}, f"project: {body.get('project')}"
    assert {k: body["issue"].get(k) for k in ISSUE_FIELDS} == {k: issue[k] for k in ISSUE_FIELDS}, f"the issue as the API answered it: {body['issue']} vs {issue}"
    assert {k: body["sender"].get(k) for k in ("id", "username")} == {"id": owner.id, "username": owner.username}, f"sender: {body.get('sender')}"


@pytest.mark.requirement("R16")
@pytest.mark.category("side_effects")
def test_each_patch_sends_one_delivery_with_its_action(api, http, receiver):
    owner, project, _, path = api.hooked()
    issue = api.issue(owner, project)
    n = issue["number"]
    api.patch_issue(owner, project, n, title="renamed")
    closed = api.patch_issue(owner, project, n, state="closed")
    api.patch_issue(owner, project, n, state="closed", body="still closed")
    api.patch_issue(owner, project, n, state="open")
    got = [payload(g) for g in receiver.got(path)]
    assert [g["action"] for g in got] == ["opened", "edited", "closed", "edited", "reopened"], f"actions in order: {[g['action'] for g in got]}"
    assert got[2]["issue"]["state"] == "closed" and got[2]["issue"]["closed_at"] == closed["closed_at"], f"the closed issue after the change: {got[2]['issue']}"
    assert got[1]["issue"]["title"] == "renamed" and got[4]["issue"]["closed_at"] is None, "each delivery carries the issue after its change"


@pytest.mark.requirement("R16")
@pytest.mark.category("side_effects")
def test_a_comment_is_delivered_to_hooks_subscribed_to_comments(api, http, receiver):
    project, owner, _, reporter = api.team()
    _, both, _ = api.hook(owner, project)
    _, issues_only, _ = api.hook(owner, project, events=["issues"])
    _, comments_only, _ = api.hook(owner, project, events=["issue_comment"])
    issue = api.issue(owner, project)
    comment = api.comment(reporter, project, issue["number"], "Confirmed")
    got = receiver.got(both)
    assert [g["headers"].get("x-tracker-event") for g in got] == ["issues", "issue_comment"], f"both events reach a hook with default events: {[g['headers'] for g in got]}"
    body = payload(got[1])
    assert body["action"] == "created" and body["comment"]["id"] == comment["id"] and body["comment"]["body"] == "Confirmed", f"the comment delivery: {body}"
    assert body["issue"]["comments"] == 1 and body["sender"]["id"] == reporter.id, f"the issue after the comment, and its sender: {body}"
    assert [g["headers"].get("x-tracker-event") for g in receiver.got(issues_only)] == ["issues"], "a hook for issues only gets no comment"
    assert [g["headers"].get("x-tracker-event") for g in receiver.got(comments_only)] == ["issue_comment"], "a hook for comments only gets no issue event"


@pytest.mark.requirement("R17")
@pytest.mark.category("security")
@pytest.mark.cwe(347)
def test_every_delivery_is_signed_with_its_own_hooks_secret(api, http, receiver):
    owner, project = api.owned()
    _, path_a, secret_a = api.hook(owner, project, secret="first-secret-ü")
    _, path_b, secret_b = api.hook(owner, project, secret="second-secret")
    issue = api.issue(owner, project, title="Ünïcödé \"quotes\" & <tags>", body="line\nbreak")
    api.comment(owner, project, issue["number"], "✓ done")
    for path, secret in ((path_a, secret_a), (path_b, secret_b)):
        for delivery in receiver.got(path):
            raw = receiver.raw(delivery)
            want = "sha256=" + hmac.new(secret.encode("utf-8"), raw, hashlib.sha256).hexdigest()
            assert delivery["headers"].get("x-tracker-signature") == want, (
                f"X-Tracker-Signature must be sha256=<hex HMAC-SHA256 of the exact body, keyed with the hook's secret>: got "
                f"{delivery['headers'].get('x-tracker-signature')!r}, want {want!r}")
    assert len(receiver.got(path_a)) == len(receiver.got(path_b)) == 2, "each hook got the issue and the comment"


@pytest.mark.requirement("R17")
@pytest.mark.category("security")
@pytest.mark.cwe(347)
def test_a_changed_secret_signs_later_deliveries(api, http, receiver):
    owner, project = api.owned()
    hook, path, old = api.hook(owner, project)
    api.issue(owner, project)
    api.ok(http.patch(f"/projects/{project['id']}/hooks/{hook['id']}", json={"secret": "rotated-secret-42"}, headers=owner.headers), 200, "rotate the secret")
    api.issue(owner, project)
    first, second = receiver.got(path)
    assert first["headers"].get("x-tracker-signature") == receiver.signature(old, receiver.raw(first)), "the first delivery is signed with the old secret"
    assert second["headers"].get("x-tracker-signature") == receiver.signature("rotated-secret-42", receiver.raw(second)), "later deliveries use the new secret"


@pytest.mark.requirement("R18")
@pytest.mark.category("side_effects")
def test_a_failing_receiver_never_fails_the_request(api, http, receiver):
    owner, project, hook, path = api.hooked()
    receiver.answer(path, 500)
    issue = api.issue(owner, project)
    receiver.answer(path, 404)
    api.patch_issue(owner, project, issue["number"], state="closed")
    receiver.answer(path, 0)
    api.comment(owner, project, issue["number"])
    receiver.answer(path, 204)
    api.patch_issue(owner, project, issue["number"], state="open")
    records = api.deliveries(owner, project, hook)
    seen = [(d["event"], d["action"], d["issue_number"], d["status_code"], d["success"]) for d in records]
    assert seen == [("issues", "opened", 1, 500, False), ("issues", "closed", 1, 404, False), ("issue_comment", "created", 1, None, False), ("issues", "reopened", 1, 204, True)], f"deliveries oldest first: {seen}"
    assert len(receiver.got(path)) == 4, "no retries"


@pytest.mark.requirement("R18")
@pytest.mark.category("side_effects")
def test_the_delivery_header_names_the_recorded_delivery(api, http, receiver):
    owner, project, hook, path = api.hooked()
    api.issue(owner, project)
    api.issue(owner, project)
    records = api.deliveries(owner, project, hook)
    assert [d["id"] for d in records] == [g["headers"].get("x-tracker-delivery") for g in receiver.got(path)], "X-Tracker-Delivery is the delivery's id"
    assert [(d["issue_number"], d["status_code"], d["success"]) for d in records] == [(1, 200, True), (2, 200, True)] and all(d["delivered_at"] for d in records), f"two successful deliveries: {records}"
    assert len({d["id"] for d in records}) == 2, "delivery ids are unique"


@pytest.mark.requirement("R16", "R19")
@pytest.mark.category("side_effects")
def test_failed_and_unrelated_requests_deliver_nothing(api, http, receiver):
    project, owner, _, reporter = api.team()
    _, path, _ = api.hook(owner, project)
    base = f"/projects/{project['id']}"
    theirs = api.issue(owner, project)
    assert len(receiver.got(path)) == 1
    http.post(f"{base}/issues", json={"title": ""}, headers=owner.headers)
    http.patch(f"{base}/issues/{theirs['number']}", json={"title": "x"}, headers=reporter.headers)
    http.patch(f"{base}/issues/{theirs['number']}", json={"state": "shut"}, headers=owner.headers)
    http.post(f"{base}/issues/{theirs['number']}/comments", json={"body": " "}, headers=owner.headers)
    http.post(f"{base}/issues", json={"title": "x", "labels": []}, headers=reporter.headers)
    api.label(owner, project)
    api.milestone(owner, project)
    api.add_member(owner, project, api.user(), "reporter")
    api.get_issue(owner, project, theirs["number"])
    assert len(receiver.got(path)) == 1, f"failed requests and other changes deliver nothing: {[payload(g).get('action') for g in receiver.got(path)]}"


@pytest.mark.requirement("R15", "R16")
@pytest.mark.category("side_effects")
def test_inactive_and_deleted_hooks_get_nothing(api, http, receiver):
    owner, project, hook, path = api.hooked()
    _, idle, _ = api.hook(owner, project, active=False)
    api.issue(owner, project)
    paused = api.ok(http.patch(f"/projects/{project['id']}/hooks/{hook['id']}", json={"active": False}, headers=owner.headers), 200, "pause the hook")
    assert paused["active"] is False, f"the paused hook: {paused}"
    api.issue(owner, project)
    assert len(receiver.got(path)) == 1 and receiver.got(idle) == [], "inactive hooks get nothing"
    api.ok(http.patch(f"/projects/{project['id']}/hooks/{hook['id']}", json={"active": True}, headers=owner.headers), 200, "resume")
    api.issue(owner, project)
    assert len(receiver.got(path)) == 2, "an active hook gets deliveries again"
    assert http.delete(f"/projects/{project['id']}/hooks/{hook['id']}", headers=owner.headers).status_code == 204
    api.issue(owner, project)
    assert len(receiver.got(path)) == 2, "a deleted hook gets nothing"


@pytest.mark.requirement("R16")
@pytest.mark.category("side_effects")
def test_hooks_are_called_in_order_of_creation_and_only_for_their_project(api, http, receiver):
    owner = api.user()
    project, other = api.project(owner), api.project(owner)
    _, first, _ = api.hook(owner, project)
    _, second, _ = api.hook(owner, project)
    _, elsewhere, _ = api.hook(owner, other)
    api.issue(owner, project)
    a, b = receiver.got(first), receiver.got(second)
    assert len(a) == len(b) == 1 and a[0]["seq"] < b[0]["seq"], "the older hook is called first"
    assert receiver.got(elsewhere) == [], "another project's hook gets nothing"


@pytest.mark.requirement("R15")
@pytest.mark.category("api_surface")
def test_a_hook_is_answered_without_its_secret(api, http, receiver):
    owner, project = api.owned()
    url = receiver.url(receiver.fresh_path())
    r = http.post(f"/projects/{project['id']}/hooks", json={"url": url, "secret": "never-show-me-1234"}, headers=owner.headers)
    hook = api.ok(r, 201, "create a hook")
    assert (hook["url"], sorted(hook["events"]), hook["active"]) == (url, ["issue_comment", "issues"], True) and hook["id"], f"the hook with defaults: {hook}"
    listed = http.get(f"/projects/{project['id']}/hooks", headers=owner.headers)
    patched = http.patch(f"/projects/{project['id']}/hooks/{hook['id']}", json={"events": ["issues"]}, headers=owner.headers)
    assert patched.status_code == 200 and patched.json()["events"] == ["issues"], f"PATCH events: {api.brief(patched)}"
    assert [h["id"] for h in listed.json()["items"]] == [hook["id"]], f"listed: {listed.text[:200]}"
    for response in (r, listed, patched):
        assert "never-show-me-1234" not in response.text, f"the secret is never answered: {api.brief(response)}"


@pytest.mark.requirement("R15")
@pytest.mark.category("validation")
def test_hook_fields_are_validated(api, http, receiver):
    owner, project = api.owned()
    url = receiver.url(receiver.fresh_path())
    path = f"/projects/{project['id']}/hooks"
    cases = [
        ({"url": url, "secret": "short"}, ["secret"], "a 5-character secret"),
        ({"url": url, "secret": "s" * 201}, ["secret"], "a 201-character secret"),
        ({"url": url}, ["secret"], "no secret"),
        ({"secret": "long enough"}, ["url"], "no url"),
        ({"url": url, "secret": "long enough", "events": []}, ["events"], "no events"),
        ({"url": url, "secret": "long enough", "events": ["push"]}, ["events"], "an unknown event"),
        ({"url": url, "secret": "long enough", "events": ["issues", "issues"]}, ["events"], "a repeated event"),
        ({"url": url, "secret": "long enough", "active": "yes"}, ["active"], "active not a boolean"),
        ({"url": url + "/" + "x" * 500, "secret": "long enough"}, ["url"], "a url over 500 characters"),
        ({"url": url + "/a b", "secret": "long enough"}, ["url"], "a url with a space"),
    ]
    problems = [api.validation_problem(http.post(path, json=body, headers=owner.headers), fields, what) for body, fields, what in cases]
    api.assert_no_problems(problems, "hook validation")
    assert api.ok(http.get(path, headers=owner.headers), 200, "list hooks")["items"] == [], "nothing was created"


@pytest.mark.requirement("R15")
@pytest.mark.category("state")
def test_a_sixth_hook_gets_409(api, http, receiver):
    owner, project = api.owned()
    hooks = [api.hook(owner, project)[0] for _ in range(5)]
    api.error(http.post(f"/projects/{project['id']}/hooks", json={"url": receiver.url(receiver.fresh_path()), "secret": "sixth-secret"}, headers=owner.headers), 409, "conflict", "a sixth hook")
    assert http.delete(f"/projects/{project['id']}/hooks/{hooks[0]['id']}", headers=owner.headers).status_code == 204
    api.hook(owner, project)
    listed = [h["id"] for h in api.ok(http.get(f"/projects/{project['id']}/hooks", headers=owner.headers), 200, "list")["items"]]
    assert listed[:4] == [h["id"] for h in hooks[1:]] and len(listed) == 5, f"after a delete there is room for one more, oldest first: {listed}"
