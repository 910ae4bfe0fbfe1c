"""Security items derived rule by rule from spec.md (issue 24; REVIEW.md "Security rules").

Each item exercises one rule, one caller or one hostile-value path at a time. Every answer any
item of this task receives is also checked, by conftest.py's http_response_checks, for the
password or a hash of it ("No response
ever contains a password.").
"""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http.account_items import password_edge_item, password_leak_item
from pytest_backendbench.http.hostile import HOSTILE_VALUES, hostile_findings

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]


test_no_user_answer_carries_the_password_or_its_hash = password_leak_item("R2", "R3")


test_a_password_wrong_only_at_its_edge_gets_401 = password_edge_item("R3")


STRANGER_ACTIONS = {"read": ("GET", "", None), "cancel": ("POST", "/cancel", None), "reschedule": ("PATCH", "", {"title": "mine now"})}


@pytest.mark.requirement("R18", "R21", "R23")
@pytest.mark.cwe(639)
@pytest.mark.parametrize("action", sorted(STRANGER_ACTIONS))
def test_a_stranger_gets_404_for_each_booking_action(api, http, calendar, at, action):
    owner, guest, stranger = api.user("owner"), api.user("guest"), api.user("stranger")
    resource = api.resource(owner)
    booking = api.book(guest, resource, at("10:00"), at("11:00"), "Guest meeting")
    method, suffix, body = STRANGER_ACTIONS[action]
    writes = len(calendar.writes(resource["calendar_id"]))
    api.error(http.request(method, f"/bookings/{booking['id']}{suffix}", json=body, headers=stranger.headers), 404, "not_found",
              f"a stranger: {action} another user's booking")
    got = api.get_booking(guest, booking["id"])
    assert (got["status"], got["title"]) == ("confirmed", "Guest meeting") and len(calendar.writes(resource["calendar_id"])) == writes


@pytest.mark.requirement("R18", "R25")
@pytest.mark.cwe(639)
@pytest.mark.parametrize("who", ["the-former-owner", "a-stranger"])
def test_after_a_resource_is_deleted_only_the_booker_sees_its_bookings(api, http, at, who):
    owner, guest, stranger = api.user("owner"), api.user("guest"), api.user("stranger")
    resource = api.resource(owner)
    booking = api.book(guest, resource, at("10:00"), at("11:00"))
    api.ok(http.delete(f"/resources/{resource['id']}", headers=owner.headers), 204, "the owner deletes the resource")
    caller = owner if who == "the-former-owner" else stranger
    api.error(http.get(f"/bookings/{booking['id']}", headers=caller.headers), 404, "not_found", f"{who} reading the booking")
    api.error(http.post(f"/bookings/{booking['id']}/cancel", headers=caller.headers), 404, "not_found", f"{who} cancelling the booking")
    assert api.get_booking(guest, booking["id"])["status"] == "cancelled"


OWNER_ONLY = {"edit": ("PATCH", "", {"name": "Taken over"}), "delete": ("DELETE", "", None), "list-bookings": ("GET", "/bookings", None)}


@pytest.mark.requirement("R8", "R20")
@pytest.mark.cwe(863)
@pytest.mark.parametrize("action", sorted(OWNER_ONLY))
def test_only_the_owner_edits_deletes_or_lists_a_resource(api, http, at, action):
    owner, guest, resource = api.venue()
    api.book(guest, resource, at("10:00"), at("11:00"))
    method, suffix, body = OWNER_ONLY[action]
    api.error(http.request(method, f"/resources/{resource['id']}{suffix}", json=body, headers=guest.headers), 403, "forbidden",
              f"a booker who does not own the resource: {action}")
    got = api.ok(http.get(f"/resources/{resource['id']}", headers=guest.headers), 200, "the resource is still there")
    assert got["name"] == resource["name"] and api.resource_bookings(owner, resource)["total"] == 1


@pytest.mark.requirement("R23")
@pytest.mark.cwe(863)
def test_the_resource_owner_cannot_reschedule_a_guests_booking(api, http, calendar, at):
    owner, guest, resource, booking = api.guest_booking(at("10:00"), at("11:00"), "Guest")
    writes = len(calendar.writes(resource["calendar_id"]))
    for body in ({"title": "Owner's now"}, {"start": at("13:00"), "end": at("14:00")}):
        api.error(http.patch(f"/bookings/{booking['id']}", json=body, headers=owner.headers), 403, "forbidden", f"the resource owner: PATCH {body}")
    got = api.get_booking(guest, booking["id"])
    assert (got["title"], got["start"], got["end"]) == ("Guest", booking["start"], booking["end"]) and len(calendar.writes(resource["calendar_id"])) == writes


