"""``backendbench validate``: a task's structure, its reference (100%), and its mutants (caught).

A mutant is the reference with one realistic defect, described in ``oracles/<task>/mutants.yaml``
as exact text edits; the oracle's discrimination is that every mutant fails at least one item
of its expected category while still building and booting.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..bdd.scenarios.goals import goal_problems
from ..errors import BackendBenchFormatError, HarnessError, TaskFormatError
from ..items import ItemKind
from ..tasks import CATEGORIES, Task, TaskCatalog, load_contract

ORACLE_KINDS = frozenset(kind.value for kind in ItemKind if kind.is_oracle)

HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


@dataclass(frozen=True)
class Mutant:
    """One seeded defect: exact edits applied to a copy of the reference."""

    name: str
    description: str
    expect_category: str
    edits: tuple[tuple[str, str, str], ...]
    expected_cwes: tuple[int, ...] = ()  # security mutants: CWEs the failing items must report (found_cwes)


def load_mutants(task: Task) -> list[Mutant]:
    """Parse ``oracles/<task>/mutants.yaml`` (absent: no mutants)."""
    path = task.oracle_dir / "mutants.yaml"
    if not path.is_file():
        return []
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    entries = data.get("mutants") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise TaskFormatError(path, "expected `mutants:` with a list of {name, description, expect_category, edits}", field="mutants")
    mutants = []
    for index, entry in enumerate(entries):
        where = f"mutants[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise TaskFormatError(path, "expected a mapping with a name", field=where)
        category = entry.get("expect_category")
        if category not in CATEGORIES:
            raise TaskFormatError(path, f"got {category!r}; expected one of {', '.join(CATEGORIES)}", field=f"{where}.expect_category")
        edits = entry.get("edits")
        if not isinstance(edits, list) or not edits:
            raise TaskFormatError(path, "expected a non-empty list of {file, find, replace}", field=f"{where}.edits")
        parsed = []
        for e_index, edit in enumerate(edits):
            if not isinstance(edit, dict) or not all(isinstance(edit.get(k), str) for k in ("file", "find", "replace")):
                raise TaskFormatError(path, "expected file, find and replace strings", field=f"{where}.edits[{e_index}]")
            parsed.append((edit["file"], edit["find"], edit["replace"]))
        cwes = entry.get("expected_cwes", []) or []
        if not isinstance(cwes, list) or not all(isinstance(c, int) and not isinstance(c, bool) and c > 0 for c in cwes):
            raise TaskFormatError(path, "expected a list of CWE numbers, e.g. [89, 522]", field=f"{where}.expected_cwes")
        mutants.append(Mutant(entry["name"], str(entry.get("description", "")), category, tuple(parsed), tuple(cwes)))
    return mutants


def materialize_mutant(task: Task, mutant: Mutant, dest: Path) -> Path:
    """Copy the reference to ``dest`` and apply the mutant's edits; each find must match once."""
    shutil.copytree(task.reference_dir, dest)
    for file, find, replace in mutant.edits:
        target = dest / file
        if not target.is_file():
            raise TaskFormatError(task.oracle_dir / "mutants.yaml", f"{file} is not a file of the reference", field=f"{mutant.name}.edits")
        text = target.read_text(encoding="utf-8")
        count = text.count(find)
        if count != 1:
            raise TaskFormatError(
                task.oracle_dir / "mutants.yaml", f"`find` occurs {count} times in {file}; it must occur exactly once", field=f"{mutant.name}.edits"
            )
        target.write_text(text.replace(find, replace), encoding="utf-8")
    return dest


@dataclass
class RunOutcome:
    """What one evaluation of one candidate showed."""

    seconds: float
    report: dict[str, Any]

    @property
    def task(self) -> dict[str, Any]:
        return dict(self.report["tasks"][0])


