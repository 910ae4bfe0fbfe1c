"""The bundled benchmark's discrimination, as part of the test suite: for every task, its
reference and its independent alternates pass 100% (the reference with full contract
conformance), and every mutant in mutants.yaml is caught by an item of its expected category.

One test per mutant, so that xdist spreads a task's mutants over the workers instead of one
worker judging a task's nineteen mutants while the other waits.

Every commit judges one mutant per (task, expected category) — the first of each in
mutants.yaml, so each category's items are shown to discriminate in every task — which keeps
the suite within CI's budget; `--all-mutants` (or `backendbench validate`, which always judges
them all) sweeps every mutant, as done before a release and whenever an oracle changes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_backendbench.cli.validate import judge_mutant, load_mutants, render_table, validate_task
from pytest_backendbench.tasks import TaskCatalog

REPO = Path(__file__).resolve().parents[1]
CATALOG = TaskCatalog(REPO)
MUTANTS = [(task_id, mutant.name) for task_id in CATALOG.task_ids() for mutant in load_mutants(CATALOG.load(task_id))]


def _first_of_each_category() -> list[tuple[str, str]]:
    """One mutant per (task, expected category): the first one mutants.yaml lists."""
    seen: set[tuple[str, str]] = set()
    chosen = []
    for task_id in CATALOG.task_ids():
        for mutant in load_mutants(CATALOG.load(task_id)):
            if (task_id, mutant.expect_category) not in seen:
                seen.add((task_id, mutant.expect_category))
                chosen.append((task_id, mutant.name))
    return chosen


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Mutants to judge: one per (task, category) unless `--all-mutants` asks for every one."""
    if "mutant_name" in metafunc.fixturenames:
        mutants = MUTANTS if metafunc.config.getoption("all_mutants") else _first_of_each_category()
        metafunc.parametrize(("task_id", "mutant_name"), mutants, ids=[f"{t}:{m}" for t, m in mutants])


@pytest.mark.slow
@pytest.mark.parametrize("task_id", CATALOG.task_ids())
def test_reference_and_alternates_pass(
    task_id: str, shared_cache: Path, monkeypatch: pytest.MonkeyPatch, record_property: Callable[[str, object], None]
) -> None:
    monkeypatch.setenv("BACKENDBENCH_CACHE", str(shared_cache))
    row = validate_task(CATALOG, task_id, "process", run_mutants=False)
    row.mutants_total = sum(1 for task, _ in MUTANTS if task == task_id)
    record_property("validate", "\n".join(render_table([row])))  # the validate table row, in --junitxml output
    assert row.ok, "\n".join([*render_table([row]), *row.problems])
    assert row.reference_sr == 1.0
    assert len(row.alternates) >= 2 and all(sr == 1.0 for sr in row.alternates.values()), row.alternates
    assert row.mutants_total >= 4, f"{task_id} needs at least 4 mutants in mutants.yaml"


@pytest.mark.slow
def test_mutant_is_caught(task_id: str, mutant_name: str, shared_cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BACKENDBENCH_CACHE", str(shared_cache))
    task = CATALOG.load(task_id)
    mutant = next(m for m in load_mutants(task) if m.name == mutant_name)
    problem = judge_mutant(CATALOG, task, mutant, "process", tmp_path)
    assert problem is None, problem
