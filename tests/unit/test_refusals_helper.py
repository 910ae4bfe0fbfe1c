"""The oracle support for refusals that must change nothing (http/refusals.py)."""

from __future__ import annotations

import pytest

from pytest_backendbench.http.refusals import difference, one_invalid_field, unchanged, without_field


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
