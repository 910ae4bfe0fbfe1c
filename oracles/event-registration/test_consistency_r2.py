"""R2 (evolved) items: concurrent registrations against the seat limit, restarts, long sequences.

spec.md: "Requests may arrive concurrently." and "The service may be restarted at any time and
must then answer with the same data."
"""

from __future__ import annotations

import random

import pytest

pytestmark = [pytest.mark.tier("r2")]


def statuses(responses):
    return sorted(r.status_code for r in responses)


@pytest.mark.requirement("R6", "R8")
@pytest.mark.category("state")
@pytest.mark.parametrize("capacity,requests", [(3, 12), (1, 8)])
def test_concurrent_registrations_never_overbook(api, http, service, checks, capacity, requests):
    event = api.event(capacity=capacity)
    bodies = [{"name": f"Racer {i}", "email": api.fresh_email()} for i in range(requests)]
    answers = checks.parallel_posts(service.base_url, f"/api/events/{event['id']}/registrations", bodies, http.timeout_s)
    assert statuses(answers) == [201] * capacity + [409] * (requests - capacity), f"{requests} at once for {capacity} seats: exactly {capacity} get 201, got {statuses(answers)}"
    codes = {r.json().get("error") for r in answers if r.status_code == 409}
    assert codes == {"event_full"}, f"the refused ones are event_full, got {codes}"
    made = sorted(r.json()["id"] for r in answers if r.status_code == 201)
    assert sorted(a["id"] for a in api.attendees(event)) == made, "the list holds exactly the registrations that got 201"
    assert api.seats(event) == 0, "seats_left is 0, never negative"


@pytest.mark.requirement("R4", "R6")
@pytest.mark.category("state")
def test_concurrent_registrations_with_room_all_count(api, http, service, checks):
    event = api.event(capacity=10)
    bodies = [{"name": f"Guest {i}", "email": api.fresh_email()} for i in range(10)]
    answers = checks.parallel_posts(service.base_url, f"/api/events/{event['id']}/registrations", bodies, http.timeout_s)
    assert statuses(answers) == [201] * 10, f"10 at once for 10 seats all succeed, got {statuses(answers)}"
    assert api.seats(event) == 0 and len(api.attendees(event)) == 10, "no registration lost: 0 seats left, 10 listed"
    api.error(api.post_registration(event, name="Eleventh", email=api.fresh_email()), 409, "event_full", "the eleventh")


@pytest.mark.requirement("R5")
@pytest.mark.category("state")
def test_concurrent_duplicates_register_once(api, http, service, checks):
    event = api.event(capacity=20)
    local = api.fresh_email().split("@")[0]
    spellings = [f"{local}@example.org", f"{local.upper()}@EXAMPLE.ORG", f"{local}@Example.Org"]
    bodies = [{"name": f"Twin {i}", "email": spellings[i % 3]} for i in range(9)]
    answers = checks.parallel_posts(service.base_url, f"/api/events/{event['id']}/registrations", bodies, http.timeout_s)
    assert statuses(answers) == [201] + [409] * 8, f"9 registrations of one email at once: exactly one 201, got {statuses(answers)}"
    codes = {r.json().get("error") for r in answers if r.status_code == 409}
    assert codes == {"already_registered"}, f"the others are already_registered, got {codes}"
    assert [a.get("email") for a in api.attendees(event)] == [f"{local}@example.org"] and api.seats(event) == 19, "one registration, one seat"


@pytest.mark.requirement("R5", "R6")
@pytest.mark.category("state")
def test_concurrent_duplicates_on_the_last_seats(api, http, service, checks):
    event = api.event(capacity=2)
    shared = api.fresh_email()
    bodies = [{"name": f"Dup {i}", "email": shared} for i in range(4)] + [{"name": f"New {i}", "email": api.fresh_email()} for i in range(4)]
    answers = checks.parallel_posts(service.base_url, f"/api/events/{event['id']}/registrations", bodies, http.timeout_s)
    assert statuses(answers).count(201) == 2 and statuses(answers).count(409) == 6, f"2 seats: exactly two 201, got {statuses(answers)}"
    emails = [a.get("email") for a in api.attendees(event)]
    assert len(emails) == 2 and emails.count(shared) <= 1, f"at most one registration of the shared email: {emails}"
    assert api.seats(event) == 0


