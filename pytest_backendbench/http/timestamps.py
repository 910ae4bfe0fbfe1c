"""Oracle support for timestamps in answers: the instant an ISO 8601 string names, and whether it is UTC.

Specs promise date-times "in UTC" and compare instants, not strings (``2031-01-01T10:00:00Z`` and
``...+00:00`` name one instant). These helpers return values and never raise on an answer's
content, so an oracle item's own assertion gives the verdict.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any


def instant(value: Any) -> dt.datetime | None:
    """The instant an ISO 8601 date-time string with an offset (or ``Z``) names, or None when it is not one."""
    if not isinstance(value, str):
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.strip().replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def utc_problem(value: Any, what: str) -> str | None:
    """Why ``value`` is not an ISO 8601 date-time given in UTC (``Z`` or a zero offset), or None."""
    moment = instant(value)
    if moment is None:
        return f"{what}: expected an ISO 8601 date-time in UTC, got {value!r}"
    if moment.utcoffset() != dt.timedelta(0):
        return f"{what}: responses give timestamps in UTC, got {value!r} (offset {moment.utcoffset()})"
    return None


def is_utc(value: Any) -> bool:
    """Whether ``value`` is an ISO 8601 date-time string in UTC (``Z`` or a zero offset)."""
    return utc_problem(value, "") is None


def rfc3339_utc_problems(named: Iterable[tuple[str, Any]]) -> list[str]:
    """Why each ``(what, value)`` is not an RFC 3339 date-time in UTC (a ``T`` between date and time; ``Z`` or a zero offset).

    Stricter than ``utc_problem``, for specs that say RFC 3339 (like ``2025-03-01T12:00:00.123Z``).
    """
    problems = []
    for what, value in named:
        try:
            parsed = dt.datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value)
        except (TypeError, ValueError, AttributeError):
            problems.append(f"{what} = {value!r} is not RFC 3339 like 2025-03-01T12:00:00.123Z")
            continue
        if value[10:11] not in ("T", "t") or parsed.utcoffset() != dt.timedelta(0):
            problems.append(f"{what} = {value!r} is not an RFC 3339 date-time in UTC")
    return problems
