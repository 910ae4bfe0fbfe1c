"""The recorder merges an item's phase records into one result (results.py, recorder.py)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pytest_backendbench.metrics import MetricOptions
from pytest_backendbench.recorder import ResultRecorder
from pytest_backendbench.results import ItemResult, PhaseRecord, merge_phases
from pytest_backendbench.runkey import RunKey


def phase(when: str, outcome: str, message: str = "", phase_name: str = "tests", **facts: Any) -> PhaseRecord:
    key = RunKey("notes", "sample-2")
    result = ItemResult(nodeid="x", task="notes", candidate=str(key), kind="http", outcome=outcome, phase=phase_name, message=message, **facts)
    return PhaseRecord(result, when, key.label, facts.pop("task_data", None) if "task_data" in facts else None)


def test_the_worst_outcome_and_the_first_message_win() -> None:
    merged = merge_phases("n", [phase("setup", "passed"), phase("call", "failed", "500 != 201"), phase("teardown", "error", "teardown broke")], 1.23456)
    assert (merged.outcome, merged.message, merged.duration, merged.nodeid) == ("error", "500 != 201", 1.2346, "n")
    assert merge_phases("n", [phase("setup", "skipped"), phase("teardown", "passed")], 0).outcome == "skipped"
    assert merge_phases("n", [phase("setup", "failed", "boot", "startup"), phase("teardown", "passed")], 0).phase == "startup"


def test_phase_records_travel_as_plain_dicts() -> None:
    record = phase("call", "failed", "x", requirements=["R1"], cwe=639)
    assert PhaseRecord.from_dict(record.to_dict()) == record


class Hook:
    def __init__(self) -> None:
        self.finished: list[str] = []

    def pytest_backendbench_task_result(self, task: str, result: Any) -> None:
        self.finished.append(result.candidate)


def report(nodeid: str, when: str, record: PhaseRecord, duration: float = 0.5) -> Any:
    return SimpleNamespace(nodeid=nodeid, when=when, duration=duration, backendbench=record.to_dict())


def test_the_recorder_strips_the_xdist_group_and_finishes_the_task(tmp_path: Path) -> None:
    hook = Hook()
    recorder = ResultRecorder(tmp_path, {"options": {}}, MetricOptions(0.6, 0.4), [], hook)
    key = RunKey("notes", "sample-2")
    nodeid = f"oracles/notes/test_notes.py::test_a[sample-2]@{key.xdist_group}"
    recorder.pytest_runtest_logreport(report(nodeid, "setup", phase("setup", "passed")))  # type: ignore[arg-type]
    recorder.pytest_runtest_logreport(report(nodeid, "call", phase("call", "failed", "boom")))  # type: ignore[arg-type]
    last = phase("teardown", "passed")
    last.task_data = {"finished": True, "build_seconds": 2.0}
    recorder.pytest_runtest_logreport(report(nodeid, "teardown", last))  # type: ignore[arg-type]
    task = recorder.tasks[str(key)]
    (item,) = task.items
    assert item.nodeid == "oracles/notes/test_notes.py::test_a[sample-2]" and item.outcome == "failed" and item.duration == 1.5
    assert (task.sample, task.finished, task.build_seconds, hook.finished) == ("sample-2", True, 2.0, [str(key)])
    recorder.journal.close()


def test_the_task_result_takes_its_sample_and_repeat_from_the_phase_records_run_key(tmp_path: Path) -> None:
    """The recorder builds the run from (task, run label) as recorded, never by parsing the candidate text."""
    recorder = ResultRecorder(tmp_path, {"options": {}}, MetricOptions(0.6, 0.4), [], Hook())
    key = RunKey.of("notes", "sample-3", 2)
    result = ItemResult(nodeid="x", task="notes", candidate=str(key), kind="http", outcome="passed")
    nodeid = f"oracles/notes/test_notes.py::test_a[{key.label}]"
    for when in ("setup", "call", "teardown"):
        recorder.pytest_runtest_logreport(report(f"{nodeid}@{key.xdist_group}", when, PhaseRecord(result, when, key.label)))  # type: ignore[arg-type]
    task = recorder.tasks[str(key)]
    assert (task.candidate, task.sample, task.repeat) == ("notes@sample-3+repeat-2", "sample-3", 2)
    assert task.run_key == key and [i.nodeid for i in task.items] == [nodeid]


def test_a_run_spread_over_workers_ends_with_its_last_item_not_a_workers_share(tmp_path: Path) -> None:
    """Each worker finishes its share of a spread run (``isolation: item``); the run ends when all its items arrived."""
    hook = Hook()
    recorder = ResultRecorder(tmp_path, {"options": {}}, MetricOptions(0.6, 0.4), [], hook)
    key = RunKey("notes", "sample-2")
    for index, group in enumerate([key.chunk_group(0), key.chunk_group(1), key.chunk_group(0)]):
        nodeid = f"oracles/notes/test_notes.py::test_{index}[sample-2]@{group}"
        for when in ("setup", "call", "teardown"):
            record = phase(when, "passed")
            if when == "teardown":
                record.task_data = {"finished": True, "spread_items": 3}
            recorder.pytest_runtest_logreport(report(nodeid, when, record))  # type: ignore[arg-type]
        task = recorder.tasks[str(key)]
        assert task.finished == (index == 2) and hook.finished == ([str(key)] if index == 2 else [])
    assert [i.nodeid for i in task.items] == [f"oracles/notes/test_notes.py::test_{i}[sample-2]" for i in range(3)]
    recorder.journal.close()
