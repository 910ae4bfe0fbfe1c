"""The oracle support for refusals that must change nothing (http/refusals.py)."""

from __future__ import annotations

import contextlib

import pytest

from pytest_backendbench.db.checks.fixture import RefusedRequestWrote, WriteWindow
from pytest_backendbench.http.refusals import difference, one_invalid_field, refused_unchanged, unchanged, without_field


def test_one_invalid_field_replaces_one_field_at_a_time_and_keeps_the_key_order() -> None:
    valid = {"name": "Ada", "email": "ada@example.org", "limit": 3}
    params = one_invalid_field(valid, {"email": ["", "x"], "limit": -1, "extra": [[1]]})
    assert [p.id for p in params] == ['email=""', 'email="x"', "limit=-1", "extra=[1]"]
    assert [p.values for p in params] == [
        ("email", {"name": "Ada", "email": "", "limit": 3}),
        ("email", {"name": "Ada", "email": "x", "limit": 3}),
        ("limit", {"name": "Ada", "email": "ada@example.org", "limit": -1}),
        ("extra", {"name": "Ada", "email": "ada@example.org", "limit": 3, "extra": [1]}),
    ]
    assert list(params[2].values[1]) == ["name", "email", "limit"]
    assert valid == {"name": "Ada", "email": "ada@example.org", "limit": 3}
    assert without_field(valid, "email") == {"name": "Ada", "limit": 3}


def test_unchanged_fails_with_the_keys_that_moved_and_passes_when_nothing_did() -> None:
    state = {"name": "Ada", "limit": 3}
    with unchanged(lambda: dict(state), "PATCH /things/1 with a bad limit"):
        pass
    with pytest.raises(AssertionError) as failure, unchanged(lambda: dict(state), "PATCH /things/1 with a bad limit"):
        state["name"] = "Eve"
    assert str(failure.value) == 'PATCH /things/1 with a bad limit: the request was refused, yet it changed what the service answers:\n  name: before "Ada", after "Eve"'
    assert difference([1], [1, 2]) == "  before [1]\n  after  [1, 2]"
    assert difference({"a": 1}, {}) == "  a: before 1, after (absent)"


class _Api:
    """validation_problem and error as http/api.Api judges them, on a canned answer."""

    def validation_problem(self, response, fields, what):
        return None if response == ("422", fields) else f"{what}: got {response}"

    def error(self, response, status, code, what):
        assert response == (str(status), code), f"{what}: got {response}"


class _Db:
    def __init__(self, writes: list[str]) -> None:
        self.writes = writes

    @contextlib.contextmanager
    def writes_during(self, what):
        window = WriteWindow(what)
        yield window
        window.writes.extend(self.writes)


def test_refused_unchanged_needs_the_stated_refusal_an_unchanged_read_back_and_no_write() -> None:
    state = {"name": "Ada"}
    read = lambda: dict(state)
    refused_unchanged(_Api(), lambda: ("422", ["email"]), read, "bad email", fields=["email"], db=_Db([]))
    refused_unchanged(_Api(), lambda: ("409", "name_taken"), read, "taken", status=409, code="name_taken")
    with pytest.raises(AssertionError, match="bad email: got"):
        refused_unchanged(_Api(), lambda: ("200", None), read, "bad email", fields=["email"])
    with pytest.raises(RefusedRequestWrote, match="bad email: the request was refused, yet the candidate wrote"):
        refused_unchanged(_Api(), lambda: ("422", ["email"]), read, "bad email", fields=["email"], db=_Db(["INSERT users: INSERT INTO users ..."]))

    def half_stored() -> tuple[str, list[str]]:
        state["name"] = "Eve"
        return ("422", ["email"])

    with pytest.raises(AssertionError, match="yet it changed what the service answers"):
        refused_unchanged(_Api(), half_stored, read, "bad email", fields=["email"])
