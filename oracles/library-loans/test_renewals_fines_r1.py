"""Renewals, blocking by fines and payments (spec.md: Loans)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r1")]


@pytest.mark.requirement("R10")
@pytest.mark.category("api_surface")
def test_a_renewal_moves_the_due_date_from_its_date(api):
    patron, title = api.patron(), api.title()
    loan = api.checkout(patron, title.barcodes[0], "2030-03-01")
    renewed = api.renew(loan, "2030-03-20")
    assert (renewed.get("id"), renewed.get("renewals"), renewed.get("due_date"), renewed.get("checked_out_on")) == (
        loan["id"], 1, "2030-04-10", "2030-03-01"), f"renewed on 2030-03-20: due 21 days later, one renewal: {renewed}"
    assert api.loan(loan)["due_date"] == "2030-04-10", "the loan keeps the new due date"


@pytest.mark.requirement("R10")
@pytest.mark.category("state")
def test_a_childs_renewal_adds_14_days_and_on_the_due_date_is_allowed(api):
    patron, title = api.patron("child"), api.title()
    loan = api.checkout(patron, title.barcodes[0], "2030-03-01")
    renewed = api.renew(loan, "2030-03-15")
    assert (renewed["renewals"], renewed["due_date"]) == (1, "2030-03-29"), f"a child renewing on the due date: {renewed}"


@pytest.mark.requirement("R4", "R10")
@pytest.mark.category("authorization")
def test_patrons_renew_their_own_loans_only(api, http):
    owner, other, title = api.patron(), api.patron(), api.title()
    loan = api.checkout(owner, title.barcodes[0], "2030-03-01")
    api.error(api.try_renew(loan, "2030-03-10", other), 404, "not_found", "renewing another patron's loan")
    assert api.loan(loan)["renewals"] == 0, "the refused renewal changed nothing"
    assert api.renew(loan, "2030-03-10", owner)["renewals"] == 1, "the owner renews"


@pytest.mark.requirement("R10")
@pytest.mark.category("state")
def test_a_third_renewal_is_refused(api):
    patron, title = api.patron(), api.title()
    loan = api.checkout(patron, title.barcodes[0], "2030-03-01")
    api.renew(loan, "2030-03-10")
    assert api.renew(loan, "2030-03-20")["renewals"] == 2
    api.error(api.try_renew(loan, "2030-03-30"), 409, "renewal_limit", "a third renewal")
    assert api.loan(loan)["due_date"] == "2030-04-10", "the refused renewal left the due date"


@pytest.mark.requirement("R10")
@pytest.mark.category("state")
def test_an_overdue_loan_cannot_be_renewed(api):
    patron, title = api.patron(), api.title()
    loan = api.checkout(patron, title.barcodes[0], "2030-03-01")
    api.error(api.try_renew(loan, "2030-03-23"), 409, "loan_overdue", "renewing a day after the due date")
    assert api.renew(loan, "2030-03-22")["due_date"] == "2030-04-12", "renewing on the due date is allowed"


@pytest.mark.requirement("R10", "R13")
@pytest.mark.category("state")
def test_another_patrons_waiting_hold_blocks_renewal(api):
    _owner, _waiter, _title, loan, hold = api.waiting()
    api.error(api.try_renew(loan, "2030-03-10"), 409, "on_hold", "renewing while another patron waits")
    api.cancel(hold)
    assert api.renew(loan, "2030-03-10")["renewals"] == 1, "once the hold is cancelled the loan renews"


@pytest.mark.requirement("R10", "R14")
@pytest.mark.category("state")
def test_a_ready_hold_does_not_block_renewal(api):
    owner, other, waiter, title = api.patron(), api.patron(), api.patron(), api.title(copies=2)
    loan = api.checkout(owner, title.barcodes[0], "2030-03-01")
    api.checkout(other, title.barcodes[1], "2030-03-01")
    hold = api.hold(waiter, title)
    api.checkin(title.barcodes[1], "2030-03-05")
    assert api.get_hold(hold)["status"] == "ready"
    assert api.renew(loan, "2030-03-10")["renewals"] == 1, "only waiting holds block renewals; this one is ready"


@pytest.mark.requirement("R10")
@pytest.mark.category("state")
def test_a_returned_loan_cannot_be_renewed(api):
    patron, title = api.patron(), api.title()
    loan = api.checkout(patron, title.barcodes[0], "2030-03-01")
    api.checkin(title.barcodes[0], "2030-03-05")
    api.error(api.try_renew(loan, "2030-03-06"), 409, "loan_returned", "renewing a returned loan")


@pytest.mark.requirement("R10", "R20")
@pytest.mark.category("state")
def test_renewal_refusals_come_in_the_stated_order(api):
    patron, waiter, title = api.patron(), api.patron(), api.title(copies=2)
    loan = api.checkout(patron, title.barcodes[0], "2030-03-01")
    api.renew(loan, "2030-03-05")
    api.renew(loan, "2030-03-06")  # due 2030-03-27, no renewal left
    api.hold(waiter, title)
    api.error(api.try_renew(loan, "2030-04-30"), 409, "renewal_limit", "limit reached, overdue and held: renewal_limit first")
    second = api.checkout(patron, title.barcodes[1], "2030-03-01")  # due 2030-03-22
    api.error(api.try_renew(second, "2030-03-25"), 409, "loan_overdue", "overdue and held: loan_overdue first")
    api.fine(patron, 600)
    api.error(api.try_renew(second, "2030-03-25"), 409, "patron_blocked", "blocked, overdue and held: patron_blocked first")
    api.checkin(title.barcodes[1], "2030-03-26")
    api.error(api.try_renew(second, "2030-03-26"), 409, "loan_returned", "returned and blocked: loan_returned first")


@pytest.mark.requirement("R10", "R19")
@pytest.mark.category("validation")
@pytest.mark.parametrize("body", [{}, {"date": "2030-02-29"}, {"date": "20300310"}], ids=["missing", "not-a-leap-year", "no-dashes"])
def test_a_renewal_needs_a_valid_date(api, http, body):
    patron, title = api.patron(), api.title()
    loan = api.checkout(patron, title.barcodes[0], "2030-03-01")
    api.invalid(http.post(f"/loans/{loan['id']}/renew", json=body, headers=api.staff.headers), ["date"], f"renew with {body}")
    assert api.loan(loan)["renewals"] == 0


@pytest.mark.requirement("R12")
@pytest.mark.category("state")
@pytest.mark.parametrize("cents,blocked", [(500, False), (510, True)])
def test_blocked_means_owing_more_than_500(api, cents, blocked):
    patron = api.patron()
    api.fine(patron, cents)
    answer = api.get_patron(patron)
    assert (answer["fines_owed"], answer["blocked"]) == (cents, blocked), f"owing {cents}: {answer}"
    title = api.title()
    r = api.try_checkout(patron, title.barcodes[0], "2030-06-01")
    if blocked:
        api.error(r, 409, "patron_blocked", f"a checkout by a patron owing {cents}")
    else:
        assert r.status_code == 201, f"a patron owing exactly 500 may still borrow: {r.status_code} {r.text[:200]}"


@pytest.mark.requirement("R12", "R13")
@pytest.mark.category("state")
def test_a_blocked_patron_cannot_place_holds(api):
    patron, title = api.patron(), api.title()
    api.fine(patron, 700)
    api.error(api.try_hold(patron, title), 409, "patron_blocked", "a hold by a blocked patron")
    api.error(api.try_hold(patron, title, who=patron), 409, "patron_blocked", "a blocked patron's own hold request")


@pytest.mark.requirement("R12")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("UPDATE", table="patrons")
def test_a_payment_lowers_what_is_owed(api, http):
    patron = api.patron()
    api.fine(patron, 300)
    r = http.post(f"/patrons/{patron.id}/payments", json={"amount": 120}, headers=api.staff.headers)
    assert api.doc(api.ok(r, 201, "pay 120"), ("patron_id", "amount", "fines_owed")) == {"patron_id": patron.id, "amount": 120, "fines_owed": 180}
    assert api.owed(patron) == 180


@pytest.mark.requirement("R12")
@pytest.mark.category("workflow")
def test_paying_unblocks_the_patron(api, http):
    patron, title = api.patron(), api.title()
    api.fine(patron, 800)
    api.error(api.try_checkout(patron, title.barcodes[0], "2030-06-01"), 409, "patron_blocked", "before paying")
    api.ok(http.post(f"/patrons/{patron.id}/payments", json={"amount": 300}, headers=api.staff.headers), 201, "pay 300")
    assert api.get_patron(patron)["blocked"] is False, "owing 500 is not blocked"
    api.checkout(patron, title.barcodes[0], "2030-06-01")


@pytest.mark.requirement("R12")
@pytest.mark.category("state")
def test_paying_more_than_owed_gets_409_and_changes_nothing(api, http):
    patron = api.patron()
    api.fine(patron, 50)
    api.error(http.post(f"/patrons/{patron.id}/payments", json={"amount": 51}, headers=api.staff.headers), 409, "overpayment", "paying 51 of 50")
    assert api.owed(patron) == 50
    api.ok(http.post(f"/patrons/{patron.id}/payments", json={"amount": 50}, headers=api.staff.headers), 201, "paying exactly 50")
    assert api.owed(patron) == 0


@pytest.mark.requirement("R12")
@pytest.mark.category("validation")
@pytest.mark.parametrize("amount", [0, -10, "10", 1.5, True, None], ids=["zero", "negative", "string", "fraction", "boolean", "null"])
def test_invalid_amounts_get_422(api, http, amount):
    patron = api.patron()
    api.fine(patron, 100)
    api.invalid(http.post(f"/patrons/{patron.id}/payments", json={"amount": amount}, headers=api.staff.headers), ["amount"], f"amount {amount!r}")
    assert api.owed(patron) == 100


@pytest.mark.requirement("R12", "R20")
@pytest.mark.category("api_surface")
def test_a_payment_for_an_unknown_patron_gets_404(api, http):
    patron = api.patron()
    api.error(http.post(f"/patrons/{patron.id + 1_000_000}/payments", json={"amount": 1}, headers=api.staff.headers), 404, "not_found",
              "a payment for an unknown patron")
