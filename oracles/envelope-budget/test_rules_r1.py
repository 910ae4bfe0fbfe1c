"""R1 (evolved) items: error precedence, isolation corners and type checks."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r1")]


@pytest.mark.requirement("R27", "R4")
@pytest.mark.category("authorization")
def test_authentication_is_checked_before_anything_else(api, http, alice):
    bad = {"Authorization": "Bearer not-a-token"}
    account = api.account(alice)
    for method, path, body in (
        ("GET", "/accounts/no-such-account", None),
        ("PATCH", f"/accounts/{account['id']}", {"name": ""}),
        ("POST", "/transactions", {"type": "refund"}),
        ("GET", "/months/2025-99", None),
        ("DELETE", "/transactions/no-such-transaction", None),
    ):
        api.error(http.request(method, path, json=body, headers=bad), 401, "unauthorized", f"{method} {path} with an unknown token")


@pytest.mark.requirement("R27", "R14")
@pytest.mark.category("authorization")
def test_another_users_resource_with_an_invalid_body_gets_404(api, http, alice, bob):
    account = api.account(alice, opening_balance=10)
    envelope = api.envelope(alice)
    api.error(http.patch(f"/accounts/{account['id']}", json={"kind": "bogus"}, headers=bob.headers), 404, "not_found", "an invalid update of another user's account")
    api.error(http.patch(f"/envelopes/{envelope['id']}", json={"monthly_budget": -1}, headers=bob.headers), 404, "not_found", "an invalid update of another user's envelope")
    api.error(http.delete(f"/accounts/{account['id']}", headers=bob.headers), 404, "not_found", "deleting another user's account that could not be deleted anyway")


@pytest.mark.requirement("R14", "R23")
@pytest.mark.category("authorization")
def test_filtering_by_another_users_ids_reveals_nothing(api, http, alice, bob):
    account, envelope = api.funded(alice, 100)
    for params in ({"account_id": account["id"]}, {"envelope_id": envelope["id"]}):
        page = api.transactions(bob, **params)
        assert page["items"] == [] and page["total"] == 0, f"bob filtering by alice's {params} must see nothing: {page}"


@pytest.mark.requirement("R27", "R17")
@pytest.mark.category("validation")
def test_validation_comes_before_insufficient_funds(api, http, alice):
    account = api.account(alice)
    envelope = api.envelope(alice)
    r = api.post_tx(alice, type="expense", account_id=account["id"], envelope_id=envelope["id"], amount=500, memo="m" * 201)
    problem = api.validation_problem(r, ["memo"], "an overdrawing expense with a too-long memo (422 before 409)")
    assert problem is None, problem


@pytest.mark.requirement("R27", "R12", "R17")
@pytest.mark.category("state")
def test_conflict_comes_before_insufficient_funds(api, http, alice):
    account = api.account(alice)
    envelope = api.envelope(alice)
    api.ok(http.patch(f"/envelopes/{envelope['id']}", json={"archived": True}, headers=alice.headers), 200, "archive an empty envelope")
    r = api.post_tx(alice, type="expense", account_id=account["id"], envelope_id=envelope["id"], amount=500)
    api.error(r, 409, "conflict", "spending 500 from an archived, empty envelope through an empty account (conflict before insufficient_funds)")


@pytest.mark.requirement("R28", "R19")
@pytest.mark.category("validation")
def test_wrong_json_types_get_422(api, http, alice):
    account = api.account(alice, opening_balance=100)
    envelope = api.envelope(alice)
    base = {"type": "expense", "account_id": account["id"], "envelope_id": envelope["id"], "amount": 1, "date": "2025-01-01"}
    cases = [
        ({"amount": 1.0001}, "amount"), ({"amount": "1"}, "amount"), ({"amount": [1]}, "amount"),
        ({"envelope_id": 7}, "envelope_id"), ({"account_id": None}, "account_id"), ({"memo": None}, "memo"),
        ({"date": 20250101}, "date"), ({"memo": {"text": "x"}}, "memo"),
    ]
    problems = [
        api.validation_problem(http.post("/transactions", json={**base, **change}, headers=alice.headers), [field], f"an expense with {change}")
        for change, field in cases
    ]
    api.assert_no_problems(problems, "wrong JSON types were not rejected as the spec says")
    assert api.balances(alice, account, envelope) == [100, 0], "rejected expenses changed balances"


@pytest.mark.requirement("R27", "R16", "R17", "R18")
@pytest.mark.category("state")
def test_a_burst_of_rejected_requests_changes_nothing(api, http, alice):
    account, a, b = api.envelopes_a_b(alice, 200)
    before = (api.balances(alice, account, a, b), api.summary(alice), api.tx_ids(alice))
    attempts = [
        {"type": "expense", "account_id": account["id"], "envelope_id": b["id"], "amount": 1},
        {"type": "transfer", "from_envelope_id": a["id"], "to_envelope_id": b["id"], "amount": 201},
        {"type": "transfer", "to_envelope_id": b["id"], "amount": 101},
        {"type": "income", "account_id": account["id"], "envelope_id": "ghost", "amount": 5},
        {"type": "expense", "account_id": account["id"], "envelope_id": a["id"], "amount": 0},
    ]
    statuses = [api.post_tx(alice, **body).status_code for body in attempts]
    assert statuses == [409, 409, 409, 422, 422], f"each attempt should be refused (409 x3, 422 x2), got {statuses}"
    after = (api.balances(alice, account, a, b), api.summary(alice), api.tx_ids(alice))
    assert after == before, f"refused requests changed the budget:\nbefore {before}\nafter  {after}"