@pytest.mark.requirement("R19")
@pytest.mark.cwe(639)
@pytest.mark.parametrize("param", ["user_id", "resource_id", "owner_id", "all"])
def test_my_bookings_never_widen_to_other_users(api, http, at, param):
    owner, alice, bob = api.user("owner"), api.user("alice"), api.user("bob")
    resource = api.resource(owner)
    mine = api.book(alice, resource, at("09:00"), at("10:00"))
    theirs = api.book(bob, resource, at("10:00"), at("11:00"))
    value = {"user_id": bob.id, "resource_id": resource["id"], "owner_id": owner.id, "all": "true"}[param]
    r = http.get("/bookings", params={param: value, "limit": 100}, headers=alice.headers)
    if r.status_code not in (400, 422):
        assert r.status_code == 200, api.brief(r)
        assert [b.get("id") for b in r.json().get("items", [])] == [mine["id"]], f"GET /bookings?{param}=... lists only alice's: {r.text[:300]}"
        assert theirs["id"] not in r.text


@pytest.mark.requirement("R5", "R10", "R16")
@pytest.mark.cwe(918)
def test_a_calendar_id_never_carries_a_path_or_query_to_the_provider(api, http, calendar):
    owner = api.user("owner")
    problems = []
    for value in ("a@b.example/../../calendars/victim@b.example", "a@b.example/events", "a@b.example?from=x", "a@b.example#frag",
                  "a@b.example%2F..%2Fx", "../a@b.example", "a/b@c.example", "a@b.example x", "a@b.example:8080", "a@b.example\r\nX: y"):
        r = http.post("/resources", json={"name": "Hostile", "kind": "room", "calendar_id": value}, headers=owner.headers)
        if why := api.validation_problem(r, ["calendar_id"], f"calendar_id {value!r}"):
            problems.append(why)
    assert not problems, "a calendar_id is <name>@<domain> and nothing more:\n" + "\n".join(problems)
    assert calendar.sent("victim@b.example") == []


@pytest.mark.requirement("R6", "R28")
@pytest.mark.cwe(943)
def test_calendar_ids_clash_only_when_equal(api, http):
    owner = api.user("owner")
    stem = uuid.uuid4().hex[:10]
    api.resource(owner, calendar_id=f"room-{stem}ab@cal.example")
    for value in (f"room-{stem}a_@cal.example", f"room-{stem}_b@cal.example", f"room-{stem}a.@cal.example", f"room-{stem}ab@cal_example.example"):
        r = http.post("/resources", json={"name": "Other", "kind": "room", "calendar_id": value}, headers=owner.headers)
        assert r.status_code in (201, 422), f"calendar_id {value} is not the one in use: {api.brief(r)}"
        if r.status_code == 422:
            assert not (why := api.validation_problem(r, ["calendar_id"], f"calendar_id {value}")), why


@pytest.mark.requirement("R7", "R19", "R20", "R28")
@pytest.mark.cwe(89)
def test_filters_that_are_not_a_status_or_kind_get_422(api, http, at):
    owner = api.user("owner")
    resource = api.resource(owner)
    api.book(owner, resource, at("09:00"), at("10:00"))
    problems = []
    for value in ("confirmed' OR '1'='1", "room' OR '1'='1", "%", "_", "*", "CONFIRMED", "room ", '{"$ne": null}'):
        for path, param in (("/bookings", "status"), (f"/resources/{resource['id']}/bookings", "status"), ("/resources", "kind")):
            r = http.get(path, params={param: value}, headers=owner.headers)
            if why := api.validation_problem(r, [param], f"GET {path}?{param}={value!r}"):
                problems.append(why)
    assert not problems, "status and kind take only their listed values:\n" + "\n".join(problems)


@pytest.mark.requirement("R4", "R11", "R16", "R28")
@pytest.mark.cwe(116)
def test_hostile_text_is_stored_and_sent_to_the_provider_verbatim(api, http, calendar, at):
    owner = api.user("owner")
    found = hostile_findings(lambda body: http.post("/resources", json={**body, "calendar_id": api.calendar_id()}, headers=owner.headers),
                             {"name": "n", "kind": "room"}, fields=["name"], verbatim=["name"], accepted=[201])
    resource = api.resource(owner, availability=[{"weekday": d, "start": "00:00", "end": "24:00"} for d in range(7)])
    for index, value in enumerate(HOSTILE_VALUES):
        booking = api.book(owner, resource, at(f"{index:02d}:00"), at(f"{index:02d}:45"), value)
        summaries = [(e.get("json") or {}).get("summary") for e in calendar.writes(resource["calendar_id"]) if e["method"] == "POST"]
        if booking["title"] != value or summaries[-1:] != [value]:
            found.append(f"title {value!r}: answered {booking['title']!r}, sent to the provider as {summaries[-1:]}")
    assert not found, "text is stored, answered and sent exactly as it came:\n" + "\n".join(found)
