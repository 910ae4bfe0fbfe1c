"""Importing WebGen-Bench: its data/test.jsonl becomes tasks whose items are its UI test cases (frontend judge cases).

The hand-written excerpt in tests/importers/data/webgen-bench-mini has WebGen-Bench's layout;
the real file (101 instructions, 647 cases) is read from a WebGen-Bench checkout when one is at
hand: ``WEBGEN_BENCH_SRC`` or the mirror of github:mnluzimu/WebGen-Bench (``git show
HEAD:data/test.jsonl``); it is not committed here.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from pytest_backendbench.cli.main import main
from pytest_backendbench.importers.webgen_bench import WebGenBenchFormatError, import_webgen_bench
from pytest_backendbench.judges.cases import cases_path, load_cases
from pytest_backendbench.judges.gui_prompts import UI_PROMPT_TEMPLATE
from pytest_backendbench.report.papers import webgen_bench_rows
from pytest_backendbench.results import ItemResult, TaskResult
from pytest_backendbench.scores.webgen_bench import webgen_bench
from pytest_backendbench.tasks import TaskCatalog

MINI = Path(__file__).parent / "data" / "webgen-bench-mini"
MIRROR = Path("/work/.mirror/mnluzimu+WebGen-Bench/repo")


def real_data_file(tmp_path: Path) -> Path | None:
    """WebGen-Bench's own data/test.jsonl, when a checkout or the mirror is here."""
    source = os.environ.get("WEBGEN_BENCH_SRC")
    if source:
        return Path(source)
    if not MIRROR.is_dir():
        return None
    shown = subprocess.run(["git", "-C", str(MIRROR), "show", "HEAD:data/test.jsonl"], capture_output=True, check=False)
    if shown.returncode != 0:
        return None
    path = tmp_path / "test.jsonl"
    path.write_bytes(shown.stdout)
    return path


def test_each_instruction_becomes_a_task_and_each_ui_case_a_frontend_judge_case(tmp_path: Path) -> None:
    summary = import_webgen_bench(MINI, tmp_path)
    assert (len(summary.tasks), summary.cases, summary.problems) == (2, 4, [])
    catalog = TaskCatalog(tmp_path)
    task = catalog.load("webgen-000001")
    assert task.kind == "frontend"
    assert task.extra["webgen_bench"]["primary_category"] == "Data Management"
    assert (task.benchmark_dir / "spec.md").read_text().startswith("Please implement a website for keeping a reading list.")
    cases = load_cases(cases_path(catalog.oracles_dir, task.id), task.requirements)
    assert [(c.id, c.kind, c.requirement) for c in cases] == [("UI-0", "frontend", "FT"), ("UI-1", "frontend", "FT"), ("UI-2", "frontend", "DVT")]
    assert cases[0].instruction == "Add a book titled Dune by Frank Herbert."
    assert cases[0].expected == "Dune by Frank Herbert appears in the reading list."
    assert sorted(task.requirements) == ["DVT", "FT"]


def test_the_command_line_imports_and_a_bad_line_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "webgen-bench", str(MINI), "--out", str(tmp_path / "bench")]) == 0
    assert "imported 2 WebGen-Bench instruction(s)" in capsys.readouterr().out
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "1", "instruction": "x", "ui_instruct": []}\nnot json\n')
    with pytest.raises(WebGenBenchFormatError, match="line 2 is not valid JSON"):
        import_webgen_bench(bad, tmp_path / "out")
    with pytest.raises(WebGenBenchFormatError, match="data/test.jsonl: file not found"):
        import_webgen_bench(tmp_path / "nowhere", tmp_path / "out")


def test_the_real_data_file_gives_101_tasks_and_647_cases(tmp_path: Path) -> None:
    data = real_data_file(tmp_path)
    if data is None:
        pytest.skip("WebGen-Bench's data/test.jsonl is not here (set WEBGEN_BENCH_SRC to a checkout's data/test.jsonl)")
    summary = import_webgen_bench(data, tmp_path / "bench")
    assert (len(summary.tasks), summary.cases, summary.problems) == (101, 647, [])
    catalog = TaskCatalog(tmp_path / "bench")
    loaded = sum(len(load_cases(cases_path(catalog.oracles_dir, t.id), t.requirements)) for t in map(catalog.load, catalog.task_ids()))
    assert loaded == 647
    case = yaml.safe_load(cases_path(catalog.oracles_dir, "webgen-000001").read_text())["cases"][0]
    assert UI_PROMPT_TEMPLATE.format(task=case["instruction"], expected_result=case["expected"]).startswith("\n\nTask: Verify the stock search")


def _case(outcome: str, verdict: str | None, requirement: str, category: str = "Data Management") -> ItemResult:
    facts = {"case_kind": "frontend", "verdict": verdict, "webgen_category": category} if verdict or outcome != "failed" else {"case_kind": "frontend"}
    return ItemResult(nodeid="n", task="webgen-000001", candidate="c", kind="judge", outcome=outcome, requirements=[requirement], judge=facts)


def test_the_table_is_compute_accs() -> None:
    items = [
        _case("passed", "YES", "FT"), _case("failed", "PARTIAL", "FT"), _case("failed", "NO", "DVT"),
        _case("failed", None, "FT"),  # the site never started: no answer
        _case("error", None, "DDT"),
    ]
    table = webgen_bench([TaskResult(task="webgen-000001", candidate="c", items=items)])
    assert table is not None
    assert (table["yes"], table["partial"], table["no"], table["start_failed"], table["errors"]) == (1, 1, 1, 1, 1)
    assert table["accuracy"] == pytest.approx(1.5 / 5)
    assert (table["yes_rate"], table["partial_rate"], table["no_rate"]) == (0.2, 0.2, 0.2)
    assert table["accuracy_by_category"]["Functional Testing"] == pytest.approx(1.5 / 3)
    assert table["accuracy_by_category"]["Design Validation Testing"] == 0.0
    assert webgen_bench([TaskResult(task="t", candidate="c")]) is None
    assert webgen_bench_rows(table)[0] == ("WebGen-Bench accuracy (YES / PARTIAL / NO / start failed)", "30.0% (20.0% / 20.0% / 20.0% / 20.0% of 5 cases)")
