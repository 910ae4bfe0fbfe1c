"""Security items (spec.md: Authentication, ownership, Limits and hostile input), each tagged with its CWE."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]


@pytest.mark.requirement("R14", "R15")
@pytest.mark.cwe(639)
def test_another_users_ids_reach_nothing(api, http, alice, bob):
    account = api.account(alice, opening_balance=1_000, name="Savings")
    envelope = api.envelope(alice, name="Rent")
    tx = api.income(alice, account, 300, envelope)
    for method, path, body in (
        ("GET", f"/accounts/{account['id']}", None), ("PATCH", f"/accounts/{account['id']}", {"name": "mine now"}),
        ("DELETE", f"/accounts/{account['id']}", None), ("GET", f"/envelopes/{envelope['id']}", None),
        ("PATCH", f"/envelopes/{envelope['id']}", {"name": "mine now"}), ("DELETE", f"/envelopes/{envelope['id']}", None),
        ("GET", f"/transactions/{tx['id']}", None), ("DELETE", f"/transactions/{tx['id']}", None),
    ):
        api.error(http.request(method, path, json=body, headers=bob.headers), 404, "not_found", f"bob: {method} {path} of alice's")
    r = api.post_tx(bob, type="expense", account_id=account["id"], envelope_id=envelope["id"], amount=100, date="2025-03-01")
    problem = api.validation_problem(r, ["account_id", "envelope_id"], "bob spending from alice's account and envelope")
    assert problem is None, problem
    assert api.transactions(bob, account_id=account["id"])["items"] == [], "filtering by another user's account id matches nothing"
    assert api.balances(alice, account, envelope) == [1_300, 300], "bob's requests changed alice's balances"


@pytest.mark.requirement("R5", "R7", "R9")
@pytest.mark.cwe(915)
def test_balances_and_ids_cannot_be_assigned(api, http, alice):
    r = http.post("/accounts", json={"name": "Forged", "balance": 1_000_000, "id": "forged", "created_at": "2001-01-01T00:00:00Z"}, headers=alice.headers)
    assert r.status_code == 201, f"fields the contract does not define are ignored: {api.brief(r)}"
    account = r.json()
    assert (account.get("balance"), account.get("opening_balance"), account.get("id") != "forged") == (0, 0, True), f"the client set server-owned fields: {account}"
    r = http.patch(f"/accounts/{account['id']}", json={"opening_balance": 500, "balance": 500}, headers=alice.headers)
    assert r.status_code == 200, f"a PATCH with an opening_balance ignores it: {api.brief(r)}"
    r = http.post("/envelopes", json={"name": "Forged env", "balance": 900, "archived": True}, headers=alice.headers)
    assert r.status_code == 201, f"creating an envelope with a forged balance: {api.brief(r)}"
    envelope = r.json()
    assert (envelope.get("balance"), envelope.get("archived")) == (0, False), f"a new envelope starts at 0, not archived: {envelope}"
    assert api.balances(alice, account, envelope) == [0, 0], "no money may appear from assigned fields"
    assert api.summary(alice).get("unassigned") == 0, f"unassigned money must stay 0: {api.summary(alice)}"


@pytest.mark.requirement("R5", "R23", "R29")
@pytest.mark.cwe(89)
def test_hostile_text_is_stored_verbatim_and_filters_never_widen(api, http, alice, bob, checks):
    account = api.account(alice, opening_balance=0, name="' OR '1'='1")
    assert api.get(alice, f"/accounts/{account['id']}")["name"] == "' OR '1'='1", "a name is stored verbatim"
    envelope = api.envelope(alice, name='{"$gt": ""} %_%')
    assert api.get(alice, f"/envelopes/{envelope['id']}")["name"] == '{"$gt": ""} %_%', "an envelope name is stored verbatim"
    for memo in checks.injection_texts:
        tx = api.income(alice, account, 1, memo=memo)
        assert api.get(alice, f"/transactions/{tx['id']}")["memo"] == memo, f"the memo must come back verbatim: {memo!r}"
    theirs = api.account(bob, opening_balance=0)
    api.income(bob, theirs, 5)
    for name in ("account_id", "envelope_id"):
        for value in ("' OR '1'='1", "%", "*", f"{theirs['id']}' OR '1'='1", '{"$ne": null}'):
            r = http.get("/transactions", params={name: value}, headers=alice.headers)
            assert r.status_code == 200 and r.json().get("items") == [], f"{name}={value!r} matches none of alice's resources: {api.brief(r)}"


@pytest.mark.requirement("R29")
@pytest.mark.cwe(400)
def test_oversized_and_deeply_nested_bodies_are_refused(api, http, service, alice, checks):
    problems = checks.hostile_body_problems(service, http.timeout_s, "POST", "/accounts", alice.headers, {"name": "big"}, "name")
    account = api.account(alice, name="kept")
    # the PATCH body is oversized in a field the contract does not define: only the 1 MiB limit refuses it
    problems += checks.hostile_body_problems(service, http.timeout_s, "PATCH", f"/accounts/{account['id']}", alice.headers, {"kind": "cash"}, "padding")
    problems += checks.hostile_body_problems(
        service, http.timeout_s, "POST", "/transactions", alice.headers, {"type": "income", "account_id": account["id"], "amount": 5, "date": "2025-01-01"}, "memo"
    )
    assert not problems, "limits on request bodies:\n" + "\n".join(problems)
    assert [a["name"] for a in api.get(alice, "/accounts")["items"]] == ["kept"], "refused bodies must create nothing"
    assert (api.get(alice, f"/accounts/{account['id']}")["kind"], api.transactions(alice)["total"]) == ("checking", 0), "refused bodies must change nothing"


@pytest.mark.requirement("R4")
@pytest.mark.cwe(287)
def test_tampered_tokens_get_401(api, http, alice, bob, checks):
    problems = checks.token_problems(http, "POST", "/accounts", alice.token, {"name": "forged"})
    problems += checks.token_problems(http, "GET", "/summary", alice.token)
    assert not problems, "token misuse was not refused:\n" + "\n".join(problems)
    me = api.ok(http.get("/me", headers=bob.headers), 200, "bob's /me")
    assert me.get("id") == bob.id, f"a token answers for its own user only: {me}"
    assert api.get(alice, "/accounts")["items"] == [], "no request with a bad token may create an account"


@pytest.mark.requirement("R14", "R29")
@pytest.mark.cwe(22)
def test_path_traversal_in_ids_gets_404(api, http, service, alice, checks):
    api.account(alice)
    problems = checks.traversal_problems(service, http.timeout_s, "/accounts/", alice.headers)
    problems += checks.traversal_problems(service, http.timeout_s, "/envelopes/", alice.headers)
    problems += checks.traversal_problems(service, http.timeout_s, "/transactions/", alice.headers)
    assert not problems, "ids that climb out of their path must name nothing:\n" + "\n".join(problems)
