"""``backendbench judge-agreement``: the confusion matrix of a judge against the deterministic oracle."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_backendbench.cli.judge_agreement import FULL_STACK_TASKS, agreement_of
from pytest_backendbench.cli.main import main
from pytest_backendbench.judges.cases import load_cases
from pytest_backendbench.tasks import TaskCatalog

REPO = Path(__file__).resolve().parents[2]


def item(kind: str, requirement: str, outcome: str) -> dict[str, Any]:
    return {"kind": kind, "requirements": [requirement], "outcome": outcome}


def report(candidate: str, *items: dict[str, Any]) -> dict[str, Any]:
    return {"tasks": [{"task": "event-registration", "candidate_path": candidate, "items": list(items)}]}


REPORTS = [
    report("reference", item("http", "R4", "passed"), item("bdd", "R4", "passed"), item("judge", "R4", "passed"), item("http", "R5", "passed"), item("judge", "R5", "passed")),
    report("mutant-a", item("http", "R4", "failed"), item("http", "R4", "passed"), item("judge", "R4", "passed"), item("http", "R5", "passed"), item("judge", "R5", "failed")),
    report("mutant-b", item("http", "R4", "failed"), item("judge", "R4", "failed"), item("http", "R5", "error"), item("judge", "R5", "passed")),
    report("mutant-c", item("http", "R6", "failed")),  # a requirement no judge case covers is not compared
]


def test_the_matrix_counts_candidates_per_requirement() -> None:
    table = agreement_of(REPORTS)
    assert list(table) == [("event-registration", "R4"), ("event-registration", "R5")]
    r4, r5 = table.values()
    assert r4.cells == {"both_pass": 1, "judge_fails": 0, "judge_passes": 1, "both_fail": 1} and r4.disagreements == ["mutant-a"]
    assert r4.agreement == pytest.approx(2 / 3) and r4.kappa() == pytest.approx(0.4)
    assert r5.cells == {"both_pass": 1, "judge_fails": 1, "judge_passes": 0, "both_fail": 0} and r5.undetermined == 1


def test_the_command_prints_it_from_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = []
    for index, document in enumerate(REPORTS):
        path = tmp_path / f"report-{index}.json"
        path.write_text(json.dumps(document))
        paths.append(str(path))
    assert main(["judge-agreement", "--reports", *paths]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["task", "req", "oracle+", "judge+", "oracle+", "judge-", "oracle-", "judge+", "oracle-", "judge-", "agree", "kappa", "undetermined"]
    assert lines[2].split() == ["event-registration", "R4", "1", "0", "1", "1", "66.7%", "0.40", "0"]
    assert lines[-1].split() == ["all", "2", "1", "1", "1", "60.0%", "0.17", "1"]
    assert main(["judge-agreement"]) == 2  # without a judge or reports: one line, not a traceback
    assert "needs --judge openai:<model>" in capsys.readouterr().err


@pytest.mark.parametrize("task_id", FULL_STACK_TASKS)
def test_calibration_cases_cover_requirements_the_deterministic_items_judge(task_id: str) -> None:
    task = TaskCatalog(REPO).load(task_id)
    cases = load_cases(REPO / "oracles" / task_id / "judge" / "cases.yaml", task.requirements)
    oracle_text = "\n".join(p.read_text() for p in (REPO / "oracles" / task_id).rglob("*") if p.suffix in (".py", ".feature", ".yaml") and "judge" not in p.parts)
    assert {c.kind for c in cases} >= {"backend", "database"}
    for case in cases:
        assert f'"{case.requirement}"' in oracle_text or f"{case.requirement}\n" in oracle_text or f"@{case.requirement}" in oracle_text or f": {case.requirement}" in oracle_text, case.id
