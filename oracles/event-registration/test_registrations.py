"""Registrations: seats, duplicates, full events, cancelling (spec.md: Registrations)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R4")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("INSERT", table="registrations")
def test_register_takes_a_seat_and_lowercases_the_email(api, http):
    event = api.event(capacity=3)
    r = http.post(f"/api/events/{event['id']}/registrations", json={"name": "Grace Hopper", "email": "Grace.Hopper@Example.ORG"})
    assert r.status_code == 201, api.brief(r)
    registration = r.json()
    assert registration["event_id"] == event["id"] and registration["name"] == "Grace Hopper", f"fields not echoed: {registration}"
    assert registration["email"] == "grace.hopper@example.org", f"the email must be stored lower-cased: {registration}"
    assert api.seats(event) == 2, "a registration takes one seat"


@pytest.mark.requirement("R4")
@pytest.mark.category("validation")
def test_invalid_registrations_are_rejected(api, http):
    event = api.event()
    path = f"/api/events/{event['id']}/registrations"
    cases = [
        ({"name": " ", "email": "a@b.co"}, ["name"]),
        ({"name": "n" * 101, "email": "a@b.co"}, ["name"]),
        ({"name": "Ann", "email": "not-an-email"}, ["email"]),
        ({"name": "Ann", "email": "a b@c.de"}, ["email"]),
        ({"name": "Ann", "email": "a@" + "b" * 250 + ".de"}, ["email"]),
        ({"name": 1, "email": None}, ["name", "email"]),
    ]
    problems = []
    for body, fields in cases:
        r = http.post(path, json=body)
        if r.status_code != 422 or sorted(r.json().get("fields", [])) != sorted(fields):
            problems.append(f"{body!r:.80}: expected 422 with fields {fields}, got {api.brief(r)}")
    assert not problems, "\n".join(problems)
    assert api.seats(event) == event["capacity"], "rejected registrations must not take seats"
    api.error(http.post(f"/api/events/{api.unknown_event_id()}/registrations", json={"name": "Ann", "email": "a@b.co"}), 404, "not_found", "register for an unknown event")


@pytest.mark.requirement("R5")
@pytest.mark.category("validation")
def test_an_email_registers_once_per_event(api, http):
    event, other = api.event(), api.event()
    api.register(event, email="Linus@Example.org")
    again = http.post(f"/api/events/{event['id']}/registrations", json={"name": "L", "email": "linus@example.ORG"})
    api.error(again, 409, "already_registered", "the same email in another case")
    api.register(other, email="linus@example.org")  # another event is fine
    assert api.seats(event) == event["capacity"] - 1


@pytest.mark.requirement("R6")
@pytest.mark.category("state")
def test_a_full_event_refuses_registrations(api, http):
    event = api.event(capacity=2)
    api.register(event)
    api.register(event)
    full = http.post(f"/api/events/{event['id']}/registrations", json={"name": "Late", "email": "late@example.org"})
    api.error(full, 409, "event_full", "registering for a full event")
    assert api.seats(event) == 0


@pytest.mark.requirement("R7")
@pytest.mark.category("state")
@pytest.mark.db_effect("DELETE", table="registrations")
def test_cancelling_frees_the_seat(api, http):
    event = api.event(capacity=1)
    first = api.register(event, name=api.unique("First"))
    r = http.delete(f"/api/registrations/{first['id']}")
    assert r.status_code == 204, api.brief(r)
    assert api.seats(event) == 1, "a cancelled registration frees its seat"
    second = api.register(event, name=api.unique("Second"))
    listed = http.get(f"/api/events/{event['id']}/registrations").json()["items"]
    assert [r["id"] for r in listed] == [second["id"]], f"only the remaining registration is listed: {listed}"
    api.error(http.delete(f"/api/registrations/{first['id']}"), 404, "not_found", "cancel twice")


@pytest.mark.requirement("R7")
@pytest.mark.category("state")
@pytest.mark.db_effect("SELECT", table="registrations")
def test_attendees_are_listed_in_registration_order(api, http):
    event = api.event()
    made = [api.register(event, name=api.unique(n)) for n in ("Ann", "Bob", "Cid")]
    r = http.get(f"/api/events/{event['id']}/registrations")
    assert r.status_code == 200, api.brief(r)
    assert [x["id"] for x in r.json()["items"]] == [m["id"] for m in made], f"expected registration order: {r.text[:300]}"
