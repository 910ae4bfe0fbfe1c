"""Registrations: seats, duplicates, full events, cancelling, order (spec.md: Registrations)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R4")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("INSERT", table="registrations")
@pytest.mark.ab_check("AB-03")
def test_register_takes_a_seat_and_lowercases_the_email(api, http):
    event = api.event(capacity=3)
    local = api.unique("Grace").split()[1]
    r = api.post_registration(event, name="Grace Hopper", email=f"Grace.{local}@Example.ORG")
    assert r.status_code == 201, api.brief(r)
    registration = r.json()
    assert isinstance(registration.get("id"), int) and not isinstance(registration.get("id"), bool), f"ids are integers: {registration}"
    assert (registration.get("event_id"), registration.get("name")) == (event["id"], "Grace Hopper"), f"event_id and name echoed: {registration}"
    assert registration.get("email") == f"grace.{local}@example.org", f"the email is answered lower-cased: {registration}"
    problem = api.utc_problem(registration.get("created_at"), "created_at")
    assert problem is None, problem
    assert api.seats(event) == 2, "a registration takes one seat"
    assert [a.get("email") for a in api.attendees(event)] == [f"grace.{local}@example.org"], "the listed email is lower-cased too"


@pytest.mark.requirement("R4")
@pytest.mark.category("state")
def test_names_are_stored_as_sent(api, http):
    event = api.event()
    names = ["  Zo\u00eb  O'Brien ", "\u674e\u5c0f\u9f99", "Ann \U0001f39f"]
    made = [api.register(event, name=name) for name in names]
    assert [m.get("name") for m in made] == names, f"names are answered as sent (no trimming): {made}"
    assert [a.get("name") for a in api.attendees(event)] == names, "names are listed as sent"


@pytest.mark.requirement("R4")
@pytest.mark.category("validation")
@pytest.mark.parametrize("length,accepted", [(100, True), (101, False)], ids=["100", "101"])
def test_name_length_counts_unicode_characters(api, http, length, accepted):
    event = api.event()
    name = ("\u00e9\U0001f39f" * 51)[:length]
    r = api.post_registration(event, name=name, email=api.fresh_email())
    if accepted:
        assert r.status_code == 201 and r.json().get("name") == name, f"a name of {length} characters ({len(name.encode())} bytes) is allowed: {api.brief(r)}"
    else:
        problem = api.validation_problem(r, ["name"], f"a name of {length} characters")
        assert problem is None, problem
        assert api.seats(event) == event["capacity"], "a rejected registration takes no seat"


@pytest.mark.requirement("R4")
@pytest.mark.category("validation")
def test_email_of_254_characters_is_accepted_and_255_is_not(api, http):
    event = api.event()
    head = api.unique("x").split()[1]
    longest = head + "a" * (254 - len(head) - len("@example.org")) + "@example.org"
    assert len(longest) == 254
    r = api.post_registration(event, name="Long", email=longest)
    assert r.status_code == 201 and r.json().get("email") == longest, f"an email of 254 characters is allowed: {api.brief(r)}"
    problem = api.validation_problem(api.post_registration(event, name="Longer", email="b" + longest), ["email"], "an email of 255 characters")
    assert problem is None, problem


INVALID_REGISTRATIONS = [
    ("name-empty", {"name": ""}, "name"),
    ("name-blank", {"name": " \t "}, "name"),
    ("name-101", {"name": "n" * 101}, "name"),
    ("name-number", {"name": 1}, "name"),
    ("name-null", {"name": None}, "name"),
    ("name-missing", {"name": ...}, "name"),
    ("email-no-at", {"email": "not-an-email"}, "email"),
    ("email-space", {"email": "a b@example.org"}, "email"),
    ("email-no-tld", {"email": "ann@example"}, "email"),
    ("email-no-local", {"email": "@example.org"}, "email"),
    ("email-blank", {"email": "   "}, "email"),
    ("email-number", {"email": 42}, "email"),
    ("email-list", {"email": ["ann@example.org"]}, "email"),
    ("email-null", {"email": None}, "email"),
    ("email-missing", {"email": ...}, "email"),
]


@pytest.mark.requirement("R4")
@pytest.mark.category("validation")
@pytest.mark.parametrize("change,field", [(c, f) for _, c, f in INVALID_REGISTRATIONS], ids=[i for i, _, _ in INVALID_REGISTRATIONS])
def test_an_invalid_registration_gets_422_and_takes_no_seat(api, http, change, field):
    event = api.event(capacity=2)
    body = {"name": api.unique("Ann"), "email": api.fresh_email()}
    for key, value in change.items():
        if value is ...:
            body.pop(key)
        else:
            body[key] = value
    problem = api.validation_problem(api.post_registration(event, **body), [field], f"register with {field} = {change[field]!r:.40}")
    assert problem is None, problem
    assert api.seats(event) == 2 and api.attendees(event) == [], "a rejected registration takes no seat and is not listed"


@pytest.mark.requirement("R4")
@pytest.mark.category("validation")
def test_every_offending_registration_field_is_listed(api, http):
    event = api.event()
    cases = [
        ({"name": 1, "email": None}, ["name", "email"]),
        ({}, ["name", "email"]),
        ({"name": " ", "email": "no-at-sign"}, ["name", "email"]),
        ({"name": "n" * 101, "email": True}, ["name", "email"]),
    ]
    problems = [api.validation_problem(api.post_registration(event, **body), fields, f"register {str(body)[:60]}") for body, fields in cases]
    api.assert_no_problems(problems, "each offending field is listed, and only those")
    assert api.seats(event) == event["capacity"], "rejected registrations take no seat"


@pytest.mark.requirement("R4")
@pytest.mark.category("api_surface")
def test_registering_for_an_unknown_event_is_404(api, http):
    unknown = api.unknown_event_id()
    api.error(api.post_registration(unknown, name="Ann", email=api.fresh_email()), 404, "not_found", "register for an unknown event")
    api.error(http.get(f"/api/events/{unknown}"), 404, "not_found", "the failed registration created no event")


@pytest.mark.requirement("R5")
@pytest.mark.category("state")
@pytest.mark.parametrize("again", ["same", "upper", "mixed"])
def test_an_email_registers_once_per_event_whatever_its_case(api, http, again):
    event = api.event()
    local = api.unique("linus").split()[1]
    first = api.register(event, email=f"Linus.{local}@Example.org")
    second = {"same": f"Linus.{local}@Example.org", "upper": f"LINUS.{local.upper()}@EXAMPLE.ORG", "mixed": f"linus.{local}@example.ORG"}[again]
    api.error(api.post_registration(event, name="Someone else", email=second), 409, "already_registered", f"{second!r} after {first['email']!r}")
    assert [a["id"] for a in api.attendees(event)] == [first["id"]] and api.seats(event) == event["capacity"] - 1, "the duplicate took no seat"


@pytest.mark.requirement("R5")
@pytest.mark.category("state")
def test_the_same_email_may_register_for_another_event(api, http):
    event, other = api.event(), api.event()
    email = api.fresh_email()
    api.register(event, email=email)
    r = api.post_registration(other, name="Linus", email=email.upper())
    assert r.status_code == 201 and r.json().get("email") == email, f"uniqueness is per event: {api.brief(r)}"
    assert api.seats(event) == event["capacity"] - 1 and api.seats(other) == other["capacity"] - 1


@pytest.mark.requirement("R6")
@pytest.mark.category("state")
@pytest.mark.parametrize("capacity", [1, 3])
def test_a_full_event_refuses_registrations(api, http, capacity):
    event = api.event(capacity=capacity)
    made = api.fill(event)
    assert len(made) == capacity and api.seats(event) == 0
    api.error(api.post_registration(event, name="Late", email=api.fresh_email()), 409, "event_full", "registering for a full event")
    assert api.seats(event) == 0 and [a["id"] for a in api.attendees(event)] == [m["id"] for m in made], "the refused registration is not listed"


@pytest.mark.requirement("R7")
@pytest.mark.category("state")
@pytest.mark.db_effect("DELETE", table="registrations")
@pytest.mark.ab_check("AB-04")
def test_cancelling_frees_the_seat(api, http):
    event = api.event(capacity=1)
    first = api.register(event, name=api.unique("First"))
    r = http.delete(f"/api/registrations/{first['id']}")
    assert r.status_code == 204, api.brief(r)
    assert api.seats(event) == 1, "a cancelled registration frees its seat"
    second = api.register(event, name=api.unique("Second"))
    assert [a["id"] for a in api.attendees(event)] == [second["id"]], "only the remaining registration is listed"
    api.error(http.delete(f"/api/registrations/{first['id']}"), 404, "not_found", "cancel twice")


@pytest.mark.requirement("R5", "R7")
@pytest.mark.category("state")
def test_a_cancelled_email_may_register_again(api, http):
    event = api.event(capacity=2)
    email = api.fresh_email()
    first = api.register(event, email=email)
    api.cancel(first)
    again = api.post_registration(event, name="Back again", email=email.upper())
    assert again.status_code == 201, f"after cancelling, the same email registers again: {api.brief(again)}"
    assert [a.get("email") for a in api.attendees(event)] == [email] and api.seats(event) == 1, "one registration, one seat taken"


@pytest.mark.requirement("R7")
@pytest.mark.category("api_surface")
def test_cancelling_an_unknown_registration_is_404(api, http):
    unknown = api.unknown_registration_id()
    api.error(http.delete(f"/api/registrations/{unknown}"), 404, "not_found", "cancel a registration that does not exist")


@pytest.mark.requirement("R7")
@pytest.mark.category("state")
@pytest.mark.db_effect("SELECT", table="registrations")
def test_attendees_are_listed_in_registration_order(api, http):
    event = api.event()
    names = ["Zed", "Ann", "Mia", "Bob"]
    made = [api.register(event, name=api.unique(n), email=f"{n.lower()}.{api.fresh_email()}") for n in names]
    api.cancel(made[1])
    late = api.register(event, name=api.unique("Aaron"), email=f"aaron.{api.fresh_email()}")
    got = [a["id"] for a in api.attendees(event)]
    assert got == [made[0]["id"], made[2]["id"], made[3]["id"], late["id"]], f"expected registration order (not by name or email), got {got}"


@pytest.mark.requirement("R7")
@pytest.mark.category("state")
def test_an_events_list_holds_only_its_own_registrations(api, http):
    event, other = api.event(), api.event()
    mine = api.register(event)
    theirs = api.register(other)
    assert [a["id"] for a in api.attendees(event)] == [mine["id"]], "another event's registration is not listed"
    assert [a["id"] for a in api.attendees(other)] == [theirs["id"]]
    listed = api.attendees(event)[0]
    assert {k: listed.get(k) for k in ("id", "event_id", "name", "email")} == {k: mine[k] for k in ("id", "event_id", "name", "email")}, f"the listed registration is the one made: {listed} / {mine}"
