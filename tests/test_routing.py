"""Collection routing: a bench root with more tasks than ``--bench-task`` selects."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import read_report

RUN = ("--bench-runtime=process", "-p", "no:cacheprovider")


def add_second_task(root: Path) -> None:
    """notes2: a copy of the notes task under its own id, with its own oracles."""
    shutil.copytree(root / "benchmarks" / "notes", root / "benchmarks" / "notes2")
    shutil.copytree(root / "oracles" / "notes", root / "oracles" / "notes2")
    task_yaml = root / "benchmarks" / "notes2" / "task.yaml"
    task_yaml.write_text(task_yaml.read_text().replace("id: notes\n", "id: notes2\n", 1))


@pytest.mark.parametrize(
    ("paths", "deselected"),
    [
        pytest.param((".",), 0, id="bench-root-path"),
        pytest.param(("benchmarks",), 0, id="benchmarks-path"),
        pytest.param(("benchmarks/notes2/task.yaml", "benchmarks/notes/task.yaml", "oracles/notes"), 3, id="unselected-task-yaml-named"),
    ],
)
def test_bench_task_with_paths_runs_only_the_selected_task(
    pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path], paths: tuple[str, ...], deselected: int
) -> None:
    add_second_task(bench)
    result = pytester.runpytest(f"--candidate={make_candidate('good')}", "--bench-task=notes", "--bench-report-dir=out", *RUN, *paths)
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    passed = 3 if paths == ("benchmarks",) else 7  # only the phase items live under benchmarks/
    result.assert_outcomes(passed=passed, deselected=deselected)
    assert [t["task"] for t in read_report(bench / "out")["tasks"]] == ["notes"]
