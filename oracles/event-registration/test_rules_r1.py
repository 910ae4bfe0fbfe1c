"""R1 (evolved) items: the two stated precedences, time zones, and refused requests that change nothing.

spec.md: "When a registration is both invalid and for a full event, 422 wins; when it is a
duplicate and the event is full, 409 already_registered wins." and "responses give them in UTC
... A starts_at without an offset is taken as UTC."
"""

from __future__ import annotations

import datetime as dt

import pytest

pytestmark = [pytest.mark.tier("r1")]

UTC = dt.timezone.utc


# ---------------------------------------------------------------- precedence

INVALID_FOR_FULL = [
    ("blank-name", {"name": " ", "email": "fresh"}, ["name"]),
    ("bad-email", {"name": "Late", "email": "not-an-email"}, ["email"]),
    ("both-missing", {}, ["name", "email"]),
    ("wrong-types", {"name": 5, "email": False}, ["name", "email"]),
    ("name-too-long", {"name": "n" * 101, "email": "fresh"}, ["name"]),
]


@pytest.mark.requirement("R4", "R6")
@pytest.mark.category("validation")
@pytest.mark.parametrize("body,fields", [(b, f) for _, b, f in INVALID_FOR_FULL], ids=[i for i, _, _ in INVALID_FOR_FULL])
def test_invalid_beats_event_full(api, http, body, fields):
    event = api.event(capacity=1)
    api.fill(event)
    sent = {k: (api.fresh_email() if v == "fresh" else v) for k, v in body.items()}
    problem = api.validation_problem(api.post_registration(event, **sent), fields, f"an invalid registration {sent} for a full event (422 wins)")
    assert problem is None, problem


@pytest.mark.requirement("R4", "R6")
@pytest.mark.category("validation")
def test_a_non_object_body_for_a_full_event_gets_422(api, http):
    event = api.event(capacity=1)
    api.fill(event)
    r = http.post(f"/api/events/{event['id']}/registrations", data=b"[]", headers={"Content-Type": "application/json"})
    problem = api.validation_problem(r, ["body"], "a JSON array for a full event (422 wins)")
    assert problem is None, problem


@pytest.mark.requirement("R5", "R6")
@pytest.mark.category("state")
@pytest.mark.parametrize("spelling", ["same", "other-case"])
@pytest.mark.parametrize("capacity", [1, 2])
def test_already_registered_beats_event_full(api, http, spelling, capacity):
    event = api.event(capacity=capacity)
    email = api.fresh_email()
    api.register(event, email=email)
    api.fill(event)
    again = email if spelling == "same" else email.upper()
    api.error(api.post_registration(event, name="Again", email=again), 409, "already_registered", f"{again!r} again on a full event of {capacity}")
    api.error(api.post_registration(event, name="New", email=api.fresh_email()), 409, "event_full", "a new email on the same full event")


@pytest.mark.requirement("R5", "R6", "R7")
@pytest.mark.category("state")
def test_precedence_follows_seats_as_they_free_up(api, http):
    event = api.event(capacity=1)
    email = api.fresh_email()
    mine = api.register(event, email=email)
    api.error(api.post_registration(event, name="Me", email=email), 409, "already_registered", "a duplicate on a full event")
    api.cancel(mine)
    other = api.register(event)
    api.error(api.post_registration(event, name="Me", email=email), 409, "event_full", "the cancelled email on an event someone else filled")
    api.cancel(other)
    assert api.register(event, email=email)["email"] == email, "a free seat again: the email registers"


# ---------------------------------------------------------------- time zones

@pytest.mark.requirement("R2", "R3")
@pytest.mark.category("api_surface")
@pytest.mark.parametrize(
    "sent,utc",
    [
        ("2031-06-01T20:00:00+02:00", dt.datetime(2031, 6, 1, 18, 0, tzinfo=UTC)),
        ("2031-06-01T08:15:00-05:30", dt.datetime(2031, 6, 1, 13, 45, tzinfo=UTC)),
        ("2031-12-31T23:30:00-01:00", dt.datetime(2032, 1, 1, 0, 30, tzinfo=UTC)),
        ("2031-06-01T18:00:00Z", dt.datetime(2031, 6, 1, 18, 0, tzinfo=UTC)),
    ],
    ids=["plus-2", "minus-5-30", "next-year", "z"],
)
def test_starts_at_with_an_offset_is_answered_in_utc(api, http, sent, utc):
    event = api.event(starts_at=sent)
    for where, got in (("POST", event), ("GET", api.get_event(event)), ("list", api.listed(event)[0])):
        problem = api.utc_problem(got.get("starts_at"), f"{where} starts_at for {sent}")
        assert problem is None, problem
        assert api.instant(got["starts_at"]) == utc, f"{where}: {sent} is the instant {utc.isoformat()}, answered {got['starts_at']!r}"


