"""Uploads, listing, downloads, replacement and deletion (spec.md: Files, Upload, Listing, Downloads)."""

from __future__ import annotations

import json

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R5")
@pytest.mark.category("api_surface")
def test_an_upload_answers_201_with_the_file(api, http, alice):
    data = api.blob(200)
    r = api.upload(alice, "photo.png", data, "image/png")
    assert r.status_code == 201, f"an upload: {api.brief(r)}"
    file = r.json()
    got = (file.get("name"), file.get("size"), file.get("content_type"), file.get("sha256"))
    assert got == ("photo.png", 200, "image/png", api.sha256(data)), f"name, size, content_type and sha256: {file}"
    assert file.get("id") and file.get("created_at") and file.get("updated_at"), f"id and timestamps: {file}"


@pytest.mark.requirement("R5")
@pytest.mark.category("api_surface")
def test_an_upload_without_content_type_is_octet_stream(api, http, alice):
    data = api.blob(33)
    file = api.put_file(alice, "raw.bin", data)
    assert file.get("content_type") == "application/octet-stream", f"no Content-Type header: {file}"
    problems = api.download_problems(api.content(alice, file), data, "application/octet-stream", "the owner's download")
    assert not problems, "\n".join(problems)


@pytest.mark.requirement("R5", "R12")
@pytest.mark.category("api_surface")
@pytest.mark.parametrize("content_type", ["text/plain; charset=utf-8", "application/pdf", "Application/X-Custom+JSON; Version=2"])
def test_the_content_type_is_stored_and_answered_exactly_as_sent(api, http, alice, content_type):
    data = api.blob(80)
    file = api.put_file(alice, "doc", data, content_type)
    assert file.get("content_type") == content_type, f"content_type as sent: {file}"
    assert api.ok(http.get(f"/files/{file['id']}", headers=alice.headers), 200, "GET the file")["content_type"] == content_type
    problems = api.download_problems(api.content(alice, file), data, content_type, "the owner's download")
    assert not problems, "\n".join(problems)


@pytest.mark.requirement("R12")
@pytest.mark.category("api_surface")
def test_a_download_answers_exactly_the_uploaded_bytes(api, http, alice):
    data = bytes(range(256)) * 40 + b"\r\n\x00\xff"
    file = api.put_file(alice, "all-bytes.bin", data, "application/octet-stream")
    problems = api.download_problems(api.content(alice, file), data, "application/octet-stream", "GET /files/{id}/content")
    assert not problems, "\n".join(problems)
    assert file["sha256"] == api.sha256(data) and file["size"] == len(data), f"size and sha256 of the bytes: {file}"


@pytest.mark.requirement("R5", "R12")
@pytest.mark.category("validation")
def test_an_empty_file_is_a_file(api, http, alice):
    file = api.put_file(alice, "empty.txt", b"", "text/plain")
    assert (file.get("size"), file.get("sha256")) == (0, api.sha256(b"")), f"an empty file: {file}"
    problems = api.download_problems(api.content(alice, file), b"", "text/plain", "downloading an empty file")
    assert not problems, "\n".join(problems)


@pytest.mark.requirement("R5")
@pytest.mark.category("validation")
@pytest.mark.parametrize("body", [b'{"broken": ', b"[1, 2", b"\xff\xfe not utf-8", b'{"password": 1}' + b" " * 40], ids=["truncated-object", "truncated-array", "not-utf8", "json-object"])
def test_the_body_is_never_parsed(api, http, alice, body):
    file = api.put_file(alice, "data.json", body, "application/json")
    assert (file.get("size"), file.get("sha256")) == (len(body), api.sha256(body)), f"the body stored as it is: {file}"
    problems = api.download_problems(api.content(alice, file), body, "application/json", "downloading it")
    assert not problems, "\n".join(problems)


@pytest.mark.requirement("R10")
@pytest.mark.category("api_surface")
def test_get_answers_the_file(api, http, alice):
    file = api.put_file(alice, "notes.md", b"# notes\n", "text/markdown")
    got = api.ok(http.get(f"/files/{file['id']}", headers=alice.headers), 200, "GET /files/{id}")
    keys = ("id", "name", "size", "content_type", "sha256", "created_at", "updated_at")
    assert {k: got.get(k) for k in keys} == {k: file.get(k) for k in keys}, f"GET answers what the upload answered: {got} vs {file}"


@pytest.mark.requirement("R10")
@pytest.mark.category("api_surface")
def test_unknown_files_get_404(api, http, alice):
    for method, path in (("GET", "/files/no-such-file"), ("GET", "/files/no-such-file/content"), ("DELETE", "/files/no-such-file"),
                         ("GET", "/files/no-such-file/shares"), ("POST", "/files/no-such-file/shares"), ("DELETE", "/shares/no-such-share")):
        api.error(http.request(method, path, json={} if method == "POST" else None, headers=alice.headers), 404, "not_found", f"{method} {path}")


