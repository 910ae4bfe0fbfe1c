"""Refusals that change nothing, guards one condition at a time, ids named in bodies (issue 35).

A refused request is a request the service did not carry out: a patron, librarian, title,
loan, renewal or hold refused with 422, 404 or 409 must not exist or count afterwards (spec.md:
each endpoint answers 201/200 for what it does, and an error otherwise; "changes nothing" is
written out for payments and oversized bodies). Every endpoint that takes several fields is
tried with one invalid field at each position (http/refusals.py), the state read back from
outside, the mailer asked for the item's own recipient, and the statement log asked for writes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import requests

from pytest_backendbench.http.refusals import one_invalid_field, unchanged

pytestmark = [pytest.mark.tier("r1"), pytest.mark.category("state")]

BEYOND = 2_000_000_000
"""An id no item ever reaches (within PostgreSQL's integer)."""


def refused(api: Any, db: Any, read: Callable[[], Any], send: Callable[[], requests.Response], expect: tuple[Any, ...], what: str) -> None:
    """Send a request that must be refused with ``expect`` and show it changed nothing: the read-back and the statement log."""
    __tracebackhide__ = True
    with unchanged(read, what):
        with db.writes_during(what) as writes:
            response = send()
        if expect[0] == 422:
            api.invalid(response, list(expect[1:]), what)
        else:
            api.error(response, expect[0], expect[1], what)
    writes.assert_none()


# ---------------------------------------------------------------- one invalid field at each position

VALID_PATRON = {"card_number": "x", "name": "x", "email": "x", "category": "x", "password": "x"}
"""The key order of a patron body; each item fills in fresh valid values (card numbers are unique)."""
BAD_PATRON = {"card_number": ["12ab5678", "1234567"], "name": ["   ", "Pat\r\nBcc: x@evil.example"], "email": ["no-at-sign", "a@b"],
              "category": ["senior"], "password": ["short", 12345678]}


@pytest.mark.requirement("R5", "R20")
@pytest.mark.parametrize("field,body", one_invalid_field(VALID_PATRON, BAD_PATRON))
def test_a_refused_patron_is_not_created(api, http, db, field, body):
    valid = api.patron_body()
    body = {**valid, field: body[field]}
    lookups = {"card_number": valid["card_number"], "email": valid["email"]}

    def read() -> list[Any]:
        return [api.ok(http.get("/patrons", params={key: value}, headers=api.staff.headers), 200, f"look the patron up by {key}")["items"]
                for key, value in lookups.items()]

    refused(api, db, read, lambda: http.post("/patrons", json=body, headers=api.staff.headers), (422, field), f"a patron with an invalid {field}")
    api.ok(http.post("/patrons", json=valid, headers=api.staff.headers), 201, "the same patron with every field valid (its card number is free)")


@pytest.mark.requirement("R3")
@pytest.mark.parametrize("field,body", one_invalid_field({"username": "x", "password": "pw-long-enough"},
                                                         {"username": ["Upper.case", "ab"], "password": ["short", ["pw-long-enough"]]}))
def test_a_refused_librarian_is_not_created(api, http, db, field, body):
    valid = {"username": "lib." + api.card(), "password": "pw-long-enough"}
    body = {**valid, field: body[field]}

    def read() -> int:
        return http.post("/auth/token", json=valid).status_code

    refused(api, db, read, lambda: http.post("/staff", json=body, headers=api.staff.headers), (422, field), f"a librarian with an invalid {field}")
    api.ok(http.post("/staff", json=valid, headers=api.staff.headers), 201, "the same librarian with every field valid (the username is free)")


@pytest.mark.requirement("R7", "R19")
@pytest.mark.parametrize("field,body", one_invalid_field({"title": "x", "author": "A. Author"},
                                                         {"title": ["", "Two\nLines", "x" * 201], "author": [" ", "x" * 101, None]}))
def test_a_refused_title_is_not_created(api, http, db, field, body):
    valid = {"title": "Unique " + api.barcode(), "author": "Author " + api.barcode()}
    body = {**valid, field: body[field]}

    def read() -> list[Any]:
        return db.query("SELECT id FROM titles WHERE title = %s OR author = %s", (valid["title"], valid["author"]))

    refused(api, db, read, lambda: http.post("/titles", json=body, headers=api.staff.headers), (422, field), f"a title with an invalid {field}")


CHECKOUT_BAD = {"card_number": ["1234", 12345678901], "barcode": ["lower", "B-1"], "date": ["2030-02-30", "2030-3-1"]}


@pytest.mark.requirement("R8", "R19")
@pytest.mark.parametrize("field,body", one_invalid_field({"card_number": "x", "barcode": "x", "date": "2030-03-01"}, CHECKOUT_BAD))
def test_a_refused_checkout_lends_nothing(api, http, db, field, body):
    patron, title = api.patron(), api.title()
    body = {"card_number": patron.card_number, "barcode": title.barcodes[0], "date": api.d0, field: body[field]}
    refused(api, db, lambda: (api.copy(title.barcodes[0]), loans_of(api, http, patron)),
            lambda: http.post("/checkouts", json=body, headers=api.staff.headers), (422, field), f"a checkout with an invalid {field}")


@pytest.mark.requirement("R11", "R15", "R19")
@pytest.mark.parametrize("field,body", one_invalid_field({"barcode": "x", "date": "2030-04-01"}, {"barcode": ["lower"], "date": ["2030-04-31", None]}))
def test_a_refused_return_ends_no_loan_and_mails_nobody(api, http, db, field, body):
    owner, waiter, title = api.patron(), api.patron(), api.title()
    api.checkout(owner, title.barcodes[0], api.d0)
    api.hold(waiter, title)
    body = {"barcode": title.barcodes[0], "date": "2030-04-01", field: body[field]}  # 10 days late: a return would fine and mail
    refused(api, db, lambda: (api.copy(title.barcodes[0]), loans_of(api, http, owner), api.get_patron(owner), api.queue(title), api.mail_to(waiter.email)),
            lambda: http.post("/returns", json=body, headers=api.staff.headers), (422, field), f"a return with an invalid {field}")


@pytest.mark.requirement("R13", "R20")
@pytest.mark.parametrize("field,body", one_invalid_field({"title_id": 0, "patron_id": 0}, {"title_id": ["1", 1.5, None], "patron_id": ["1", True]}))
def test_a_refused_hold_is_not_placed(api, http, db, field, body):
    patron, title = api.patron(), api.title()
    body = {"title_id": title.id, "patron_id": patron.id, field: body[field]}
    refused(api, db, lambda: (api.queue(title), holds_of(api, http, patron)),
            lambda: http.post("/holds", json=body, headers=api.staff.headers), (422, field), f"a hold with an invalid {field}")


def loans_of(api: Any, http: requests.Session, patron: Any) -> list[Any]:
    return list(api.ok(http.get(f"/patrons/{patron.id}/loans", headers=api.staff.headers), 200, "list the patron's loans")["items"])


def holds_of(api: Any, http: requests.Session, patron: Any) -> list[Any]:
    return list(api.ok(http.get(f"/patrons/{patron.id}/holds", headers=api.staff.headers), 200, "list the patron's holds")["items"])


# ---------------------------------------------------------------- refusals for the state: nothing counts


def renewal_overdue(api: Any) -> tuple[Any, dict[str, Any], str]:
    patron, title = api.patron(), api.title()
    return patron, api.checkout(patron, title.barcodes[0], api.d0), "2030-03-23"  # due 2030-03-22


def renewal_on_hold(api: Any) -> tuple[Any, dict[str, Any], str]:
    patron, title = api.patron(), api.title()
    loan = api.checkout(patron, title.barcodes[0], api.d0)
    api.hold(api.patron(), title)
    return patron, loan, "2030-03-10"


def renewal_limit(api: Any) -> tuple[Any, dict[str, Any], str]:
    patron, title = api.patron(), api.title()
    loan = api.checkout(patron, title.barcodes[0], api.d0)
    api.renew(loan, "2030-03-05")
    api.renew(loan, "2030-03-10")
    return patron, loan, "2030-03-15"


@pytest.mark.requirement("R10")
@pytest.mark.parametrize("setup,code", [(renewal_overdue, "loan_overdue"), (renewal_on_hold, "on_hold"), (renewal_limit, "renewal_limit")],
                         ids=["loan_overdue", "on_hold", "renewal_limit"])
def test_a_refused_renewal_counts_for_nothing(api, db, setup, code):
    patron, loan, date = setup(api)
    refused(api, db, lambda: api.loan(loan), lambda: api.try_renew(loan, date, who=patron), (409, code), f"a renewal refused with {code}")


def hold_on_loan(api: Any) -> tuple[Any, Any]:
    patron, title = api.patron(), api.title(copies=2)
    api.checkout(patron, title.barcodes[0], api.d0)
    return patron, title


def hold_twice(api: Any) -> tuple[Any, Any]:
    patron, title = api.patron(), api.title()
    api.hold(patron, title)
    return patron, title


def hold_blocked(api: Any) -> tuple[Any, Any]:
    patron, title = api.patron(), api.title()
    api.fine(patron, 600)
    return patron, title


@pytest.mark.requirement("R13")
@pytest.mark.parametrize("setup,code", [(hold_on_loan, "already_on_loan"), (hold_twice, "already_on_hold"), (hold_blocked, "patron_blocked")],
                         ids=["already_on_loan", "already_on_hold", "patron_blocked"])
def test_a_hold_refused_for_the_state_joins_no_queue(api, http, db, setup, code):
    patron, title = setup(api)
    refused(api, db, lambda: (api.queue(title), holds_of(api, http, patron)), lambda: api.try_hold(patron, title, who=patron), (409, code),
            f"a hold refused with {code}")


# ---------------------------------------------------------------- guards, one condition at a time


@pytest.mark.requirement("R13", "R16")
def test_already_on_loan_ends_with_the_loan_not_with_the_hold(api):
    """A loan that began by fulfilling a hold: the hold stays fulfilled, the loan ends at the return, and so does the refusal."""
    owner, patron, title = api.patron(), api.patron(), api.title()
    api.checkout(owner, title.barcodes[0], api.d0)
    api.hold(patron, title)
    api.checkin(title.barcodes[0], "2030-03-05")
    api.checkout(patron, title.barcodes[0], "2030-03-06")
    api.error(api.try_hold(patron, title, who=patron), 409, "already_on_loan", "a hold on the title the patron borrowed through a hold")
    api.checkin(title.barcodes[0], "2030-03-07")
    hold = api.ok(api.try_hold(patron, title, who=patron), 201, "a hold once that loan is returned (its fulfilled hold is closed)")
    assert (hold["status"], hold["position"]) == ("waiting", 1), f"a new waiting hold: {hold}"


@pytest.mark.requirement("R13", "R14")
def test_a_ready_hold_counts_as_already_on_hold_until_cancelled(api):
    owner, patron, title = api.patron(), api.patron(), api.title()
    api.checkout(owner, title.barcodes[0], api.d0)
    ready = api.hold(patron, title)
    api.checkin(title.barcodes[0], "2030-03-05")
    assert api.get_hold(ready)["status"] == "ready"
    api.error(api.try_hold(patron, title, who=patron), 409, "already_on_hold", "a second hold while the first is ready (not waiting)")
    api.cancel(ready, who=patron)
    api.ok(api.try_hold(patron, title, who=patron), 201, "a hold once the ready one is cancelled")


@pytest.mark.requirement("R9", "R16", "R17")
def test_copy_on_hold_is_about_the_copy_set_aside(api):
    """Another patron's ready hold on the title refuses that one copy, not the title's other copies; cancelling it frees the copy."""
    lender, holder, borrower, title = api.patron(), api.patron(), api.patron(), api.title(copies=2)
    shelved, spare = title.barcodes
    api.checkout(lender, shelved, api.d0)
    ready = api.hold(holder, title)
    api.checkin(shelved, "2030-03-05")
    api.error(api.try_checkout(borrower, shelved, "2030-03-06"), 409, "copy_on_hold", "the copy on the shelf for another patron")
    api.checkout(borrower, spare, "2030-03-06")
    api.cancel(ready, who=holder)
    api.checkout(borrower, shelved, "2030-03-07")


@pytest.mark.requirement("R10", "R17")
def test_on_hold_ends_when_the_waiting_hold_is_cancelled(api):
    patron, other, title = api.patron(), api.patron(), api.title()
    loan = api.checkout(patron, title.barcodes[0], api.d0)
    waiting = api.hold(other, title)
    api.error(api.try_renew(loan, "2030-03-10", who=patron), 409, "on_hold", "a renewal while another patron waits")
    api.cancel(waiting, who=other)
    assert api.renew(loan, "2030-03-10", who=patron)["renewals"] == 1, "the renewal once the hold is cancelled"


# ---------------------------------------------------------------- ids named in a body


HOLD_REFERENCES = {
    "another-patrons-id": lambda api, patron, other, title: (403, "forbidden", {"title_id": title.id, "patron_id": other.id}, patron),
    "unknown-patron-id": lambda api, patron, other, title: (404, "not_found", {"title_id": title.id, "patron_id": BEYOND}, api.staff),
    "unknown-title-id": lambda api, patron, other, title: (404, "not_found", {"title_id": BEYOND, "patron_id": patron.id}, api.staff),
}


@pytest.mark.requirement("R4", "R13", "R20")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("case", list(HOLD_REFERENCES))
def test_a_hold_naming_someone_else_or_nothing_is_refused(api, http, db, case):
    patron, other, title = api.patron(), api.patron(), api.title()
    status, code, body, who = HOLD_REFERENCES[case](api, patron, other, title)
    refused(api, db, lambda: (api.queue(title), holds_of(api, http, patron), holds_of(api, http, other)),
            lambda: http.post("/holds", json=body, headers=who.headers), (status, code), f"POST /holds with {body}")


@pytest.mark.requirement("R8", "R20")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("field", ["card_number", "barcode"])
def test_a_checkout_naming_nothing_lends_nothing(api, http, db, field):
    patron, title = api.patron(), api.title()
    body = {"card_number": patron.card_number, "barcode": title.barcodes[0], "date": api.d0}
    body[field] = api.card() if field == "card_number" else api.barcode()
    refused(api, db, lambda: (api.copy(title.barcodes[0]), loans_of(api, http, patron)),
            lambda: http.post("/checkouts", json=body, headers=api.staff.headers), (404, "not_found"), f"a checkout naming an unknown {field}")
