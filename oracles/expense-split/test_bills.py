"""Bills: creation, validation, reading, listing, replacing and deleting (spec.md: Bills)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.fixture
def trio(api):
    """A project with three members of weight 1."""
    project = api.project()
    return project, [api.member(project, name) for name in ("Ada", "Ben", "Cy")]


@pytest.mark.requirement("R5", "R6")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("INSERT", table="bills")
@pytest.mark.db_effect("INSERT", table="bill_owers")
@pytest.mark.ab_check("AB-03")
def test_a_new_bill_answers_its_fields_and_shares(api, http, trio):
    project, (a, b, c) = trio
    body = api.bill_body(a, [c, b], amount=1234, date="2030-02-28", description="Groceries")
    r = api.post_bill(project, body)
    assert r.status_code == 201, api.brief(r)
    bill = r.json()
    assert isinstance(bill.get("id"), int), f"ids are integers: {bill}"
    expected = {"payer_id": a["id"], "amount_cents": 1234, "date": "2030-02-28", "description": "Groceries"}
    assert {k: bill.get(k) for k in expected} == expected, f"the fields sent are answered: {bill}"
    assert bill.get("owers") == sorted([b["id"], c["id"]]), f"owers in ascending id order: {bill}"
    assert bill.get("shares") == api.shares({b["id"]: 617, c["id"]: 617}), f"shares by member id: {bill}"
    assert isinstance(bill.get("created_at"), str) and bill["created_at"], f"created_at: {bill}"


@pytest.mark.requirement("R5")
@pytest.mark.category("state")
@pytest.mark.ab_check("AB-04")
def test_a_bill_reads_back_the_same(api, http, trio):
    project, (a, b, c) = trio
    bill = api.bill(project, b, [a, b, c], amount=999, date="2031-12-31")
    got = api.get_bill(project, bill)
    assert api.doc(got, ("id", "payer_id", "amount_cents", "date", "description", "owers", "shares")) == api.doc(bill, ("id", "payer_id", "amount_cents", "date", "description", "owers", "shares"))


@pytest.mark.requirement("R5")
@pytest.mark.category("validation")
@pytest.mark.parametrize("amount", [1, 10_000_000])
def test_amount_boundaries_are_accepted(api, http, trio, amount):
    project, (a, b, _) = trio
    assert api.bill(project, a, [b], amount=amount)["amount_cents"] == amount


@pytest.mark.requirement("R5")
@pytest.mark.category("validation")
def test_the_payer_may_or_may_not_owe(api, http, trio):
    project, (a, b, c) = trio
    outside = api.bill(project, a, [b, c], amount=100)
    inside = api.bill(project, a, [a], amount=100)
    assert outside["owers"] == sorted([b["id"], c["id"]]) and inside["owers"] == [a["id"]]


INVALID_BILLS = [
    ("amount-zero", {"amount_cents": 0}, ["amount_cents"]),
    ("amount-negative", {"amount_cents": -500}, ["amount_cents"]),
    ("amount-over-limit", {"amount_cents": 10_000_001}, ["amount_cents"]),
    ("amount-fraction", {"amount_cents": 12.5}, ["amount_cents"]),
    ("amount-string", {"amount_cents": "1000"}, ["amount_cents"]),
    ("amount-boolean", {"amount_cents": True}, ["amount_cents"]),
    ("date-not-a-day", {"date": "2030-02-30"}, ["date"]),
    ("date-other-format", {"date": "15/01/2030"}, ["date"]),
    ("date-with-time", {"date": "2030-01-15T10:00:00Z"}, ["date"]),
    ("date-month-13", {"date": "2030-13-01"}, ["date"]),
    ("date-number", {"date": 20300115}, ["date"]),
    ("description-blank", {"description": "   "}, ["description"]),
    ("description-too-long", {"description": "d" * 201}, ["description"]),
    ("owers-empty", {"owers": []}, ["owers"]),
    ("owers-not-a-list", {"owers": "all"}, ["owers"]),
    ("owers-duplicate", {"owers": "dup"}, ["owers"]),
    ("owers-unknown", {"owers": "unknown"}, ["owers"]),
    ("owers-strings", {"owers": "strings"}, ["owers"]),
    ("payer-unknown", {"payer_id": "unknown"}, ["payer_id"]),
    ("payer-string", {"payer_id": "1"}, ["payer_id"]),
    ("payer-missing", {"payer_id": None}, ["payer_id"]),
    ("all-missing", "empty", ["payer_id", "amount_cents", "date", "description", "owers"]),
]


@pytest.mark.requirement("R5")
@pytest.mark.category("validation")
@pytest.mark.parametrize("override,fields", [(o, f) for _, o, f in INVALID_BILLS], ids=[i for i, _, _ in INVALID_BILLS])
def test_invalid_bills_get_422_listing_the_fields(api, http, trio, override, fields):
    project, (a, b, c) = trio
    unknown = api.unknown_bill_id(project, a) + 1_000_000  # far above every member id made so far
    if override == "empty":
        body = {}
    else:
        body = api.bill_body(a, [b, c])
        special = {"dup": [b["id"], b["id"]], "unknown": [b["id"], unknown], "strings": [str(b["id"])]}
        for key, value in override.items():
            if value is None:
                body.pop(key)
            elif key == "payer_id" and value == "unknown":
                body[key] = unknown
            else:
                body[key] = special.get(value, value) if isinstance(value, str) and key == "owers" else value
    problem = api.validation_problem(api.post_bill(project, body), fields, f"an invalid bill {override}")
    assert problem is None, problem
    assert api.bills(project) == [], "a refused bill was recorded"
    assert set(api.balances(project).values()) == {0}, "a refused bill moved no balance"


@pytest.mark.requirement("R5")
@pytest.mark.category("validation")
def test_fifty_owers_are_allowed_and_fifty_one_are_not(api, http):
    project = api.project()
    members = [api.member(project, f"M{i:02d}") for i in range(51)]
    problem = api.validation_problem(api.post_bill(project, api.bill_body(members[0], members)), ["owers"], "51 owers")
    assert problem is None, problem
    bill = api.bill(project, members[0], members[:50], amount=5000)
    assert len(bill["shares"]) == 50 and {s["share_cents"] for s in bill["shares"]} == {100}, f"50 shares of 100: {bill['shares'][:3]}"


@pytest.mark.requirement("R5")
@pytest.mark.category("validation")
def test_a_200_character_description_is_accepted(api, http, trio):
    project, (a, b, _) = trio
    assert api.bill(project, a, [b], description="ü" * 200)["description"] == "ü" * 200


@pytest.mark.requirement("R5")
@pytest.mark.category("state")
def test_bills_are_listed_by_date_then_id_descending(api, http, trio):
    project, (a, b, _) = trio
    first = api.bill(project, a, [b], date="2030-03-01")
    second = api.bill(project, a, [b], date="2030-05-01")
    third = api.bill(project, a, [b], date="2030-03-01")
    fourth = api.bill(project, a, [b], date="2029-12-31")
    # second, then first and third (same date) by id descending, then fourth: the ids are the service's, so their order is read from them
    expected = [x["id"] for x in sorted((first, second, third, fourth), key=lambda x: (x["date"], x["id"]), reverse=True)]
    assert [x["id"] for x in api.bills(project)] == expected, "date descending, then id descending"


@pytest.mark.requirement("R5")
@pytest.mark.category("state")
@pytest.mark.db_effect("UPDATE", table="bills")
def test_put_replaces_the_bill_and_keeps_its_id(api, http, trio):
    project, (a, b, c) = trio
    bill = api.bill(project, a, [b], amount=1000, date="2030-01-01", description="Taxi")
    r = api.put_bill(project, bill, api.bill_body(c, [a, b, c], amount=900, date="2030-01-02", description="Train"))
    assert r.status_code == 200, api.brief(r)
    got = r.json()
    assert got.get("id") == bill["id"], f"the same id: {got}"
    assert (got.get("payer_id"), got.get("amount_cents"), got.get("date"), got.get("description")) == (c["id"], 900, "2030-01-02", "Train"), got
    assert [s["share_cents"] for s in got.get("shares", [])] == [300, 300, 300], f"shares recomputed: {got}"
    assert api.doc(api.get_bill(project, bill), ("payer_id", "amount_cents", "owers")) == {"payer_id": c["id"], "amount_cents": 900, "owers": got["owers"]}
    assert len(api.bills(project)) == 1, "replaced, not added"


@pytest.mark.requirement("R5")
@pytest.mark.category("validation")
def test_an_invalid_replacement_gets_422_and_changes_nothing(api, http, trio):
    project, (a, b, _) = trio
    bill = api.bill(project, a, [b], amount=1000)
    body = api.bill_body(a, [b], amount=1000)
    del body["description"]
    problem = api.validation_problem(api.put_bill(project, bill, body), ["description"], "PUT without description (every field required)")
    assert problem is None, problem
    assert api.get_bill(project, bill)["description"] == bill["description"]


@pytest.mark.requirement("R5")
@pytest.mark.category("state")
@pytest.mark.db_effect("DELETE", table="bills")
def test_delete_removes_the_bill(api, http, trio):
    project, (a, b, _) = trio
    kept, gone = api.bill(project, a, [b]), api.bill(project, b, [a])
    r = http.delete(project.path(f"/bills/{gone['id']}"), headers=project.auth)
    assert r.status_code == 204 and not r.content, api.brief(r)
    api.error(api.get(project, f"/bills/{gone['id']}"), 404, "not_found", "a deleted bill")
    assert [x["id"] for x in api.bills(project)] == [kept["id"]]
    api.error(http.delete(project.path(f"/bills/{gone['id']}"), headers=project.auth), 404, "not_found", "deleting it again")


@pytest.mark.requirement("R5")
@pytest.mark.category("api_surface")
@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
def test_an_unknown_bill_gets_404(api, http, trio, method):
    project, (a, b, _) = trio
    unknown = api.unknown_bill_id(project, a)
    r = http.request(method, project.path(f"/bills/{unknown}"), json=api.bill_body(a, [b]) if method == "PUT" else None, headers=project.auth)
    api.error(r, 404, "not_found", f"{method} an unknown bill")
    assert api.bills(project) == [], "nothing was created"


@pytest.mark.requirement("R4")
@pytest.mark.category("api_surface")
def test_an_unknown_member_gets_404(api, http):
    project = api.project()
    member = api.member(project)
    api.error(api.patch_member(project, member["id"] + 100_000, name="Ghost"), 404, "not_found", "PATCH an unknown member")
