"""Security items (spec.md: API conventions "Limits and hostile input", Events, Registrations), each tagged with its CWE."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]


@pytest.mark.requirement("R2", "R4", "R10")
@pytest.mark.cwe(89)
def test_hostile_text_is_stored_verbatim_and_touches_nothing_else(api, http, db, checks):
    bystander = api.event(capacity=2)
    kept = api.register(bystander)
    made = []
    for text in checks.injection_texts:
        event = api.event(capacity=3, title=f"{text} {api.unique('t')}"[:120])
        registration = api.register(event, name=text)
        made.append((event, registration, text))
    for event, registration, text in made:
        assert api.get_event(event)["title"] == event["title"], f"a title is stored verbatim: {event['title']!r}"
        listed = api.attendees(event)
        assert [(a["id"], a["name"]) for a in listed] == [(registration["id"], text)], f"a name is stored verbatim and lists only its own event: {listed}"
        rows = db.query("SELECT name FROM registrations WHERE event_id = %s", (int(event["id"]),))
        assert [r["name"] for r in rows] == [text], f"the row holds the name as sent: {rows}"
    assert [a["id"] for a in api.attendees(bystander)] == [kept["id"]] and api.seats(bystander) == 1, "another event was not touched"


@pytest.mark.requirement("R5", "R10")
@pytest.mark.cwe(943)
def test_emails_compare_literally_not_as_patterns(api, http):
    event = api.event(capacity=10)
    tag = api.fresh_email().split("@")[0]
    first = api.register(event, email=f"a_{tag}@example.org")
    # each of these would match the first (or each other) under LIKE/ILIKE or a regular expression
    for email in (f"ab{tag}@example.org", f"a%{tag}@example.org", f"a.{tag}@example.org", f"a*{tag}@example.org", f"a{tag}@example.org"):
        r = api.post_registration(event, name="Pattern", email=email)
        assert r.status_code == 201, f"{email!r} is another address than {first['email']!r} (compared literally): {api.brief(r)}"
        assert r.json().get("email") == email, f"the email is stored verbatim (lower-cased): {r.text[:200]}"
    api.error(api.post_registration(event, name="Same", email=f"A_{tag.upper()}@EXAMPLE.ORG"), 409, "already_registered", "the first address in upper case")
    assert api.seats(event) == 4, "six registrations of ten seats"


@pytest.mark.requirement("R10")
@pytest.mark.cwe(400)
def test_oversized_and_deeply_nested_bodies_are_refused(api, http, service, db, checks):
    title = api.unique("Hostile")
    problems = checks.hostile_body_problems(service, http.timeout_s, "POST", "/api/events", {}, {"title": title, "starts_at": "2031-01-01T10:00:00Z", "capacity": 5}, "title")
    event = api.event(capacity=2)
    email = api.fresh_email()
    problems += checks.hostile_body_problems(service, http.timeout_s, "POST", f"/api/events/{event['id']}/registrations", {}, {"name": "Deep", "email": email}, "name")
    assert not problems, "limits on request bodies:\n" + "\n".join(problems)
    assert db.scalar("SELECT count(*) FROM events WHERE title = %s", (title,)) == 0, "a refused event body stored an event"
    assert api.seats(event) == 2 and api.attendees(event) == [], "a refused registration body took a seat"


@pytest.mark.requirement("R2", "R3")
@pytest.mark.cwe(915)
def test_server_owned_event_fields_cannot_be_assigned(api, http):
    other = api.event(capacity=4)
    title = api.unique("Assigned")
    body = {"title": title, "starts_at": "2031-02-02T10:00:00Z", "capacity": 4, "id": other["id"], "seats_left": 0, "created_at": "2000-01-01T00:00:00Z"}
    r = http.post("/api/events", json=body)
    if r.status_code == 422:  # refusing fields the contract does not define is allowed; then nothing is stored
        assert [e for e in api.events() if e.get("title") == title] == [], "a refused event was stored"
    else:
        assert r.status_code == 201, f"an event with server-owned fields: expected 201 (fields ignored) or 422, got {api.brief(r)}"
        event = r.json()
        assert event.get("id") != other["id"] and event.get("seats_left") == 4, f"id and seats_left are the service's: {event}"
        assert api.instant(event.get("created_at")) != api.instant("2000-01-01T00:00:00Z"), f"created_at is the service's: {event}"
        assert api.seats(event) == 4 and len(api.fill(event)) == 4, "all four seats can be taken"
    got = api.get_event(other)
    assert (got["title"], got["seats_left"]) == (other["title"], 4), f"the event whose id was sent is untouched: {got}"


@pytest.mark.requirement("R4", "R7")
@pytest.mark.cwe(915)
def test_server_owned_registration_fields_cannot_be_assigned(api, http):
    event, other = api.event(capacity=3), api.event(capacity=3)
    theirs = api.register(other)
    body = {"name": "Forger", "email": api.fresh_email(), "event_id": other["id"], "id": theirs["id"], "created_at": "2000-01-01T00:00:00Z"}
    r = api.post_registration(event, **body)
    if r.status_code == 422:
        assert api.attendees(event) == [], "a refused registration was stored"
    else:
        assert r.status_code == 201, f"a registration with server-owned fields: expected 201 (fields ignored) or 422, got {api.brief(r)}"
        made = r.json()
        assert made.get("event_id") == event["id"] and made.get("id") != theirs["id"], f"the registration belongs to the event in the path, with its own id: {made}"
        assert api.instant(made.get("created_at")) != api.instant("2000-01-01T00:00:00Z"), f"created_at is the service's: {made}"
        assert [a["id"] for a in api.attendees(event)] == [made["id"]] and api.seats(event) == 2
    assert [a["id"] for a in api.attendees(other)] == [theirs["id"]] and api.seats(other) == 2, "the other event is untouched"


@pytest.mark.requirement("R3", "R7", "R10")
@pytest.mark.cwe(22)
def test_hostile_ids_in_paths_get_404(api, http, service, checks):
    event = api.event(capacity=2)
    problems = checks.traversal_problems(service, http.timeout_s, "/api/events/", {}, extra_ids=checks.task_ids)
    problems += checks.traversal_problems(service, http.timeout_s, "/api/events/", {}, "/registrations", extra_ids=checks.task_ids)
    problems += checks.traversal_problems(
        service, http.timeout_s, "/api/events/", {}, "/registrations", method="POST", body={"name": "Ann", "email": api.fresh_email()}, extra_ids=checks.task_ids
    )
    problems += checks.traversal_problems(service, http.timeout_s, "/api/registrations/", {}, method="DELETE", extra_ids=checks.task_ids)
    assert not problems, "ids that name nothing or climb out of their path:\n" + "\n".join(problems)
    assert api.seats(event) == 2, "nothing was registered anywhere"
    assert http.get("/health").status_code == 200
