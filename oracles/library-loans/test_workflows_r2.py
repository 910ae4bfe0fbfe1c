"""Whole circulation stories and what the database keeps (spec.md: Loans; Holds; Database)."""

from __future__ import annotations

import datetime as dt

import pytest

pytestmark = [pytest.mark.tier("r2")]


@pytest.mark.requirement("R8", "R10", "R11", "R13", "R14", "R15", "R16")
@pytest.mark.category("workflow")
def test_a_title_in_demand(api):
    """Ann borrows the only copy, Ben and Cat queue; Ann cannot renew, returns late and pays; Ben gets it, Cat next."""
    ann, ben, cat, title = api.patron(), api.patron(), api.patron(), api.title()
    loan = api.checkout(ann, title.barcodes[0], "2030-05-01")
    assert api.renew(loan, "2030-05-15", ann)["due_date"] == "2030-06-05"
    hb, hc = api.hold(ben, title), api.hold(cat, title)
    api.error(api.try_renew(loan, "2030-06-01", ann), 409, "on_hold", "Ann renews while Ben waits")
    answer = api.checkin(title.barcodes[0], "2030-06-08")
    assert (answer["loan"]["fine"], answer["hold"]["id"]) == (30, hb["id"]), f"3 days late; Ben's hold is ready: {answer}"
    assert api.owed(ann) == 30 and len(api.mail_to(ben.email)) == 1 and api.mail_to(cat.email) == []
    api.checkout(ben, title.barcodes[0], "2030-06-09")
    assert api.get_hold(hb)["status"] == "fulfilled" and api.get_hold(hc)["position"] == 1
    api.checkin(title.barcodes[0], "2030-06-20")
    assert api.get_hold(hc)["status"] == "ready" and len(api.mail_to(cat.email)) == 1, "Cat's turn"
    api.ok(api.http.post(f"/patrons/{ann.id}/payments", json={"amount": 30}, headers=api.staff.headers), 201, "Ann pays")
    assert api.get_patron(ann)["fines_owed"] == 0


@pytest.mark.requirement("R11", "R12", "R9")
@pytest.mark.category("workflow")
def test_fines_block_and_payment_unblocks(api, http):
    patron, title = api.patron(), api.title(copies=3)
    api.checkout(patron, title.barcodes[0], "2030-01-01")
    api.checkout(patron, title.barcodes[1], "2030-01-01")
    api.checkin(title.barcodes[0], "2030-02-21")  # due 2030-01-22, 30 days late: 300
    assert api.get_patron(patron)["blocked"] is False
    api.checkin(title.barcodes[1], "2030-02-13")  # 22 days late: 220, 520 in all
    assert api.get_patron(patron)["blocked"] is True
    api.error(api.try_checkout(patron, title.barcodes[2], "2030-02-12"), 409, "patron_blocked", "blocked")
    api.ok(http.post(f"/patrons/{patron.id}/payments", json={"amount": 20}, headers=api.staff.headers), 201, "pay 20")
    assert api.checkout(patron, title.barcodes[2], "2030-02-12")["due_date"] == "2030-03-05"


@pytest.mark.requirement("R14", "R15", "R17")
@pytest.mark.category("workflow")
def test_a_cancelled_chain_of_holds(api):
    owner, a, b, c, title = api.patron(), api.patron(), api.patron(address=api.email("fail.example")), api.patron(), api.title()
    api.checkout(owner, title.barcodes[0], "2030-03-01")
    ha, hb, hc = api.hold(a, title), api.hold(b, title), api.hold(c, title)
    api.checkin(title.barcodes[0], "2030-03-05")
    api.cancel(ha, who=a)
    assert (api.get_hold(hb)["status"], api.get_hold(hb)["notified"]) == ("ready", False), "b is next; the relay refused b's email"
    api.cancel(hb)
    assert (api.get_hold(hc)["status"], api.get_hold(hc)["notified"]) == ("ready", True), "then c"
    api.cancel(hc, who=c)
    assert api.status(title.barcodes[0]) == "available"
    assert [len(api.mail_to(p.email)) for p in (a, b, c, owner)] == [1, 1, 1, 0], "one email per hold that became ready"


