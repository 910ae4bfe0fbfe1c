"""Envelopes: creation, unique names, archiving, listing and deletion (spec.md: Envelopes)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R9")
@pytest.mark.category("api_surface")
def test_create_envelope_with_defaults(api, http, alice):
    r = http.post("/envelopes", json={"name": "Groceries"}, headers=alice.headers)
    assert r.status_code == 201, f"creating an envelope: {api.brief(r)}"
    got = {k: r.json().get(k, "<missing>") for k in ("name", "monthly_budget", "balance", "archived")}
    expected = {"name": "Groceries", "monthly_budget": 0, "balance": 0, "archived": False}
    assert got == expected, f"a new envelope: expected {expected}, got {got}"
    r = http.post("/envelopes", json={"name": "Rent", "monthly_budget": 120_000}, headers=alice.headers)
    assert r.status_code == 201 and r.json().get("monthly_budget") == 120_000, f"an envelope with a monthly budget: {api.brief(r)}"


@pytest.mark.requirement("R9", "R28")
@pytest.mark.category("validation")
@pytest.mark.parametrize(
    "field, values",
    [("name", [None, "", "\t", "e" * 61, ["Rent"]]), ("monthly_budget", [-5, 1_000_000_001, 99.9, "100", False, None])],
    ids=["name", "monthly_budget"],
)
def test_create_envelope_rejects_invalid_fields(api, http, alice, field, values):
    problems = []
    for value in values:
        body = {"name": "Fine", field: value}
        problems.append(api.validation_problem(http.post("/envelopes", json=body, headers=alice.headers), [field], f"envelope with {field}={value!r}"))
    api.assert_no_problems(problems, f"invalid envelope {field} values were not rejected as the spec says")
    listed = api.get(alice, "/envelopes?include_archived=true")["items"]
    assert listed == [], f"rejected requests must not create envelopes: {listed}"


@pytest.mark.requirement("R9")
@pytest.mark.category("validation")
def test_update_envelope_rejects_invalid_fields(api, http, alice):
    envelope = api.envelope(alice, name="Stable", monthly_budget=10)
    cases = [({"monthly_budget": -1}, ["monthly_budget"]), ({"archived": "yes"}, ["archived"]), ({"name": "", "archived": None}, ["name", "archived"])]
    problems = [
        api.validation_problem(http.patch(f"/envelopes/{envelope['id']}", json=body, headers=alice.headers), fields, f"envelope update {body}")
        for body, fields in cases
    ]
    api.assert_no_problems(problems, "invalid envelope updates were not rejected as the spec says")
    got = api.get(alice, f"/envelopes/{envelope['id']}")
    assert (got.get("name"), got.get("monthly_budget"), got.get("archived")) == ("Stable", 10, False), f"rejected updates changed the envelope: {got}"


@pytest.mark.requirement("R10")
@pytest.mark.category("state")
@pytest.mark.parametrize("second", ["Holiday", "holiday", "HOLIDAY"], ids=["same", "lower", "upper"])
def test_envelope_names_are_unique_case_insensitively(api, http, alice, second):
    api.envelope(alice, name="Holiday")
    r = http.post("/envelopes", json={"name": second}, headers=alice.headers)
    api.error(r, 409, "conflict", f"creating envelope {second!r} next to 'Holiday'")
    names = [e["name"] for e in api.get(alice, "/envelopes")["items"]]
    assert names == ["Holiday"], f"the clashing envelope must not be created: {names}"


@pytest.mark.requirement("R10")
@pytest.mark.category("state")
def test_archived_envelopes_keep_their_name(api, http, alice):
    old = api.envelope(alice, name="Car")
    api.ok(http.patch(f"/envelopes/{old['id']}", json={"archived": True}, headers=alice.headers), 200, "archive an empty envelope")
    api.error(http.post("/envelopes", json={"name": "car"}, headers=alice.headers), 409, "conflict", "reusing an archived envelope's name")
    other = api.envelope(alice, name="Bike", monthly_budget=10)
    r = http.patch(f"/envelopes/{other['id']}", json={"name": "CAR", "monthly_budget": 99}, headers=alice.headers)
    api.error(r, 409, "conflict", "renaming onto an archived envelope's name (with a valid budget change)")
    got = api.get(alice, f"/envelopes/{other['id']}")
    assert (got["name"], got["monthly_budget"]) == ("Bike", 10), f"the refused rename must change nothing, not even the budget sent with it: {got}"


@pytest.mark.requirement("R10", "R14")
@pytest.mark.category("state")
def test_other_users_may_use_the_same_name(api, http, alice, bob):
    api.envelope(alice, name="Utilities")
    r = http.post("/envelopes", json={"name": "Utilities"}, headers=bob.headers)
    assert r.status_code == 201, f"names are unique per user only: {api.brief(r)}"


@pytest.mark.requirement("R10")
@pytest.mark.category("state")
def test_renaming_rules(api, http, alice):
    fun = api.envelope(alice, name="Fun")
    api.envelope(alice, name="Gifts")
    r = http.patch(f"/envelopes/{fun['id']}", json={"name": "FUN"}, headers=alice.headers)
    assert r.status_code == 200 and r.json().get("name") == "FUN", f"renaming an envelope to its own name in another case: {api.brief(r)}"
    api.error(http.patch(f"/envelopes/{fun['id']}", json={"name": "gifts"}, headers=alice.headers), 409, "conflict", "renaming onto another envelope's name")
    assert api.get(alice, f"/envelopes/{fun['id']}").get("name") == "FUN", "the refused rename changed the name"


@pytest.mark.requirement("R11")
@pytest.mark.category("api_surface")
def test_list_hides_archived_envelopes_by_default(api, http, alice):
    a = api.envelope(alice, name="A")
    b = api.envelope(alice, name="B")
    c = api.envelope(alice, name="C")
    api.ok(http.patch(f"/envelopes/{b['id']}", json={"archived": True}, headers=alice.headers), 200, "archive B")
    default = [e["id"] for e in api.get(alice, "/envelopes")["items"]]
    assert default == [a["id"], c["id"]], f"GET /envelopes lists unarchived envelopes oldest first: {default}"
    explicit = [e["id"] for e in api.get(alice, "/envelopes?include_archived=false")["items"]]
    assert explicit == [a["id"], c["id"]], f"include_archived=false is the default: {explicit}"
    everything = [e["id"] for e in api.get(alice, "/envelopes?include_archived=true")["items"]]
    assert everything == [a["id"], b["id"], c["id"]], f"include_archived=true lists all envelopes oldest first: {everything}"


@pytest.mark.requirement("R11")
@pytest.mark.category("validation")
def test_include_archived_must_be_true_or_false(api, http, alice):
    problems = [
        api.validation_problem(http.get("/envelopes", params={"include_archived": v}, headers=alice.headers), ["include_archived"], f"include_archived={v!r}")
        for v in ("yes", "1", "TRUE")
    ]
    api.assert_no_problems(problems, "invalid include_archived values were not rejected")


@pytest.mark.requirement("R12")
@pytest.mark.category("state")
def test_envelope_with_money_cannot_be_archived(api, http, alice):
    _account, envelope = api.funded(alice, 40)
    api.error(http.patch(f"/envelopes/{envelope['id']}", json={"archived": True}, headers=alice.headers), 409, "conflict", "archiving an envelope holding 40")
    got = api.get(alice, f"/envelopes/{envelope['id']}")
    assert (got.get("archived"), got.get("balance")) == (False, 40), f"the refused archive changed the envelope: {got}"


@pytest.mark.requirement("R12")
@pytest.mark.category("state")
def test_archive_and_unarchive(api, http, alice):
    envelope = api.envelope(alice, name="Seasonal")
    r = http.patch(f"/envelopes/{envelope['id']}", json={"archived": True}, headers=alice.headers)
    assert r.status_code == 200 and r.json().get("archived") is True, f"archiving an empty envelope: {api.brief(r)}"
    assert api.get(alice, f"/envelopes/{envelope['id']}").get("archived") is True, "the archive did not persist"
    r = http.patch(f"/envelopes/{envelope['id']}", json={"archived": False}, headers=alice.headers)
    assert r.status_code == 200 and r.json().get("archived") is False, f"un-archiving: {api.brief(r)}"
    assert [e["id"] for e in api.get(alice, "/envelopes")["items"]] == [envelope["id"]], "an un-archived envelope is listed again"


@pytest.mark.requirement("R12", "R27")
@pytest.mark.category("state")
@pytest.mark.parametrize("role", ["income", "expense", "transfer-from", "transfer-to"])
def test_transactions_naming_an_archived_envelope_get_409(api, http, alice, role):
    account = api.account(alice, opening_balance=1_000)
    live = api.envelope(alice, name="Live")
    api.transfer(alice, None, live, 500)
    archived = api.envelope(alice, name="Archived")
    api.ok(http.patch(f"/envelopes/{archived['id']}", json={"archived": True}, headers=alice.headers), 200, "archive an envelope")
    bodies = {
        "income": {"type": "income", "account_id": account["id"], "envelope_id": archived["id"], "amount": 10},
        "expense": {"type": "expense", "account_id": account["id"], "envelope_id": archived["id"], "amount": 10},
        "transfer-from": {"type": "transfer", "from_envelope_id": archived["id"], "to_envelope_id": live["id"], "amount": 10},
        "transfer-to": {"type": "transfer", "from_envelope_id": live["id"], "to_envelope_id": archived["id"], "amount": 10},
    }
    api.error(api.post_tx(alice, **bodies[role]), 409, "conflict", f"a {role} naming an archived envelope")
    assert api.balances(alice, account, live, archived) == [1_000, 500, 0], "the refused transaction changed a balance"


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_delete_an_unused_envelope(api, http, alice):
    envelope = api.envelope(alice)
    r = http.delete(f"/envelopes/{envelope['id']}", headers=alice.headers)
    assert r.status_code == 204, f"deleting an envelope no transaction refers to: {api.brief(r)}"
    api.error(http.get(f"/envelopes/{envelope['id']}", headers=alice.headers), 404, "not_found", "reading a deleted envelope")
    assert api.get(alice, "/envelopes?include_archived=true")["items"] == [], "the deleted envelope is still listed"


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_envelope_used_by_transactions_cannot_be_deleted(api, http, alice):
    api.account(alice, opening_balance=100)
    envelope = api.envelope(alice)
    api.transfer(alice, None, envelope, 60)
    api.transfer(alice, envelope, None, 60)
    assert api.balance(alice, envelope) == 0, "money moved in and out again should leave the envelope at 0"
    api.error(http.delete(f"/envelopes/{envelope['id']}", headers=alice.headers), 409, "conflict", "deleting an envelope that transfers refer to")
    api.get(alice, f"/envelopes/{envelope['id']}")
