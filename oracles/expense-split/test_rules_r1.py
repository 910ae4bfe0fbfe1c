"""R1 (evolved) items: the stated error precedence, weights over time, inactive members, and refused requests that change nothing.

spec.md: "Error precedence: 401, then 403, then 404 (ids in the path), then 422, then 409. At
POST /api/projects/{slug}/token, 422 ... comes before 401." and "A weight change affects only
bills created or replaced afterwards."
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r1")]


# ---------------------------------------------------------------- precedence


@pytest.mark.requirement("R3", "R5")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("method", ["PUT", "DELETE", "GET"])
def test_401_comes_before_404_and_422(api, http, method):
    project = api.project()
    a = api.member(project)
    unknown = api.unknown_bill_id(project, a)
    r = http.request(method, project.path(f"/bills/{unknown}"), json={"amount_cents": -1} if method == "PUT" else None)
    api.error(r, 401, "unauthorized", f"{method} an unknown bill, invalid body, no token")


@pytest.mark.requirement("R3", "R4")
@pytest.mark.category("authorization")
def test_403_comes_before_404_and_422(api, http):
    mine, theirs = api.project(), api.project()
    api.error(http.patch(theirs.path("/members/999999999"), json={"weight": 0}, headers=mine.auth), 403, "forbidden", "another project's path, unknown id, invalid body")
    api.error(http.post(theirs.path("/bills"), json={}, headers=mine.auth), 403, "forbidden", "another project's path, invalid body")


@pytest.mark.requirement("R4", "R5")
@pytest.mark.category("validation")
def test_404_comes_before_422(api, http):
    project = api.project()
    a = api.member(project)
    unknown = api.unknown_bill_id(project, a)
    api.error(api.put_bill(project, unknown, {"amount_cents": 0}), 404, "not_found", "PUT an unknown bill with an invalid body")
    api.error(api.patch_member(project, a["id"] + 1_000_000, weight=0), 404, "not_found", "PATCH an unknown member with an invalid body")


@pytest.mark.requirement("R4")
@pytest.mark.category("validation")
def test_422_comes_before_member_exists(api, http):
    project = api.project()
    api.member(project, "Twin")
    problem = api.validation_problem(api.post_member(project, name="Twin", weight=0), ["weight"], "a duplicate name with an invalid weight (422 wins)")
    assert problem is None, problem


@pytest.mark.requirement("R2")
@pytest.mark.category("validation")
def test_422_comes_before_slug_taken(api, http):
    project = api.project()
    problem = api.validation_problem(api.create_project(slug=project.slug, name=" "), ["name"], "an existing slug with a blank name (422 wins)")
    assert problem is None, problem


@pytest.mark.requirement("R4", "R7")
@pytest.mark.category("validation")
def test_422_comes_before_balance_not_zero(api, http):
    project, a, b = api.pair()
    api.bill(project, a, [b])
    problem = api.validation_problem(api.patch_member(project, b, active=False, weight=500), ["weight"], "deactivating with a balance and an invalid weight")
    assert problem is None, problem
    assert [m["active"] for m in api.members(project) if m["id"] == b["id"]] == [True]


@pytest.mark.requirement("R3")
@pytest.mark.category("validation")
@pytest.mark.parametrize("raw", [b"[]", b"nonsense"], ids=["array", "garbage"])
def test_token_path_422_comes_before_401(api, http, raw):
    r = http.post(f"/api/projects/{api.fresh_slug('nobody')}/token", data=raw, headers={"Content-Type": "application/json"})
    problem = api.validation_problem(r, ["body"], f"a token request {raw!r} for an unknown slug (422 before 401)")
    assert problem is None, problem


# ---------------------------------------------------------------- weights over time


@pytest.mark.requirement("R4", "R6")
@pytest.mark.category("side_effects")
def test_a_weight_change_leaves_earlier_bills_alone(api, http):
    project, a, b = api.pair("Al", "Bea")
    before = api.bill(project, a, [a, b], amount=1000)
    api.ok(api.patch_member(project, b, weight=3), 200, "Bea's weight to 3")
    assert api.get_bill(project, before)["shares"] == api.shares({a["id"]: 500, b["id"]: 500}), "an earlier bill keeps its shares"
    after = api.bill(project, a, [a, b], amount=1000)
    assert after["shares"] == api.shares({a["id"]: 250, b["id"]: 750}), "a later bill uses the new weight"
    assert api.balances(project) == {a["id"]: 1250, b["id"]: -1250}


@pytest.mark.requirement("R4", "R5", "R6")
@pytest.mark.category("side_effects")
def test_a_replaced_bill_uses_the_current_weights(api, http):
    project, a, b = api.pair("Cid", "Dot")
    bill = api.bill(project, a, [a, b], amount=900)
    api.ok(api.patch_member(project, a, weight=2), 200, "Cid's weight to 2")
    replaced = api.ok(api.put_bill(project, bill, api.bill_body(a, [a, b], amount=900)), 200, "replace the bill unchanged")
    assert replaced["shares"] == api.shares({a["id"]: 600, b["id"]: 300}), replaced["shares"]


# ---------------------------------------------------------------- inactive members


@pytest.mark.requirement("R4", "R5")
@pytest.mark.category("state")
def test_a_bill_cannot_be_replaced_onto_an_inactive_member(api, http):
    project = api.project()
    a, b, c = api.member(project, "Eda"), api.member(project, "Fox"), api.member(project, "Gia")
    bill = api.bill(project, a, [b], amount=400)
    api.ok(api.patch_member(project, c, active=False), 200, "deactivate Gia")
    problem = api.validation_problem(api.put_bill(project, bill, api.bill_body(a, [b, c], amount=400)), ["owers"], "replacing with an inactive ower")
    assert problem is None, problem
    problem = api.validation_problem(api.put_bill(project, bill, api.bill_body(c, [b], amount=400)), ["payer_id"], "replacing with an inactive payer")
    assert problem is None, problem
    assert api.get_bill(project, bill)["owers"] == [b["id"]], "the bill is unchanged"


@pytest.mark.requirement("R4", "R7", "R8")
@pytest.mark.category("workflow")
def test_an_inactive_members_balance_follows_deleted_bills_and_settles(api, http):
    project, a, b = api.pair("Hob", "Ida")
    api.bill(project, b, [a], amount=500)
    back = api.bill(project, a, [b], amount=500)
    api.ok(api.patch_member(project, b, active=False), 200, "deactivate Ida at zero")
    api.delete_bill(project, back)
    assert api.balances(project) == {a["id"]: -500, b["id"]: 500}, "deleting a bill moves an inactive member's balance too"
    assert api.settlements(project) == [(a["id"], b["id"], 500)], "the plan includes the inactive creditor"
    api.error(api.patch_member(project, a, active=False), 409, "balance_not_zero", "deactivating the debtor")


@pytest.mark.requirement("R4")
@pytest.mark.category("state")
def test_an_inactive_members_name_stays_taken(api, http):
    project = api.project()
    gone = api.member(project, "Jay")
    api.ok(api.patch_member(project, gone, active=False), 200, "deactivate Jay")
    api.error(api.post_member(project, name="Jay"), 409, "member_exists", "a new member with an inactive member's name")


@pytest.mark.requirement("R4")
@pytest.mark.category("state")
@pytest.mark.parametrize("body", [{}, {"active": True}, {"unknown_field": 1}], ids=["empty", "already-active", "undefined-field"])
def test_a_patch_without_changes_answers_the_member_unchanged(api, http, body):
    project = api.project()
    member = api.member(project, "Kim", weight=4)
    r = api.patch_member(project, member, **body)
    assert r.status_code == 200, api.brief(r)
    assert api.doc(r.json(), ("id", "name", "weight", "active")) == api.doc(member, ("id", "name", "weight", "active")), r.text[:200]


@pytest.mark.requirement("R4")
@pytest.mark.category("state")
def test_deactivating_twice_is_allowed(api, http):
    project = api.project()
    member = api.member(project)
    for _ in range(2):
        r = api.patch_member(project, member, active=False)
        assert r.status_code == 200 and r.json().get("active") is False, api.brief(r)


# ---------------------------------------------------------------- refused requests change nothing


@pytest.mark.requirement("R5", "R7", "R8")
@pytest.mark.category("state")
def test_a_refused_replacement_keeps_balances_and_plan(api, http):
    project, a, b = api.pair()
    bill = api.bill(project, a, [b], amount=1500)
    before = (api.balances(project), api.settlements(project))
    for body in (api.bill_body(a, [b], amount=0), api.bill_body(a, [], amount=100), api.bill_body(a, [b], date="2030-02-29")):
        assert api.put_bill(project, bill, body).status_code == 422, f"an invalid replacement {body}"
    assert (api.balances(project), api.settlements(project)) == before, "nothing moved"


@pytest.mark.requirement("R2", "R3")
@pytest.mark.category("authorization")
def test_a_refused_project_takes_no_password(api, http):
    project = api.project()
    api.error(api.create_project(slug=project.slug, password="another-password"), 409, "slug_taken", "the slug again")
    api.error(api.post_token(project.slug, "another-password"), 401, "unauthorized", "the refused project's password")
    assert api.post_token(project.slug, project.password).status_code == 200


@pytest.mark.requirement("R5", "R7")
@pytest.mark.category("workflow")
def test_dates_in_leap_years_are_real_days(api, http):
    project = api.project()
    a = api.member(project)
    assert api.bill(project, a, [a], date="2032-02-29")["date"] == "2032-02-29"
    problem = api.validation_problem(api.post_bill(project, api.bill_body(a, [a], date="2031-02-29")), ["date"], "29 February of a common year")
    assert problem is None, problem
