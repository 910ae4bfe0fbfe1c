"""Oracle support: the setup and assertion helpers every bundled oracle shares.

``Api`` wraps the ``http`` fixture: ``ok`` returns a setup step's JSON body or fails the item,
``error`` asserts a documented error answer, ``validation_problem`` says why an answer is not
the 422 an item expects (items collect these and report them all with
``assert_no_problems``). ``brief`` describes a response in one line; ``unique`` makes fresh
names. A task's oracle subclasses ``Api`` with its own setup steps in its conftest.py.

This module declares itself oracle support (``__oracle_support__``): an ``AssertionError`` or
``pytest.fail`` raised here judges the candidate's answer, so outcomes.py counts it as the
candidate's failure, exactly as if the oracle's own code had raised it. Any other exception
raised here is still a harness error.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import requests

__oracle_support__ = True
"""Read by outcomes.exception_origin: assertions raised here are the oracle's verdict."""


def brief(response: requests.Response) -> str:
    """A short description of a response for failure messages."""
    return f"{response.request.method} {response.request.path_url} -> {response.status_code} {response.text[:300]}"


def unique(prefix: str, separator: str = "_", length: int = 12) -> str:
    """A fresh name: ``prefix``, ``separator`` and ``length`` hex digits (``user_1f2e...``: a valid
    username and slug by default)."""
    return f"{prefix}{separator}{uuid.uuid4().hex[:length]}"


class Api:
    """Setup and inspection helpers on top of the ``http`` fixture."""

    brief = staticmethod(brief)
    unique = staticmethod(unique)

    def __init__(self, http: requests.Session) -> None:
        self.http = http

    def ok(self, response: requests.Response, status: int, what: str) -> Any:
        """The JSON body of a setup response, or fail the item when the status is not ``status``."""
        __tracebackhide__ = True
        if response.status_code != status:
            pytest.fail(f"setup step '{what}' expected {status}: {brief(response)}", pytrace=False)
        if status == 204 or not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            pytest.fail(f"setup step '{what}' answered a body that is not JSON: {brief(response)}", pytrace=False)

    def error(self, response: requests.Response, status: int, code: str, what: str) -> dict[str, Any]:
        """Assert an error answer: its status and its documented ``error`` code; returns the body."""
        __tracebackhide__ = True
        assert response.status_code == status, f"{what}: expected {status} ({code}), got {brief(response)}"
        try:
            body = response.json()
        except ValueError:
            pytest.fail(f"{what}: the {status} answer is not JSON: {brief(response)}", pytrace=False)
        assert isinstance(body, dict) and body.get("error") == code, f"{what}: expected error code {code!r} in the body, got {response.text[:300]}"
        return body

    def validation_problem(self, response: requests.Response, fields: list[str] | None, what: str, also: tuple[str, ...] = ()) -> str | None:
        """Why ``response`` is not a 422 ``validation_error`` naming exactly ``fields`` (order-free,
        no repeats), or None when it is.

        ``fields=None`` accepts any list (a body that is not a JSON object may list nothing).
        ``also`` names fields whose validity depends on an invalid one (a subject for an unknown
        channel): the spec leaves open whether they are listed too, so either reading passes.
        """
        if response.status_code != 422:
            return f"{what}: expected 422, got {brief(response)}"
        try:
            body = response.json()
        except ValueError:
            return f"{what}: the 422 answer is not JSON: {brief(response)}"
        if not isinstance(body, dict) or body.get("error") != "validation_error":
            return f"{what}: expected error code 'validation_error', got {response.text[:300]}"
        got = body.get("fields")
        if not isinstance(got, list):
            return f"{what}: a 422 body needs a 'fields' list, got {got!r}"
        named = list(map(str, got))
        if fields is not None and not (set(fields) <= set(named) <= set(fields) | set(also) and len(named) == len(set(named))):
            return f"{what}: 422 should list fields {sorted(fields)}, got {got!r}"
        return None

    def assert_invalid(self, response: requests.Response, fields: list[str], what: str) -> None:
        """Assert a 422 ``validation_error`` naming exactly ``fields`` (``validation_problem``'s rule)."""
        __tracebackhide__ = True
        problem = self.validation_problem(response, fields, what)
        assert problem is None, problem

    def assert_no_problems(self, problems: list[str | None], headline: str) -> None:
        """Fail with every collected problem at once."""
        __tracebackhide__ = True
        found = [p for p in problems if p]
        assert not found, headline + ":\n" + "\n".join(found)
