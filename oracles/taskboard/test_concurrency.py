"""Requests that arrive at once (spec.md: "Requests may arrive concurrently"; "A project always
keeps at least one owner"; "a user who is already a member gets `409`").

Each rule sent as a burst released together (http/concurrency.py), then the members read back.
"""

from __future__ import annotations

import pytest

from pytest_backendbench.http.concurrency import at_once, one_winner

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("state")]


@pytest.mark.requirement("R13", "R14")
def test_owners_leaving_at_once_leave_one_owner(api, http):
    creator = api.user("owner")
    project = api.project(creator)
    owners = [creator] + [api.user("coowner") for _ in range(3)]
    for owner in owners[1:]:
        api.add_member(project, creator, owner, "owner")
    answers = at_once(http.base_url, lambda owner: http.delete(f"/projects/{project['id']}/members/{owner.id}", headers=owner.headers),
                      owners, http.timeout_s)
    one_winner(answers, "four owners leaving a project at once (it keeps at least one owner)", won=204, allowed=3, code="conflict")
    stayed = owners[next(i for i, a in enumerate(answers) if a.status_code != 204)]
    members = api.ok(http.get(f"/projects/{project['id']}/members", headers=stayed.headers), 200, "list the members")["items"]
    assert [(m["user_id"], m["role"]) for m in members] == [(stayed.id, "owner")], f"the refused owner is the one owner left: {members}"


@pytest.mark.requirement("R12")
def test_a_user_added_at_once_is_a_member_once(api, http):
    owner, user = api.user("owner"), api.user("joiner")
    project = api.project(owner)
    answers = at_once(http.base_url, lambda _: http.post(f"/projects/{project['id']}/members", json={"username": user.username},
                                                         headers=owner.headers), range(6), http.timeout_s)
    one_winner(answers, "one user added six times at once", code="conflict")
    members = api.ok(http.get(f"/projects/{project['id']}/members", headers=owner.headers), 200, "list the members")["items"]
    assert [m["user_id"] for m in members] == [owner.id, user.id], f"the user is listed once, after the creator: {members}"
