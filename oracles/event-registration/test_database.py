"""What the service keeps in PostgreSQL, for data this item made itself (spec.md: Storage).

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
