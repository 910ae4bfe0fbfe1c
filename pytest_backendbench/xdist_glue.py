"""What pytest-xdist needs from a benchmark session, and what it must not be asked to do.

The controller hands its session id (so every worker labels containers with one id, and one
reaper finds them all) and the candidate folder (which --bench-generate may have chosen) to
each worker; the hook is registered only when xdist is present. Task items reach one worker per
run through ``RunKey.xdist_group`` (runkey.py), which only ``--dist loadgroup`` honours.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


def check_distribution(config: pytest.Config) -> None:
    """Refuse an xdist distribution that would split a task's items over workers (controller only)."""
    if getattr(config, "workerinput", None) is not None:
        return
    if config.getoption("numprocesses", None) and config.getoption("dist", "no") not in ("loadgroup", "no"):
        raise pytest.UsageError(
            f"-n with --dist {config.getoption('dist')} would split a task's items over workers (one service, one database, "
            "in order); add --dist loadgroup"
        )


def register_xdist_glue(config: pytest.Config, session_id: str, candidate: str) -> None:
    """On the controller with xdist present: give every worker the session id and the candidate folder."""
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(XdistSessionId(session_id, str(Path(candidate).resolve())), "backendbench-xdist")


class XdistSessionId:
    """Adds the session id and the candidate folder to every worker's ``workerinput``."""

    def __init__(self, session_id: str, candidate: str) -> None:
        self.session_id = session_id
        self.candidate = candidate

    def pytest_configure_node(self, node: Any) -> None:
        """xdist's hook, called on the controller for each worker before it starts."""
        node.workerinput["backendbench_session"] = self.session_id
        node.workerinput["backendbench_candidate"] = self.candidate