@pytest.mark.requirement("R14")
@pytest.mark.category("workflow")
def test_two_copies_serve_two_waiting_patrons(api):
    x, y, a, b, title = api.patron(), api.patron(), api.patron(), api.patron(), api.title(copies=2)
    api.checkout(x, title.barcodes[0], "2030-03-01")
    api.checkout(y, title.barcodes[1], "2030-03-01")
    ha, hb = api.hold(a, title), api.hold(b, title)
    assert api.checkin(title.barcodes[1], "2030-03-03")["hold"]["id"] == ha["id"]
    assert api.checkin(title.barcodes[0], "2030-03-04")["hold"]["id"] == hb["id"]
    assert (api.get_hold(ha)["barcode"], api.get_hold(hb)["barcode"]) == (title.barcodes[1], title.barcodes[0])
    assert api.queue(title) == []


@pytest.mark.requirement("R18")
@pytest.mark.category("state")
def test_everything_survives_a_restart(api, http, service, staff):
    patron, waiter, title = api.patron(), api.patron(), api.title()
    loan = api.checkout(patron, title.barcodes[0], "2030-03-01")
    hold = api.hold(waiter, title)
    service.restart()
    http.close()
    api.staff.token = api.login(api.admin_username, api.admin_password)["token"]
    assert api.loan(loan)["due_date"] == "2030-03-22" and api.get_hold(hold)["position"] == 1
    assert api.login(patron.card_number, patron.password)["patron_id"] == patron.id, "the patron still logs in"
    assert api.checkin(title.barcodes[0], "2030-03-25")["hold"]["id"] == hold["id"]
    assert api.owed(patron) == 30


@pytest.mark.requirement("R11", "R18")
@pytest.mark.category("state")
@pytest.mark.db_effect("UPDATE", table="loans")
def test_a_return_is_kept_in_the_loans_row(api, db):
    patron, title = api.patron(), api.title()
    loan = api.checkout(patron, title.barcodes[0], "2030-03-01")
    api.checkin(title.barcodes[0], "2030-03-27")
    row = db.query("SELECT patron_id, checked_out_on, due_date, returned_on, renewals, fine FROM loans WHERE id = %s", (loan["id"],))
    assert [dict(r) for r in row] == [{"patron_id": patron.id, "checked_out_on": dt.date(2030, 3, 1), "due_date": dt.date(2030, 3, 22),
                                       "returned_on": dt.date(2030, 3, 27), "renewals": 0, "fine": 50}], f"the loans row: {row}"
    assert db.scalar("SELECT fines_owed FROM patrons WHERE id = %s", (patron.id,)) == 50


@pytest.mark.requirement("R14", "R18")
@pytest.mark.category("state")
@pytest.mark.db_effect("UPDATE", table="holds")
def test_a_ready_hold_is_kept_in_the_holds_row(api, db):
    _owner, _waiter, title, _, hold = api.waiting()
    api.checkin(title.barcodes[0], "2030-03-02")
    row = db.query("SELECT h.status, h.copy_id, c.barcode, c.status AS copy_status FROM holds h JOIN copies c ON c.id = h.copy_id WHERE h.id = %s",
                   (hold["id"],))
    assert [(r["status"], r["barcode"], r["copy_status"]) for r in row] == [("ready", title.barcodes[0], "on_hold_shelf")], f"rows: {row}"


@pytest.mark.requirement("R7", "R18")
@pytest.mark.category("state")
def test_titles_and_copies_are_rows(api, db):
    title = api.title(copies=2, name="Rows of Books")
    rows = db.query("SELECT t.title, c.barcode FROM titles t JOIN copies c ON c.title_id = t.id WHERE t.id = %s ORDER BY c.id", (title.id,))
    assert [(r["title"], r["barcode"]) for r in rows] == [("Rows of Books", code) for code in title.barcodes], f"rows: {rows}"
