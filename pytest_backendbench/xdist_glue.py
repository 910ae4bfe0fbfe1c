"""What pytest-xdist needs from a benchmark session; registered only when xdist is present.

The controller hands its session id (so every worker labels containers with one id, and one
reaper finds them all) and the candidate folder (which --bench-generate may have chosen) to
each worker. Task items reach one worker per run through ``RunKey.xdist_group`` (runkey.py).
"""

from __future__ import annotations

from typing import Any


class XdistSessionId:
    """Adds the session id and the candidate folder to every worker's ``workerinput``."""

    def __init__(self, session_id: str, candidate: str) -> None:
        self.session_id = session_id
        self.candidate = candidate

    def pytest_configure_node(self, node: Any) -> None:
        """xdist's hook, called on the controller for each worker before it starts."""
        node.workerinput["backendbench_session"] = self.session_id
        node.workerinput["backendbench_candidate"] = self.candidate
