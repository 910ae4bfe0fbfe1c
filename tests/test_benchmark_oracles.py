"""The bundled benchmark's discrimination, as part of the test suite: for every task, its
reference passes 100% (with full contract conformance) and every mutant in mutants.yaml is
caught by at least one item of its expected category."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_backendbench.tasks import TaskCatalog
from pytest_backendbench.validate import render_table, validate_task

REPO = Path(__file__).resolve().parents[1]
CATALOG = TaskCatalog(REPO)


@pytest.mark.slow
@pytest.mark.parametrize("task_id", CATALOG.task_ids())
def test_reference_passes_and_every_mutant_is_caught(
    task_id: str, shared_cache: Path, monkeypatch: pytest.MonkeyPatch, record_property: Callable[[str, object], None]
) -> None:
    monkeypatch.setenv("BACKENDBENCH_CACHE", str(shared_cache))
    row = validate_task(CATALOG, task_id, "process")
    record_property("validate", "\n".join(render_table([row])))  # the validate table row, in --junitxml output
    assert row.ok, "\n".join(render_table([row]))
    assert row.reference_sr == 1.0
    assert row.mutants_total >= 4 and len(row.mutants_caught) == row.mutants_total
