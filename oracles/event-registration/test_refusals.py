"""Refused requests change nothing at any field, and each 409 condition alone (issue 35).

spec.md: "a field is missing or invalid" (422), "the rejected request changes nothing", "When a
registration is both invalid and for a full event, 422 wins; when it is a duplicate and the event
is full, 409 already_registered wins", "its seat is free again". Every field of a body is made
invalid in turn with the others valid, then the event and its attendees are read back and the
statement log asked for writes: a service that stores a row and removes it again leaves the list
as it was, but not the log.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_backendbench.http.refusals import one_invalid_field, refused_unchanged

pytestmark = [pytest.mark.tier("r1"), pytest.mark.category("state")]

EVENT = {"title": "@title", "starts_at": "2031-05-01T18:00:00Z", "capacity": 5}
REGISTRATION = {"name": "Valid Name", "email": "@email"}


def refused_without_writes(api, db, send, read, status: int, code: str, fields: list[str] | None, what: str) -> None:
    """``send()`` is refused as stated, ``read()`` answers the same before and after, and the statement log holds no write."""
    __tracebackhide__ = True
    refused_unchanged(api, send, read, what, fields=fields, status=status, code=code, db=db)


@pytest.mark.requirement("R2", "R8")
@pytest.mark.parametrize("field,body", one_invalid_field(EVENT, {"title": ["  ", "t" * 121, 7], "starts_at": ["tomorrow", "2031-02-30T10:00:00Z"],
                                                                   "capacity": [0, 1001, 1.5, True, "5"]}))
def test_a_refused_event_stores_nothing_whichever_field_is_invalid(api, http, db, field, body):
    title = api.unique("Refused")
    body = {k: (title if v == "@title" else v) for k, v in body.items()}

    def read() -> list[Any]:
        return [e for e in api.events() if e.get("title") == title]

    refused_without_writes(api, db, lambda: http.post("/api/events", json=body), read, 422, "validation_error", [field], f"an event with an invalid {field} {body}")
    assert db.scalar("SELECT count(*) FROM events WHERE title = %s", (title,)) == 0, "no event row"


@pytest.mark.requirement("R4")
@pytest.mark.parametrize("field,body", one_invalid_field(REGISTRATION, {"name": ["", " ", "n" * 101], "email": ["not an email", "a b@example.org", 42]}))
def test_a_refused_registration_writes_nothing_whichever_field_is_invalid(api, http, db, field, body):
    event = api.event(capacity=2)
    api.register(event)
    body = {k: (api.fresh_email() if v == "@email" else v) for k, v in body.items()}
    refused_without_writes(api, db, lambda: api.post_registration(event, **body), lambda: api.doc([api.get_event(event), api.attendees(event)]),
                           422, "validation_error", [field], f"a registration with an invalid {field} {body}")


def conflict(api, case: str) -> tuple[dict[str, Any], str, str]:
    """Set up ``case``; the event, the email to send and the 409 code it must get."""
    email = api.fresh_email()
    if case == "duplicate-with-seats-left":
        event = api.event(capacity=3)
        api.register(event, email=email)
        return event, email.upper(), "already_registered"
    if case == "duplicate-after-a-cancellation-emptied-a-seat":  # the event was full; a cancellation leaves the duplicate alone
        event = api.event(capacity=2)
        api.register(event, email=email)
        api.cancel(api.register(event))
        return event, email, "already_registered"
    if case == "duplicate-on-a-full-event":
        event = api.event(capacity=1)
        api.register(event, email=email)
        return event, email, "already_registered"
    if case == "full-with-a-new-email":
        event = api.event(capacity=1)
        api.register(event)
        return event, email, "event_full"
    if case == "full-after-the-duplicate-was-cancelled":  # the duplicate undone by a cancellation, the event full again by someone else
        event = api.event(capacity=1)
        api.cancel(api.register(event, email=email))
        api.register(event)
        return event, email, "event_full"
    raise AssertionError(case)


CONFLICTS = ["duplicate-with-seats-left", "duplicate-after-a-cancellation-emptied-a-seat", "duplicate-on-a-full-event", "full-with-a-new-email",
             "full-after-the-duplicate-was-cancelled"]


@pytest.mark.requirement("R5", "R6", "R7")
@pytest.mark.parametrize("case", CONFLICTS)
def test_each_409_condition_alone_writes_nothing(api, http, db, case):
    event, email, code = conflict(api, case)
    refused_without_writes(api, db, lambda: api.post_registration(event, name="Valid Name", email=email),
                           lambda: api.doc([api.get_event(event), api.attendees(event)]), 409, code, None, f"{case}: {email}")
