"""Hostile values through every string field of a request body.

String-built SQL, LIKE patterns, regular expressions and unescaped markup hide on every path a
value reaches: where it is stored and shown, and where it is only compared (a uniqueness check,
a login lookup, a filter). ``hostile_findings`` sends a valid body once per (string field,
hostile value) and returns what went wrong; like ``http/checks.py`` it never raises on an
answer, so the oracle item's own ``assert not findings`` makes the verdict the candidate's.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import requests

HOSTILE_VALUES: tuple[str, ...] = (
    "x' OR '1'='1",
    "x'); DROP TABLE users;--",
    'x" OR "1"="1',
    "x%_%",
    "x.*[(",
    "x\\",
    '{"$gt": ""}',
    "<script>alert(1)</script>",
)
"""One value per injection family: SQL quotes (both kinds), LIKE wildcards, a broken regular
expression, a trailing backslash, a NoSQL operator, markup. Each is plain printable text, so a
spec that accepts "any string" for a field must take it and store it as sent."""

Path = tuple[str | int, ...]


def string_paths(body: Any, where: Path = ()) -> list[Path]:
    """The path of every string leaf of ``body`` (keys and list indexes), in document order."""
    if isinstance(body, str):
        return [where]
    if isinstance(body, dict):
        return [p for key, sub in body.items() for p in string_paths(sub, (*where, key))]
    if isinstance(body, list):
        return [p for index, sub in enumerate(body) for p in string_paths(sub, (*where, index))]
    return []


def at(body: Any, path: Path) -> Any:
    """The value at ``path`` of ``body``, or None when the path does not exist there."""
    node = body
    for step in path:
        inside_dict = isinstance(node, dict) and isinstance(step, str) and step in node
        inside_list = isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node)
        if not (inside_dict or inside_list):
            return None
        node = node[step]
    return node


def replaced(body: Any, path: Path, value: Any) -> Any:
    """A deep copy of ``body`` with ``value`` at ``path``."""
    copied = copy.deepcopy(body)
    if not path:
        return value
    node = copied
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return copied


def label(path: Path) -> str:
    """``tags[0]``-style name of a path."""
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text or "(body)"


def hostile_bodies(body: Any, values: Iterable[str] = HOSTILE_VALUES, fields: Iterable[str] | None = None) -> Iterator[tuple[Path, str, Any]]:
    """(path, value, body with that value there) for every string field (or only ``fields``, by label) and value."""
    chosen = None if fields is None else set(fields)
    for path in string_paths(body):
        if chosen is None or label(path) in chosen:
            for value in values:
                yield path, value, replaced(body, path, value)


def hostile_findings(
    send: Callable[[Any], requests.Response],
    body: Any,
    *,
    values: Iterable[str] = HOSTILE_VALUES,
    fields: Iterable[str] | None = None,
    prepare: Callable[[Any], Any] | None = None,
    verbatim: Iterable[str] = (),
    accepted: Iterable[int] = (),
) -> list[str]:
    """Send ``body`` with each hostile value in each string field; what went wrong.

    ``send(body)`` makes the request; ``prepare`` freshens a body before sending (a unique name
    where the spec wants one). A finding is: no answer, a 5xx, a status outside ``accepted``
    (when given), or a 2xx whose JSON echoes a field of ``verbatim`` (labels) differently from
    what was sent (the spec stores it as sent).
    """
    keep = set(verbatim)
    allowed = set(accepted)
    found: list[str] = []
    for path, value, hostile in hostile_bodies(body, values, fields):
        sent = prepare(hostile) if prepare is not None else hostile
        name = label(path)
        try:
            response = send(sent)
        except requests.RequestException as err:
            found.append(f"{name}={value!r}: no answer ({type(err).__name__})")
            continue
        if response.status_code >= 500 or (allowed and response.status_code not in allowed):
            found.append(f"{name}={value!r}: got {response.status_code} {response.text[:120]}")
            continue
        if name in keep and 200 <= response.status_code < 300:
            try:
                echoed = at(response.json(), path)
            except ValueError:
                continue
            if echoed is not None and echoed != at(sent, path):
                found.append(f"{name}={value!r}: stored or answered as {echoed!r}, not as sent")
    return found
