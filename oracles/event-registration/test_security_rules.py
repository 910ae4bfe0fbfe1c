"""Security items derived rule by rule from spec.md (issue 24; REVIEW.md "Security rules").

Each item exercises one rule or one hostile-value path at a time: emails where they are only
compared (the duplicate check), every string field of a registration, seats and duplicates under
concurrent requests.
"""

from __future__ import annotations

import pytest

from pytest_backendbench.http.hostile import HOSTILE_VALUES, hostile_findings

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]


@pytest.mark.requirement("R4", "R5", "R10")
@pytest.mark.cwe(89)
def test_quotes_in_an_email_reach_the_duplicate_check_as_text(api, http, db):
    event = api.event(capacity=10)
    tag = api.fresh_email().split("@")[0]
    problems = []
    for local in (f"o'brien.{tag}", f"x'--{tag}", f"y\"{tag}", f"z');--{tag}", f"w\\{tag}"):
        email = f"{local}@example.org"
        first = api.post_registration(event, name="Quote", email=email)
        if first.status_code != 201 or first.json().get("email") != email.lower():
            problems.append(f"register {email!r}: expected 201 echoing it lower-cased, got {api.brief(first)}")
            continue
        again = api.post_registration(event, name="Again", email=email.upper())
        if again.status_code != 409 or again.json().get("error") != "already_registered":
            problems.append(f"the same {email!r} in upper case: expected 409 already_registered, got {api.brief(again)}")
    assert not problems, "a quote in an email is compared as text:\n" + "\n".join(problems)
    rows = db.query("SELECT email FROM registrations WHERE event_id = %s ORDER BY id", (int(event["id"]),))
    assert len(rows) == 5 and api.seats(event) == 5, f"five addresses, five rows: {rows}"


@pytest.mark.requirement("R4", "R10")
@pytest.mark.cwe(20)
def test_an_email_with_whitespace_is_invalid(api, http, db):
    event = api.event(capacity=10)
    tag = api.fresh_email().split("@")[0]
    problems = []
    for email in (f"a b{tag}@example.org", f"a\t{tag}@example.org", f"a\r\n{tag}@example.org", f"{tag}@exa mple.org", f"{tag}@example.org\r\nBcc:x@y.org",
                  f"{tag}@example .org"):
        r = api.post_registration(event, name="Spaced", email=email)
        if why := api.validation_problem(r, ["email"], f"email {email!r}"):
            problems.append(why)
    assert not problems, "an email is local@domain.tld with no spaces:\n" + "\n".join(problems)
    assert api.seats(event) == 10 and db.scalar("SELECT count(*) FROM registrations WHERE event_id = %s", (int(event["id"]),)) == 0


@pytest.mark.requirement("R2", "R4", "R10")
@pytest.mark.cwe(116)
def test_every_string_field_takes_hostile_text_verbatim(api, http, db):
    event = api.event(capacity=len(HOSTILE_VALUES) + 1)
    found = hostile_findings(lambda body: http.post("/api/events", json={**body, "capacity": 1}), {"title": "t", "starts_at": "2031-04-01T10:00:00Z"},
                             fields=["title"], verbatim=["title"], accepted=[201])
    found += hostile_findings(lambda body: api.post_registration(event, **body, email=api.fresh_email()), {"name": "n"},
                              verbatim=["name"], accepted=[201])
    found += hostile_findings(lambda body: api.post_registration(event, name="Hostile email", **body), {"email": "e"}, accepted=[201, 422])
    assert not found, "text is stored and answered exactly as sent:\n" + "\n".join(found)
    names = [r["name"] for r in db.query("SELECT name FROM registrations WHERE event_id = %s ORDER BY id", (int(event["id"]),))]
    assert names[: len(HOSTILE_VALUES)] == list(HOSTILE_VALUES), f"the rows hold the names as sent: {names}"


@pytest.mark.requirement("R6", "R10")
@pytest.mark.cwe(362)
def test_concurrent_registrations_never_overbook(api, http, service, db, checks):
    event = api.event(capacity=2)
    bodies = [{"name": f"Racer {i}", "email": api.fresh_email()} for i in range(8)]
    answers = checks.parallel_posts(service.base_url, f"/api/events/{event['id']}/registrations", bodies, http.timeout_s)
    statuses = sorted(r.status_code for r in answers)
    assert len(answers) == 8, "every concurrent registration gets an answer"
    assert statuses == [201, 201] + [409] * 6, f"two seats: two 201 and six 409 event_full, got {statuses}"
    assert all(r.json().get("error") == "event_full" for r in answers if r.status_code == 409)
    assert api.seats(event) == 0 and db.scalar("SELECT count(*) FROM registrations WHERE event_id = %s", (int(event["id"]),)) == 2


@pytest.mark.requirement("R5", "R10")
@pytest.mark.cwe(362)
def test_concurrent_registrations_of_one_email_take_one_seat(api, http, service, db, checks):
    event = api.event(capacity=10)
    email = api.fresh_email()
    bodies = [{"name": f"Twin {i}", "email": email if i % 2 else email.upper()} for i in range(6)]
    answers = checks.parallel_posts(service.base_url, f"/api/events/{event['id']}/registrations", bodies, http.timeout_s)
    statuses = sorted(r.status_code for r in answers)
    assert statuses == [201] + [409] * 5, f"one address (in any case), one registration: got {statuses}"
    assert all(r.json().get("error") == "already_registered" for r in answers if r.status_code == 409)
    assert api.seats(event) == 9 and db.scalar("SELECT count(*) FROM registrations WHERE event_id = %s", (int(event["id"]),)) == 1
