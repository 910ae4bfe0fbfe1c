"""Resources: creation, validation, the catalogue, editing and deletion (spec.md: Resources)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R4")
@pytest.mark.category("api_surface")
def test_create_resource_stores_what_was_sent(api, http):
    owner = api.user("owner")
    cal = api.calendar_id("dr-lee")
    hours = [{"weekday": 1, "start": "13:00", "end": "18:30"}, {"weekday": 0, "start": "08:15", "end": "12:00"}]
    r = http.post("/resources", json={"name": "Dr. Lee", "kind": "practitioner", "calendar_id": cal, "availability": hours}, headers=owner.headers)
    assert r.status_code == 201, f"creating a resource: {r.status_code} {r.text[:300]}"
    resource = r.json()
    got = (resource.get("name"), resource.get("kind"), resource.get("calendar_id"), resource.get("owner_id"))
    assert got == ("Dr. Lee", "practitioner", cal, owner.id), f"name, kind, calendar_id and owner_id (the caller): {resource}"
    assert resource.get("availability") == hours, f"availability should be answered as sent, in the order sent: {resource}"
    stranger = api.user("stranger")
    r = http.get(f"/resources/{resource['id']}", headers=stranger.headers)
    assert r.status_code == 200 and r.json().get("calendar_id") == cal, f"any authenticated user reads a resource: {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R4")
@pytest.mark.category("api_surface")
def test_availability_defaults_to_empty(api, http):
    owner = api.user("owner")
    r = http.post("/resources", json={"name": "Closet", "kind": "room", "calendar_id": api.calendar_id()}, headers=owner.headers)
    assert r.status_code == 201, f"creating a resource without availability: {r.status_code} {r.text[:300]}"
    assert r.json().get("availability") == [], f"availability should default to []: {r.json()}"


@pytest.mark.requirement("R4", "R26")
@pytest.mark.category("api_surface")
def test_unknown_resource_gets_404_everywhere(api, http):
    user = api.user("user")
    rid = "no-such-resource-0000"
    for method, path, body in (
        ("get", f"/resources/{rid}", None),
        ("patch", f"/resources/{rid}", {"name": "x"}),
        ("delete", f"/resources/{rid}", None),
        ("get", f"/resources/{rid}/availability?date=2031-01-06", None),
        ("get", f"/resources/{rid}/bookings", None),
        ("post", f"/resources/{rid}/bookings", {"start": "bad", "end": "bad"}),
    ):
        api.error(http.request(method, path, json=body, headers=user.headers), 404, "not_found", f"{method.upper()} {path}")


@pytest.mark.requirement("R5", "R26")
@pytest.mark.category("validation")
def test_resource_name_kind_and_calendar_are_validated(api, http):
    owner = api.user("owner")
    good = {"name": "Room", "kind": "room"}
    cases = {
        "missing name": ({"kind": "room", "calendar_id": api.calendar_id()}, ["name"]),
        "blank name": ({**good, "name": "   ", "calendar_id": api.calendar_id()}, ["name"]),
        "101-character name": ({**good, "name": "n" * 101, "calendar_id": api.calendar_id()}, ["name"]),
        "kind desk": ({**good, "kind": "desk", "calendar_id": api.calendar_id()}, ["kind"]),
        "missing calendar_id": (dict(good), ["calendar_id"]),
        "calendar_id without @": ({**good, "calendar_id": "room-a.calendar.example"}, ["calendar_id"]),
        "calendar_id without a dot in the domain": ({**good, "calendar_id": "room-a@localhost"}, ["calendar_id"]),
        "calendar_id with a space": ({**good, "calendar_id": "room a@calendar.example"}, ["calendar_id"]),
        "201-character calendar_id": ({**good, "calendar_id": "r" * 184 + "@calendar.example"}, ["calendar_id"]),
        "everything wrong": ({"name": 3, "kind": None, "calendar_id": ["x@y.z"]}, ["name", "kind", "calendar_id"]),
    }
    problems = [api.validation_problem(http.post("/resources", json=body, headers=owner.headers), fields, label)
                for label, (body, fields) in cases.items()]
    problems = [p for p in problems if p]
    assert not problems, "invalid resources were not rejected as the spec says:\n" + "\n".join(problems)


@pytest.mark.requirement("R5")
@pytest.mark.category("validation")
def test_opening_hours_are_validated(api, http):
    owner = api.user("owner")
    cases = {
        "weekday 7": [{"weekday": 7, "start": "09:00", "end": "10:00"}],
        "weekday -1": [{"weekday": -1, "start": "09:00", "end": "10:00"}],
        "weekday as a string": [{"weekday": "0", "start": "09:00", "end": "10:00"}],
        "not on a quarter hour": [{"weekday": 0, "start": "09:10", "end": "10:00"}],
        "end before start": [{"weekday": 0, "start": "12:00", "end": "11:00"}],
        "empty window": [{"weekday": 0, "start": "12:00", "end": "12:00"}],
        "start 24:00": [{"weekday": 0, "start": "24:00", "end": "24:00"}],
        "end 24:15": [{"weekday": 0, "start": "23:00", "end": "24:15"}],
        "time without leading zero": [{"weekday": 0, "start": "9:00", "end": "10:00"}],
        "missing end": [{"weekday": 0, "start": "09:00"}],
        "overlapping windows": [{"weekday": 2, "start": "09:00", "end": "12:00"}, {"weekday": 2, "start": "11:45", "end": "13:00"}],
        "not a list": {"weekday": 0, "start": "09:00", "end": "10:00"},
        "51 windows": [{"weekday": d % 7, "start": f"{h:02d}:00", "end": f"{h:02d}:15"} for d in range(7) for h in range(8)][:51],
    }
    problems = []
    for label, availability in cases.items():
        body = {"name": "Room", "kind": "room", "calendar_id": api.calendar_id(), "availability": availability}
        problems.append(api.validation_problem(http.post("/resources", json=body, headers=owner.headers), ["availability"], label))
    problems = [p for p in problems if p]
    assert not problems, "invalid opening hours were not rejected with field availability:\n" + "\n".join(problems)


@pytest.mark.requirement("R5")
@pytest.mark.category("validation")
def test_boundary_values_are_accepted(api, http):
    owner = api.user("owner")
    hours = [
        {"weekday": 6, "start": "00:00", "end": "24:00"},
        {"weekday": 3, "start": "09:00", "end": "12:00"},
        {"weekday": 3, "start": "12:00", "end": "17:45"},
    ]
    body = {"name": "n" * 100, "kind": "room", "calendar_id": api.calendar_id(), "availability": hours}
    r = http.post("/resources", json=body, headers=owner.headers)
    assert r.status_code == 201, f"a whole day, touching windows and a 100-character name are valid: {r.status_code} {r.text[:300]}"


@pytest.mark.requirement("R6")
@pytest.mark.category("state")
def test_a_calendar_serves_one_resource(api, http):
    alice, bob = api.user("alice"), api.user("bob")
    first = api.resource(alice)
    r = http.post("/resources", json={"name": "Copy", "kind": "room", "calendar_id": first["calendar_id"]}, headers=bob.headers)
    api.error(r, 409, "conflict", "a second resource on a calendar already in use")
    r = http.post("/resources", json={"name": "Copy", "kind": "room", "calendar_id": first["calendar_id"]}, headers=alice.headers)
    api.error(r, 409, "conflict", "the same owner reusing their calendar")


@pytest.mark.requirement("R7")
@pytest.mark.category("api_surface")
def test_catalogue_lists_everyones_resources_oldest_first(api, http):
    alice, bob = api.user("alice"), api.user("bob")
    created = [api.resource(alice)["id"], api.resource(bob)["id"], api.resource(alice)["id"]]
    # Other items add resources too: page through the whole catalogue and look at these three.
    ids: list[str] = []
    while True:
        r = http.get("/resources", params={"offset": len(ids), "limit": 100}, headers=bob.headers)
        assert r.status_code == 200, f"GET /resources: {r.status_code} {r.text[:300]}"
        body = r.json()
        assert (body.get("limit"), body.get("offset")) == (100, len(ids)), f"envelope: {str(body)[:300]}"
        ids += [x["id"] for x in body["items"]]
        if not body["items"] or len(ids) >= body["total"]:
            break
    assert [i for i in ids if i in created] == created, f"the three new resources (everyone's), oldest first: {[i for i in ids if i in created]}"
    assert body.get("total") == len(ids), f"total counts the whole catalogue: {body.get('total')} vs {len(ids)} listed"


@pytest.mark.requirement("R7")
@pytest.mark.category("api_surface")
def test_catalogue_pagination_defaults(api, http):
    user = api.user("pager")
    for _ in range(2):
        api.resource(user)
    body = api.ok(http.get("/resources", headers=user.headers), 200, "list resources")
    assert (body.get("limit"), body.get("offset")) == (20, 0), f"defaults should be echoed: limit 20, offset 0: {body}"
    assert len(body["items"]) == min(20, body["total"]), f"a first page holds min(20, total) items: {len(body['items'])} of {body['total']}"
    body = api.ok(http.get("/resources", params={"offset": body["total"]}, headers=user.headers), 200, "list past the end")
    assert body["items"] == [], f"an offset at total gives no items: {body}"


@pytest.mark.requirement("R7")
@pytest.mark.category("api_surface")
def test_catalogue_filters_by_kind(api, http):
    user = api.user("owner")
    before = api.total("/resources", user, kind="practitioner")
    api.resource(user, kind="room")
    doctor = api.resource(user, kind="practitioner")
    body = api.ok(http.get("/resources", params={"kind": "practitioner", "offset": before}, headers=user.headers), 200, "filter by kind")
    assert [x["id"] for x in body["items"]] == [doctor["id"]], f"only the new practitioner matches kind=practitioner: {body}"
    assert body["total"] == before + 1, f"total counts only practitioners: {body}"


@pytest.mark.requirement("R7")
@pytest.mark.category("validation")
def test_catalogue_validates_its_query(api, http):
    user = api.user("user")
    for params, fields in (({"kind": "desk"}, ["kind"]), ({"limit": 0}, ["limit"]), ({"limit": 101, "offset": -1}, ["limit", "offset"]),
                           ({"offset": "x"}, ["offset"])):
        problem = api.validation_problem(http.get("/resources", params=params, headers=user.headers), fields, f"GET /resources with {params}")
        assert problem is None, problem


@pytest.mark.requirement("R8")
@pytest.mark.category("state")
def test_owner_edits_name_and_opening_hours(api, http):
    owner = api.user("owner")
    resource = api.resource(owner)
    hours = [{"weekday": 5, "start": "10:00", "end": "14:00"}]
    r = http.patch(f"/resources/{resource['id']}", json={"name": "Renamed", "availability": hours}, headers=owner.headers)
    assert r.status_code == 200, f"the owner editing: {r.status_code} {r.text[:300]}"
    got = api.ok(http.get(f"/resources/{resource['id']}", headers=api.user("reader").headers), 200, "read back")
    assert (got["name"], got["availability"]) == ("Renamed", hours), f"the edit did not persist: {got}"


@pytest.mark.requirement("R8")
@pytest.mark.category("state")
def test_kind_and_calendar_cannot_be_changed(api, http):
    owner = api.user("owner")
    resource = api.resource(owner)
    r = http.patch(f"/resources/{resource['id']}", json={"kind": "practitioner", "calendar_id": api.calendar_id(), "name": "Kept"}, headers=owner.headers)
    assert r.status_code == 200, f"kind and calendar_id are ignored in a PATCH, not rejected: {r.status_code} {r.text[:300]}"
    got = r.json()
    assert (got["kind"], got["calendar_id"], got["name"]) == ("room", resource["calendar_id"], "Kept"), f"kind and calendar_id must stay: {got}"


@pytest.mark.requirement("R8", "R5")
@pytest.mark.category("validation")
def test_invalid_edit_changes_nothing(api, http):
    owner = api.user("owner")
    resource = api.resource(owner)
    r = http.patch(f"/resources/{resource['id']}", json={"name": "Fine", "availability": [{"weekday": 9}]}, headers=owner.headers)
    error = api.error(r, 422, "validation_error", "an edit with invalid opening hours")
    assert error.get("fields") == ["availability"], f"422 should list exactly ['availability']: {error}"
    got = api.ok(http.get(f"/resources/{resource['id']}", headers=owner.headers), 200, "read back")
    assert got["name"] == resource["name"], f"a rejected edit must change nothing, also not the valid name: {got}"


@pytest.mark.requirement("R8")
@pytest.mark.category("authorization")
def test_only_the_owner_edits(api, http):
    owner, other = api.user("owner"), api.user("other")
    resource = api.resource(owner)
    r = http.patch(f"/resources/{resource['id']}", json={"name": "Hijacked"}, headers=other.headers)
    api.error(r, 403, "forbidden", "someone else renaming the resource")
    r = http.patch(f"/resources/{resource['id']}", json={"name": ""}, headers=other.headers)
    api.error(r, 403, "forbidden", "someone else sending an invalid edit (403 comes before 422)")
    assert api.ok(http.get(f"/resources/{resource['id']}", headers=owner.headers), 200, "read")["name"] == resource["name"], "the name changed"


@pytest.mark.requirement("R8")
@pytest.mark.category("authorization")
def test_only_the_owner_deletes(api, http):
    owner, other = api.user("owner"), api.user("other")
    resource = api.resource(owner)
    api.error(http.delete(f"/resources/{resource['id']}", headers=other.headers), 403, "forbidden", "someone else deleting the resource")
    r = http.get(f"/resources/{resource['id']}", headers=owner.headers)
    assert r.status_code == 200, f"the resource must survive a rejected delete: {r.status_code} {r.text[:200]}"


@pytest.mark.requirement("R8", "R25")
@pytest.mark.category("state")
def test_deleted_resource_is_gone(api, http):
    owner = api.user("owner")
    before = api.total("/resources", owner)
    resource = api.resource(owner)
    r = http.delete(f"/resources/{resource['id']}", headers=owner.headers)
    assert r.status_code == 204, f"the owner deleting the resource: {r.status_code} {r.text[:300]}"
    api.error(http.get(f"/resources/{resource['id']}", headers=owner.headers), 404, "not_found", "reading a deleted resource")
    body = api.ok(http.get("/resources", params={"offset": before}, headers=owner.headers), 200, "list resources")
    assert resource["id"] not in [x["id"] for x in body["items"]], f"a deleted resource is still listed: {body}"
