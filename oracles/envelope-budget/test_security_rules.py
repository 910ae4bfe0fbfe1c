"""Security items derived rule by rule from spec.md (issue 24; REVIEW.md "Security rules").

Each item exercises one rule, one refusal condition or one hostile-value path at a time. Every
answer any item of this module receives is also checked for the password or a hash of it
("No response ever contains a password or a password hash.").
"""

from __future__ import annotations

import pytest

from pytest_backendbench.http.account_items import password_edge_item, password_leak_item
from pytest_backendbench.http.hostile import HOSTILE_VALUES, hostile_findings

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]


test_no_user_answer_carries_the_password_or_its_hash = password_leak_item("R2")


test_a_password_wrong_only_at_its_edge_gets_401 = password_edge_item("R3")


FOREIGN_FIELDS = {
    "income.account_id": ("income", "account_id"),
    "income.envelope_id": ("income", "envelope_id"),
    "expense.account_id": ("expense", "account_id"),
    "expense.envelope_id": ("expense", "envelope_id"),
    "transfer.from_envelope_id": ("transfer", "from_envelope_id"),
    "transfer.to_envelope_id": ("transfer", "to_envelope_id"),
}


@pytest.mark.requirement("R15", "R14")
@pytest.mark.cwe(639)
@pytest.mark.parametrize("case", sorted(FOREIGN_FIELDS))
def test_another_users_id_in_one_body_field_gets_422_naming_it(api, http, alice, bob, case):
    kind, field = FOREIGN_FIELDS[case]
    account, envelope, spare = api.account(alice, 1000), api.envelope(alice), api.envelope(alice)
    api.transfer(alice, None, envelope, 500)
    theirs_account, theirs_envelope = api.account(bob, 100), api.envelope(bob)
    body = {"type": kind, "amount": 10}
    if kind in ("income", "expense"):
        body.update(account_id=account["id"], envelope_id=envelope["id"])
    else:
        body.update(from_envelope_id=envelope["id"], to_envelope_id=spare["id"])
    body[field] = theirs_account["id"] if field == "account_id" else theirs_envelope["id"]
    r = api.post_tx(alice, **body)
    assert not (why := api.validation_problem(r, [field], f"{kind} naming bob's {field}")), why
    assert api.balances(bob, theirs_account, theirs_envelope) == [100, 0], "bob's balances must not move"
    assert api.balances(alice, account, envelope, spare) == [1000, 500, 0] and api.transactions(alice)["total"] == 1


@pytest.mark.requirement("R23", "R14")
@pytest.mark.cwe(639)
def test_id_filters_naming_another_users_objects_match_nothing(api, http, alice, bob):
    mine = api.account(alice, 100)
    api.income(alice, mine, 5)
    account, envelope = api.account(bob, 1000), api.envelope(bob)
    api.income(bob, account, 50, envelope)
    api.transfer(bob, envelope, None, 20)
    for params in ({"account_id": account["id"]}, {"envelope_id": envelope["id"]}, {"account_id": account["id"], "type": "income"}):
        page = api.transactions(alice, **params)
        assert (page["items"], page["total"]) == ([], 0), f"GET /transactions?{params} (bob's ids) must match nothing: {page}"


@pytest.mark.requirement("R14")
@pytest.mark.cwe(639)
@pytest.mark.parametrize("param", ["user_id", "owner_id", "owner", "all"])
def test_the_caller_lists_never_widen_to_other_users(api, http, alice, bob, param):
    mine_account = api.account(alice, 10)
    mine_tx = api.income(alice, mine_account, 5)
    mine_envelope = api.envelope(alice)
    theirs_account, theirs_envelope = api.account(bob, 10), api.envelope(bob)
    theirs_tx = api.income(bob, theirs_account, 5)
    value = "true" if param == "all" else bob.id
    for path, mine, theirs in (("/accounts", mine_account, theirs_account), ("/envelopes", mine_envelope, theirs_envelope),
                               ("/transactions", mine_tx, theirs_tx)):
        r = http.get(path, params={param: value}, headers=alice.headers)
        if r.status_code in (400, 422):
            continue  # a query parameter the contract does not define may be refused
        assert r.status_code == 200, api.brief(r)
        ids = [x.get("id") for x in r.json().get("items", [])]
        assert ids == [mine["id"]], f"GET {path}?{param}={value} must list only alice's {mine['id']}: {ids}"
    summary = http.get("/summary", params={param: value}, headers=alice.headers)
    if summary.status_code == 200:
        assert summary.json().get("accounts_total") == 15, f"GET /summary?{param}=... counts only alice's accounts: {summary.text}"


