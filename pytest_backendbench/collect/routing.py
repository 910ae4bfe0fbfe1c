"""Collection routing of a benchmark session: which files become which items, in which order.

Registered only when a bench is in use (plugin.py), so a project that merely has the plugin
installed collects exactly what it collected before. ``task.yaml`` becomes the build/boot/
smoke items (collect/phases.py), ``.feature`` files Gherkin scenarios (bdd/gherkin.py),
``db/*.yaml`` DB cases (db/checks/db_cases.py, routed by db/checks/dbcheck.py); Python oracle modules stay
ordinary test modules. The items the harness collects itself are ``items.BenchItem``s
that carry their kind and ``RunKey`` from construction; Python oracle functions get their
``RunKey`` here as they are collected, and every task item its xdist group.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from ..errors import BackendBenchFormatError, HarnessError
from ..items import ItemKind, item_kind
from ..markers import item_category, item_tier, marker_problem, ordered_tiers, tier_sort_key
from ..runkey import RUN_KEY, RunKey, run_key_of
from ..session import BenchSession, bench_session
from ..taskrun import TaskRunRegistry, registry_of
from .phases import TaskFile

MALFORMED_TASK_KEY = pytest.StashKey[str]()
"""Set on items whose task.yaml or contract is malformed: they end as errors, not failures."""
FRESH_AHEAD_KEY = pytest.StashKey[int]()
"""On items of ``isolation: item`` runs: how many later items of their chunk want a fresh service
(the boot item's count lets the warm pool start while the first of them runs on the booted service)."""
MIN_CHUNK_ITEMS = 4
"""A chunk of a spread run boots its first service in the foreground; fewer items would not pay for it."""
SKIPPED_PARTS = ("reference", "mutants", "steps", "candidates", "alternates")
"""Folders under oracles/<task>/ that hold code to run against, not oracle items."""


def malformed_problem(item: pytest.Item) -> str | None:
    """Why the item's task cannot run (``MALFORMED_TASK_KEY``, set at collection); None when it can."""
    return item.stash.get(MALFORMED_TASK_KEY, None)


def _session(config: pytest.Config) -> BenchSession:
    session = bench_session(config)
    if session is None:  # registered only with a session; a bug if reached without
        raise HarnessError("collection routing registered without a benchmark session")
    return session


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Skip unselected tasks (their task.yaml and oracles), reference/mutant code, step modules and mocks.

    Paths on the command line (``pytest --bench-task a .``) reach here too: a task that
    ``--bench-task`` left out is not collected, so none of its items exist to run or order.
    """
    session = _session(config)
    benchmarks = session.catalog.benchmarks_dir
    if collection_path.is_relative_to(benchmarks) and collection_path != benchmarks and collection_path.relative_to(benchmarks).parts[0] not in session.task_ids:
        return True
    oracles = session.catalog.oracles_dir
    if collection_path.is_relative_to(oracles) and collection_path != oracles:
        rel = collection_path.relative_to(oracles).parts
        if rel[0] not in session.task_ids:
            return True
        if len(rel) >= 2 and rel[1] in SKIPPED_PARTS:
            return True
        if len(rel) >= 3 and rel[1] == "features" and rel[2] == "steps":
            return True
    if collection_path.is_relative_to(session.catalog.mocks_dir):
        return True
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """task.yaml -> phase items; .feature under oracles/ -> Gherkin scenarios; oracles/<task>/db/*.yaml -> DB cases;
    oracles/<task>/judge/cases.yaml -> judge cases."""
    catalog = _session(parent.config).catalog
    if file_path.name == "task.yaml" and file_path.parent.parent == catalog.benchmarks_dir:
        return TaskFile.from_parent(parent, path=file_path)
    if file_path.suffix in (".yaml", ".yml") and file_path.parent.name == "db":
        from ..db.checks.db_cases import collect_db_case

        return collect_db_case(file_path, parent)
    if file_path.name == "cases.yaml" and file_path.parent.name == "judge":
        from ..judges.items import collect_judge_cases

        return collect_judge_cases(file_path, parent)
    if file_path.suffix == ".feature" and file_path.is_relative_to(catalog.oracles_dir):
        try:
            from ..bdd.gherkin import FeatureFile
        except ImportError as err:
            raise HarnessError(f"Gherkin scenarios need behave and selenium: {err}") from err
        return FeatureFile.from_parent(parent, path=file_path)  # type: ignore[no-any-return]
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> bool | None:
    """A run given no paths collects each selected task's task.yaml and oracle folder (not the
    testpaths): through ``Session.perform_collect``, leaving ``config.args`` as pytest set it.
    Paths on the command line are collected as given; an xdist controller collects nothing."""
    config = session.config
    if config.args_source == pytest.Config.ArgsSource.ARGS or config.pluginmanager.hasplugin("dsession"):
        return None
    session.perform_collect(_session(config).collection_args)
    return True


@pytest.hookimpl(wrapper=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> Generator[None, Any, Any]:
    """Python oracle items with malformed markers are a collection error of their module."""
    result = yield
    session = _session(collector.config)
    if result is None or not collector.path.is_relative_to(session.catalog.oracles_dir):
        return result
    task_id = session.catalog.task_of_path(collector.path)
    registry = registry_of(collector.config)
    try:
        known = registry.task(task_id).requirements if task_id else {}
    except BackendBenchFormatError:
        known = {}
    for item in result if isinstance(result, list) else [result]:
        if isinstance(item, pytest.Function):
            problem = marker_problem(item, known)
            if problem:
                raise collector.CollectError(f"{item.nodeid}: {problem}")
    return result


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One Python oracle item per candidate sample (and repetition)."""
    session = _session(metafunc.config)
    if not metafunc.definition.path.is_relative_to(session.catalog.oracles_dir):
        return
    task_id = session.catalog.task_of_path(metafunc.definition.path)
    if task_id is None:
        return
    samples = registry_of(metafunc.config).samples(task_id)
    if samples != [""] and "backendbench_sample" in metafunc.fixturenames:
        metafunc.parametrize("backendbench_sample", samples, ids=samples)


def pytest_itemcollected(item: pytest.Item) -> None:
    """Tie each task item to its candidate run as it is collected.

    The xdist group marker must exist before any plugin's modifyitems runs: xdist's worker
    turns it into the node id suffix that keeps a task's items on one worker.
    """
    session = _session(item.config)
    task_id = session.catalog.task_of_path(Path(item.path))
    if task_id is None or task_id not in session.task_ids:
        return
    registry = registry_of(item.config)
    problem = _task_problem(registry, task_id, session.task_problems)
    if problem is not None:
        item.stash[MALFORMED_TASK_KEY] = problem
        return
    key = run_key_of(item)
    if key is None:  # a Python oracle function: its run is its backendbench_sample parameter
        label = item.callspec.params.get("backendbench_sample") if isinstance(item, pytest.Function) and hasattr(item, "callspec") else None
        key = RunKey(task_id, str(label)) if label else registry.run_keys(task_id)[0]
        item.stash[RUN_KEY] = key
    if registry.task(task_id).isolation != "item":  # per-item runs are grouped once selected (group_per_item_runs)
        item.add_marker(pytest.mark.xdist_group(key.xdist_group))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Select by tier, --bench-category and --bench-resume, then order: task, run, build < boot < smoke < oracle items."""
    bench = _session(config)
    order = {task_id: index for index, task_id in enumerate(bench.task_ids)}
    tiers = ordered_tiers(item_tier(i) for i in items if item_kind(i).is_oracle)
    limit = bench.tier
    if limit != "final" and tiers and limit not in tiers and limit != "base":
        raise pytest.UsageError(f"--oracle-tier {limit!r}: the selected tasks have tiers {', '.join(tiers)} (or use final)")

    selected: list[pytest.Item] = []
    deselected: list[pytest.Item] = []
    error_nodeids = bench.error_nodeids if bench.rerun_errors else set()
    for item in items:
        key = run_key_of(item)
        if key is None:  # the harness's own tests, or a task that cannot run (marked at collection)
            selected.append(item)
            continue
        if key.task not in order:  # a task --bench-task left out, named by path on the command line
            deselected.append(item)
            continue
        previous = bench.previous.get(str(key))
        if bench.rerun_errors:
            keep = item.nodeid in error_nodeids
        else:
            keep = previous is None or not previous.finished
        if keep and item_kind(item).is_oracle and limit != "final" and tier_sort_key(item_tier(item)) > tier_sort_key(limit):
            keep = False
        if keep and bench.categories and item_kind(item).is_oracle and item_category(item) not in bench.categories:
            keep = False
        (selected if keep else deselected).append(item)

    def sort_key(item: pytest.Item) -> tuple[int, tuple[int, int], int]:
        key = run_key_of(item)
        if key is None:
            task_id = bench.catalog.task_of_path(Path(item.path))
            return (order.get(task_id, len(order)) if task_id else len(order), (0, 0), 0)
        return (order[key.task], key.order(), item_kind(item).order)

    selected.sort(key=sort_key)
    group_per_item_runs(selected, registry_of(config), getattr(config, "workerinput", {}).get("workercount", 1))
    if deselected:
        config.hook.pytest_deselected(items=deselected)
    items[:] = selected


def pytest_collection_finish(session: pytest.Session) -> None:
    """With Gherkin scenarios to run, launch the worker's browser now, in the background.

    Under xdist a worker that has collected waits for the slowest of its peers before it gets
    items; the launch (one to two seconds of Chromium start-up) overlaps that wait.
    """
    if session.config.option.collectonly or not any(item_kind(item) is ItemKind.BDD for item in session.items):
        return
    from ..bdd.gherkin import prestart_browser

    prestart_browser(session)


def group_per_item_runs(items: list[pytest.Item], registry: TaskRunRegistry, workers: int) -> None:
    """The xdist groups of ``isolation: item`` runs, and how many fresh services each item's run
    will want right after it (``fresh_items_ahead``: the warm pool boots that many ahead).

    Their items share no state, so when a session has too few runs to keep every worker busy
    (fewer than two per worker) a run is cut into consecutive chunks of at least
    ``MIN_CHUNK_ITEMS`` items, one xdist group each, which spread over the workers; each worker
    builds (or finds) the image and boots its own services. Runs of other tasks keep their one
    group (set at collection). Called from ``pytest_collection_modifyitems`` (tryfirst), before
    xdist's worker turns the markers into node id suffixes.
    """
    runs: dict[RunKey, list[pytest.Item]] = {}
    for item in items:
        key = run_key_of(item)
        if key is not None and malformed_problem(item) is None and registry.task(key.task).isolation == "item":
            runs.setdefault(key, []).append(item)
    for key, run_items in runs.items():
        wanted = -(-2 * workers // len(runs))  # chunks per run that give every worker two
        chunks = max(1, min(workers, wanted, len(run_items) // MIN_CHUNK_ITEMS))
        size = -(-len(run_items) // chunks)
        registry.run(key).spread_items = len(run_items) if chunks > 1 else 0
        for index in range(chunks):
            chunk = run_items[index * size : (index + 1) * size]
            group = key.xdist_group if chunks == 1 else key.chunk_group(index)
            fresh_after = sum(item_kind(item).needs_service for item in chunk)
            for item in chunk:
                item.add_marker(pytest.mark.xdist_group(group))
                fresh_after -= item_kind(item).needs_service
                item.stash[FRESH_AHEAD_KEY] = fresh_after


def fresh_items_ahead(item: pytest.Item) -> int | None:
    """How many items of the item's run come after it on its worker (in its chunk), each wanting
    a fresh service (``isolation: item``); None when not known."""
    return item.stash.get(FRESH_AHEAD_KEY, None)


def _task_problem(registry: TaskRunRegistry, task_id: str, checked: dict[str, str | None]) -> str | None:
    """Why a task cannot run at all (malformed task.yaml or contract), checked once per task."""
    if task_id not in checked:
        try:
            registry.contract(task_id)
            checked[task_id] = None
        except BackendBenchFormatError as err:
            checked[task_id] = str(err)
    return checked[task_id]
