"""Members: creation, weights, names, listing, changes and deactivation (spec.md: Members)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R4")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("INSERT", table="members")
@pytest.mark.ab_check("AB-03")
def test_a_new_member_is_active_with_weight_1_by_default(api, http):
    project = api.project()
    r = api.post_member(project, name="Alice")
    assert r.status_code == 201, api.brief(r)
    member = r.json()
    assert isinstance(member.get("id"), int) and not isinstance(member.get("id"), bool), f"ids are integers: {member}"
    assert (member.get("name"), member.get("weight"), member.get("active")) == ("Alice", 1, True), f"weight defaults to 1, active: {member}"


@pytest.mark.requirement("R4")
@pytest.mark.category("validation")
@pytest.mark.parametrize("weight", [1, 2, 100])
def test_weights_from_1_to_100_are_kept(api, http, weight):
    project = api.project()
    member = api.member(project, "Bob", weight=weight)
    assert member.get("weight") == weight, f"weight {weight} is kept: {member}"
    assert [m.get("weight") for m in api.members(project)] == [weight]


INVALID_MEMBERS = [
    ("name-blank", {"name": " \t"}, ["name"]),
    ("name-empty", {"name": ""}, ["name"]),
    ("name-too-long", {"name": "m" * 61}, ["name"]),
    ("name-missing", {}, ["name"]),
    ("name-number", {"name": 7}, ["name"]),
    ("weight-zero", {"name": "Zed", "weight": 0}, ["weight"]),
    ("weight-101", {"name": "Zed", "weight": 101}, ["weight"]),
    ("weight-negative", {"name": "Zed", "weight": -1}, ["weight"]),
    ("weight-fraction", {"name": "Zed", "weight": 1.5}, ["weight"]),
    ("weight-boolean", {"name": "Zed", "weight": True}, ["weight"]),
    ("weight-string", {"name": "Zed", "weight": "2"}, ["weight"]),
    ("both", {"name": "", "weight": 0}, ["name", "weight"]),
]


@pytest.mark.requirement("R4")
@pytest.mark.category("validation")
@pytest.mark.parametrize("body,fields", [(b, f) for _, b, f in INVALID_MEMBERS], ids=[i for i, _, _ in INVALID_MEMBERS])
def test_invalid_members_get_422_and_are_not_added(api, http, body, fields):
    project = api.project()
    problem = api.validation_problem(api.post_member(project, **body), fields, f"an invalid member {body}")
    assert problem is None, problem
    assert api.members(project) == [], "a refused member was added"


@pytest.mark.requirement("R4")
@pytest.mark.category("validation")
def test_a_60_character_name_is_accepted(api, http):
    project = api.project()
    assert api.member(project, "é" * 60)["name"] == "é" * 60, "60 characters (not bytes) is the limit"


@pytest.mark.requirement("R4")
@pytest.mark.category("state")
def test_a_name_is_unique_within_its_project(api, http):
    project = api.project()
    first = api.member(project, "Carol")
    api.error(api.post_member(project, name="Carol"), 409, "member_exists", "the same name twice")
    assert [m["id"] for m in api.members(project)] == [first["id"]], "one Carol"


@pytest.mark.requirement("R4", "R12")
@pytest.mark.category("state")
def test_names_compare_exactly(api, http):
    project = api.project()
    made = [api.member(project, name) for name in ("Dan", "dan", "Dan ", " Dan")]
    listed = {m["id"]: m["name"] for m in api.members(project)}
    assert listed == {m["id"]: m["name"] for m in made} and sorted(listed.values()) == sorted(["Dan", "dan", "Dan ", " Dan"]), f"four distinct names, stored as sent: {listed}"


@pytest.mark.requirement("R4", "R3")
@pytest.mark.category("authorization")
def test_the_same_name_may_exist_in_two_projects(api, http):
    one, two = api.project(), api.project()
    a, b = api.member(one, "Eve"), api.member(two, "Eve")
    assert a["id"] != b["id"], "two members"
    assert [m["id"] for m in api.members(one)] == [a["id"]] and [m["id"] for m in api.members(two)] == [b["id"]], "each project lists only its own"


@pytest.mark.requirement("R4")
@pytest.mark.category("state")
def test_members_are_listed_by_id_active_or_not(api, http):
    project = api.project()
    made = [api.member(project, name) for name in ("Zoe", "Adam", "Mia")]
    api.ok(api.patch_member(project, made[1], active=False), 200, "deactivate Adam")
    listed = api.members(project)
    assert [m["id"] for m in listed] == sorted(m["id"] for m in made), f"every member in ascending id order: {listed}"
    active = {m["id"]: m["active"] for m in listed}
    assert active == {made[0]["id"]: True, made[1]["id"]: False, made[2]["id"]: True}, f"the inactive one is listed: {listed}"


@pytest.mark.requirement("R4")
@pytest.mark.category("state")
@pytest.mark.db_effect("UPDATE", table="members")
@pytest.mark.ab_check("AB-04")
def test_patch_changes_only_the_fields_sent(api, http):
    project = api.project()
    member = api.member(project, "Fay", weight=3)
    r = api.patch_member(project, member, weight=5)
    assert r.status_code == 200, api.brief(r)
    assert api.doc(r.json(), ("id", "name", "weight", "active")) == {"id": member["id"], "name": "Fay", "weight": 5, "active": True}, r.text[:200]
    r = api.patch_member(project, member, name="Faye")
    assert (r.json().get("name"), r.json().get("weight")) == ("Faye", 5), f"the weight kept: {r.text[:200]}"
    assert api.members(project)[0]["name"] == "Faye"


@pytest.mark.requirement("R4")
@pytest.mark.category("state")
def test_renaming_onto_another_members_name_gets_409(api, http):
    project = api.project()
    gus, hal = api.member(project, "Gus"), api.member(project, "Hal")
    api.error(api.patch_member(project, hal, name="Gus", weight=4), 409, "member_exists", "renaming Hal to Gus")
    assert sorted((m["name"], m["weight"]) for m in api.members(project)) == [("Gus", 1), ("Hal", 1)], "nothing changed"
    assert api.patch_member(project, gus, name="Gus").status_code == 200, "keeping one's own name is no conflict"


INVALID_PATCHES = [
    ("name-blank", {"name": "  "}, ["name"]),
    ("name-too-long", {"name": "x" * 61}, ["name"]),
    ("weight-zero", {"weight": 0}, ["weight"]),
    ("weight-fraction", {"weight": 2.5}, ["weight"]),
    ("active-string", {"active": "false"}, ["active"]),
    ("active-number", {"active": 0}, ["active"]),
]


@pytest.mark.requirement("R4")
@pytest.mark.category("validation")
@pytest.mark.parametrize("body,fields", [(b, f) for _, b, f in INVALID_PATCHES], ids=[i for i, _, _ in INVALID_PATCHES])
def test_invalid_changes_get_422_and_change_nothing(api, http, body, fields):
    project = api.project()
    member = api.member(project, "Ivy", weight=2)
    problem = api.validation_problem(api.patch_member(project, member, **body), fields, f"an invalid change {body}")
    assert problem is None, problem
    assert api.doc(api.members(project)[0], ("name", "weight", "active")) == {"name": "Ivy", "weight": 2, "active": True}


@pytest.mark.requirement("R4", "R7")
@pytest.mark.category("state")
def test_a_member_with_a_balance_cannot_be_deactivated(api, http):
    project = api.project()
    payer, ower = api.member(project, "Jo"), api.member(project, "Kai")
    api.bill(project, payer, [ower], amount=500)
    for member in (payer, ower):
        api.error(api.patch_member(project, member, active=False), 409, "balance_not_zero", f"deactivating {member['name']} (balance not 0)")
    assert [m["active"] for m in api.members(project)] == [True, True], "both stay active"


@pytest.mark.requirement("R4", "R7")
@pytest.mark.category("state")
def test_a_refused_deactivation_changes_nothing_else(api, http):
    project = api.project()
    payer, ower = api.member(project, "Lu"), api.member(project, "Max")
    api.bill(project, payer, [ower], amount=500)
    api.error(api.patch_member(project, ower, active=False, name="Maxi", weight=9), 409, "balance_not_zero", "deactivating with a balance")
    kept = next((m for m in api.members(project) if m["id"] == ower["id"]), {})
    assert api.doc(kept, ("name", "weight", "active")) == {"name": "Max", "weight": 1, "active": True}, "nothing changes"


@pytest.mark.requirement("R4", "R7")
@pytest.mark.category("workflow")
def test_a_member_at_zero_can_be_deactivated_and_reactivated(api, http):
    project, a, b = api.pair("Ned", "Oz")
    api.bill(project, a, [a, b], amount=1000)
    api.bill(project, b, [a, b], amount=1000)
    assert api.balances(project) == {a["id"]: 0, b["id"]: 0}
    r = api.patch_member(project, b, active=False)
    assert r.status_code == 200 and r.json().get("active") is False, api.brief(r)
    r = api.patch_member(project, b, active=True)
    assert r.status_code == 200 and r.json().get("active") is True, f"reactivating is always allowed: {api.brief(r)}"


@pytest.mark.requirement("R4", "R5")
@pytest.mark.category("state")
def test_an_inactive_member_cannot_pay_or_owe_a_new_bill(api, http):
    project = api.project()
    active, idle = api.member(project, "Pam"), api.member(project, "Quin")
    api.ok(api.patch_member(project, idle, active=False), 200, "deactivate Quin")
    for body, fields in ((api.bill_body(idle, [active]), ["payer_id"]), (api.bill_body(active, [active, idle]), ["owers"]),
                         (api.bill_body(idle, [idle]), ["payer_id", "owers"])):
        problem = api.validation_problem(api.post_bill(project, body), fields, f"a bill naming an inactive member {body}")
        assert problem is None, problem
    assert api.bills(project) == [], "no bill was recorded"


@pytest.mark.requirement("R4", "R7")
@pytest.mark.category("state")
def test_an_inactive_member_keeps_bills_and_balance(api, http):
    project, a, b = api.pair("Ray", "Sue")
    bill = api.bill(project, b, [a, b], amount=600)
    api.bill(project, a, [b], amount=300)
    assert api.balances(project)[b["id"]] == 0
    api.ok(api.patch_member(project, b, active=False), 200, "deactivate Sue at zero")
    assert [x["id"] for x in api.bills(project)] and api.get_bill(project, bill)["payer_id"] == b["id"], "her bills stay"
    items = api.balance_items(project)
    expected = sorted([(a["id"], True, 300, 300), (b["id"], False, 600, 600)])  # ascending member id, whichever that is
    assert [(i["member_id"], i["active"], i["paid_cents"], i["owed_cents"]) for i in items] == expected, items
