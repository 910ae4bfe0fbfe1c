"""Checkouts, returns and fines (spec.md: Loans)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R8")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("INSERT", table="loans")
def test_a_checkout_answers_the_loan(api):
    patron, title = api.patron(), api.title()
    loan = api.checkout(patron, title.barcodes[0], "2030-03-01")
    expected = {"patron_id": patron.id, "barcode": title.barcodes[0], "title_id": title.id, "checked_out_on": "2030-03-01",
                "due_date": "2030-03-22", "renewals": 0, "returned_on": None, "fine": 0}
    assert {k: loan.get(k) for k in expected} == expected, f"an adult's loan is due 21 days later: {loan}"
    assert isinstance(loan.get("id"), int), f"the loan has an integer id: {loan}"
    assert api.status(title.barcodes[0]) == "on_loan", "the copy is on loan"


@pytest.mark.requirement("R8")
@pytest.mark.category("state")
@pytest.mark.parametrize("category,date,due", [("child", "2030-03-01", "2030-03-15"), ("adult", "2030-12-20", "2031-01-10"),
                                               ("child", "2032-02-20", "2032-03-05"), ("adult", "2031-02-10", "2031-03-03")],
                         ids=["child-14-days", "adult-over-new-year", "child-over-leap-day", "adult-over-february"])
def test_due_dates_follow_the_category(api, category, date, due):
    patron, title = api.patron(category), api.title()
    loan = api.checkout(patron, title.barcodes[0], date)
    assert (loan.get("checked_out_on"), loan.get("due_date")) == (date, due), f"{category} checking out on {date}: {loan}"
    assert api.loan(loan)["due_date"] == due, "GET /loans/{id} answers the same due date"


@pytest.mark.requirement("R9")
@pytest.mark.category("state")
def test_a_copy_on_loan_is_unavailable(api):
    first, second, title = api.patron(), api.patron(), api.title()
    api.checkout(first, title.barcodes[0])
    api.error(api.try_checkout(second, title.barcodes[0]), 409, "copy_unavailable", "checking out a copy on loan")
    api.error(api.try_checkout(first, title.barcodes[0]), 409, "copy_unavailable", "checking the same copy out twice")


@pytest.mark.requirement("R9")
@pytest.mark.category("state")
@pytest.mark.parametrize("category,limit", [("adult", 5), ("child", 2)])
def test_the_loan_limit_of_the_category(api, category, limit):
    patron, title = api.patron(category), api.title(copies=limit + 1)
    for code in title.barcodes[:limit]:
        api.checkout(patron, code)
    api.error(api.try_checkout(patron, title.barcodes[limit]), 409, "loan_limit_reached", f"loan {limit + 1} of a {category}")
    assert api.status(title.barcodes[limit]) == "available", "the refused checkout lends nothing"


@pytest.mark.requirement("R9", "R11")
@pytest.mark.category("state")
def test_returned_loans_do_not_count_towards_the_limit(api):
    patron, title = api.patron("child"), api.title(copies=3)
    api.checkout(patron, title.barcodes[0])
    api.checkout(patron, title.barcodes[1])
    api.checkin(title.barcodes[0], "2030-03-02")
    api.checkout(patron, title.barcodes[2], "2030-03-02")


@pytest.mark.requirement("R9", "R20")
@pytest.mark.category("state")
def test_checkout_refusals_come_in_the_stated_order(api):
    full, blocked, other, title = api.patron("child"), api.patron(), api.patron(), api.title(copies=3)
    api.checkout(other, title.barcodes[0])
    api.checkout(full, title.barcodes[1])
    api.checkout(full, title.barcodes[2])  # the child is at the limit now
    api.error(api.try_checkout(full, title.barcodes[0]), 409, "copy_unavailable", "a copy on loan, to a patron at the limit")
    api.fine(blocked, 600)
    api.error(api.try_checkout(blocked, title.barcodes[0]), 409, "patron_blocked", "a blocked patron asking for a copy on loan")


@pytest.mark.requirement("R8", "R20")
@pytest.mark.category("api_surface")
def test_unknown_card_numbers_and_barcodes_get_404(api, http, staff):
    patron, title = api.patron(), api.title()
    r = http.post("/checkouts", json={"card_number": api.card(), "barcode": title.barcodes[0], "date": api.d0}, headers=staff.headers)
    api.error(r, 404, "not_found", "an unknown card number")
    api.error(api.try_checkout(patron, api.barcode()), 404, "not_found", "an unknown barcode")
    api.error(api.try_return(api.barcode()), 404, "not_found", "returning an unknown barcode")


@pytest.mark.requirement("R19")
@pytest.mark.category("validation")
@pytest.mark.parametrize("date", ["2030-02-30", "2030-13-01", "2030-3-1", "01/03/2030", "2030-03-01T10:00:00Z", "tomorrow", "", 20300301, None],
                         ids=["feb-30", "month-13", "no-padding", "slashes", "date-time", "word", "empty", "number", "null"])
def test_invalid_dates_get_422(api, date):
    patron, title = api.patron(), api.title()
    api.invalid(api.http.post("/checkouts", json={"card_number": patron.card_number, "barcode": title.barcodes[0], "date": date},
                              headers=api.staff.headers), ["date"], f"a checkout dated {date!r}")
    assert api.status(title.barcodes[0]) == "available", "the refused checkout lends nothing"


@pytest.mark.requirement("R19")
@pytest.mark.category("validation")
def test_a_leap_day_is_a_date(api):
    patron, title = api.patron(), api.title()
    assert api.checkout(patron, title.barcodes[0], "2032-02-29")["due_date"] == "2032-03-21", "2032-02-29 is a real day"


@pytest.mark.requirement("R8", "R20")
@pytest.mark.category("validation")
def test_checkout_fields_are_listed_and_win_over_404(api, http, staff):
    api.invalid(http.post("/checkouts", json={}, headers=staff.headers), ["card_number", "barcode", "date"], "an empty checkout")
    r = http.post("/checkouts", json={"card_number": api.card(), "barcode": api.barcode(), "date": "someday"}, headers=staff.headers)
    api.invalid(r, ["date"], "422 for the body comes before 404 for the card and barcode it names")
    r = http.post("/returns", json={"barcode": "lower", "date": api.d0}, headers=staff.headers)
    api.invalid(r, ["barcode"], "a return with an invalid barcode")


@pytest.mark.requirement("R11")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("UPDATE", table="loans")
def test_a_return_on_time(api):
    patron, title = api.patron(), api.title()
    loan = api.checkout(patron, title.barcodes[0], "2030-03-01")
    answer = api.checkin(title.barcodes[0], "2030-03-22")
    assert answer.get("hold") is None, f"no hold is ready: {answer}"
    returned = answer.get("loan") or {}
    assert (returned.get("id"), returned.get("returned_on"), returned.get("fine")) == (loan["id"], "2030-03-22", 0), f"returned on the due date: {returned}"
    assert (answer.get("copy") or {}).get("status") == "available", f"the copy is available again: {answer}"
    assert api.status(title.barcodes[0]) == "available" and api.owed(patron) == 0


@pytest.mark.requirement("R11")
@pytest.mark.category("state")
@pytest.mark.parametrize("days_late,fine", [(1, 10), (3, 30), (99, 990), (100, 1000), (400, 1000)])
def test_the_fine_is_ten_cents_a_day_capped_at_1000(api, days_late, fine):
    patron, title = api.patron(), api.title()
    api.checkout(patron, title.barcodes[0], "2030-03-01")
    answer = api.checkin(title.barcodes[0], api.day("2030-03-22", days_late))
    assert answer["loan"]["fine"] == fine, f"{days_late} days late: {answer['loan']}"
    assert api.owed(patron) == fine, f"the patron owes the fine ({fine})"


@pytest.mark.requirement("R11")
@pytest.mark.category("state")
def test_an_early_return_costs_nothing_and_fines_add_up(api):
    patron, title = api.patron(), api.title(copies=3)
    for code in title.barcodes:
        api.checkout(patron, code, "2030-03-01")
    assert api.checkin(title.barcodes[0], "2030-03-05")["loan"]["fine"] == 0
    assert api.checkin(title.barcodes[1], "2030-03-24")["loan"]["fine"] == 20
    assert api.checkin(title.barcodes[2], "2030-03-27")["loan"]["fine"] == 50
    assert api.owed(patron) == 70, "fines_owed is the sum of the loans' fines"


@pytest.mark.requirement("R11")
@pytest.mark.category("state")
def test_returning_a_copy_not_on_loan_gets_409(api):
    patron, title = api.patron(), api.title()
    api.error(api.try_return(title.barcodes[0]), 409, "not_on_loan", "returning a copy never lent")
    api.checkout(patron, title.barcodes[0])
    api.checkin(title.barcodes[0], "2030-03-02")
    api.error(api.try_return(title.barcodes[0], "2030-03-03"), 409, "not_on_loan", "returning it a second time")


@pytest.mark.requirement("R11")
@pytest.mark.category("state")
def test_the_patrons_loans_in_checkout_order(api, http):
    patron, title = api.patron(), api.title(copies=3)
    loans = [api.checkout(patron, code, api.day("2030-03-01", i)) for i, code in enumerate(title.barcodes)]
    api.checkin(title.barcodes[1], "2030-03-10")
    items = api.ok(http.get(f"/patrons/{patron.id}/loans", headers=api.staff.headers), 200, "list the loans")["items"]
    assert [item["id"] for item in items] == [loan["id"] for loan in loans], f"current and returned loans in checkout order: {items}"
    assert [item["returned_on"] for item in items] == [None, "2030-03-10", None], f"the returned one says so: {items}"


@pytest.mark.requirement("R8", "R11")
@pytest.mark.category("workflow")
def test_a_returned_copy_can_be_lent_again(api):
    first, second, title = api.patron(), api.patron(), api.title()
    api.checkout(first, title.barcodes[0], "2030-03-01")
    api.checkin(title.barcodes[0], "2030-03-08")
    loan = api.checkout(second, title.barcodes[0], "2030-03-08")
    assert (loan["patron_id"], loan["due_date"]) == (second.id, "2030-03-29"), f"the second loan: {loan}"
