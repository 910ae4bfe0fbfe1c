"""The oracles' shared checks report what they find and never raise on a candidate's answer."""

from __future__ import annotations

import hashlib
from typing import Any

import requests

from pytest_backendbench.http.checks import answer_problems, documented, password_leaks, token_problems


def _answer(status: int, body: bytes, content_type: str = "application/json") -> requests.Response:
    response = requests.Response()
    response.status_code = status
    response._content = body
    response.headers["Content-Type"] = content_type
    return response


def test_password_leaks_look_for_the_value_not_the_word() -> None:
    secret = "pw-correct-horse"
    assert password_leaks('{"password_set": true, "password": null}', secret) == []
    digest = hashlib.sha256(secret.encode()).hexdigest()
    assert password_leaks(f'{{"hash": "{digest}"}}', secret) == ["its sha256 digest"]
    assert password_leaks('{"h": "$2b$12$abcdefghijklmnopqrstuv"}', secret) == ["a password-hash string"]
    assert password_leaks(f"echo {secret}", secret) == ["the password itself"]


def test_documented_keeps_only_the_documented_keys() -> None:
    answer = {"id": 1, "config": {"on": True, "extra": 2}, "links": 3}
    assert documented(answer, {"id": 1, "config": {"on": True}}) == {"id": 1, "config": {"on": True}}


class _Session:
    """Answers every request with one canned response."""

    def __init__(self, response: requests.Response) -> None:
        self.response = response
        self.sent: list[dict[str, Any]] = []

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        self.sent.append({"method": method, "path": path, **kwargs})
        return self.response


def test_a_broken_json_answer_is_a_finding_not_an_exception() -> None:
    session = _Session(_answer(401, b"{not json"))
    problems = token_problems(session, "GET", "/me", "tok123")
    assert len(session.sent) == 10 and len(problems) == 10
    assert all("expected error 'unauthorized'" in p for p in problems)
    assert "tok123" not in "".join(problems)  # the token is shown as <token>


def test_answer_conventions() -> None:
    assert answer_problems(_answer(204, b""), 204, "delete") == []
    assert answer_problems(_answer(204, b"{}"), 204, "delete") == ["delete: a 204 answer has no body, got b'{}'"]
    assert answer_problems(_answer(200, b"{}", "text/html"), 200, "read") == [
        "read: a JSON answer needs Content-Type application/json, got 'text/html'"
    ]
    assert answer_problems(_answer(500, b"boom"), 200, "read") == ["read: expected 200, got 500 boom"]
