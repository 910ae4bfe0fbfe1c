"""Who sees which booking, and the two booking lists (spec.md: Who sees and does what, Listing bookings)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R18")
@pytest.mark.category("authorization")
def test_booking_visible_to_booker_and_resource_owner_only(api, http, at):
    owner, guest, stranger = api.user("owner"), api.user("guest"), api.user("stranger")
    resource = api.resource(owner)
    booking = api.book(guest, resource, at("10:00"), at("11:00"))
    for user, who in ((guest, "the booker"), (owner, "the resource's owner")):
        r = http.get(f"/bookings/{booking['id']}", headers=user.headers)
        assert r.status_code == 200 and r.json().get("id") == booking["id"], f"{who} should see the booking: {r.status_code} {r.text[:300]}"
    api.error(http.get(f"/bookings/{booking['id']}", headers=stranger.headers), 404, "not_found", "a stranger reading someone's booking")
    api.error(http.get("/bookings/no-such-booking", headers=guest.headers), 404, "not_found", "an unknown booking id")


@pytest.mark.requirement("R19")
@pytest.mark.category("authorization")
def test_my_bookings_are_only_mine(api, http, at):
    owner, alice, bob = api.user("owner"), api.user("alice"), api.user("bob")
    resource = api.resource(owner)
    mine = api.book(alice, resource, at("09:00"), at("10:00"))
    api.book(bob, resource, at("10:00"), at("11:00"))
    body = api.my_bookings(alice)
    assert [b["id"] for b in body["items"]] == [mine["id"]] and body["total"] == 1, f"alice should see only her booking: {body}"
    assert api.my_bookings(owner)["total"] == 0, "owning the resource does not put its bookings into the owner's GET /bookings"


@pytest.mark.requirement("R19")
@pytest.mark.category("api_surface")
def test_my_bookings_are_ordered_by_start(api, http, at):
    owner, guest = api.user("owner"), api.user("guest")
    a, b = api.resource(owner), api.resource(owner)
    late = api.book(guest, a, at("09:00", weeks=1), at("10:00", weeks=1))
    middle = api.book(guest, b, at("14:00"), at("15:00"))
    early = api.book(guest, a, at("09:00"), at("09:30"))
    body = api.my_bookings(guest)
    assert [x["id"] for x in body["items"]] == [early["id"], middle["id"], late["id"]], f"ordered by start, not by creation: {body['items']}"
    body = api.my_bookings(guest, limit=1, offset=1)
    assert [x["id"] for x in body["items"]] == [middle["id"]], f"limit=1&offset=1 should be the second booking: {body}"
    assert (body["total"], body["limit"], body["offset"]) == (3, 1, 1), f"envelope should echo total, limit, offset: {body}"


@pytest.mark.requirement("R19", "R21")
@pytest.mark.category("state")
def test_my_bookings_filter_by_status(api, http, at):
    _owner, guest, resource, kept = api.guest_booking(at("09:00"), at("10:00"))
    dropped = api.cancel(guest, api.book(guest, resource, at("11:00"), at("12:00")))
    confirmed, cancelled = api.my_bookings(guest, status="confirmed"), api.my_bookings(guest, status="cancelled")
    assert [b["id"] for b in confirmed["items"]] == [kept["id"]], f"status=confirmed: {confirmed}"
    assert [b["id"] for b in cancelled["items"]] == [dropped["id"]], f"status=cancelled: {cancelled}"
    assert api.my_bookings(guest)["total"] == 2, "without a filter both bookings are listed"


@pytest.mark.requirement("R19", "R20")
@pytest.mark.category("validation")
def test_booking_lists_validate_their_query(api, http):
    owner = api.user("owner")
    resource = api.resource(owner)
    for path in ("/bookings", f"/resources/{resource['id']}/bookings"):
        for params, fields in (({"status": "pending"}, ["status"]), ({"limit": 101}, ["limit"]), ({"status": "x", "offset": -1}, ["status", "offset"])):
            problem = api.validation_problem(http.get(path, params=params, headers=owner.headers), fields, f"GET {path} with {params}")
            assert problem is None, problem


@pytest.mark.requirement("R20")
@pytest.mark.category("api_surface")
def test_resource_owner_lists_every_booking_by_start(api, http, at):
    owner, alice, bob = api.user("owner"), api.user("alice"), api.user("bob")
    resource, other = api.resource(owner), api.resource(owner)
    second = api.book(alice, resource, at("13:00"), at("14:00"))
    first = api.book(bob, resource, at("09:00"), at("10:00"))
    api.book(bob, other, at("09:00"), at("10:00"))
    body = api.resource_bookings(owner, resource)
    assert [b["id"] for b in body["items"]] == [first["id"], second["id"]], f"every booking of this resource by start: {body}"
    assert [b["user_id"] for b in body["items"]] == [bob.id, alice.id], f"bookings of anyone are listed: {body}"


@pytest.mark.requirement("R20")
@pytest.mark.category("authorization")
def test_resource_bookings_are_for_the_owner_only(api, http, at):
    _owner, guest, resource = api.venue()
    api.book(guest, resource, at("09:00"), at("10:00"))
    r = http.get(f"/resources/{resource['id']}/bookings", headers=guest.headers)
    api.error(r, 403, "forbidden", "a booker listing every booking of someone else's resource")


@pytest.mark.requirement("R20")
@pytest.mark.category("state")
def test_resource_bookings_filter_by_status(api, http, at):
    owner, guest, resource = api.venue()
    api.book(guest, resource, at("09:00"), at("10:00"))
    dropped = api.cancel(owner, api.book(guest, resource, at("10:00"), at("11:00")))
    body = api.resource_bookings(owner, resource, status="cancelled")
    assert [b["id"] for b in body["items"]] == [dropped["id"]] and body["total"] == 1, f"status=cancelled: {body}"
