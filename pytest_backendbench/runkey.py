"""The identity of one candidate run: a task and a run label (sample, repetition).

Built once per item at collection and kept in the item's stash (``RUN_KEY``); every hook reads
that value instead of parsing text. ``str(key)`` is the report's ``candidate`` field
(``task`` or ``task@sample-2+repeat-3``); ``xdist_group`` is the name given to
``pytest.mark.xdist_group``, which must not contain ``@``: xdist's loadgroup scheduler keeps
only what follows the last ``@`` of a node id (``scheduler/loadgroup.py: _split_scope``), so
``task@sample-1`` would put every task of sample 1 into one group and onto one worker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

SAMPLE_PATTERN = re.compile(r"^sample-(\d+)$")
REPEAT_SEPARATOR = "+repeat-"
CHUNK_SEPARATOR = "#"


def run_label(sample: str, repeat: int) -> str:
    """The label of one run of one candidate: ``sample-2``, ``sample-2+repeat-3``, ``repeat-3`` or ""."""
    if repeat <= 0:
        return sample
    return f"{sample}{REPEAT_SEPARATOR}{repeat}" if sample else f"repeat-{repeat}"


def split_run_label(label: str) -> tuple[str, int]:
    """Inverse of ``run_label``: (sample, repeat), repeat 0 when the run is not repeated."""
    if label.startswith("repeat-"):
        return "", int(label.split("-", 1)[1])
    sample, sep, repeat = label.partition(REPEAT_SEPARATOR)
    return sample, int(repeat) if sep else 0


def run_label_order(label: str) -> tuple[int, int]:
    """Sort key of a run label: sample number, then repeat number."""
    sample, repeat = split_run_label(label)
    match = SAMPLE_PATTERN.match(sample)
    return (int(match.group(1)) if match else 0, repeat)


@dataclass(frozen=True)
class RunKey:
    """(task, run label): which candidate of which task one item evaluates."""

    task: str
    label: str = ""

    @classmethod
    def of(cls, task: str, sample: str = "", repeat: int = 0) -> RunKey:
        """The run of ``sample`` ("" for a lone candidate) of ``task``, repetition ``repeat``."""
        return cls(task, run_label(sample, repeat))

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

    def chunk_group(self, index: int) -> str:
        """The xdist group of one chunk of a run whose items may spread over workers (``isolation: item``)."""
        return f"{self.xdist_group}{CHUNK_SEPARATOR}{index}"

    def plain_nodeid(self, nodeid: str) -> str:
        """A node id without the ``@<group>`` suffix xdist's loadgroup gave it (the run's group or a chunk's)."""
        head, sep, group = nodeid.rpartition("@")
        if sep and (group == self.xdist_group or group.startswith(self.xdist_group + CHUNK_SEPARATOR)):
            return head
        return nodeid

    @property
    def folder_name(self) -> str:
        """A file-system-safe name for the run's artifacts."""
        return f"{self.task}_{self.label}" if self.label else self.task

    def order(self) -> tuple[int, int]:
        """Sort key within a task: sample number, then repetition."""
        return run_label_order(self.label)


RUN_KEY = pytest.StashKey[RunKey]()
"""The RunKey of a task item, set at collection; absent on the harness's own tests."""


def run_key_of(item: pytest.Item) -> RunKey | None:
    """The RunKey of a task item (``RUN_KEY``), None for the harness's own tests."""
    return item.stash.get(RUN_KEY, None)
