"""Oracle support for refusals that must change nothing (issue #35).

Specs say "a request that fails changes nothing" (and sends no mail, delivers no webhook). A
service that stores the valid fields of a body while it validates, then answers 422 for a later
field, keeps that rule only when the bad field is the first it reads. So an item tries every
field in turn with all the others valid (``one_invalid_field``), and reads the state back after
the refusal (``unchanged``); a task with a database also asks the statement log
(``db.writes_during``, db/checks/fixture.py).

Like http/api.py this module declares itself oracle support (``__oracle_support__``): a
difference found here is the candidate's failure.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

__oracle_support__ = True
"""Read by outcomes.exception_origin: assertions raised here are the oracle's verdict."""

SHOWN_CHARS = 300


def one_invalid_field(valid: Mapping[str, Any], invalid: Mapping[str, Any]) -> list[Any]:
    """pytest params ``(field, body)``: ``valid`` with only ``field`` set to a bad value, key order kept.

    ``invalid`` maps each field to one bad value, or to a list of bad values (each its own param;
    give a list of one element for a value that is itself a list). A field missing from ``valid``
    is appended last. The ids read ``field=value``, so a node id names the case.
    """
    params = []
    for name, values in invalid.items():
        for value in values if isinstance(values, list) else [values]:
            body = dict(valid)
            body[name] = value
            params.append(pytest.param(name, body, id=f"{name}={_short(value, 24)}"))
    return params


def without_field(valid: Mapping[str, Any], name: str) -> dict[str, Any]:
    """``valid`` without ``name`` (a required field left out), the other keys in order."""
    return {key: value for key, value in valid.items() if key != name}


@contextlib.contextmanager
def unchanged(read: Callable[[], Any], what: str) -> Iterator[None]:
    """Read the state before and after the ``with`` block; fail the item if it differs.

    ``read`` returns what the refused request must not change, read from outside (a GET of the
    entity, a list, the mails a mock received for the item's own address).
    """
    __tracebackhide__ = True
    before = read()
    yield
    after = read()
    if after != before:
        raise AssertionError(f"{what}: the request was refused, yet it changed what the service answers:\n{difference(before, after)}")


def refused_unchanged(api: Any, send: Callable[[], Any], read: Callable[[], Any], what: str, *, fields: list[str] | None = None,
                      status: int = 422, code: str = "validation_error", db: Any = None) -> None:
    """``send()`` is refused as stated and changes nothing.

    A 422 must name ``fields`` (``Api.validation_problem``'s rule), any other ``status`` must carry
    ``code``; ``read()`` answers the same before and after; with the ``db`` fixture of a
    PostgreSQL task, the statement log holds no write from the refused request.
    """
    __tracebackhide__ = True
    with contextlib.ExitStack() as stack:
        stack.enter_context(unchanged(read, what))
        writes = stack.enter_context(db.writes_during(what)) if db is not None else None
        response = send()
        if status == 422:
            problem = api.validation_problem(response, fields, what)
            assert problem is None, problem
        else:
            api.error(response, status, code, what)
    if writes is not None:
        writes.assert_none()


def difference(before: Any, after: Any) -> str:
    """The keys (or the whole values) that differ, shortened for a failure message."""
    if isinstance(before, dict) and isinstance(after, dict):
        keys = [key for key in {**before, **after} if before.get(key, _ABSENT) != after.get(key, _ABSENT)]
        return "\n".join(f"  {key}: before {_short(before.get(key, _ABSENT))}, after {_short(after.get(key, _ABSENT))}" for key in keys)
    return f"  before {_short(before)}\n  after  {_short(after)}"


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


_ABSENT = _Absent()


def _short(value: Any, limit: int = SHOWN_CHARS) -> str:
    try:
        text = value if isinstance(value, _Absent) else json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    text = str(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."
