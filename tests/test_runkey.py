"""The typed run identity (runkey.py) and what xdist's loadgroup scheduler makes of it."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from xdist.scheduler.loadgroup import LoadGroupScheduling

from pytest_backendbench.runkey import RunKey

RUN = ("--bench-runtime=process", "-p", "no:cacheprovider")


def test_run_key_round_trips_and_names_its_parts() -> None:
    key = RunKey("notes", "sample-2+repeat-3")
    assert str(key) == "notes@sample-2+repeat-3" and RunKey.parse(str(key)) == key
    assert (key.sample, key.repeat, key.order()) == ("sample-2", 3, (2, 3))
    assert str(RunKey("notes")) == "notes" and RunKey.parse("notes") == RunKey("notes", "")


def test_loadgroup_keeps_one_group_per_run() -> None:
    """xdist keeps only the text after the last '@' of a node id: our group names have none."""
    split = LoadGroupScheduling._split_scope
    keys = [RunKey(task, label) for task in ("notes", "todo") for label in ("sample-1", "sample-2", "repeat-1")]
    scopes = {split(None, f"oracles/{k.task}/test_x.py::test_y[{k.label}]@{k.xdist_group}") for k in keys}  # type: ignore[arg-type]
    assert len(scopes) == len(keys)
    legacy = {split(None, f"oracles/{k.task}/test_x.py::test_y[{k.label}]@{k}") for k in keys}  # type: ignore[arg-type]
    assert len(legacy) == 3  # what "task@label" groups collapsed to: one per label


def test_samples_of_several_tasks_spread_over_both_workers(
    pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]
) -> None:
    for folder in ("benchmarks", "oracles"):
        shutil.copytree(bench / folder / "notes", bench / folder / "notes2")
    task_yaml = bench / "benchmarks" / "notes2" / "task.yaml"
    task_yaml.write_text(task_yaml.read_text().replace("id: notes", "id: notes2"))
    root = bench / "runs"
    make_candidate("sample-1", task="notes", where=root / "notes")
    make_candidate("sample-1", task="notes2", where=root / "notes2")
    result = pytester.runpytest_subprocess(f"--candidate={root}", "--bench-report-dir=out", "-n", "2", "--dist", "loadgroup", "-v", *RUN)
    result.assert_outcomes(passed=14)
    workers_by_task: dict[str, set[str]] = {}
    for line in result.stdout.lines:
        match = re.match(r"\[(gw\d)\].*? (?:benchmarks|oracles)/(notes2?)/", line)
        if match:
            workers_by_task.setdefault(match.group(2), set()).add(match.group(1))
    assert workers_by_task.keys() == {"notes", "notes2"}
    assert all(len(w) == 1 for w in workers_by_task.values()), workers_by_task  # a run stays on one worker
    assert workers_by_task["notes"] != workers_by_task["notes2"], workers_by_task  # two runs, two workers