@pytest.mark.requirement("R8", "R3", "R7")
@pytest.mark.category("state")
def test_events_and_registrations_survive_a_restart(api, http, service, checks):
    event = api.event(capacity=5, starts_at="2035-09-09T09:09:00-03:00")
    people = [api.register(event, name=api.unique(n)) for n in ("Ann", "Bob", "Cid")]
    api.cancel(people[1])
    before = api.doc([api.get_event(event), api.attendees(event)])
    checks.restart(service, http)
    after = api.doc([api.get_event(event), api.attendees(event)])
    assert after == before, f"the service answers the same data after a restart:\nbefore {before}\nafter  {after}"
    assert after[0]["seats_left"] == 3 and [a["id"] for a in after[1]] == [people[0]["id"], people[2]["id"]]
    assert api.listed(event) and api.listed(event)[0]["seats_left"] == 3, "the event is still listed with its seats"


@pytest.mark.requirement("R8", "R5", "R6")
@pytest.mark.category("state")
def test_rules_still_hold_after_a_restart(api, http, service, checks):
    full = api.event(capacity=1)
    taken = api.register(full)
    event = api.event(capacity=3)
    email = api.fresh_email()
    mine = api.register(event, email=email)
    checks.restart(service, http)
    api.error(api.post_registration(full, name="Late", email=api.fresh_email()), 409, "event_full", "a full event after a restart")
    api.error(api.post_registration(event, name="Again", email=email.upper()), 409, "already_registered", "a duplicate after a restart")
    newer = api.register(event)
    assert newer["id"] not in (mine["id"], taken["id"]), f"new ids after a restart do not reuse live ones: {newer} vs {mine}, {taken}"
    newer_event = api.event()
    assert newer_event["id"] not in (full["id"], event["id"]), "new event ids do not reuse existing ones"
    assert [a["id"] for a in api.attendees(event)] == [mine["id"], newer["id"]], "registration order continues across the restart"
    api.cancel(taken)
    assert api.seats(full) == 1, "a registration made before the restart can be cancelled after it"


@pytest.mark.requirement("R8", "R7")
@pytest.mark.category("state")
def test_a_cancellation_survives_a_restart(api, http, service, checks):
    event = api.event(capacity=1)
    gone = api.register(event)
    api.cancel(gone)
    checks.restart(service, http)
    assert api.seats(event) == 1 and api.attendees(event) == [], "the cancelled registration stays gone after a restart"
    api.error(http.delete(f"/api/registrations/{gone['id']}"), 404, "not_found", "cancelling it again after a restart")


@pytest.mark.requirement("R4", "R5", "R6", "R7")
@pytest.mark.category("state")
def test_seats_and_lists_match_a_model_over_a_long_sequence(api, http):
    rng = random.Random(20261123)
    events = [api.event(capacity=c) for c in (2, 3, 5)]
    model: dict[int, list[tuple[int, str]]] = {e["id"]: [] for e in events}
    capacity = {e["id"]: e["capacity"] for e in events}
    pool = [api.fresh_email() for _ in range(6)]
    for step in range(40):
        event = rng.choice(events)
        mine = model[event["id"]]
        if mine and rng.random() < 0.3:
            rid, _ = mine.pop(rng.randrange(len(mine)))
            api.ok(http.delete(f"/api/registrations/{rid}"), 204, f"step {step}: cancel")
            continue
        email = rng.choice(pool)
        sent = email.upper() if rng.random() < 0.5 else email
        r = api.post_registration(event, name=f"Step {step}", email=sent)
        if any(e == email for _, e in mine):
            api.error(r, 409, "already_registered", f"step {step}: {sent} again")
        elif len(mine) >= capacity[event["id"]]:
            api.error(r, 409, "event_full", f"step {step}: {sent} on a full event")
        else:
            assert r.status_code == 201, f"step {step}: {sent} with {len(mine)} of {capacity[event['id']]} taken: {api.brief(r)}"
            mine.append((r.json()["id"], email))
    for event in events:
        expected = model[event["id"]]
        got = [(a["id"], a["email"]) for a in api.attendees(event)]
        assert got == expected, f"event {event['id']}: the list differs from the model\nexpected {expected}\ngot      {got}"
        assert api.seats(event) == capacity[event["id"]] - len(expected), f"event {event['id']}: seats_left is capacity minus registrations"
