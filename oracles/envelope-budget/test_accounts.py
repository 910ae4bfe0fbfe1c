"""Accounts: creation, defaults, listing, updates and deletion rules (spec.md: Accounts)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R5")
@pytest.mark.category("api_surface")
def test_create_account_with_defaults(api, http, alice):
    r = http.post("/accounts", json={"name": "Wallet"}, headers=alice.headers)
    assert r.status_code == 201, f"creating an account with only a name: {api.brief(r)}"
    account = r.json()
    got = {k: account.get(k, "<missing>") for k in ("name", "kind", "opening_balance", "balance")}
    expected = {"name": "Wallet", "kind": "checking", "opening_balance": 0, "balance": 0}
    assert got == expected, f"a new account's defaults: expected {expected}, got {got}"
    assert account.get("id") and account.get("created_at"), f"the account needs an id and created_at: {account}"


@pytest.mark.requirement("R5")
@pytest.mark.category("api_surface")
def test_create_account_with_opening_balance(api, http, alice):
    body = {"name": "Savings", "kind": "savings", "opening_balance": 250_000}
    r = http.post("/accounts", json=body, headers=alice.headers)
    assert r.status_code == 201, f"creating a savings account with an opening balance: {api.brief(r)}"
    got = {k: r.json().get(k) for k in ("name", "kind", "opening_balance", "balance")}
    expected = {**body, "balance": 250_000}
    assert got == expected, f"the balance of a new account is its opening balance: expected {expected}, got {got}"
    fetched = api.get(alice, f"/accounts/{r.json()['id']}")
    assert fetched.get("balance") == 250_000, f"GET /accounts/{{id}} should report the same balance: {fetched}"


@pytest.mark.requirement("R5", "R28")
@pytest.mark.category("validation")
@pytest.mark.parametrize(
    "field, values",
    [
        ("name", [None, "", "   ", "n" * 61, 7]),
        ("kind", ["credit", "Checking", "", None]),
        ("opening_balance", [-1, 1_000_000_001, 10.5, "100", True, None]),
    ],
    ids=["name", "kind", "opening_balance"],
)
def test_create_account_rejects_invalid_fields(api, http, alice, field, values):
    problems = []
    for value in values:
        body = {"name": "Valid name", field: value}
        problems.append(api.validation_problem(http.post("/accounts", json=body, headers=alice.headers), [field], f"account with {field}={value!r}"))
    missing_name = http.post("/accounts", json={"kind": "cash"}, headers=alice.headers)
    problems.append(api.validation_problem(missing_name, ["name"], "account without a name"))
    api.assert_no_problems(problems, f"invalid account {field} values were not rejected as the spec says")
    assert api.get(alice, "/accounts")["items"] == [], "rejected requests must not create accounts"


@pytest.mark.requirement("R5")
@pytest.mark.category("validation")
def test_create_account_accepts_boundaries(api, http, alice):
    for body in ({"name": "n" * 60, "kind": "cash", "opening_balance": 1_000_000_000}, {"name": "x", "opening_balance": 0}):
        r = http.post("/accounts", json=body, headers=alice.headers)
        assert r.status_code == 201, f"boundary values are valid ({str(body)[:60]}...): {api.brief(r)}"


@pytest.mark.requirement("R6")
@pytest.mark.category("api_surface")
def test_list_accounts_oldest_first(api, http, alice):
    ids = [api.account(alice, name=f"Account {i}")["id"] for i in range(3)]
    items = api.get(alice, "/accounts")["items"]
    assert [a.get("id") for a in items] == ids, f"GET /accounts should list the caller's accounts oldest first: {items}"


@pytest.mark.requirement("R7")
@pytest.mark.category("state")
def test_update_account_name_and_kind(api, http, alice):
    account = api.account(alice, opening_balance=500, name="Old", kind="checking")
    r = http.patch(f"/accounts/{account['id']}", json={"name": "New", "kind": "cash"}, headers=alice.headers)
    assert r.status_code == 200, f"renaming an account: {api.brief(r)}"
    fetched = api.get(alice, f"/accounts/{account['id']}")
    got = (fetched.get("name"), fetched.get("kind"), fetched.get("balance"))
    assert got == ("New", "cash", 500), f"name and kind should change and the balance stay 500: {fetched}"


@pytest.mark.requirement("R7")
@pytest.mark.category("state")
def test_update_ignores_opening_balance(api, http, alice):
    account = api.account(alice, opening_balance=300)
    r = http.patch(f"/accounts/{account['id']}", json={"opening_balance": 9_999}, headers=alice.headers)
    assert r.status_code == 200, f"an opening_balance in an update is ignored, not an error: {api.brief(r)}"
    fetched = api.get(alice, f"/accounts/{account['id']}")
    assert (fetched.get("opening_balance"), fetched.get("balance")) == (300, 300), f"the opening balance must not change: {fetched}"
    assert api.unassigned(alice) == 300, "unassigned money must not change through an account update"


@pytest.mark.requirement("R7", "R28")
@pytest.mark.category("validation")
def test_update_account_rejects_invalid_fields(api, http, alice):
    account = api.account(alice, name="Keep")
    cases = [({"name": ""}, ["name"]), ({"name": " "}, ["name"]), ({"kind": "bank"}, ["kind"]), ({"name": None, "kind": 3}, ["name", "kind"])]
    problems = [
        api.validation_problem(http.patch(f"/accounts/{account['id']}", json=body, headers=alice.headers), fields, f"account update {body}")
        for body, fields in cases
    ]
    api.assert_no_problems(problems, "invalid account updates were not rejected as the spec says")
    fetched = api.get(alice, f"/accounts/{account['id']}")
    assert (fetched.get("name"), fetched.get("kind")) == ("Keep", "checking"), f"rejected updates changed the account: {fetched}"


@pytest.mark.requirement("R8")
@pytest.mark.category("state")
def test_delete_an_unused_account(api, http, alice):
    keep = api.account(alice)
    gone = api.account(alice)
    r = http.delete(f"/accounts/{gone['id']}", headers=alice.headers)
    assert r.status_code == 204, f"deleting an unused account with balance 0: {api.brief(r)}"
    api.error(http.get(f"/accounts/{gone['id']}", headers=alice.headers), 404, "not_found", "reading a deleted account")
    assert [a["id"] for a in api.get(alice, "/accounts")["items"]] == [keep["id"]], "the deleted account is still listed"


@pytest.mark.requirement("R8")
@pytest.mark.category("state")
def test_account_with_a_balance_cannot_be_deleted(api, http, alice):
    account = api.account(alice, opening_balance=100)
    api.error(http.delete(f"/accounts/{account['id']}", headers=alice.headers), 409, "conflict", "deleting an account holding 100")
    assert api.balance(alice, account) == 100, "the refused deletion changed the account"


@pytest.mark.requirement("R8")
@pytest.mark.category("state")
def test_account_used_by_transactions_cannot_be_deleted(api, http, alice):
    account, envelope = api.funded(alice, 100)
    api.expense(alice, account, envelope, 100)
    assert api.balance(alice, account) == 0, "income 100 then spending 100 should leave the account at 0"
    r = http.delete(f"/accounts/{account['id']}", headers=alice.headers)
    api.error(r, 409, "conflict", "deleting an account at balance 0 that transactions refer to")
    api.get(alice, f"/accounts/{account['id']}")
