"""Refused requests change nothing and deliver nothing, guards one condition at a time, ids in bodies (issue 35).

spec.md, Precedence: "A request that fails changes nothing and delivers no webhook." Every
endpoint that takes several fields gets its valid body with one field invalid, at each position
in turn (``one_invalid_field``); the state is read back (``unchanged``), and for issue requests
the item's own receiver path must have got nothing. Refusals for another reason (a label name
taken, a sixth hook) carry valid fields too.

Body references: "`labels`: ... label ids **of this project**", "`milestone_id`: `null` or a
milestone id **of this project**", "`assignees`: ... each a **member of this project**", "Any
other id (another project's label or milestone, a non-member, a repeat, an unknown id) gets
`422` naming the field"; members' "`user_id` must name a user". Each is tried with an id of
another project, of a deleted entity (a removed member), and of the right kind in the wrong
place (a label's id as `milestone_id`).

Guards whose conditions usually travel together: "A project has at most 5 hooks" counts hooks,
not active hooks (two deactivated); "action `closed` when it changed the state to `closed` ...
otherwise `edited`" (a PATCH sending the state the issue already has); the issue number a
refused creation must not take ("numbers are never reused", "changes nothing").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import requests

from pytest_backendbench.http.api import unique
from pytest_backendbench.http.refusals import one_invalid_field, unchanged

pytestmark = [pytest.mark.tier("base")]

FRESH, USER, LABEL, MILESTONE, MEMBER = "<a fresh name>", "<a user's id>", "<a label's id>", "<a milestone's id>", "<a member's id>"
FOREIGN_LABEL, FOREIGN_MILESTONE, GONE_LABEL, GONE_MILESTONE = "<another project's label>", "<another project's milestone>", "<a deleted label>", "<a deleted milestone>"
OUTSIDER, REMOVED, PROJECT, HOOK_URL = "<a non-member's id>", "<a removed member's id>", "<the project's id>", "<a fresh receiver url>"
"""Placeholders in the bodies below, replaced when the item runs (ids are the service's)."""

LINK_VALID = {"title": "Valid title", "body": "Valid body", "labels": [LABEL], "milestone_id": MILESTONE, "assignees": [MEMBER]}
LINK_BAD = {"title": [" ", "t" * 256], "body": [None, "b" * 65_536],
            "labels": [[FOREIGN_LABEL], [GONE_LABEL], [MILESTONE], [LABEL, LABEL]],
            "milestone_id": [FOREIGN_MILESTONE, GONE_MILESTONE, LABEL],
            "assignees": [[OUTSIDER], [REMOVED], [PROJECT]]}
BODIES: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    # endpoint: (requirement, a valid body, bad values per field)
    "create-user": ("R3", {"username": FRESH, "password": "long-enough-1"}, {"username": ["Not_Lower", "ab"], "password": ["short", 12345678]}),
    "add-member": ("R6", {"user_id": USER, "role": "reporter"}, {"user_id": ["no-such-user", PROJECT], "role": ["owner", None]}),
    "create-issue": ("R9", LINK_VALID, LINK_BAD),
    "patch-issue": ("R9", {**LINK_VALID, "state": "closed"}, {**LINK_BAD, "state": ["done", None]}),
    "create-label": ("R13", {"name": FRESH, "color": "#A1B2C3", "description": "valid"},
                     {"name": ["  ", "n" * 51], "color": ["red", "#12345"], "description": ["d" * 201, None]}),
    "patch-label": ("R13", {"name": FRESH, "color": "#A1B2C3", "description": "changed"}, {"name": [None], "color": ["#GGGGGG"], "description": [5]}),
    "create-milestone": ("R14", {"title": "v2.0", "description": "valid", "due_on": "2024-02-29"},
                         {"title": [" "], "description": ["d" * 1001], "due_on": ["2025-02-29", "2025-2-1"]}),
    "patch-milestone": ("R14", {"title": "v2.1", "description": "changed", "due_on": "2030-12-31", "state": "closed"},
                        {"title": ["t" * 101], "description": [None], "due_on": ["2030-13-01"], "state": ["done"]}),
    "create-hook": ("R15", {"url": HOOK_URL, "secret": "long-secret-1", "events": ["issues"], "active": True},
                    {"url": ["http://169.254.169.254/hook"], "secret": ["short"], "events": [[], ["pushes"]], "active": ["yes"]}),
    "patch-hook": ("R15", {"url": HOOK_URL, "secret": "another-secret-2", "events": ["issue_comment"], "active": False},
                   {"url": ["hook without scheme"], "secret": ["s" * 201], "events": [["issues", "issues"]], "active": [None]}),
}
CASES = [pytest.param(endpoint, *case.values, id=f"{endpoint}-{case.id}", marks=[pytest.mark.requirement(requirement, "R19")])
         for endpoint, (requirement, valid, bad) in BODIES.items() for case in one_invalid_field(valid, bad)]


