"""What a judge needs of the item that runs its case: ``JudgeItem`` provides it.

The judges (api_judge.py, db_judge.py, gui_item.py) take a ``CaseRun`` rather than the item
class itself, so that judges/items.py, which picks the judge for a case, is the only module
that knows both (no import cycle between the item and its judges).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import pytest

from ..runkey import RunKey
from .cases import JudgeCase
from .context import JudgeContext
from .model import JudgeModel

if TYPE_CHECKING:
    from ..taskrun import TaskRun


class CaseRun(Protocol):
    """One judge case of one candidate run, as the judges see it."""

    case: JudgeCase
    run_key: RunKey | None
    config: pytest.Config
    stash: pytest.Stash

    @property
    def nodeid(self) -> str:
        """The item's node id (for messages)."""
        ...

    @property
    def task_run(self) -> TaskRun:
        """The candidate run the case judges."""
        ...

    @property
    def judge_model(self) -> JudgeModel:
        """The judge model (its seed shifted per --bench-repeat), counting what it is asked."""
        ...

    @property
    def max_steps(self) -> int:
        """Actions the judge may take."""
        ...

    @property
    def deadline_seconds(self) -> float:
        """Wall-clock seconds for the case."""
        ...

    @property
    def record_dir(self) -> Path:
        """Where the case's trajectory and screenshots go."""
        ...

    @property
    def report_dir(self) -> Path:
        """The report dir (trajectory and screenshot paths are relative to it)."""
        ...

    @property
    def context(self) -> JudgeContext:
        """The run's judge settings (limits and extras the judges read)."""
        ...

    @property
    def item(self) -> pytest.Item:
        """The pytest item that runs the case, for what takes an item (the service's URL, goal records, report sections)."""
        ...