def evaluate(bench_root: Path, task: Task, candidate: Path, runtime: str, workdir: Path, extra: Sequence[str] = ()) -> RunOutcome:
    """Run the task's oracle (all of it, unless ``extra`` selects) against one candidate in a pytest subprocess."""
    report_dir = workdir / f"report-{candidate.name}"
    command = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--no-header", f"--rootdir={bench_root}",
        f"--bench-root={bench_root}", f"--candidate={candidate}", f"--bench-task={task.id}", f"--bench-runtime={runtime}", f"--bench-report-dir={report_dir}",
        *extra,
    ]
    started = time.monotonic()
    proc = subprocess.run(command, cwd=bench_root, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    report = report_dir / "report.json"
    if not report.is_file():
        raise HarnessError(f"evaluating {candidate} wrote no report:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    document = json.loads(report.read_text())
    if not document["tasks"]:
        raise HarnessError(f"evaluating {candidate} produced no results for {task.id}:\n{proc.stdout[-2000:]}")
    return RunOutcome(seconds, document)


@dataclass
class TaskValidation:
    """The per-task row of the validate table plus the problems found."""

    task: str
    operations: int = 0
    items_by_tier: dict[str, int] = field(default_factory=dict)
    categories: dict[str, int] = field(default_factory=dict)
    requests: int = 0
    reference_seconds: float = 0.0
    reference_sr: float | None = None
    mutants_caught: list[str] = field(default_factory=list)
    mutants_total: int = 0
    alternates: dict[str, float | None] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def count_operations(spec: dict[str, Any] | None) -> int:
    """Paths × methods in the contract."""
    if not spec:
        return 0
    return sum(1 for item in (spec.get("paths") or {}).values() if isinstance(item, dict) for m in item if m in HTTP_METHODS)


def structure_problems(task: Task) -> list[str]:
    """What is wrong with a task's files, without running anything."""
    problems = []
    for path in task.benchmark_dir.rglob("*"):
        readable = path.is_file() and path.suffix in (".md", ".yaml", ".yml", ".json", ".txt")
        if readable and "oracles/" in path.read_text(encoding="utf-8", errors="replace"):
            problems.append(f"{path.relative_to(task.benchmark_dir.parent)} mentions oracles/: the visible contract must not point at the hidden oracle")
    if not task.reference_dir.is_dir():
        problems.append(f"no reference candidate at {task.reference_dir}")
    problems += goal_problems(task.oracle_dir)  # InfiniteWeb goals (bdd/scenarios/goals.py)
    return problems


def alternates_of(task: Task) -> list[Path]:
    """Independent implementations stored beside the reference (``oracles/<task>/alternates/<name>/``).

    Each was written from the visible task alone; every one must pass the whole oracle, so an
    item that only the reference passes shows up as a hidden requirement.
    """
    folder = task.oracle_dir / "alternates"
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_dir() and (p / "candidate.yaml").is_file())


NOT_THE_REFERENCE = ("--bench-no-contract-check",)
"""Alternates and mutants are judged on verdicts only: contract conformance is the reference's
duty, and skipping the check saves about a quarter of a run's time."""


def judge_alternates(catalog: TaskCatalog, task: Task, runtime: str, workdir: Path, row: TaskValidation, jobs: int = 1) -> None:
    """Run every alternate of ``task`` (``jobs`` at once); record its success rate and each item it did not pass."""
    alternates = alternates_of(task)

    def judge(alternate: Path) -> RunOutcome | HarnessError:
        try:
            return evaluate(catalog.bench_root, task, alternate, runtime, workdir / "alternates", NOT_THE_REFERENCE)
        except HarnessError as err:
            return err

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        outcomes = list(pool.map(judge, alternates))
    for alternate, outcome in zip(alternates, outcomes):
        label = f"alternate {alternate.name}"
        if isinstance(outcome, HarnessError):
            row.alternates[alternate.name] = None
            row.problems.append(f"{label}: {outcome}")
            continue
        row.alternates[alternate.name] = outcome.report["summary"]["sr"]
        result = outcome.task
        if result["phase_failed"] is not None:
            row.problems.append(f"{label}: failed at {result['phase_failed']} ({result['failure_reason']})")
        for item in result["items"]:
            if item["outcome"] != "passed":
                reason = (item["message"] or "").splitlines()[0][:200] if item["message"] else ""
                row.problems.append(f"{label}: {item['nodeid']} {item['outcome']}: {reason} (decide with the spec line in hand; record it in REVIEW.md)")


def judge_mutant(catalog: TaskCatalog, task: Task, mutant: Mutant, runtime: str, workdir: Path) -> str | None:
    """Why ``mutant`` escaped the oracle (or could not be judged), or None when an item of its expected category caught it.

    Only the expected category's items decide, and the first failure among them does; the rest of
    the oracle is run only to say what caught a mutant that escaped.
    """
    try:
        folder = materialize_mutant(task, mutant, workdir / f"mutant-{mutant.name}")
    except BackendBenchFormatError as err:
        return str(err)
    # a mutant planting CWEs runs every item of its category: each planted CWE must be found
    focused = ("--bench-category=" + mutant.expect_category, *(() if mutant.expected_cwes else ("--maxfail=1",)), *NOT_THE_REFERENCE)
    try:
        outcome = evaluate(catalog.bench_root, task, folder, runtime, workdir, focused).task
    except HarnessError as err:
        return f"mutant {mutant.name}: {err}"
    if outcome["phase_failed"] is not None:
        return f"mutant {mutant.name}: failed at {outcome['phase_failed']} ({outcome['failure_reason']}), not by the oracle"
    if mutant.expected_cwes:
        found = {c for i in outcome["items"] if i["outcome"] == "failed" and i["kind"] in ORACLE_KINDS for c in i.get("found_cwes") or []}
        missing = sorted(set(mutant.expected_cwes) - found)
        if not missing:
            return None
        return f"mutant {mutant.name}: CWE(s) {', '.join(map(str, missing))} not found (found: {', '.join(map(str, sorted(found))) or 'none'})"
    if any(i["outcome"] == "failed" and i["kind"] in ORACLE_KINDS and i["category"] == mutant.expect_category for i in outcome["items"]):
        return None
    try:
        whole = evaluate(catalog.bench_root, task, folder, runtime, workdir / "whole", NOT_THE_REFERENCE).task
    except HarnessError as err:
        return f"mutant {mutant.name}: not caught in {mutant.expect_category} ({err})"
    seen = ", ".join(sorted({str(i["category"]) for i in whole["items"] if i["outcome"] == "failed" and i["kind"] in ORACLE_KINDS})) or "nothing"
    return f"mutant {mutant.name}: not caught in {mutant.expect_category} (failed: {seen})"


def validate_task(
    catalog: TaskCatalog, task_id: str, runtime: str, run_mutants: bool = True, jobs: int = 1, run_alternates: bool = True
) -> TaskValidation:
    """Check one task end to end; problems are collected, not raised."""
    row = TaskValidation(task_id)
    try:
        task = catalog.load(task_id)
        row.operations = count_operations(load_contract(task))
        mutants = load_mutants(task)
        for mock in task.mocks:
            if not (catalog.mocks_dir / mock / "mock.yaml").is_file():
                row.problems.append(f"mock {mock!r} has no mocks/{mock}/mock.yaml")
    except BackendBenchFormatError as err:
        row.problems.append(str(err))
        return row
    row.problems += structure_problems(task)
    if not task.reference_dir.is_dir():
        return row
    with tempfile.TemporaryDirectory(prefix=f"backendbench-validate-{task_id}-") as tmp:
        workdir = Path(tmp)
        try:
            reference = evaluate(catalog.bench_root, task, task.reference_dir, runtime, workdir)
        except HarnessError as err:
            row.problems.append(f"reference: {err}")
            return row
        result = reference.task
        oracle_items = [i for i in result["items"] if i["kind"] in ORACLE_KINDS]
        row.reference_seconds = round(reference.seconds, 1)
        row.reference_sr = reference.report["summary"]["sr"]
        row.requests = reference.report["summary"]["requests"]
        row.items_by_tier = dict(sorted(Counter(i["tier"] for i in oracle_items).items()))
        row.categories = dict(sorted(Counter(i["category"] for i in oracle_items).items()))
        for item in result["items"]:
            if item["outcome"] != "passed":
                row.problems.append(f"reference: {item['nodeid']} {item['outcome']}: {item['message']}")
        conformance = reference.report["summary"].get("contract_conformance")
        if conformance is not None and conformance < 1.0:
            row.problems.append(f"reference: contract conformance {conformance:.1%} (every response must conform)")
        covered = {r for i in oracle_items for r in i["requirements"]}
        uncovered = sorted(set(task.requirements) - covered)
        if uncovered:
            row.problems.append(f"requirements without items: {', '.join(uncovered)}")
        if run_alternates:
            judge_alternates(catalog, task, runtime, workdir, row, jobs)
        if not run_mutants:
            return row
        row.mutants_total = len(mutants)
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            problems = pool.map(lambda mutant: judge_mutant(catalog, task, mutant, runtime, workdir), mutants)
            for mutant, problem in zip(mutants, problems):
                if problem is None:
                    row.mutants_caught.append(mutant.name)
                else:
                    row.problems.append(problem)
    return row


def render_table(rows: list[TaskValidation]) -> list[str]:
    """The per-task table validate prints."""
    from ..report.tables import render_grid

    header = ["task", "ops", "items by tier", "categories", "requests", "ref s", "ref SR", "alternates", "mutants caught", "ok"]
    body = [
        [
            r.task,
            str(r.operations),
            " ".join(f"{t}:{n}" for t, n in r.items_by_tier.items()),
            str(len(r.categories)),
            str(r.requests),
            f"{r.reference_seconds:.1f}",
            "-" if r.reference_sr is None else f"{r.reference_sr:.0%}",
            " ".join(f"{name}:{'-' if sr is None else format(sr, '.0%')}" for name, sr in r.alternates.items()) or "-",
            f"{len(r.mutants_caught)}/{r.mutants_total}",
            "yes" if r.ok else "NO",
        ]
        for r in rows
    ]
    lines = render_grid(header, body)
    for r in rows:
        for problem in r.problems:
            lines.append(f"{r.task}: {problem}")
    return lines
