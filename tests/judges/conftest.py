"""The judge tests reuse the browser fixtures of tests/bdd (static server, shared browser) and its browser-marker rule;
the notes bench with judge cases and tool-call answers for the scripted server serve the core judge tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ..bdd.conftest import pytest_runtest_setup, serve, session_browser  # noqa: F401 - the browser tests' fixtures and marker rule, re-exported

NOTES_CASES = """\
cases:
  - id: BE-1
    kind: backend
    requirement: R1
    instruction: As user ada, create a note titled "groceries".
    expected: The note is created (201) and owned by ada.
  - id: BE-2
    kind: backend
    requirement: R4
    instruction: As user ada, create a note and then list ada's notes.
    expected: The list contains the note just created.
"""


def tool_call(method: str, path: str, *, json_body: Any = None, headers: dict[str, str] | None = None, call_id: str = "call_1") -> dict[str, Any]:
    """A scripted answer that calls backend_test once."""
    arguments: dict[str, Any] = {"method": method, "path": path}
    if json_body is not None:
        arguments["json_body"] = json_body
    if headers:
        arguments["headers"] = headers
    return {"content": f"I will send {method} {path}.", "tool_calls": [{"id": call_id, "type": "function", "function": {"name": "backend_test", "arguments": json.dumps(arguments)}}]}


@pytest.fixture
def judged_bench(bench: Path) -> Path:
    """The notes bench with two backend judge cases."""
    folder = bench / "oracles" / "notes" / "judge"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cases.yaml").write_text(NOTES_CASES)
    return bench