@pytest.mark.requirement("R10")
@pytest.mark.category("state")
@pytest.mark.tier("r2")
def test_the_list_is_ordered_by_name_in_code_point_order(api, http, alice):
    names = ["b.txt", "B.txt", "a.txt", "_x", "\u00e9t\u00e9", "Z10", "Z2", "~", "0", " lead"]
    for name in names:
        api.put_file(alice, name, api.blob(3))
    assert api.names(alice) == sorted(names), f"GET /files by name (code point order): {api.names(alice)}"


@pytest.mark.requirement("R9", "R10")
@pytest.mark.category("side_effects")
def test_the_list_reports_usage_and_quota(api, http):
    user = api.user(quota=5000)
    empty = api.files(user)
    assert (empty.get("items"), empty.get("used_bytes"), empty.get("quota_bytes")) == ([], 0, 5000), f"a new user's list: {empty}"
    api.put_file(user, "one", api.blob(1000))
    api.put_file(user, "two", api.blob(234))
    listing = api.files(user)
    assert (listing["used_bytes"], listing["quota_bytes"]) == (1234, 5000), f"usage is the sum of the sizes: {listing}"
    assert sum(f["size"] for f in listing["items"]) == listing["used_bytes"]


@pytest.mark.requirement("R7")
@pytest.mark.category("state")
def test_uploading_a_taken_name_replaces_the_content(api, http, alice):
    first = api.put_file(alice, "report.txt", b"version one", "text/plain")
    data = api.blob(500)
    r = api.upload(alice, "report.txt", data, "application/octet-stream")
    assert r.status_code == 200, f"replacing a file answers 200: {api.brief(r)}"
    second = r.json()
    assert (second.get("id"), second.get("created_at")) == (first["id"], first["created_at"]), f"same id and created_at: {first} -> {second}"
    assert (second.get("size"), second.get("sha256"), second.get("content_type")) == (500, api.sha256(data), "application/octet-stream"), f"new size, sha256, type: {second}"
    assert second.get("updated_at"), f"updated_at is set: {second}"
    assert api.names(alice) == ["report.txt"] and api.used(alice) == 500, "one file, counted once with its new size"
    problems = api.download_problems(api.content(alice, first), data, "application/octet-stream", "the replaced file")
    assert not problems, "\n".join(problems)


@pytest.mark.requirement("R6")
@pytest.mark.category("state")
def test_names_differing_in_case_are_different_files(api, http, alice):
    lower = api.put_file(alice, "readme.txt", b"lower")
    upper = api.put_file(alice, "README.txt", b"upper")
    assert lower["id"] != upper["id"], "two names, two files"
    assert api.content(alice, lower).content == b"lower" and api.content(alice, upper).content == b"upper", "each keeps its content"
    assert sorted(api.names(alice)) == ["README.txt", "readme.txt"]


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_delete_removes_the_file(api, http, alice):
    keep = api.put_file(alice, "keep", b"keep")
    gone = api.put_file(alice, "gone", b"gone")
    r = http.delete(f"/files/{gone['id']}", headers=alice.headers)
    assert r.status_code == 204 and not r.content, f"DELETE answers 204 without a body: {api.brief(r)}"
    for method, path in (("GET", f"/files/{gone['id']}"), ("GET", f"/files/{gone['id']}/content"), ("DELETE", f"/files/{gone['id']}")):
        api.error(http.request(method, path, headers=alice.headers), 404, "not_found", f"{method} a deleted file")
    assert api.names(alice) == ["keep"] and api.content(alice, keep).content == b"keep", "the other file stays"


@pytest.mark.requirement("R13", "R9")
@pytest.mark.category("side_effects")
def test_delete_frees_the_quota(api, http):
    user = api.user(quota=1000)
    file = api.put_file(user, "big", api.blob(900))
    api.error(api.upload(user, "more", api.blob(200)), 409, "quota_exceeded", "an upload over the quota")
    api.ok(http.delete(f"/files/{file['id']}", headers=user.headers), 204, "delete the big file")
    assert api.used(user) == 0 and api.me(user)["used_bytes"] == 0, "usage after the delete"
    api.put_file(user, "more", api.blob(1000))


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_a_name_can_be_used_again_after_delete(api, http, alice):
    first = api.put_file(alice, "again.txt", b"first")
    api.ok(http.delete(f"/files/{first['id']}", headers=alice.headers), 204, "delete")
    second = api.put_file(alice, "again.txt", b"second", status=201)
    assert api.content(alice, second).content == b"second", "the new file's content"


@pytest.mark.requirement("R5", "R21")
@pytest.mark.category("api_surface")
def test_upload_answers_are_json(api, http, alice, checks):
    problems = checks.answer_problems(api.upload(alice, "a.txt", b"a"), 201, "a new upload")
    problems += checks.answer_problems(api.upload(alice, "a.txt", b"b"), 200, "a replacing upload")
    problems += checks.answer_problems(api.upload(alice, "a/b", b"b"), 422, "a refused name")
    problems += checks.answer_problems(http.get("/files", headers=alice.headers), 200, "GET /files")
    assert not problems, "answer conventions:\n" + "\n".join(problems)
    body = json.loads(http.get("/files", headers=alice.headers).text)
    assert [f["name"] for f in body["items"]] == ["a.txt"]
