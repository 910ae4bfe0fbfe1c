"""backendbench validate on a real task: reference, mutants caught or not, bad edits."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_backendbench.cli.validate import load_mutants, materialize_mutant, render_table, validate_task
from pytest_backendbench.errors import TaskFormatError
from pytest_backendbench.tasks import TaskCatalog

from .conftest import DATA


@pytest.fixture
def bench_copy(tmp_path: Path, shared_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BACKENDBENCH_CACHE", str(shared_cache))
    shutil.copytree(DATA / "bench", tmp_path / "bench")
    return tmp_path / "bench"


def test_reference_passes_and_every_mutant_is_caught(bench_copy: Path) -> None:
    row = validate_task(TaskCatalog(bench_copy), "notes", "process")
    assert row.problems == []
    assert row.reference_sr == 1.0
    assert row.items_by_tier == {"base": 3, "r1": 1}
    assert row.mutants_caught == ["no-ownership-check", "empty-title-accepted"]
    assert row.operations == 4
    table = render_table([row])
    assert table[2].split()[:2] == ["notes", "4"] and table[2].split()[-2:] == ["2/2", "yes"]


def test_a_mutant_the_oracle_misses_is_reported(bench_copy: Path) -> None:
    (bench_copy / "oracles" / "notes" / "mutants.yaml").write_text(
        "mutants:\n  - name: harmless\n    description: renames a log line\n    expect_category: state\n"
        "    edits:\n      - file: app.py\n        find: 'print(fmt % args, flush=True)'\n        replace: 'print(\"x\", flush=True)'\n"
    )
    row = validate_task(TaskCatalog(bench_copy), "notes", "process")
    assert row.problems == ["mutant harmless: not caught in state (failed: nothing)"]


def test_an_edit_that_does_not_match_exactly_once_names_the_mutant(bench_copy: Path) -> None:
    (bench_copy / "oracles" / "notes" / "mutants.yaml").write_text(
        "mutants:\n  - name: vague\n    description: x\n    expect_category: state\n"
        "    edits:\n      - file: app.py\n        find: 'self'\n        replace: 'this'\n"
    )
    row = validate_task(TaskCatalog(bench_copy), "notes", "process", run_mutants=True)
    assert len(row.problems) == 1 and "vague.edits: `find` occurs" in row.problems[0] and "exactly once" in row.problems[0]


def test_malformed_mutants_file_names_the_field(bench_copy: Path) -> None:
    (bench_copy / "oracles" / "notes" / "mutants.yaml").write_text("mutants:\n  - name: x\n    expect_category: speed\n")
    task = TaskCatalog(bench_copy).load("notes")
    with pytest.raises(TaskFormatError, match=r"mutants\[0\]\.expect_category: got 'speed'"):
        load_mutants(task)


def test_visible_contract_must_not_point_at_the_oracle(bench_copy: Path) -> None:
    spec = bench_copy / "benchmarks" / "notes" / "spec.md"
    spec.write_text(spec.read_text() + "\nSee oracles/notes for the tests.\n")
    row = validate_task(TaskCatalog(bench_copy), "notes", "process", run_mutants=False)
    assert row.problems == ["notes/spec.md mentions oracles/: the visible contract must not point at the hidden oracle"]


def test_alternates_run_beside_the_reference_and_each_failure_is_named(bench_copy: Path) -> None:
    catalog = TaskCatalog(bench_copy)
    task = catalog.load("notes")
    alternates = bench_copy / "oracles" / "notes" / "alternates"
    shutil.copytree(task.reference_dir, alternates / "copy")
    materialize_mutant(task, load_mutants(task)[0], alternates / "broken")
    row = validate_task(catalog, "notes", "process", run_mutants=False)
    assert row.alternates == {"broken": 0.0, "copy": 1.0}
    assert row.problems and all(p.startswith("alternate broken: ") and "REVIEW.md" in p for p in row.problems)
    assert "broken:0% copy:100%" in render_table([row])[2]
