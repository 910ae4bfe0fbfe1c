"""The ``reference`` model: copies the task's reference candidate, to validate the pipeline.

This is the one deliberate exception to "generators see only the visible contract": it reads
``oracles/<task>/reference/``, which is why it is a plugin object given the bench root rather
than something reachable from ``VisibleTask``. A run with ``--bench-generate --bench-model=reference``
must reach 100%; anything less is a bug in generation, the runtime or the oracle.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from ..candidates import IGNORED_NAMES
from ..llm.chat import GenerationError
from ..tasks import VisibleTask

MODEL = "reference"


class ReferenceGenerator:
    """Answers ``--bench-model=reference`` by copying oracles/<task>/reference/ into the workspace."""

    backendbench_models = (MODEL,)

    def __init__(self, bench_root: Path) -> None:
        self.oracles_dir = bench_root / "oracles"

    @pytest.hookimpl(trylast=True)
    def pytest_backendbench_generate(self, task: VisibleTask, workspace: Path, model: str) -> dict[str, Any] | None:
        """Copy the reference; a task without one is that task's generation error."""
        if model != MODEL:
            return None
        source = self.oracles_dir / task.id / "reference"
        if not source.is_dir():
            raise GenerationError(f"task {task.id!r} has no reference candidate at {source}; every task needs oracles/<task>/reference/")
        shutil.copytree(source, workspace, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*IGNORED_NAMES, "*.pyc"))
        return {"model": MODEL, "tokens_in": 0, "tokens_out": 0, "cost_usd": 0.0}
