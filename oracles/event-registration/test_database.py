"""What the service keeps in PostgreSQL, for data this item made itself (spec.md: Database).

These replace two snapshot cases that counted rows other items had written: each item now
creates its own event and registrations and looks only at those rows, so it passes alone,
in any order and twice in a row.
"""

from __future__ import annotations

import uuid

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("state")]


@pytest.mark.requirement("R4", "R8")
def test_registrations_are_rows_with_lower_cased_emails(api, http, db):
    event = api.event(capacity=5)
    local = uuid.uuid4().hex[:10]
    made = api.register(event, name="Ada Lovelace", email=f"Ada.{local}@Example.ORG")
    rows = db.query("SELECT event_id, name, email FROM registrations WHERE event_id = %s ORDER BY id", (int(event["id"]),))
    assert [(r["event_id"], r["name"], r["email"]) for r in rows] == [(int(event["id"]), "Ada Lovelace", f"ada.{local}@example.org")], (
        f"one row with the lower-cased email for the registration {made}: {rows}"
    )


@pytest.mark.requirement("R7", "R8")
def test_events_and_live_registrations_are_rows(api, http, db):
    event = api.event(capacity=5, title="Rows " + uuid.uuid4().hex[:8])
    kept, cancelled = api.register(event), api.register(event)
    api.ok(http.delete(f"/api/registrations/{cancelled['id']}"), 204, "cancel a registration")
    titles = db.query("SELECT title, capacity FROM events WHERE id = %s", (int(event["id"]),))
    assert [(r["title"], r["capacity"]) for r in titles] == [(event["title"], 5)], f"the event is a row of events: {titles}"
    rows = db.query("SELECT id FROM registrations WHERE event_id = %s ORDER BY id", (int(event["id"]),))
    assert [int(r["id"]) for r in rows] == [int(kept["id"])], f"only the registration that was not cancelled is a row: {rows}"


@pytest.mark.requirement("R2", "R8")
def test_starts_at_is_stored_as_the_instant(api, http, db):
    import datetime as dt

    event = api.event(starts_at="2036-04-05T06:07:08+05:30")
    stored = db.scalar("SELECT starts_at FROM events WHERE id = %s", (int(event["id"]),))
    assert isinstance(stored, dt.datetime), f"starts_at is a timestamp column: {stored!r}"
    moment = stored if stored.tzinfo is not None else stored.replace(tzinfo=dt.timezone.utc)  # `timestamp` holds UTC
    assert moment == dt.datetime(2036, 4, 5, 0, 37, 8, tzinfo=dt.timezone.utc), f"the row holds the instant sent (00:37:08Z), got {stored!r}"


@pytest.mark.requirement("R6", "R8")
def test_seats_left_is_capacity_minus_the_rows(api, http, db):
    event = api.event(capacity=4)
    made = [api.register(event) for _ in range(3)]
    api.cancel(made[0])
    rows = db.scalar("SELECT count(*) FROM registrations WHERE event_id = %s", (int(event["id"]),))
    capacity = db.scalar("SELECT capacity FROM events WHERE id = %s", (int(event["id"]),))
    assert (capacity, rows) == (4, 2), f"the event row has capacity 4 and two registration rows, got capacity {capacity}, rows {rows}"
    assert api.seats(event) == capacity - rows, "seats_left is capacity minus the event's current registrations"
