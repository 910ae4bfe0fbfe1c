"""``backendbench report suspects``: items failing for most runs while their requirement's other items pass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_backendbench.cli import main
from pytest_backendbench.errors import HarnessError
from pytest_backendbench.metrics import MetricOptions
from pytest_backendbench.report.json_report import build_report, write_report
from pytest_backendbench.report.suspects import SuspectThresholds, suspects_document
from pytest_backendbench.results import ItemResult, TaskResult

MANIFEST = {
    "harness_version": "test", "python": "3.11", "platform": "linux", "runtime": "process", "session_id": "s",
    "started_at": "2026-11-23T00:00:00Z", "finished_at": "2026-11-23T00:01:00Z", "options": {}, "candidates": [], "interrupted": False,
}

# (item, requirement): a hidden requirement (R1's "tz" item fails everywhere though R1's other items pass),
# a rule most candidates get wrong (all of R2 fails together: not a suspect), and a rule one candidate breaks
ITEMS = [("test_create", "R1"), ("test_list", "R1"), ("test_timezone", "R1"), ("test_limit_low", "R2"), ("test_limit_high", "R2"),
         ("test_owner", "R3"), ("test_owner_list", "R3")]


def _write(folder: Path, task: str, candidate: str, failing: set[str], *, sample: str = "", phase_failed: str | None = None) -> Path:
    items = [
        ItemResult(nodeid=f"benchmarks/{task}/task.yaml::build", task=task, candidate=candidate, kind="build", outcome="passed"),
        *[
            ItemResult(
                nodeid=f"oracles/{task}/test_x.py::{name}" + (f"[{sample}]" if sample else ""), task=task, candidate=candidate, kind="http",
                outcome="failed" if name in failing else "passed", requirements=[req], category="behavior",
                message="AssertionError: expected 2030-05-01T18:00:00Z\nmore" if name in failing else "",
            )
            for name, req in ITEMS
        ],
    ]
    result = TaskResult(task=task, candidate=candidate, sample=sample, phase_failed=phase_failed, finished=True, items=items)
    write_report(folder, build_report([result], dict(MANIFEST), MetricOptions()))
    return folder


@pytest.fixture
def reports(tmp_path: Path) -> list[Path]:
    """Five runs: the timezone item fails in four of them while create/list pass; R2 fails wholesale in three."""
    return [
        _write(tmp_path / "model-a", "notes", "notes", {"test_timezone", "test_limit_low", "test_limit_high"}),
        _write(tmp_path / "model-b", "notes", "notes", {"test_timezone", "test_limit_low", "test_limit_high"}),
        _write(tmp_path / "model-c", "notes", "notes@sample-1", {"test_timezone", "test_limit_low", "test_limit_high"}, sample="sample-1"),
        _write(tmp_path / "model-d", "notes", "notes", {"test_timezone", "test_owner"}),
        _write(tmp_path / "alternate", "notes", "notes", set()),
        # a run whose build failed: every item fails for one reason, so it says nothing about single items
        _write(tmp_path / "broken", "notes", "notes", {name for name, _ in ITEMS}, phase_failed="build"),
    ]


def test_an_item_failing_alone_in_its_requirement_is_listed(reports: list[Path]) -> None:
    document = suspects_document(reports, SuspectThresholds())
    assert [s["item"] for s in document["suspects"]] == ["oracles/notes/test_x.py::test_timezone"]
    suspect = document["suspects"][0]
    assert (suspect["passed"], suspect["runs"], suspect["pass_rate"]) == (1, 5, 0.2)
    assert suspect["sibling_pass_rate"] == 1.0  # create and list passed in every run where timezone failed
    assert suspect["typical_message"] == "AssertionError: expected 2030-05-01T18:00:00Z"
    assert document["runs"] == 5 and document["runs_left_out"] == 1


def test_a_rule_failing_wholesale_or_once_is_not_suspect(reports: list[Path]) -> None:
    items = {s["item"].rsplit("::", 1)[1] for s in suspects_document(reports, SuspectThresholds()).get("suspects")}
    assert "test_limit_low" not in items  # its sibling failed with it: the candidates got R2 wrong, not the item
    assert "test_owner" not in items  # fails in one run of five


def test_thresholds_move_the_line(reports: list[Path]) -> None:
    loose = suspects_document(reports, SuspectThresholds(max_pass_rate=0.8, min_sibling_rate=0.5))
    assert {s["item"].rsplit("::", 1)[1] for s in loose["suspects"]} == {"test_timezone", "test_owner"}
    assert suspects_document(reports, SuspectThresholds(min_runs=6))["suspects"] == []
    with pytest.raises(HarnessError, match="max-pass-rate must be between 0 and 1"):
        SuspectThresholds(max_pass_rate=50)


def test_cli_writes_both_files_and_can_fail_ci(reports: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "suspects", *map(str, reports), "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "| notes | `oracles/notes/test_x.py::test_timezone` | R1 | behavior | 20% (1/5) | 5 | 100% |" in printed
    saved: dict[str, Any] = json.loads((tmp_path / "out" / "suspects.json").read_text())
    assert len(saved["suspects"]) == 1 and (tmp_path / "out" / "suspects.md").read_text() == printed
    assert main(["report", "suspects", *map(str, reports), "--fail-on-suspects"]) == 1
    assert main(["report", "suspects", str(reports[-2]), "--fail-on-suspects"]) == 0  # one clean run: nothing to list


def test_a_missing_report_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "suspects", str(tmp_path / "nowhere")]) == 2
    assert "no report there" in capsys.readouterr().err
