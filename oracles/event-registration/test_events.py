"""Events: health, creation, validation, listing (spec.md: Running, Events)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R1")
@pytest.mark.category("api_surface")
def test_health_answers_ok(api, http):
    r = http.get("/health")
    assert r.status_code == 200 and r.json().get("status") == "ok", api.brief(r)


@pytest.mark.requirement("R2")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("INSERT", table="events")
def test_create_event_answers_the_event(api, http):
    title = api.unique("Launch party")
    r = http.post("/api/events", json={"title": title, "starts_at": "2031-05-01T18:30:00Z", "capacity": 25})
    assert r.status_code == 201, api.brief(r)
    event = r.json()
    assert event["title"] == title and event["capacity"] == 25, f"the event does not echo its fields: {event}"
    assert event["seats_left"] == 25, f"a new event has all seats left: {event}"
    assert event["starts_at"].startswith("2031-05-01T18:30"), f"starts_at not kept: {event}"
    assert isinstance(event["id"], int), f"ids are integers: {event}"


@pytest.mark.requirement("R2")
@pytest.mark.category("validation")
def test_invalid_events_are_rejected_and_not_stored(api, http, db):
    cases = [
        ({"title": "  ", "starts_at": "2031-01-01T10:00:00Z", "capacity": 5}, ["title"]),
        ({"title": "x" * 121, "starts_at": "2031-01-01T10:00:00Z", "capacity": 5}, ["title"]),
        ({"title": "ok", "starts_at": "next tuesday", "capacity": 5}, ["starts_at"]),
        ({"title": "ok", "starts_at": "2031-01-01T10:00:00Z", "capacity": 0}, ["capacity"]),
        ({"title": "ok", "starts_at": "2031-01-01T10:00:00Z", "capacity": 1001}, ["capacity"]),
        ({"title": "ok", "starts_at": "2031-01-01T10:00:00Z", "capacity": 2.5}, ["capacity"]),
        ({"title": 7, "starts_at": 7, "capacity": "7"}, ["title", "starts_at", "capacity"]),
        ({}, ["title", "starts_at", "capacity"]),
    ]
    problems = []
    for body, fields in cases:
        r = http.post("/api/events", json=body)
        if r.status_code != 422 or sorted(r.json().get("fields", [])) != sorted(fields):
            problems.append(f"{body!r:.80}: expected 422 with fields {fields}, got {api.brief(r)}")
    r = http.post("/api/events", data="[1, 2]", headers={"Content-Type": "application/json"})
    if r.status_code != 422:
        problems.append(f"a JSON array body: expected 422, got {api.brief(r)}")
    assert not problems, "\n".join(problems)
    stored = db.scalar("SELECT count(*) FROM events WHERE title IN ('  ', 'ok') OR length(title) > 120 OR capacity NOT BETWEEN 1 AND 1000")
    assert stored == 0, f"rejected events were stored anyway ({stored} rows)"


@pytest.mark.requirement("R3")
@pytest.mark.category("state")
@pytest.mark.db_effect("SELECT", table="events")
def test_events_are_listed_by_start_then_id(api, http):
    late = api.event(starts_at="2040-06-02T09:00:00Z")
    early = api.event(starts_at="2040-06-01T09:00:00+02:00")
    same = api.event(starts_at="2040-06-02T09:00:00Z")
    r = http.get("/api/events")
    assert r.status_code == 200, api.brief(r)
    ids = [e["id"] for e in r.json()["items"]]
    mine = [i for i in ids if i in (late["id"], early["id"], same["id"])]
    assert mine == [early["id"], late["id"], same["id"]], f"expected order by starts_at then id, got ids {mine}"


@pytest.mark.requirement("R3")
@pytest.mark.category("api_surface")
def test_unknown_event_is_404(api, http):
    api.error(http.get(f"/api/events/{api.unknown_event_id()}"), 404, "not_found", "GET an unknown event")
    api.error(http.get(f"/api/events/{api.unknown_event_id()}/registrations"), 404, "not_found", "list registrations of an unknown event")