class World:
    """One item's project (with a hook to its own receiver path) and the ids the placeholders stand for."""

    def __init__(self, api: Any) -> None:
        self.api, self.http = api, api.http
        self.project, self.owner, maintainer, _ = api.team()
        self.hook, self.path, _ = api.hook(self.owner, self.project)
        other = api.project(self.owner)
        removed = api.user("removed")
        api.add_member(self.owner, self.project, removed, "reporter")
        self.base = f"/projects/{self.project['id']}"
        self.ok(self.http.delete(f"{self.base}/members/{removed.id}", headers=self.owner.headers), 204, "remove a member")
        gone_label, gone_milestone = api.label(self.owner, self.project), api.milestone(self.owner, self.project)
        for kind, made in (("labels", gone_label), ("milestones", gone_milestone)):
            self.ok(self.http.delete(f"{self.base}/{kind}/{made['id']}", headers=self.owner.headers), 204, f"delete one of the {kind}")
        self.values = {
            FRESH: unique("fresh"), USER: api.user().id, LABEL: api.label(self.owner, self.project)["id"],
            MILESTONE: api.milestone(self.owner, self.project)["id"], MEMBER: maintainer.id,
            FOREIGN_LABEL: api.label(self.owner, other)["id"], FOREIGN_MILESTONE: api.milestone(self.owner, other)["id"],
            GONE_LABEL: gone_label["id"], GONE_MILESTONE: gone_milestone["id"], OUTSIDER: api.user().id, REMOVED: removed.id,
            PROJECT: self.project["id"], HOOK_URL: api.receiver.url(api.receiver.fresh_path()),
        }

    def ok(self, response: requests.Response, status: int, what: str) -> Any:
        return self.api.ok(response, status, what)

    def fill(self, value: Any) -> Any:
        """``value`` with its placeholders replaced (inside lists too)."""
        if isinstance(value, list):
            return [self.fill(v) for v in value]
        return self.values.get(value, value) if isinstance(value, str) else value

    def read(self, *paths: str) -> Callable[[], Any]:
        """What must not change: the answers at ``paths`` and what the item's receiver path got."""
        return lambda: ([self.ok(self.http.get(self.base + p, headers=self.owner.headers), 200, f"read {p}") for p in paths],
                        len(self.api.receiver.got(self.path)))

    def send(self, method: str, path: str, caller: Any = None) -> Callable[[dict[str, Any]], requests.Response]:
        return lambda body: self.http.request(method, path, json=body, headers=(caller or self.owner).headers)


def scene(world: World, endpoint: str) -> tuple[Callable[[dict[str, Any]], requests.Response], Callable[[], Any]]:
    """How to send ``endpoint`` a body, and how to read back what it must not change."""
    api, base = world.api, world.base
    if endpoint == "create-user":
        return world.send("POST", "/users", api.admin), lambda: None  # no user list in this spec: the item creates the user afterwards
    if endpoint == "add-member":
        return world.send("POST", f"{base}/members"), world.read("/members")
    if endpoint == "create-issue":
        return world.send("POST", f"{base}/issues"), world.read("/issues?state=all", "/milestones")
    if endpoint == "patch-issue":
        number = api.issue(world.owner, world.project)["number"]
        return world.send("PATCH", f"{base}/issues/{number}"), world.read(f"/issues/{number}", "/milestones")
    kind, item = endpoint.split("-")[1] + "s", None
    if endpoint.startswith("patch-"):
        item = {"labels": lambda: api.label(world.owner, world.project), "milestones": lambda: api.milestone(world.owner, world.project),
                "hooks": lambda: world.hook}[kind]()
    path = f"{base}/{kind}" + (f"/{item['id']}" if item else "")
    reads = [f"/{kind}"] if kind != "hooks" else ["/hooks", f"/hooks/{world.hook['id']}/deliveries"]
    return world.send("PATCH" if item else "POST", path), world.read(*reads)


@pytest.mark.category("validation")
@pytest.mark.parametrize("endpoint, field, body", CASES)
def test_one_invalid_field_anywhere_in_the_body_changes_nothing(api, http, endpoint, field, body):
    world = World(api)
    send, read = scene(world, endpoint)
    sent = {key: world.fill(value) for key, value in body.items()}
    with unchanged(read, f"{endpoint} with {field} invalid"):
        r = send(sent)
    api.assert_no_problems([api.validation_problem(r, [field], f"{endpoint} with only {field} invalid: {str(sent)[:300]}")], "one invalid field")
    if endpoint == "create-user" and field != "username":
        again = http.post("/users", json={"username": sent["username"], "password": "long-enough-1"}, headers=api.admin.headers)
        assert again.status_code == 201, f"the refused user was not created, so its username is still free: {api.brief(again)}"


