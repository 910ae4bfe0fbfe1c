"""Fixtures for dispatch tests: a three-task copy of the notes bench, and a real Slurm.

The Slurm tests run against the cluster of one node that ``.ci/slurm-setup.sh`` starts
(never a fake scheduler); without Slurm they skip, except under CI where they fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SETUP = REPO / ".ci" / "slurm-setup.sh"
TASKS = ("notes", "notes2", "notes3")


def add_task_copies(root: Path) -> None:
    """notes2 and notes3: copies of the notes task under other ids, so there is something to shard."""
    for task_id in TASKS[1:]:
        shutil.copytree(root / "benchmarks" / "notes", root / "benchmarks" / task_id)
        shutil.copytree(root / "oracles" / "notes", root / "oracles" / task_id)
        task_yaml = root / "benchmarks" / task_id / "task.yaml"
        task_yaml.write_text(task_yaml.read_text().replace("id: notes", f"id: {task_id}"))


@pytest.fixture
def three_tasks(bench: Path, make_candidate: Callable[..., Path]) -> Path:
    """A bench of three tasks and a root of candidates: notes3's skips ownership (one failure)."""
    add_task_copies(bench)
    root = bench / "root"
    make_candidate("notes", task=None, where=root)
    make_candidate("notes2", task=None, where=root)
    make_candidate("notes3", "--skip-ownership", task=None, where=root)
    return root


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
        pytest.fail(f"CI requires the Slurm tests to run: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def slurm() -> Iterator[None]:
    """A running Slurm (started by .ci/slurm-setup.sh if needed); stopped again if we started it."""
    if shutil.which("sbatch") is None and os.environ.get("CI", "").lower() not in {"1", "true", "yes"}:
        _unavailable("Slurm is not installed (bash .ci/slurm-setup.sh installs and starts it)")
    was_running = subprocess.run(["pgrep", "-x", "slurmctld"], capture_output=True, check=False).returncode == 0
    setup = subprocess.run(["bash", str(SETUP)], capture_output=True, text=True, timeout=600, check=False)
    if setup.returncode != 0:
        _unavailable(f"could not start Slurm: {setup.stdout[-800:]}{setup.stderr[-800:]}")
    yield
    if not was_running:
        subprocess.run(["bash", str(SETUP), "--stop"], capture_output=True, timeout=60, check=False)