@pytest.mark.requirement("R2")
@pytest.mark.category("api_surface")
def test_starts_at_without_an_offset_is_taken_as_utc(api, http):
    event = api.event(starts_at="2032-03-04T05:06:07")
    for where, got in (("POST", event), ("GET", api.get_event(event))):
        problem = api.utc_problem(got.get("starts_at"), f"{where} starts_at")
        assert problem is None, problem
        assert api.instant(got["starts_at"]) == dt.datetime(2032, 3, 4, 5, 6, 7, tzinfo=UTC), f"{where}: no offset means UTC, answered {got['starts_at']!r}"


@pytest.mark.requirement("R3")
@pytest.mark.category("state")
def test_events_are_ordered_by_instant_across_offsets(api, http):
    # local clock times in the opposite order of the instants
    a = api.event(starts_at="2041-03-01T23:00:00+09:00")   # 14:00Z
    b = api.event(starts_at="2041-03-01T10:00:00-05:30")   # 15:30Z
    c = api.event(starts_at="2041-03-01T15:00:00")          # 15:00Z (no offset: UTC)
    d = api.event(starts_at="2041-03-01T01:00:00-14:00")   # 15:00Z on 03-01
    ids = [e["id"] for e in api.listed(a, b, c, d)]
    assert ids == [a["id"], c["id"], d["id"], b["id"]], f"ordered by instant, then id (c and d start together): got {ids}"


@pytest.mark.requirement("R3")
@pytest.mark.category("state")
def test_events_starting_at_the_same_instant_are_ordered_by_id(api, http):
    made = [api.event(starts_at=s) for s in ("2042-08-08T12:00:00+02:00", "2042-08-08T10:00:00Z", "2042-08-08T04:30:00-05:30", "2042-08-08T10:00:00")]
    ids = [e["id"] for e in api.listed(*made)]
    assert ids == sorted(e["id"] for e in made), f"four spellings of one instant are ordered by id: got {ids}"


# ---------------------------------------------------------------- refused requests change nothing

@pytest.mark.requirement("R4", "R5", "R6")
@pytest.mark.category("state")
@pytest.mark.parametrize("refusal", ["invalid", "duplicate", "full", "unknown-event"])
def test_a_refused_registration_takes_no_seat_and_adds_no_row(api, http, db, refusal):
    event = api.event(capacity=2)
    email = api.fresh_email()
    kept = api.register(event, email=email)
    target = event
    if refusal == "invalid":
        body, status = {"name": "Valid Name", "email": "not an email"}, 422
    elif refusal == "duplicate":
        body, status = {"name": "Valid Name", "email": email.upper()}, 409
    elif refusal == "full":
        api.register(event)
        body, status = {"name": "Valid Name", "email": api.fresh_email()}, 409
    else:
        target, body, status = api.unknown_event_id(), {"name": "Valid Name", "email": api.fresh_email()}, 404
    before = api.doc([api.get_event(event), api.attendees(event)])
    rows_before = db.scalar("SELECT count(*) FROM registrations WHERE event_id = %s", (int(event["id"]),))
    r = api.post_registration(target, **body)
    assert r.status_code == status, f"{refusal}: expected {status}, got {api.brief(r)}"
    after = api.doc([api.get_event(event), api.attendees(event)])
    assert after == before, f"{refusal}: the refused registration changed the event or its list:\nbefore {before}\nafter  {after}"
    rows_after = db.scalar("SELECT count(*) FROM registrations WHERE event_id = %s", (int(event["id"]),))
    named = db.scalar("SELECT count(*) FROM registrations WHERE lower(email) = lower(%s) AND id <> %s", (body["email"], int(kept["id"])))
    assert (rows_after, named) == (rows_before, 0), f"{refusal}: rows of the event {rows_before} -> {rows_after}, rows with the refused email {named}"


@pytest.mark.requirement("R2", "R8")
@pytest.mark.category("state")
def test_a_refused_event_stores_nothing(api, http, db):
    titles = [api.unique("Refused") for _ in range(3)]
    for title, change in zip(titles, ({"capacity": 0}, {"starts_at": "tomorrow"}, {"capacity": 1.5})):
        r = api.create_event(title=title, **change)
        assert r.status_code == 422, f"{change}: expected 422, got {api.brief(r)}"
    stored = db.scalar("SELECT count(*) FROM events WHERE title = ANY(%s)", (titles,))
    assert stored == 0, f"refused events were stored anyway ({stored} rows)"
    assert [e for e in api.events() if e.get("title") in titles] == [], "refused events are not listed"
