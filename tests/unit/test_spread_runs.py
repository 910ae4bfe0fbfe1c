"""How the items of ``isolation: item`` runs are grouped for xdist (collect/routing.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest

from pytest_backendbench.collect.routing import MIN_CHUNK_ITEMS, fresh_items_ahead, group_per_item_runs
from pytest_backendbench.runkey import RUN_KEY, RunKey


@dataclass
class FakeRegistry:
    """The registry's two answers the grouping needs: a task's isolation and a run to mark."""

    isolation: dict[str, str]
    runs: dict[RunKey, SimpleNamespace] = field(default_factory=dict)

    def task(self, task_id: str) -> SimpleNamespace:
        return SimpleNamespace(isolation=self.isolation[task_id])

    def run(self, key: RunKey) -> SimpleNamespace:
        return self.runs.setdefault(key, SimpleNamespace(spread_items=0))


class FakeItem:
    """What the grouping touches of a Python oracle item: its stash and its markers."""

    def __init__(self) -> None:
        self.stash = pytest.Stash()
        self.own_markers: list[pytest.Mark] = []

    def add_marker(self, marker: pytest.MarkDecorator) -> None:
        self.own_markers.append(marker.mark)


def groups(items: list[FakeItem]) -> list[str | None]:
    return [item.own_markers[-1].args[0] if item.own_markers else None for item in items]


@pytest.fixture
def items() -> list[FakeItem]:
    made = [FakeItem() for _ in range(2 * MIN_CHUNK_ITEMS + 1)]
    for item in made[: 2 * MIN_CHUNK_ITEMS]:
        item.stash[RUN_KEY] = RunKey("bax", "sample-1")
    made[-1].stash[RUN_KEY] = RunKey("notes")
    return made


def test_a_lone_per_item_run_spreads_over_the_workers_in_chunks(items: list[FakeItem]) -> None:
    registry = FakeRegistry({"bax": "item", "notes": "task"})
    group_per_item_runs(items, registry, workers=2)  # type: ignore[arg-type]
    key = RunKey("bax", "sample-1")
    assert groups(items[:8]) == [key.chunk_group(0)] * 4 + [key.chunk_group(1)] * 4
    assert groups(items[8:]) == [None], "a run with state (isolation: task) keeps the group collection gave it"
    assert registry.runs[key].spread_items == 8
    assert [fresh_items_ahead(item) for item in items[:8]] == [3, 2, 1, 0, 3, 2, 1, 0], "each chunk counts the items after it"  # type: ignore[arg-type]
    items[7].stash[RUN_KEY] = RunKey("bax", "sample-1")
    registry.runs.clear()
    fewer = items[:7]
    for item in fewer:
        item.own_markers.clear()
    group_per_item_runs(fewer, registry, workers=2)  # type: ignore[arg-type]
    assert groups(fewer) == [key.xdist_group] * 7, f"fewer than {2 * MIN_CHUNK_ITEMS} items: not worth a second boot"
    assert key.plain_nodeid(f"a.py::t[x]@{key.chunk_group(1)}") == "a.py::t[x]" and key.plain_nodeid("a.py::t@other") == "a.py::t@other"


def test_per_item_runs_stay_whole_when_there_are_enough_runs_for_the_workers(items: list[FakeItem]) -> None:
    for index, item in enumerate(items):
        item.stash[RUN_KEY] = RunKey("bax", f"sample-{index % 4}")
    registry = FakeRegistry({"bax": "item"})
    group_per_item_runs(items, registry, workers=2)  # type: ignore[arg-type]
    assert groups(items) == [RunKey("bax", f"sample-{index % 4}").xdist_group for index in range(len(items))]
    assert all(run.spread_items == 0 for run in registry.runs.values())
