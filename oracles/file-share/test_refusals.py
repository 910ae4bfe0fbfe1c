"""Refused requests change nothing at any field, uploads refused after the state moved (issue 35).

spec.md: "a rejected request changes nothing (no file, no usage)"; "Requests may arrive
concurrently; a request either applies completely or not at all"; "Each invalid field is named in
the 422"; Quota: "the answer is 409 quota_exceeded and nothing changes". Every field of a JSON
body is made invalid in turn with the others valid, and every refused upload is followed by a
read-back of the list, the usage and the stored bytes.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from pytest_backendbench.http.refusals import one_invalid_field, unchanged

pytestmark = [pytest.mark.tier("r1")]

USER = {"username": "@username", "password": "a-long-password", "role": "user", "quota_bytes": 5000}
SHARE = {"password": "share-password", "expires_at": "2099-01-01T00:00:00Z", "max_downloads": 5}


def users(api, admin) -> list[Any]:
    """Every user as GET /users lists them (id and username)."""
    return [(u.get("id"), u.get("username")) for u in api.ok(api.http.get("/users", headers=admin.headers), 200, "list users")["items"]]


@pytest.mark.requirement("R3", "R21")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field,body", one_invalid_field(USER, {"username": ["ab", "Upper_case"], "password": ["short", 12345678], "role": ["root"],
                                                                 "quota_bytes": [-1, 1.5, True, 1_099_511_627_777]}))
def test_a_refused_user_is_not_created_whichever_field_is_invalid(api, http, admin, field, body):
    body = {k: (f"u_{uuid.uuid4().hex[:12]}" if v == "@username" else v) for k, v in body.items()}
    with unchanged(lambda: users(api, admin), f"a user with an invalid {field}"):
        problem = api.validation_problem(http.post("/users", json=body, headers=admin.headers), [field], f"a user whose only invalid field is {field}")
        assert problem is None, problem
    if isinstance(body["username"], str) and isinstance(body["password"], str):
        api.error(http.post("/auth/token", json={"username": body["username"], "password": body["password"]}), 401, "unauthorized",
                  "logging in as the refused user")


@pytest.mark.requirement("R14", "R21")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field,body", one_invalid_field(SHARE, {"password": ["short", 12345678], "expires_at": ["2000-01-01T00:00:00Z", "2099-01-01T00:00:00"],
                                                                  "max_downloads": [0, 1.5, 1_000_001]}))
def test_a_refused_share_is_not_created_whichever_field_is_invalid(api, http, alice, field, body):
    file = api.put_file(alice, data=b"shared bytes")
    with unchanged(lambda: api.shares(alice, file), f"a share with an invalid {field}"):
        r = http.post(f"/files/{file['id']}/shares", json=body, headers=alice.headers)
        problem = api.validation_problem(r, [field], f"a share whose only invalid field is {field}")
        assert problem is None, problem


def refused_upload(api, user, case: str) -> tuple[str, bytes, int, str]:
    """Set up ``case``; the name and bytes to upload, the status and code it must get."""
    if case == "quota-on-a-replacement":
        api.put_file(user, "a.bin", b"a" * 600)
        api.put_file(user, "b.bin", b"b" * 300)
        return "a.bin", b"n" * 800, 409, "quota_exceeded"
    if case == "quota-on-a-smaller-replacement-after-the-quota-was-lowered":
        api.put_file(user, "a.bin", b"a" * 600)
        api.put_file(user, "b.bin", b"b" * 300)
        api.ok(api.http.patch(f"/users/{user.id}", json={"quota_bytes": 500}, headers=api.admin.headers), 200, "lower the quota to 500")
        return "a.bin", b"n" * 400, 409, "quota_exceeded"
    if case == "quota-on-a-new-name":
        api.put_file(user, "a.bin", b"a" * 600)
        return "c.bin", b"n" * 401, 409, "quota_exceeded"
    if case == "too-large-replacement":
        api.put_file(user, "a.bin", b"a" * 600)
        return "a.bin", b"n" * 1_048_577, 413, "file_too_large"
    raise AssertionError(case)


@pytest.mark.requirement("R4", "R7", "R8", "R9")
@pytest.mark.category("state")
@pytest.mark.parametrize("case", ["quota-on-a-replacement", "quota-on-a-smaller-replacement-after-the-quota-was-lowered", "quota-on-a-new-name",
                                  "too-large-replacement"])
def test_a_refused_upload_changes_no_file_and_no_byte(api, http, case):
    user = api.user(quota=1000)
    name, data, status, code = refused_upload(api, user, case)

    def read() -> dict[str, Any]:
        listing = api.files(user)
        stored = {f["name"]: api.content(user, f).content for f in listing["items"]}
        return {"files": listing["items"], "used_bytes": listing["used_bytes"], "bytes": stored}

    with unchanged(read, f"{case}: {name!r}, {len(data)} bytes"):
        api.error(api.upload(user, name, data), status, code, f"{case}: {name!r}, {len(data)} bytes")