@pytest.mark.requirement("R10", "R29")
@pytest.mark.cwe(943)
def test_envelope_names_clash_only_when_equal_ignoring_case(api, http, alice):
    stem = api.unique("Rent")  # Rent_<hex>
    api.envelope(alice, stem)
    problems = []
    for name in (stem[:-1] + "%", stem[:-1] + "_", "%" + stem[1:], "_" + stem[1:], stem.replace("_", "%"), "%", "_" * len(stem), stem + ".*", stem[:-2] + ".*"):
        r = http.post("/envelopes", json={"name": name}, headers=alice.headers)
        if r.status_code != 201:
            problems.append(f"envelope {name!r} beside {stem!r}: expected 201 (the names differ), got {api.brief(r)}")
    assert not problems, "names are compared as text (ignoring case), never as patterns:\n" + "\n".join(problems)
    api.error(http.post("/envelopes", json={"name": stem.upper()}, headers=alice.headers), 409, "conflict", "the same name in upper case")


@pytest.mark.requirement("R10")
@pytest.mark.cwe(203)
def test_another_users_envelope_names_neither_clash_nor_show(api, http, alice, bob):
    name = api.unique("Holidays")
    api.envelope(bob, name)
    r = http.post("/envelopes", json={"name": name.lower()}, headers=alice.headers)
    assert r.status_code == 201, f"alice may use a name only bob has: {api.brief(r)}"
    renamed = api.envelope(alice)
    r = http.patch(f"/envelopes/{renamed['id']}", json={"name": name.upper()}, headers=alice.headers)
    api.error(r, 409, "conflict", "renaming to alice's own name in another case")
    spare = api.envelope(alice)
    r = http.patch(f"/envelopes/{spare['id']}", json={"name": api.unique("Other")}, headers=alice.headers)
    assert r.status_code == 200, api.brief(r)


@pytest.mark.requirement("R23", "R29")
@pytest.mark.cwe(89)
def test_hostile_filter_values_match_nothing_or_get_422(api, http, alice, bob):
    account, envelope = api.account(alice, 100), api.envelope(alice)
    api.income(alice, account, 30, envelope)
    api.income(bob, api.account(bob), 30)
    problems = []
    for value in ("' OR '1'='1", "x' OR 'x'='x' --", "%", "_", "*", ".*", '{"$ne": null}', account["id"] + "%", account["id"][:-1] + "_"):
        for param in ("account_id", "envelope_id"):
            r = http.get("/transactions", params={param: value}, headers=alice.headers)
            if r.status_code != 200 or r.json().get("total") != 0:
                problems.append(f"GET /transactions?{param}={value!r}: expected 200 matching nothing, got {api.brief(r)}")
        for param in ("type", "month"):
            r = http.get("/transactions", params={param: value}, headers=alice.headers)
            if why := api.validation_problem(r, [param], f"GET /transactions?{param}={value!r}"):
                problems.append(why)
    assert not problems, "filters match literally; type and month are validated:\n" + "\n".join(problems)


EXPENSE_SHORT = ("account-short", "envelope-short")


@pytest.mark.requirement("R17")
@pytest.mark.cwe(841)
@pytest.mark.parametrize("short", EXPENSE_SHORT)
def test_an_expense_needs_both_the_account_and_the_envelope_balance(api, http, alice, short):
    funded, envelope = api.account(alice, 0), api.envelope(alice)
    api.income(alice, funded, 100, envelope)  # envelope 100, funded account 100
    poor = api.account(alice, 0)
    if short == "account-short":  # the envelope holds 100, the account it is spent through holds 40
        api.income(alice, poor, 40)
        spend_from, amount = poor, 60
    else:  # the account holds 300, the envelope 100
        api.income(alice, funded, 200)
        spend_from, amount = funded, 150
    before = api.balances(alice, funded, poor, envelope)
    r = api.post_tx(alice, type="expense", account_id=spend_from["id"], envelope_id=envelope["id"], amount=amount)
    api.error(r, 409, "insufficient_funds", f"an expense of {amount} with the {short.replace('-', ' ')}")
    assert api.balances(alice, funded, poor, envelope) == before, "a refused expense changes no balance"


ARCHIVED_ROLES = ("expense.envelope_id", "income.envelope_id", "transfer.from_envelope_id", "transfer.to_envelope_id")


