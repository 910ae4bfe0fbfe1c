"""Events: health, creation, validation, reading, listing (spec.md: Running, API conventions, Events)."""

from __future__ import annotations

import pytest

from pytest_backendbench.http.account_items import health_item

pytestmark = [pytest.mark.tier("base")]

VALID = {"starts_at": "2031-01-01T10:00:00Z", "capacity": 5}


test_health_answers_ok = health_item("R1", name="test_health_answers_ok")


@pytest.mark.requirement("R2")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("INSERT", table="events")
@pytest.mark.ab_check("AB-03")
def test_create_event_answers_the_event(api, http):
    title = api.unique("Launch party")
    r = http.post("/api/events", json={"title": title, "starts_at": "2031-05-01T18:30:00Z", "capacity": 25})
    assert r.status_code == 201, api.brief(r)
    event = r.json()
    assert (event.get("title"), event.get("capacity"), event.get("seats_left")) == (title, 25, 25), f"title and capacity echoed, seats_left = capacity: {event}"
    assert isinstance(event.get("id"), int) and not isinstance(event.get("id"), bool), f"ids are integers: {event}"
    assert api.instant(event.get("starts_at")) == api.instant("2031-05-01T18:30:00Z"), f"starts_at names the instant sent: {event}"
    problem = api.utc_problem(event.get("created_at"), "created_at")
    assert problem is None, problem


@pytest.mark.requirement("R2", "R3")
@pytest.mark.category("state")
@pytest.mark.db_effect("SELECT", table="events")
@pytest.mark.ab_check("AB-04")
def test_a_created_event_reads_back_the_same(api, http):
    event = api.event(capacity=7, starts_at="2033-07-04T12:00:00Z")
    got = api.get_event(event)
    keys = ("id", "title", "capacity", "seats_left")
    assert {k: got.get(k) for k in keys} == {k: event[k] for k in keys}, f"GET answers what POST answered:\nPOST {event}\nGET  {got}"
    assert api.instant(got.get("starts_at")) == api.instant(event["starts_at"]) and api.instant(got.get("created_at")) == api.instant(event["created_at"]), f"same instants: {event} / {got}"
    listed = api.listed(event)
    assert len(listed) == 1 and listed[0].get("title") == event["title"] and listed[0].get("seats_left") == 7, f"the event is in GET /api/events: {listed}"


@pytest.mark.requirement("R2")
@pytest.mark.category("validation")
@pytest.mark.parametrize("capacity", [1, 1000], ids=["one", "thousand"])
def test_capacity_bounds_are_accepted(api, http, capacity):
    r = api.create_event(capacity=capacity)
    assert r.status_code == 201, f"capacity {capacity} is within 1 to 1000: {api.brief(r)}"
    assert (r.json().get("capacity"), r.json().get("seats_left")) == (capacity, capacity), f"capacity {capacity}: {r.text[:200]}"


@pytest.mark.requirement("R2")
@pytest.mark.category("validation")
@pytest.mark.parametrize("length,accepted", [(120, True), (121, False)], ids=["120", "121"])
def test_title_length_counts_unicode_characters(api, http, length, accepted):
    # "é" (one code point, two bytes) and "🎟" (one code point, four bytes): a byte count is wrong either way
    title = ("\u00e9\U0001f39f" * 61)[:length]
    r = api.create_event(title=title)
    if accepted:
        assert r.status_code == 201, f"a title of {length} characters ({len(title.encode())} bytes) is allowed: {api.brief(r)}"
        assert r.json().get("title") == title, "the title is stored and answered as sent"
        assert api.get_event(r.json())["title"] == title, "the title reads back as sent"
    else:
        problem = api.validation_problem(r, ["title"], f"a title of {length} characters")
        assert problem is None, problem


INVALID_EVENTS = [
    ("title-empty", {"title": ""}, "title"),
    ("title-blank", {"title": " \t\n "}, "title"),
    ("title-121", {"title": "x" * 121}, "title"),
    ("title-number", {"title": 7}, "title"),
    ("title-null", {"title": None}, "title"),
    ("title-missing", {"title": ...}, "title"),
    ("starts-not-a-date", {"starts_at": "next tuesday"}, "starts_at"),
    ("starts-bad-month", {"starts_at": "2031-13-01T10:00:00Z"}, "starts_at"),
    ("starts-number", {"starts_at": 1767225600}, "starts_at"),
    ("starts-missing", {"starts_at": ...}, "starts_at"),
    ("capacity-0", {"capacity": 0}, "capacity"),
    ("capacity-negative", {"capacity": -3}, "capacity"),
    ("capacity-1001", {"capacity": 1001}, "capacity"),
    ("capacity-fraction", {"capacity": 2.5}, "capacity"),
    ("capacity-true", {"capacity": True}, "capacity"),
    ("capacity-string", {"capacity": "7"}, "capacity"),
    ("capacity-null", {"capacity": None}, "capacity"),
    ("capacity-missing", {"capacity": ...}, "capacity"),
]


