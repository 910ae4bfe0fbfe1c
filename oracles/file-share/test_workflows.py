"""End-to-end journeys and answer conventions (spec.md: the whole document; Errors)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R3", "R5", "R14", "R16", "R17", "R18", "R19", "R13")
@pytest.mark.category("workflow")
def test_share_a_file_with_a_password_and_a_limit_then_clean_up(api, http, admin):
    user = api.user(quota=4096)
    data = api.blob(1500)
    file = api.put_file(user, "contract.pdf", data, "application/pdf")
    share = api.share(user, file, password="let me in 99", max_downloads=2, expires_at=api.future(3600))
    api.error(api.public(share["token"]), 401, "password_required", "an anonymous visitor without the password")
    problems = api.download_problems(api.public(share["token"], "let me in 99"), data, "application/pdf", "the first download")
    assert not problems, "\n".join(problems)
    api.got(api.public(share["token"], "let me in 99"), "the second download")
    api.error(api.public(share["token"], "let me in 99"), 410, "gone", "the third download")
    assert api.shares(user, file)[0]["download_count"] == 2
    api.ok(http.delete(f"/shares/{share['id']}", headers=user.headers), 204, "revoke")
    api.error(api.public(share["token"], "let me in 99"), 404, "not_found", "after revoking")
    api.ok(http.delete(f"/files/{file['id']}", headers=user.headers), 204, "delete the file")
    listing = api.files(user)
    assert (listing["items"], listing["used_bytes"], listing["quota_bytes"]) == ([], 0, 4096), f"everything cleaned up: {listing}"


@pytest.mark.requirement("R7", "R16", "R12")
@pytest.mark.category("workflow")
@pytest.mark.tier("r2")
def test_a_share_serves_the_replaced_content(api, http, alice):
    first = api.put_file(alice, "menu.txt", b"monday: soup", "text/plain")
    share = api.share(alice, first)
    assert api.public(share["token"]).content == b"monday: soup"
    api.put_file(alice, "menu.txt", b"tuesday: <i>pasta</i>", "text/html", status=200)
    problems = api.download_problems(api.public(share["token"]), b"tuesday: <i>pasta</i>", "text/html", "the share after the replacement")
    assert not problems, "\n".join(problems)
    assert api.shares(alice, first)[0]["download_count"] == 2, "the count carries over the replacement"


@pytest.mark.requirement("R13", "R16")
@pytest.mark.category("workflow")
def test_deleting_a_file_ends_its_shares(api, http, alice):
    file = api.put_file(alice)
    shares = [api.share(alice, file), api.share(alice, file, password="password-1", max_downloads=9)]
    api.ok(http.delete(f"/files/{file['id']}", headers=alice.headers), 204, "delete the file")
    for share in shares:
        api.error(api.public(share["token"]), 404, "not_found", "a share of a deleted file")
        api.error(http.delete(f"/shares/{share['id']}", headers=alice.headers), 404, "not_found", "revoking a share of a deleted file")
    again = api.put_file(alice, file["name"], b"new file, same name", status=201)
    assert api.shares(alice, again) == [], "a new file of the same name has no shares"


@pytest.mark.requirement("R4", "R9", "R13")
@pytest.mark.category("workflow")
def test_an_administrator_manages_a_users_quota(api, http, admin):
    user = api.user(quota=100)
    api.put_file(user, "a", api.blob(100))
    api.error(api.upload(user, "b", api.blob(50)), 409, "quota_exceeded", "full")
    api.ok(http.patch(f"/users/{user.id}", json={"quota_bytes": 150}, headers=admin.headers), 200, "raise the quota")
    api.put_file(user, "b", api.blob(50))
    listed = next(u for u in api.ok(http.get("/users", headers=admin.headers), 200, "GET /users")["items"] if u["id"] == user.id)
    assert (listed["used_bytes"], listed["quota_bytes"]) == (150, 150), f"the administrator sees the usage: {listed}"


@pytest.mark.requirement("R21")
@pytest.mark.category("api_surface")
def test_json_answers_are_labelled_and_204_answers_are_empty(api, http, alice, checks):
    file = api.put_file(alice)
    share = api.share(alice, file)
    problems = checks.answer_problems(http.get("/health"), 200, "GET /health")
    problems += checks.answer_problems(http.get("/files"), 401, "GET /files without a token")
    problems += checks.answer_problems(http.post(f"/files/{file['id']}/shares", json={"max_downloads": 0}, headers=alice.headers), 422, "an invalid share")
    problems += checks.answer_problems(api.public("no-such-token-aaaaaaaaaaaa"), 404, "an unknown token")
    problems += checks.answer_problems(http.delete(f"/shares/{share['id']}", headers=alice.headers), 204, "DELETE a share")
    problems += checks.answer_problems(http.delete(f"/files/{file['id']}", headers=alice.headers), 204, "DELETE a file")
    assert not problems, "answer conventions:\n" + "\n".join(problems)


@pytest.mark.requirement("R21")
@pytest.mark.category("api_surface")
def test_a_method_a_path_does_not_have_gets_405(api, http, alice, service, checks):
    problems = checks.wrong_method_problems(service, http.timeout_s, "/health", alice.headers)
    problems += checks.wrong_method_problems(service, http.timeout_s, "/files", alice.headers, methods=("PUT", "DELETE", "PATCH"))
    assert not problems, "a method the path does not have:\n" + "\n".join(problems)
    assert http.get("/health").status_code == 200


@pytest.mark.requirement("R21", "R3")
@pytest.mark.category("validation")
@pytest.mark.parametrize("raw", [b"not json", b"[]", b'"text"', b"42", b"null", b'{"username": '], ids=["text", "array", "string", "number", "null", "truncated"])
def test_a_json_body_that_is_not_an_object_gets_422(api, http, admin, raw):
    for path, method in (("/users", "POST"), ("/auth/token", "POST")):
        r = http.request(method, path, data=raw, headers={**admin.headers, "Content-Type": "application/json"})
        problem = api.validation_problem(r, None, f"{method} {path} with {raw!r}")
        api.assert_no_problems([problem], "a body that is not a JSON object")