@pytest.mark.requirement("R8", "R19")
@pytest.mark.category("validation")
def test_refused_issues_take_no_number_and_deliver_nothing(api, http, receiver):
    owner, project, _, path = api.hooked()
    base = f"/projects/{project['id']}/issues"
    for body in ({"title": " "}, {"title": "Valid", "labels": ["no-such-label"]}, {"title": "Valid", "assignees": ["nobody"]}):
        api.assert_no_problems([api.validation_problem(http.post(base, json=body, headers=owner.headers), None, f"create an issue {body}")], "refused issues")
    assert receiver.got(path) == [], "a refused creation delivers no webhook"
    first = api.issue(owner, project, "The first issue that was created")
    assert first["number"] == 1, f"refused creations take no number: the first created issue is number 1, got {first['number']}"


Refusal = tuple[Callable[[], requests.Response], Callable[[], Any], int, str]


def taken_label_name(api: Any) -> Refusal:
    owner, project = api.owned()
    taken, label = api.label(owner, project, "Bug"), api.label(owner, project, "feature", "#00ff00", description="old")
    body = {"color": "#123abc", "description": "new", "name": "bug"}
    base = f"/projects/{project['id']}/labels"
    return ((lambda: api.http.patch(f"{base}/{label['id']}", json=body, headers=owner.headers)),
            lambda: (taken, api.ok(api.http.get(base, headers=owner.headers), 200, "list labels")), 409, "conflict")


def owner_membership(api: Any) -> Refusal:
    owner, project = api.owned()
    base = f"/projects/{project['id']}/members"
    return ((lambda: api.http.patch(f"{base}/{owner.id}", json={"role": "maintainer"}, headers=owner.headers)),
            lambda: api.ok(api.http.get(base, headers=owner.headers), 200, "list members"), 409, "conflict")


def sixth_hook(api: Any, inactive: int) -> Refusal:
    owner, project = api.owned()
    hooks = [api.hook(owner, project)[0] for _ in range(5)]
    base = f"/projects/{project['id']}/hooks"
    for hook in hooks[:inactive]:
        api.ok(api.http.patch(f"{base}/{hook['id']}", json={"active": False}, headers=owner.headers), 200, "deactivate a hook")
    body = {"url": api.receiver.url(api.receiver.fresh_path()), "secret": "long-secret-6", "events": ["issues"], "active": True}
    return ((lambda: api.http.post(base, json=body, headers=owner.headers)),
            lambda: api.ok(api.http.get(base, headers=owner.headers), 200, "list hooks"), 409, "conflict")


REFUSALS: dict[str, tuple[tuple[str, ...], Callable[[Any], Refusal]]] = {
    "label-name-taken-with-a-valid-colour": (("R13",), taken_label_name),
    "owner-membership-with-a-valid-role": (("R6",), owner_membership),
    "sixth-hook-of-five-active": (("R15",), lambda api: sixth_hook(api, 0)),
    "sixth-hook-with-two-inactive": (("R15",), lambda api: sixth_hook(api, 2)),
}


@pytest.mark.category("state")
@pytest.mark.parametrize("case", [pytest.param(name, id=name, marks=[pytest.mark.requirement(*reqs, "R19")]) for name, (reqs, _) in REFUSALS.items()])
def test_a_request_refused_with_valid_fields_changes_nothing(api, http, case):
    send, read, status, code = REFUSALS[case][1](api)
    with unchanged(read, case):
        r = send()
    api.error(r, status, code, f"{case}, every other field valid")


@pytest.mark.requirement("R16")
@pytest.mark.category("side_effects")
@pytest.mark.parametrize("state", ["open", "closed"])
def test_a_patch_sending_the_state_the_issue_has_is_edited(api, http, receiver, state):
    owner, project, _, path = api.hooked()
    issue = api.issue(owner, project)
    if state == "closed":
        issue = api.patch_issue(owner, project, issue["number"], state="closed")
    got = api.patch_issue(owner, project, issue["number"], state=state, title="Retitled")
    actions = [g["json"]["action"] for g in receiver.got(path)]
    assert (got["state"], got["closed_at"]) == (state, issue["closed_at"]), f"setting the state it already has changes nothing: {got}"
    assert actions[-1] == "edited", f"the state did not change, so the delivery's action is edited: {actions}"