@pytest.mark.requirement("R12")
@pytest.mark.cwe(841)
@pytest.mark.parametrize("role", ARCHIVED_ROLES)
def test_a_transaction_naming_an_archived_envelope_in_one_role_gets_409(api, http, alice, role):
    account, live = api.account(alice, 500), api.envelope(alice)
    api.transfer(alice, None, live, 200)
    archived = api.envelope(alice)
    api.ok(http.patch(f"/envelopes/{archived['id']}", json={"archived": True}, headers=alice.headers), 200, "archive an empty envelope")
    kind, field = role.split(".")
    body = {"type": kind, "amount": 10}
    if kind in ("income", "expense"):
        body.update(account_id=account["id"], envelope_id=archived["id"])
    else:
        body.update(from_envelope_id=live["id"], to_envelope_id=archived["id"]) if field == "to_envelope_id" else body.update(from_envelope_id=archived["id"])
    api.error(api.post_tx(alice, **body), 409, "conflict", f"a {kind} naming the archived envelope as {field}")
    assert api.balances(alice, account, live, archived) == [500, 200, 0] and api.transactions(alice)["total"] == 1


ACCOUNT_IN_USE = ("balance-not-zero", "referred-to-by-a-transaction")


@pytest.mark.requirement("R8")
@pytest.mark.cwe(841)
@pytest.mark.parametrize("condition", ACCOUNT_IN_USE)
def test_an_account_is_not_deleted_under_either_condition_alone(api, http, alice, condition):
    if condition == "balance-not-zero":  # no transaction refers to it
        account = api.account(alice, 250)
        expected_balance = 250
    else:  # its balance is back to 0
        account, envelope = api.account(alice, 0), api.envelope(alice)
        api.income(alice, account, 70, envelope)
        api.expense(alice, account, envelope, 70)
        expected_balance = 0
    api.error(http.delete(f"/accounts/{account['id']}", headers=alice.headers), 409, "conflict", f"deleting an account with {condition}")
    assert api.balance(alice, account) == expected_balance


@pytest.mark.requirement("R19", "R5")
@pytest.mark.cwe(20)
def test_amounts_below_one_never_move_money(api, http, alice):
    account, envelope = api.account(alice, 100), api.envelope(alice)
    api.transfer(alice, None, envelope, 50)
    problems = []
    for amount in (0, -1, -50, -1_000_000_000):
        for body in ({"type": "income", "account_id": account["id"]}, {"type": "expense", "account_id": account["id"], "envelope_id": envelope["id"]},
                     {"type": "transfer", "from_envelope_id": envelope["id"]}, {"type": "transfer", "to_envelope_id": envelope["id"]}):
            r = api.post_tx(alice, **body, amount=amount)
            if why := api.validation_problem(r, ["amount"], f"{body} with amount {amount}"):
                problems.append(why)
    r = http.post("/accounts", json={"name": "Negative", "opening_balance": -100}, headers=alice.headers)
    if why := api.validation_problem(r, ["opening_balance"], "an account with opening_balance -100"):
        problems.append(why)
    assert not problems, "amounts are 1 to 1,000,000,000 and opening balances 0 or more:\n" + "\n".join(problems)
    assert api.balances(alice, account, envelope) == [100, 50] and api.unassigned(alice) == 50


@pytest.mark.requirement("R5", "R9", "R20", "R29")
@pytest.mark.cwe(116)
def test_hostile_text_is_stored_and_answered_verbatim(api, http, alice):
    account = api.account(alice, 100)
    found = hostile_findings(lambda body: http.post("/accounts", json=body, headers=alice.headers), {"name": "a"}, verbatim=["name"], accepted=[201])
    found += hostile_findings(lambda body: http.post("/envelopes", json=body, headers=alice.headers), {"name": "e"}, verbatim=["name"], accepted=[201])
    found += hostile_findings(lambda body: api.post_tx(alice, **body), {"type": "income", "account_id": account["id"], "amount": 1, "memo": "m"},
                              fields=["memo"], verbatim=["memo"], accepted=[201])
    assert not found, "text is stored and answered exactly as sent:\n" + "\n".join(found)
    names = {e.get("name") for e in api.get(alice, "/envelopes")["items"]}
    assert set(HOSTILE_VALUES) <= names, f"every hostile envelope name is listed as sent: {sorted(names)}"


@pytest.mark.requirement("R11")
@pytest.mark.cwe(20)
def test_include_archived_takes_only_true_or_false(api, http, alice):
    live = api.envelope(alice)
    archived = api.envelope(alice)
    api.ok(http.patch(f"/envelopes/{archived['id']}", json={"archived": True}, headers=alice.headers), 200, "archive")
    problems = []
    for value in ("1", "yes", "TRUE", "True", "true ", "", "true' OR '1'='1", "*"):
        r = http.get("/envelopes", params={"include_archived": value}, headers=alice.headers)
        if why := api.validation_problem(r, ["include_archived"], f"GET /envelopes?include_archived={value!r}"):
            problems.append(why)
    assert not problems, "\n".join(problems)
    assert [e["id"] for e in api.get(alice, "/envelopes")["items"]] == [live["id"]]
