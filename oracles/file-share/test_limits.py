"""Upload size limit, quotas and hostile bodies (spec.md: Upload, Quota, Limits and hostile input, Precedence)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]

MAX = 1_048_576
"""spec.md: the largest file, in bytes."""


@pytest.mark.requirement("R8")
@pytest.mark.category("validation")
def test_a_file_of_exactly_the_limit_is_accepted(api, http, alice):
    data = api.blob(MAX)
    file = api.put_file(alice, "limit.bin", data)
    assert (file.get("size"), file.get("sha256")) == (MAX, api.sha256(data)), f"1,048,576 bytes: {file}"
    problems = api.download_problems(api.content(alice, file), data, "application/octet-stream", "downloading the largest file")
    assert not problems, "\n".join(problems)


@pytest.mark.requirement("R8", "R22")
@pytest.mark.category("security")
@pytest.mark.cwe(400)
def test_a_file_over_the_limit_gets_413_and_stores_nothing(api, http, alice, service):
    api.error(api.upload(alice, "huge.bin", api.blob(MAX + 1)), 413, "file_too_large", "1,048,577 bytes")
    api.error(api.upload(alice, "huge.bin", api.blob(3 * MAX)), 413, "file_too_large", "3 MiB")
    listing = api.files(alice)
    assert (listing["items"], listing["used_bytes"]) == ([], 0), f"a refused upload stores nothing: {listing}"
    assert http.get("/health").status_code == 200, "the service goes on answering"


@pytest.mark.requirement("R8", "R7")
@pytest.mark.category("state")
def test_an_oversized_replacement_keeps_the_old_content(api, http, alice):
    old = api.put_file(alice, "doc.txt", b"old content", "text/plain")
    api.error(api.upload(alice, "doc.txt", api.blob(MAX + 10), "application/zip"), 413, "file_too_large", "replacing with a file too large")
    got = api.ok(http.get(f"/files/{old['id']}", headers=alice.headers), 200, "GET the file")
    assert (got["size"], got["sha256"], got["content_type"]) == (old["size"], old["sha256"], "text/plain"), f"the file is unchanged: {got}"
    assert api.content(alice, old).content == b"old content"


@pytest.mark.requirement("R9")
@pytest.mark.category("state")
def test_reaching_the_quota_exactly_is_allowed_and_one_byte_more_is_not(api, http):
    user = api.user(quota=1000)
    api.put_file(user, "a", api.blob(600))
    api.put_file(user, "b", api.blob(400))
    assert api.used(user) == 1000, "exactly the quota"
    api.error(api.upload(user, "c", b"x"), 409, "quota_exceeded", "one byte over the quota")
    listing = api.files(user)
    assert ([f["name"] for f in listing["items"]], listing["used_bytes"]) == (["a", "b"], 1000), f"nothing changed: {listing}"
    assert api.upload(user, "d", b"").status_code == 201, "an empty file fits a full quota"


@pytest.mark.requirement("R9", "R7")
@pytest.mark.category("state")
@pytest.mark.tier("r1")
def test_a_replacement_counts_only_its_new_size(api, http):
    user = api.user(quota=1000)
    file = api.put_file(user, "grow", api.blob(800))
    api.put_file(user, "grow", api.blob(1000), status=200)
    assert api.used(user) == 1000, "the old size no longer counts"
    api.error(api.upload(user, "grow", api.blob(1001)), 409, "quota_exceeded", "a replacement one byte over the quota")
    got = api.ok(http.get(f"/files/{file['id']}", headers=user.headers), 200, "GET the file")
    assert got["size"] == 1000, f"the refused replacement changed the file: {got}"
    api.put_file(user, "grow", api.blob(10), status=200)
    assert api.used(user) == 10, "shrinking frees the difference"


@pytest.mark.requirement("R9")
@pytest.mark.category("validation")
def test_a_zero_quota_takes_only_empty_files(api, http):
    user = api.user(quota=0)
    api.put_file(user, "empty", b"")
    api.error(api.upload(user, "one", b"1"), 409, "quota_exceeded", "one byte with a quota of 0")
    assert api.names(user) == ["empty"]


@pytest.mark.requirement("R4", "R9")
@pytest.mark.category("state")
@pytest.mark.tier("r1")
def test_a_quota_below_the_usage_keeps_the_files_and_refuses_growth(api, http, admin):
    user = api.user(quota=1000)
    a = api.put_file(user, "a", api.blob(500))
    api.put_file(user, "b", api.blob(400))
    api.ok(http.patch(f"/users/{user.id}", json={"quota_bytes": 300}, headers=admin.headers), 200, "lower the quota below the usage")
    listing = api.files(user)
    assert (len(listing["items"]), listing["used_bytes"], listing["quota_bytes"]) == (2, 900, 300), f"the files stay: {listing}"
    api.error(api.upload(user, "c", b"x"), 409, "quota_exceeded", "a new file above the lowered quota")
    api.error(api.upload(user, "a", api.blob(100)), 409, "quota_exceeded", "a smaller replacement that still leaves usage above the quota")
    api.ok(http.delete(f"/files/{a['id']}", headers=user.headers), 204, "delete a file")
    api.error(api.upload(user, "c", b"x"), 409, "quota_exceeded", "still above the quota (400 > 300)")
    api.ok(http.patch(f"/users/{user.id}", json={"quota_bytes": 401}, headers=admin.headers), 200, "raise the quota")
    api.put_file(user, "c", b"x")
    assert api.used(user) == 401


@pytest.mark.requirement("R21", "R6", "R8", "R9")
@pytest.mark.category("validation")
@pytest.mark.tier("r1")
def test_upload_errors_follow_the_precedence(api, http):
    user = api.user(quota=10)
    problem = api.validation_problem(api.upload(user, "../x", api.blob(MAX + 1)), ["name"], "a bad name and a file too large (422 before 413)")
    api.assert_no_problems([problem], "precedence")
    api.error(api.upload(user, "big", api.blob(MAX + 1)), 413, "file_too_large", "too large and over the quota (413 before 409)")
    api.error(api.upload(None, "../x", api.blob(MAX + 1), extra_headers={"Authorization": "Bearer nope"}), 401, "unauthorized", "no valid token (401 first)")
    assert api.files(user)["items"] == [], "nothing stored"


@pytest.mark.requirement("R9", "R21")
@pytest.mark.category("security")
@pytest.mark.cwe(770)
@pytest.mark.tier("r2")
def test_concurrent_uploads_never_exceed_the_quota(api, http, checks):
    user = api.user(quota=1000)
    names = [f"part-{i}" for i in range(8)]
    answers = checks.concurrently(lambda name: api.upload(user, name, api.blob(300)), names)
    statuses = sorted(r.status_code for r in answers)
    assert set(statuses) <= {201, 409} and statuses.count(201) == 3, f"exactly three 300-byte files fit a 1000-byte quota: {statuses}"
    listing = api.files(user)
    assert listing["used_bytes"] == sum(f["size"] for f in listing["items"]) == 900, f"usage stays within the quota: {listing}"


@pytest.mark.requirement("R22", "R21")
@pytest.mark.category("security")
@pytest.mark.cwe(400)
def test_oversized_and_deeply_nested_json_bodies_are_refused(api, http, service, checks, admin, alice):
    name = "big_" + api.unique("u", "", 8)
    problems = checks.hostile_body_problems(service, http.timeout_s, "POST", "/users", admin.headers, {"username": name, "password": "password123"}, "password")
    file = api.put_file(alice)
    problems += checks.hostile_body_problems(service, http.timeout_s, "POST", f"/files/{file['id']}/shares", alice.headers, {"max_downloads": 3}, "password")
    problems += checks.hostile_body_problems(service, http.timeout_s, "PATCH", f"/users/{alice.id}", admin.headers, {"quota_bytes": 7}, "note")
    assert not problems, "limits on JSON bodies:\n" + "\n".join(problems)
    api.error(http.post("/auth/token", json={"username": name, "password": "password123"}), 401, "unauthorized", "a refused user was created")
    assert api.shares(alice, file) == [], "a refused share was created"
    assert api.me(alice)["quota_bytes"] == 10_485_760, "a refused PATCH changed the quota"
