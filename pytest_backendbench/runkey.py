"""The identity of one candidate run: a task and a run label (sample, repetition).

Built once per item at collection and kept in the item's stash (``RUN_KEY``); every hook reads
that value instead of parsing text. ``str(key)`` is the report's ``candidate`` field
(``task`` or ``task@sample-2+repeat-3``); ``xdist_group`` is the name given to
``pytest.mark.xdist_group``, which must not contain ``@``: xdist's loadgroup scheduler keeps
only what follows the last ``@`` of a node id (``scheduler/loadgroup.py: _split_scope``), so
``task@sample-1`` would put every task of sample 1 into one group and onto one worker.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from .candidates import run_label_order, split_run_label


@dataclass(frozen=True)
class RunKey:
    """(task, run label): which candidate of which task one item evaluates."""

    task: str
    label: str = ""

    @classmethod
    def parse(cls, text: str) -> RunKey:
        """The inverse of ``str()``: ``task`` or ``task@label``."""
        task, _, label = text.partition("@")
        return cls(task, label)

    def __str__(self) -> str:
        return f"{self.task}@{self.label}" if self.label else self.task

    @property
    def sample(self) -> str:
        """The candidate sample ("" for a lone candidate)."""
        return split_run_label(self.label)[0]

    @property
    def repeat(self) -> int:
        """Which repetition (0 when runs are not repeated)."""
        return split_run_label(self.label)[1]

    @property
    def xdist_group(self) -> str:
        """A group name xdist's loadgroup keeps whole (no ``@``): one group per run."""
        return f"{self.task}:{self.label}" if self.label else self.task

    @property
    def folder_name(self) -> str:
        """A file-system-safe name for the run's artifacts."""
        return f"{self.task}_{self.label}" if self.label else self.task

    def order(self) -> tuple[int, int]:
        """Sort key within a task: sample number, then repetition."""
        return run_label_order(self.label)


RUN_KEY = pytest.StashKey[RunKey]()
"""The RunKey of a task item, set at collection; absent on the harness's own tests."""
