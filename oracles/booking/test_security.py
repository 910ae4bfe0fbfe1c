"""Security items (spec.md: Who sees and does what, Resources, Limits and hostile input), each tagged with its CWE."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]


@pytest.mark.requirement("R8", "R18", "R20", "R23")
@pytest.mark.cwe(639)
def test_a_stranger_reaches_no_booking_or_resource_by_id(api, http, at):
    owner, guest, stranger = api.user("owner"), api.user("guest"), api.user("stranger")
    resource = api.resource(owner)
    booking = api.book(guest, resource, at("10:00"), at("11:00"), title="Private talk")
    for method, path, body, status, code in (
        ("GET", f"/bookings/{booking['id']}", None, 404, "not_found"),
        ("POST", f"/bookings/{booking['id']}/cancel", None, 404, "not_found"),
        ("PATCH", f"/bookings/{booking['id']}", {"start": at("12:00"), "end": at("13:00")}, 404, "not_found"),
        ("GET", f"/resources/{resource['id']}/bookings", None, 403, "forbidden"),
        ("PATCH", f"/resources/{resource['id']}", {"name": "taken over"}, 403, "forbidden"),
        ("DELETE", f"/resources/{resource['id']}", None, 403, "forbidden"),
    ):
        api.error(http.request(method, path, json=body, headers=stranger.headers), status, code, f"a stranger: {method} {path}")
    got = api.get_booking(guest, booking["id"])
    assert (got["status"], got["start"], got["title"]) == ("confirmed", booking["start"], "Private talk"), f"the stranger changed the booking: {got}"
    assert booking["id"] not in [b["id"] for b in api.my_bookings(stranger)["items"]], "the stranger's list must not show the booking"


@pytest.mark.requirement("R4", "R11")
@pytest.mark.cwe(915)
def test_owners_users_and_states_cannot_be_assigned(api, http, at):
    owner, guest = api.user("owner"), api.user("guest")
    resource = api.resource(owner, owner_id=guest.id, id="forged", created_at="2001-01-01T00:00:00Z")
    assert (resource.get("owner_id"), resource.get("id") != "forged") == (owner.id, True), f"the client assigned the owner or id: {resource}"
    api.error(http.patch(f"/resources/{resource['id']}", json={"name": "mine"}, headers=guest.headers), 403, "forbidden", "the forged owner editing")
    r = api.try_book(guest, resource, at("10:00"), at("11:00"), user_id=owner.id, status="cancelled", calendar_event_id="evt-forged",
                     cancelled_by=owner.id, resource_id="elsewhere")
    assert r.status_code == 201, f"server-owned booking fields are ignored: {r.status_code} {r.text[:300]}"
    booking = r.json()
    got = (booking.get("user_id"), booking.get("status"), booking.get("calendar_event_id") != "evt-forged", booking.get("cancelled_by"), booking.get("resource_id"))
    assert got == (guest.id, "confirmed", True, None, resource["id"]), f"the client assigned server-owned booking fields: {booking}"
    assert booking["id"] in [b["id"] for b in api.my_bookings(guest)["items"]], "the booking belongs to its booker"


@pytest.mark.requirement("R4", "R7", "R11", "R28")
@pytest.mark.cwe(89)
def test_hostile_text_is_stored_verbatim_and_filters_never_widen(api, http, at, checks):
    owner = api.user("owner")
    for text in checks.injection_texts:
        resource = api.resource(owner, name=text)
        got = api.ok(http.get(f"/resources/{resource['id']}", headers=owner.headers), 200, "read the resource")
        assert got["name"] == text, f"a name is stored verbatim: sent {text!r}, got {got['name']!r}"
    resource = api.resource(owner)
    booking = api.book(owner, resource, at("09:00"), at("10:00"), title="'); DROP TABLE bookings;--")
    assert api.get_booking(owner, booking["id"])["title"] == "'); DROP TABLE bookings;--", "a title is stored verbatim"
    for name, values in (("kind", ("' OR '1'='1", "%", "room' OR 'a'='a", "*")), ("status", ("' OR '1'='1", "%", "confirmed' OR 'a'='a"))):
        path = "/resources" if name == "kind" else "/bookings"
        for value in values:
            r = http.get(path, params={name: value}, headers=owner.headers)
            assert r.status_code == 422 or (r.status_code == 200 and r.json().get("items") == []), f"GET {path}?{name}={value!r} names nothing: {r.status_code} {r.text[:200]}"


@pytest.mark.requirement("R28")
@pytest.mark.cwe(400)
def test_oversized_and_deeply_nested_bodies_are_refused(api, http, service, at, checks):
    owner = api.user("owner")
    before = api.total("/resources", owner)
    problems = checks.hostile_body_problems(service, http.timeout_s, "POST", "/resources", owner.headers,
                                            {"kind": "room", "calendar_id": "big@calendar.example", "name": "big"}, "name")
    resource = api.resource(owner, name="kept")
    problems += checks.hostile_body_problems(service, http.timeout_s, "PATCH", f"/resources/{resource['id']}", owner.headers, {"name": "changed"}, "availability")
    problems += checks.hostile_body_problems(service, http.timeout_s, "POST", f"/resources/{resource['id']}/bookings", owner.headers,
                                             {"start": at("09:00"), "end": at("10:00")}, "title")
    assert not problems, "limits on request bodies:\n" + "\n".join(problems)
    assert api.total("/resources", owner) >= before + 1 and api.my_bookings(owner)["items"] == [], "refused bodies must create nothing"
    got = api.ok(http.get(f"/resources/{resource['id']}", headers=owner.headers), 200, "read the resource")
    assert got["name"] == "kept", f"a refused PATCH must change nothing: {got}"


@pytest.mark.requirement("R3")
@pytest.mark.cwe(287)
def test_tampered_tokens_get_401(api, http, at, checks):
    owner = api.user("owner")
    resource = api.resource(owner)
    problems = checks.token_problems(http, "POST", f"/resources/{resource['id']}/bookings", owner.token, {"start": at("09:00"), "end": at("10:00")})
    problems += checks.token_problems(http, "DELETE", f"/resources/{resource['id']}", owner.token)
    assert not problems, "token misuse was not refused:\n" + "\n".join(problems)
    assert api.resource_bookings(owner, resource)["items"] == [], "no request with a bad token may book"


@pytest.mark.requirement("R18", "R28")
@pytest.mark.cwe(22)
def test_path_traversal_in_ids_gets_404(api, http, service, checks):
    owner = api.user("owner")
    api.resource(owner)
    problems = checks.traversal_problems(service, http.timeout_s, "/resources/", owner.headers)
    problems += checks.traversal_problems(service, http.timeout_s, "/bookings/", owner.headers)
    problems += checks.traversal_problems(service, http.timeout_s, "/resources/", owner.headers, "/availability?date=2030-01-07")
    assert not problems, "ids that climb out of their path must name nothing:\n" + "\n".join(problems)
