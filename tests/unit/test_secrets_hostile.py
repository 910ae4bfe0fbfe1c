"""Secret-derived fields and hostile values: the shared checks report findings, never raise."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
import requests

from pytest_backendbench.http.hostile import HOSTILE_VALUES, hostile_bodies, hostile_findings, label, string_paths
from pytest_backendbench.http.secrets import response_secret_findings, secret_check, secret_findings, secret_key


def _answer(status: int, body: Any, method: str = "GET", path: str = "/me") -> requests.Response:
    response = requests.Response()
    response.status_code = status
    response._content = body if isinstance(body, bytes) else json.dumps(body).encode()
    response.headers["Content-Type"] = "application/json"
    response.request = requests.Request(method, "http://svc" + path).prepare()
    return response


@pytest.mark.parametrize("key", ["password", "password_hash", "passwordHash", "pwdSalt", "hashed_password", "hashedPassword", "pw-hash", "pwhash"])
def test_secret_key_names(key: str) -> None:
    assert secret_key(key)


@pytest.mark.parametrize("key", ["passengers", "compass", "bypass_count", "username", "id", "hashtag_count", "token", "salt", "hash", "secret"])
def test_other_key_names(key: str) -> None:
    assert not secret_key(key)


def test_a_user_object_with_a_hash_field_is_found_wherever_it_sits() -> None:
    user = {"id": "u1", "username": "alice", "password_hash": "x"}
    assert secret_findings({"items": [{"owner": user}]}) == ["$.items[0].owner.password_hash: a field named like a password or its hash ('x')"]
    assert secret_findings({"id": "u1", "username": "alice"}) == []
    assert secret_findings({"password": None, "password_salt": "", "password_set": True, "pw_hash": {"v": 1}}) == []  # nothing to reveal


def test_hash_shaped_values_and_digests_of_known_passwords() -> None:
    assert secret_findings({"note": "$2b$12$abcdefghijklmnopqrstuv"})[0].startswith("$.note: a value shaped like a stored password hash")
    assert secret_findings({"x": "pbkdf2:sha256:600000$abc$def"})
    digest = hashlib.sha256(b"pw-secret-123").hexdigest()
    assert secret_findings({"x": digest}, ["pw-secret-123"]) == ["$.x: its sha256 hex digest"]
    assert secret_findings({"x": digest}) == []  # an unknown 64-hex value may be an id
    assert secret_findings({"id": "3f2a6c1e9b7d4e0f8a1b2c3d4e5f6a7b"}) == []


def test_allowed_keys_are_the_spec_documented_ones() -> None:
    assert secret_findings({"password_policy": "8 characters"}, allowed_keys=["Password_Policy"]) == []
    assert secret_findings({"password_policy": "8 characters"})


def test_response_findings_name_the_request_and_skip_non_json() -> None:
    found = response_secret_findings(_answer(201, {"id": 1, "pw_salt": "abc"}, "POST", "/users"))
    assert found == ["POST /users -> 201: $.pw_salt: a field named like a password or its hash ('abc')"]
    assert response_secret_findings(_answer(200, b"<html>password_hash</html>")) == []
    assert response_secret_findings(_answer(200, b"{broken")) == []


def test_secret_check_reads_the_passwords_late() -> None:
    known: list[str] = []
    check = secret_check(lambda: known)
    answer = _answer(200, {"note": "pw-late-one"})
    assert check(answer) == []
    known.append("pw-late-one")
    assert check(answer) == ["GET /me -> 200: $.note: the password itself"]


def test_string_paths_and_bodies() -> None:
    body = {"name": "a", "n": 1, "tags": ["x", "y"], "meta": {"k": "v", "on": True}}
    assert [label(p) for p in string_paths(body)] == ["name", "tags[0]", "tags[1]", "meta.k"]
    variants = list(hostile_bodies(body, ("'",), fields=["tags[1]"]))
    assert [(label(p), b["tags"]) for p, _, b in variants] == [("tags[1]", ["x", "'"])]
    assert body["tags"] == ["x", "y"]  # the original is untouched


def test_hostile_findings_report_errors_and_changed_echoes() -> None:
    def send(body: dict[str, Any]) -> requests.Response:
        if "'" in body["name"]:
            return _answer(500, {"error": "internal_error"}, "POST", "/things")
        return _answer(201, {"name": body["name"].replace("<", "&lt;")}, "POST", "/things")

    found = hostile_findings(send, {"name": "ok"}, verbatim=["name"])
    assert any(f.startswith("name=\"x' OR '1'='1\": got 500") for f in found)
    assert "name='<script>alert(1)</script>': stored or answered as '&lt;script>alert(1)&lt;/script>', not as sent" in found
    assert len(found) == 3  # the two single-quoted values and the markup


def test_hostile_findings_survive_a_dead_service_and_prepare_each_body() -> None:
    seen: list[str] = []

    def send(body: dict[str, Any]) -> requests.Response:
        seen.append(body["username"])
        raise requests.ConnectionError("refused")

    found = hostile_findings(send, {"username": "u", "email": "e"}, fields=["email"], prepare=lambda b: {**b, "username": f"u{len(seen)}"})
    assert len(found) == len(HOSTILE_VALUES) and all("no answer (ConnectionError)" in f for f in found)
    assert seen == [f"u{i}" for i in range(len(HOSTILE_VALUES))]


def test_secret_check_remembers_the_passwords_sent() -> None:
    check = secret_check()
    registration = _answer(201, {"id": "u1", "note": "pw-sent-once"}, "POST", "/users")
    registration.request = requests.Request("POST", "http://svc/users", json={"username": "a", "password": "pw-sent-once"}).prepare()
    assert check(registration) == ["POST /users -> 201: $.note: the password itself"]
    assert check(_answer(200, {"bio": "pw-sent-once"})) == ["GET /me -> 200: $.bio: the password itself"]


def test_hash_and_salt_keys_count_only_in_answers_about_a_user() -> None:
    record = {"id": "u1", "username": "a", "_hash": "9f" * 32, "_salt": "abcd"}
    assert secret_findings(record) == []  # a flag's bucketing "hash" is no password
    assert [line.split(":")[0] for line in secret_findings(record, user_object=True)] == ["$._hash", "$._salt"]


def test_the_http_fixtures_hook_collects_every_checks_findings() -> None:
    from pytest_backendbench.http.fixtures import findings_hook

    found: list[str] = []
    hook = findings_hook([secret_check(), lambda r: [f"status {r.status_code}"]], found)
    answer = _answer(200, {"user": {"password": "pw-visible-1"}})
    assert hook(answer) is answer
    assert found == ["GET /me -> 200: $.user.password: a field named like a password or its hash ('pw-visible-1')", "status 200"]


def test_a_repetitive_password_is_found_only_as_a_whole_value() -> None:
    assert secret_findings({"name": "\u00fc" * 100}, ["\u00fc" * 8]) == []
    assert secret_findings({"name": "\u00fc" * 8}, ["\u00fc" * 8]) == ["$.name: the password itself"]
    assert secret_findings({"note": "my pw-Secret-42 here"}, ["pw-Secret-42"]) == ["$.note: the password itself"]
