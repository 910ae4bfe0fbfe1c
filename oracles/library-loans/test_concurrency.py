"""Requests that arrive at once (spec.md: "Requests may arrive concurrently").

Each rule with one winner is sent as a burst released together (http/concurrency.py): a copy is
lent once (`copy_unavailable`), a category's loan limit holds (`loan_limit_reached`), a return
ends the loan once and its fine is added once (`not_on_loan`), a barcode is unique
(`barcode_taken`). Then the state is read back from outside.
"""

from __future__ import annotations

import pytest

from pytest_backendbench.http.concurrency import at_once, one_winner

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("state")]


@pytest.mark.requirement("R8", "R9")
def test_a_copy_checked_out_at_once_is_lent_once(api, http):
    title, patrons = api.title(copies=1), [api.patron() for _ in range(6)]
    code = title.barcodes[0]
    answers = at_once(http.base_url, lambda patron: api.try_checkout(patron, code), patrons, http.timeout_s)
    [won] = one_winner(answers, "a copy lent to six patrons at once", code="copy_unavailable")
    winner = patrons[answers.index(won)]
    assert api.status(code) == "on_loan", "the copy is on loan"
    current = {p.id: [loan for loan in api.ok(http.get(f"/patrons/{p.id}/loans", headers=api.staff.headers), 200, "list the loans")["items"]
                      if loan["returned_on"] is None] for p in patrons}
    assert {pid: len(loans) for pid, loans in current.items()} == {p.id: int(p is winner) for p in patrons}, \
        f"only the patron whose checkout won has a current loan of the copy: {current}"


@pytest.mark.requirement("R9")
def test_checkouts_at_once_never_pass_the_loan_limit(api, http):
    patron, title = api.patron(category="child"), api.title(copies=6)
    answers = at_once(http.base_url, lambda code: api.try_checkout(patron, code), title.barcodes, http.timeout_s)
    one_winner(answers, "six checkouts at once by a child (at most 2 current loans)", allowed=2, code="loan_limit_reached")
    statuses = [api.status(code) for code in title.barcodes]
    assert sorted(statuses) == ["available"] * 4 + ["on_loan"] * 2, f"exactly two copies are on loan: {statuses}"


@pytest.mark.requirement("R11")
def test_a_late_return_sent_at_once_ends_the_loan_and_fines_once(api, http):
    patron, title = api.patron(), api.title(copies=1)
    code = title.barcodes[0]
    api.checkout(patron, code, api.d0)
    late = api.day(api.d0, 21 + 7)  # seven days late: 70 cents
    answers = at_once(http.base_url, lambda _: api.try_return(code, late), range(6), http.timeout_s)
    one_winner(answers, "six returns of one loan at once", won=200, code="not_on_loan")
    assert api.owed(patron) == 70, f"the fine of the one returned loan is added once: fines_owed {api.owed(patron)}, expected 70"
    assert api.status(code) == "available", "the copy is available again"


@pytest.mark.requirement("R7")
def test_a_barcode_added_at_once_is_taken_once(api, http):
    title, code = api.title(copies=0), api.barcode()
    answers = at_once(http.base_url, lambda _: http.post(f"/titles/{title.id}/copies", json={"barcode": code}, headers=api.staff.headers),
                      range(6), http.timeout_s)
    one_winner(answers, "one barcode added six times at once", code="barcode_taken")
    copies = api.ok(http.get(f"/titles/{title.id}", headers=api.staff.headers), 200, "read the title")["copies"]
    assert [c["barcode"] for c in copies] == [code], f"the title has the copy once: {copies}"
