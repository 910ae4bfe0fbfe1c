"""The bundled benchmark's discrimination, as part of the test suite: for every task, its
reference passes 100% with full contract conformance (and, with `--with-alternates`, so do its
independent alternates), and mutants in mutants.yaml are caught by an item of their category.

One test per mutant, so that xdist spreads a task's mutants over the workers instead of one
worker judging a task's nineteen mutants while the other waits.

Every commit judges one mutant per task — the first security mutant in mutants.yaml — so each
task's security items are shown to discriminate on every commit while 17 tasks stay within CI's
25 minutes.
The alternates (34 more full oracle runs, as long as the rest of the suite) and the other
mutants are judged by `--with-alternates --all-mutants`, or by `backendbench validate`, which
always judges them all, as done before a release and whenever an oracle changes; the figures
of the last such run are in each task's REVIEW.md. Alternates and mutants are judged without
the contract check (the reference's conformance is checked); a task's alternates run at once.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_backendbench.cli.validate import alternates_of, judge_mutant, load_mutants, render_table, validate_task
from pytest_backendbench.tasks import TaskCatalog

REPO = Path(__file__).resolve().parents[1]
CATALOG = TaskCatalog(REPO)
MUTANTS = [(task_id, mutant.name) for task_id in CATALOG.task_ids() for mutant in load_mutants(CATALOG.load(task_id))]


def _per_commit_selection() -> list[tuple[str, str]]:
    """One mutant per task: its first security mutant (else its first mutant)."""
    chosen = []
    for task_id in CATALOG.task_ids():
        mutants = load_mutants(CATALOG.load(task_id))
        first = next((m for m in mutants if m.expect_category == "security"), mutants[0] if mutants else None)
        if first is not None:
            chosen.append((task_id, first.name))
    return chosen


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Mutants to judge: one per task unless `--all-mutants` asks for every one."""
    if "mutant_name" in metafunc.fixturenames:
        mutants = MUTANTS if metafunc.config.getoption("all_mutants") else _per_commit_selection()
        metafunc.parametrize(("task_id", "mutant_name"), mutants, ids=[f"{t}:{m}" for t, m in mutants])


@pytest.mark.slow
@pytest.mark.parametrize("task_id", CATALOG.task_ids())
def test_reference_passes(
    task_id: str, shared_cache: Path, monkeypatch: pytest.MonkeyPatch, record_property: Callable[[str, object], None], request: pytest.FixtureRequest
) -> None:
    monkeypatch.setenv("BACKENDBENCH_CACHE", str(shared_cache))
    with_alternates = bool(request.config.getoption("with_alternates"))
    row = validate_task(CATALOG, task_id, "process", run_mutants=False, jobs=2, run_alternates=with_alternates)
    row.mutants_total = sum(1 for task, _ in MUTANTS if task == task_id)
    record_property("validate", "\n".join(render_table([row])))  # the validate table row, in --junitxml output
    assert row.ok, "\n".join([*render_table([row]), *row.problems])
    assert row.reference_sr == 1.0
    assert len(alternates_of(CATALOG.load(task_id))) >= 2, f"{task_id} needs two alternates in oracles/{task_id}/alternates/"
    if with_alternates:
        assert len(row.alternates) >= 2 and all(sr == 1.0 for sr in row.alternates.values()), row.alternates
    assert row.mutants_total >= 6, f"{task_id} needs at least 6 mutants in mutants.yaml"


@pytest.mark.slow
def test_mutant_is_caught(task_id: str, mutant_name: str, shared_cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BACKENDBENCH_CACHE", str(shared_cache))
    task = CATALOG.load(task_id)
    mutant = next(m for m in load_mutants(task) if m.name == mutant_name)
    problem = judge_mutant(CATALOG, task, mutant, "process", tmp_path)
    assert problem is None, problem
