"""Holds: the FIFO queue, the hold shelf, the hold-ready email, cancellation (spec.md: Holds; The mailer)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r1")]


@pytest.mark.requirement("R13")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("INSERT", table="holds")
def test_a_new_hold_waits_at_the_end_of_the_queue(api):
    patron, title = api.patron(), api.title()
    hold = api.hold(patron, title)
    expected = {"title_id": title.id, "patron_id": patron.id, "status": "waiting", "position": 1, "barcode": None, "notified": False}
    assert {k: hold.get(k) for k in expected} == expected, f"the new hold: {hold}"
    assert isinstance(hold.get("id"), int)
    assert api.get_hold(hold)["status"] == "waiting"


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_the_queue_is_first_in_first_out(api):
    title = api.title()
    holds = [api.hold(api.patron(), title) for _ in range(3)]
    assert [h["position"] for h in holds] == [1, 2, 3], f"positions as placed: {holds}"
    assert [h["id"] for h in api.queue(title)] == [h["id"] for h in holds], "GET /titles/{id}/holds in queue order"
    api.cancel(holds[0])
    assert [(h["id"], h["position"]) for h in api.queue(title)] == [(holds[1]["id"], 1), (holds[2]["id"], 2)], "the queue closes up"
    assert api.get_hold(holds[2])["position"] == 2


@pytest.mark.requirement("R4", "R13")
@pytest.mark.category("api_surface")
def test_a_patron_places_a_hold_for_themself(api, http):
    patron, title = api.patron(), api.title()
    hold = api.ok(http.post("/holds", json={"title_id": title.id}, headers=patron.headers), 201, "a patron's hold without patron_id")
    assert (hold["patron_id"], hold["status"]) == (patron.id, "waiting"), f"the hold is the caller's: {hold}"
    other = api.title()
    hold = api.ok(api.try_hold(patron, other, who=patron), 201, "a patron's hold with their own patron_id")
    assert hold["patron_id"] == patron.id


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_one_active_hold_per_patron_and_title(api):
    patron, title = api.patron(), api.title()
    first = api.hold(patron, title)
    api.error(api.try_hold(patron, title), 409, "already_on_hold", "a second hold on the same title")
    api.cancel(first)
    assert api.hold(patron, title)["position"] == 1, "after cancelling, a new hold may be placed"


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_no_hold_on_a_title_the_patron_has_on_loan(api):
    patron, title = api.patron(), api.title(copies=2)
    api.checkout(patron, title.barcodes[0])
    api.error(api.try_hold(patron, title), 409, "already_on_loan", "a hold on a title the patron has on loan")
    api.fine(patron, 600)
    api.error(api.try_hold(patron, title), 409, "patron_blocked", "blocked and already on loan: patron_blocked first")


@pytest.mark.requirement("R13", "R20")
@pytest.mark.category("validation")
def test_hold_bodies_are_validated(api, http):
    patron, title = api.patron(), api.title()
    api.invalid(http.post("/holds", json={"title_id": title.id}, headers=api.staff.headers), ["patron_id"], "staff without patron_id")
    api.invalid(http.post("/holds", json={"title_id": str(title.id), "patron_id": patron.id}, headers=api.staff.headers), ["title_id"],
                "a title_id string")
    api.invalid(http.post("/holds", json={"patron_id": patron.id}, headers=api.staff.headers), ["title_id"], "no title_id")
    api.error(api.try_hold(patron, title.id + 1_000_000), 404, "not_found", "a hold on an unknown title")


@pytest.mark.requirement("R14", "R15")
@pytest.mark.category("side_effects")
def test_a_return_puts_the_copy_on_the_shelf_for_the_first_in_line(api):
    owner, first, second, title = api.patron(), api.patron(), api.patron(), api.title()
    api.checkout(owner, title.barcodes[0], "2030-03-01")
    h1, h2 = api.hold(first, title), api.hold(second, title)
    answer = api.checkin(title.barcodes[0], "2030-03-10")
    hold = answer.get("hold") or {}
    assert (hold.get("id"), hold.get("status"), hold.get("barcode"), hold.get("position")) == (h1["id"], "ready", title.barcodes[0], None), (
        f"the first hold is ready with the copy: {answer}")
    assert (answer.get("copy") or {}).get("status") == "on_hold_shelf" and api.status(title.barcodes[0]) == "on_hold_shelf"
    assert (api.get_hold(h2)["status"], api.get_hold(h2)["position"]) == ("waiting", 1), "the second now leads the queue"
    assert len(api.mail_to(first.email)) == 1 and api.mail_to(second.email) == [], "only the first in line is mailed"


@pytest.mark.requirement("R15")
@pytest.mark.category("side_effects")
def test_the_hold_ready_email(api):
    owner, waiter = api.patron(), api.patron()
    title = api.title(name="Pride & Prejudice: 100% \"Austen\"")
    api.checkout(owner, title.barcodes[0], "2030-03-01")
    hold = api.hold(waiter, title)
    api.checkin(title.barcodes[0], "2030-03-10")
    sent = api.mail_to(waiter.email)
    assert len(sent) == 1, f"exactly one message to the waiting patron, before the return answered: {sent}"
    message = sent[0]["json"]
    assert message.get("subject") == f"Hold ready: {title.title}", f"the subject: {message}"
    assert title.title in str(message.get("text")) and title.barcodes[0] in str(message.get("text")), f"the text names title and barcode: {message}"
    assert sent[0]["status"] == 202 and api.get_hold(hold)["notified"] is True, "the relay accepted it: notified"
    assert api.mail_to(owner.email) == [], "the returning patron gets nothing"


@pytest.mark.requirement("R15")
@pytest.mark.category("side_effects")
@pytest.mark.parametrize("domain", ["fail.example", "reject.example"])
def test_a_mailer_failure_leaves_the_hold_ready_and_unnotified(api, domain):
    owner, waiter, title = api.patron(), api.patron(address=api.email(domain)), api.title()
    api.checkout(owner, title.barcodes[0], "2030-03-01")
    hold = api.hold(waiter, title)
    answer = api.checkin(title.barcodes[0], "2030-03-10")
    assert (answer["hold"]["status"], answer["hold"]["notified"]) == ("ready", False), f"a refused email: {answer['hold']}"
    assert (api.get_hold(hold)["status"], api.get_hold(hold)["notified"]) == ("ready", False)
    assert len(api.mail_to(waiter.email)) == 1, "one attempt, no second"


@pytest.mark.requirement("R15")
@pytest.mark.category("side_effects")
def test_nothing_is_mailed_without_a_hold(api):
    patron, title = api.patron(), api.title()
    api.checkout(patron, title.barcodes[0], "2030-03-01")
    api.hold(api.patron(), api.title())
    api.checkin(title.barcodes[0], "2030-03-30")
    assert api.mail_to(patron.email) == [], "returns, fines and holds on other titles send no email"


@pytest.mark.requirement("R16")
@pytest.mark.category("state")
def test_the_holder_checks_out_the_shelved_copy(api):
    _owner, waiter, title, _, hold = api.waiting()
    api.checkin(title.barcodes[0], "2030-03-10")
    api.checkout(waiter, title.barcodes[0], "2030-03-11")
    after = api.get_hold(hold)
    assert (after["status"], after["position"]) == ("fulfilled", None), f"the hold is fulfilled: {after}"
    assert api.status(title.barcodes[0]) == "on_loan"


@pytest.mark.requirement("R16", "R9")
@pytest.mark.category("state")
def test_a_shelved_copy_is_refused_to_others(api):
    owner, waiter, other, title = api.patron(), api.patron(), api.patron("child"), api.title()
    api.checkout(owner, title.barcodes[0], "2030-03-01")
    api.hold(waiter, title)
    api.checkin(title.barcodes[0], "2030-03-10")
    for patron in (owner, other):
        api.error(api.try_checkout(patron, title.barcodes[0], "2030-03-11"), 409, "copy_on_hold", "a copy on the shelf for someone else")
    spare = api.title(copies=2)
    api.checkout(other, spare.barcodes[0])
    api.checkout(other, spare.barcodes[1])
    api.error(api.try_checkout(other, title.barcodes[0], "2030-03-11"), 409, "copy_on_hold", "copy_on_hold comes before loan_limit_reached")


@pytest.mark.requirement("R16")
@pytest.mark.category("state")
def test_borrowing_an_available_copy_fulfils_a_waiting_hold(api):
    waiter, title = api.patron(), api.title()
    hold = api.hold(waiter, title)
    other = api.hold(api.patron(), title)
    api.checkout(waiter, title.barcodes[0], "2030-03-01")
    assert api.get_hold(hold)["status"] == "fulfilled", "the borrower's waiting hold is fulfilled"
    assert [h["id"] for h in api.queue(title)] == [other["id"]], "it left the queue"


@pytest.mark.requirement("R16")
@pytest.mark.category("state")
def test_an_available_copy_may_be_lent_while_others_wait(api):
    waiter, borrower, title = api.patron(), api.patron(), api.title()
    hold = api.hold(waiter, title)
    api.checkout(borrower, title.barcodes[0], "2030-03-01")
    assert api.get_hold(hold)["status"] == "waiting", "holds are filled only by a return"
    assert api.checkin(title.barcodes[0], "2030-03-02")["hold"]["id"] == hold["id"]


@pytest.mark.requirement("R17")
@pytest.mark.category("state")
@pytest.mark.db_effect("UPDATE", table="holds")
def test_cancelling_a_waiting_hold(api, http):
    patron, title = api.patron(), api.title()
    hold = api.hold(patron, title)
    r = http.delete(f"/holds/{hold['id']}", headers=patron.headers)
    assert r.status_code == 204 and not r.content, f"the holder cancels: {r.status_code} {r.text[:200]}"
    assert (api.get_hold(hold)["status"], api.get_hold(hold)["position"]) == ("cancelled", None)
    assert api.queue(title) == []


@pytest.mark.requirement("R17", "R15")
@pytest.mark.category("side_effects")
def test_cancelling_a_ready_hold_hands_the_copy_on(api):
    owner, first, second, title = api.patron(), api.patron(), api.patron(), api.title()
    api.checkout(owner, title.barcodes[0], "2030-03-01")
    h1, h2 = api.hold(first, title), api.hold(second, title)
    api.checkin(title.barcodes[0], "2030-03-10")
    assert api.mail_to(second.email) == []
    api.cancel(h1, who=first)
    after = api.get_hold(h2)
    assert (after["status"], after["barcode"], after["notified"]) == ("ready", title.barcodes[0], True), f"the next hold is ready: {after}"
    assert len(api.mail_to(second.email)) == 1 and len(api.mail_to(first.email)) == 1, "the next patron got the email"
    assert api.status(title.barcodes[0]) == "on_hold_shelf"


@pytest.mark.requirement("R17")
@pytest.mark.category("state")
def test_cancelling_the_last_ready_hold_frees_the_copy(api):
    owner, _waiter, title, _, hold = api.waiting()
    api.checkin(title.barcodes[0], "2030-03-10")
    api.cancel(hold)
    assert api.status(title.barcodes[0]) == "available"
    api.checkout(owner, title.barcodes[0], "2030-03-12")


@pytest.mark.requirement("R17")
@pytest.mark.category("state")
def test_closed_holds_cannot_be_cancelled(api, http):
    patron, title = api.patron(), api.title()
    cancelled = api.hold(patron, title)
    api.cancel(cancelled)
    api.error(http.delete(f"/holds/{cancelled['id']}", headers=api.staff.headers), 409, "hold_closed", "cancelling twice")
    fulfilled = api.hold(patron, title)
    api.checkout(patron, title.barcodes[0], "2030-03-01")
    api.error(http.delete(f"/holds/{fulfilled['id']}", headers=patron.headers), 409, "hold_closed", "cancelling a fulfilled hold")


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_a_patrons_holds_of_every_status_oldest_first(api, http):
    patron, titles = api.patron(), [api.title() for _ in range(3)]
    holds = [api.hold(patron, t) for t in titles]
    api.cancel(holds[1])
    api.checkout(patron, titles[2].barcodes[0], "2030-03-01")
    items = api.ok(http.get(f"/patrons/{patron.id}/holds", headers=patron.headers), 200, "my holds")["items"]
    assert [(h["id"], h["status"]) for h in items] == [(holds[0]["id"], "waiting"), (holds[1]["id"], "cancelled"), (holds[2]["id"], "fulfilled")], items