@pytest.mark.requirement("R2")
@pytest.mark.category("validation")
@pytest.mark.parametrize("change,field", [(c, f) for _, c, f in INVALID_EVENTS], ids=[i for i, _, _ in INVALID_EVENTS])
def test_an_invalid_event_gets_422_and_is_not_stored(api, http, change, field):
    marker = api.unique("Rejected")
    body = {"title": marker, **VALID}
    for key, value in change.items():
        if value is ...:
            body.pop(key)
        else:
            body[key] = value
    problem = api.validation_problem(http.post("/api/events", json=body), [field], f"POST /api/events with {field} = {change[field]!r:.40}")
    assert problem is None, problem
    kept = [e for e in api.events() if e.get("title") == marker]
    assert kept == [], f"a rejected event must not be stored: {kept}"


@pytest.mark.requirement("R2")
@pytest.mark.category("validation")
def test_every_offending_event_field_is_listed(api, http):
    cases = [
        ({"title": " ", "starts_at": "soon", "capacity": 0}, ["title", "starts_at", "capacity"]),
        ({"title": 7, "starts_at": 7, "capacity": "7"}, ["title", "starts_at", "capacity"]),
        ({}, ["title", "starts_at", "capacity"]),
        ({"title": api.unique("ok"), "starts_at": None, "capacity": 1001}, ["starts_at", "capacity"]),
        ({"title": "t" * 121, "starts_at": "2031-01-01T10:00:00Z", "capacity": False}, ["title", "capacity"]),
    ]
    problems = [api.validation_problem(http.post("/api/events", json=body), fields, f"POST /api/events {str(body)[:70]}") for body, fields in cases]
    api.assert_no_problems(problems, "each offending field is listed, and only those")


@pytest.mark.requirement("R2", "R4")
@pytest.mark.category("validation")
@pytest.mark.parametrize("endpoint", ["events", "registrations"])
def test_a_body_that_is_not_an_object_gets_body_listed(api, http, endpoint):
    path = "/api/events" if endpoint == "events" else f"/api/events/{api.event()['id']}/registrations"
    problems = []
    for text in ("[1, 2]", '"a title"', "42", "null", "true", '[{"title": "x"}]', "{not json"):
        r = http.post(path, data=text.encode(), headers={"Content-Type": "application/json"})
        problems.append(api.validation_problem(r, ["body"], f"POST {path} with the body {text!r}"))
    api.assert_no_problems(problems, "a body that is not a JSON object gets 422 with fields ['body']")


@pytest.mark.requirement("R3")
@pytest.mark.category("state")
@pytest.mark.db_effect("SELECT", table="events")
def test_events_are_listed_by_start_then_id(api, http):
    late = api.event(starts_at="2040-06-02T09:00:00Z")
    early = api.event(starts_at="2040-06-01T09:00:00Z")
    same = api.event(starts_at="2040-06-02T09:00:00Z")
    earliest = api.event(starts_at="2040-05-31T23:59:59Z")
    ids = [e["id"] for e in api.listed(late, early, same, earliest)]
    assert ids == [earliest["id"], early["id"], late["id"], same["id"]], f"expected order by starts_at then id, got ids {ids}"


@pytest.mark.requirement("R3")
@pytest.mark.category("api_surface")
def test_unknown_event_is_404(api, http):
    unknown = api.unknown_event_id()
    api.error(http.get(f"/api/events/{unknown}"), 404, "not_found", "GET an unknown event")
    api.error(http.get(f"/api/events/{unknown}/registrations"), 404, "not_found", "list registrations of an unknown event")


@pytest.mark.requirement("R3", "R4", "R7")
@pytest.mark.category("state")
def test_seats_left_follows_registrations_in_the_list_and_the_event(api, http):
    event = api.event(capacity=4)
    first, second = api.register(event), api.register(event)
    assert api.seats(event) == 2 and api.listed(event)[0]["seats_left"] == 2, "two of four seats taken: 2 left, in GET one and in the list"
    api.cancel(first)
    assert api.seats(event) == 3 and api.listed(event)[0]["seats_left"] == 3, "a cancellation frees a seat in both answers"
    api.cancel(second)
    assert api.seats(event) == 4 and api.get_event(event)["capacity"] == 4, "all seats free again; capacity unchanged"
