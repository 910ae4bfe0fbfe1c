"""Suspect items: the list a maintainer reviews before publishing a leaderboard.

An oracle item that fails for most candidates while the other items of its requirement pass
for those same candidates is more likely a hidden requirement (or a broken item) than a rule
every model got wrong. Over several runs (models, samples, alternates), each item gets its
pass rate and, over the runs where it failed, how its requirement's other items fared; the
items with a low pass rate and high sibling rate are listed, worst first.

Runs whose build or boot failed are left out (every item fails there for one reason), and
errored or skipped items are not counted either way: an error is a harness fault, never a
candidate's failure.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import HarnessError
from ..items import ItemKind
from ..runkey import RunKey
from .json_report import load_report

ORACLE_KINDS = frozenset(kind.value for kind in ItemKind if kind.is_oracle)
"""Item kinds an oracle author wrote; build, boot and smoke items are the harness's."""


@dataclass(frozen=True)
class SuspectThresholds:
    """When an item is a suspect: it passes at most ``max_pass_rate`` of the runs it was judged in,
    at least ``min_runs`` runs judged it, and in the runs where it failed its requirement's
    other items passed at least ``min_sibling_rate`` of the time."""

    max_pass_rate: float = 0.5
    min_sibling_rate: float = 0.8
    min_runs: int = 2

    def __post_init__(self) -> None:
        for name in ("max_pass_rate", "min_sibling_rate"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise HarnessError(f"report suspects: {name.replace('_', '-')} must be between 0 and 1, got {value}")
        if self.min_runs < 1:
            raise HarnessError(f"report suspects: min-runs must be at least 1, got {self.min_runs}")


@dataclass
class ItemRecord:
    """One oracle item's verdicts across the runs, keyed by run."""

    task: str
    item: str
    kind: str
    category: str | None
    requirements: tuple[str, ...]
    verdicts: dict[str, bool] = field(default_factory=dict)
    messages: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True)
class Suspect:
    """One listed item with the figures that put it on the list."""

    task: str
    item: str
    kind: str
    category: str | None
    requirements: list[str]
    runs: int
    passed: int
    pass_rate: float
    sibling_pass_rate: float
    siblings: int
    failing_runs: list[str]
    typical_message: str


def _item_key(item: dict[str, Any], task: dict[str, Any]) -> str:
    """The item's identity across runs: its node id without the run's own sample or label parts."""
    nodeid = str(item["nodeid"])
    for label in {str(task.get("candidate") or ""), str(task.get("task") or "")} - {""}:
        if nodeid.endswith("@" + label):
            nodeid = nodeid[: -len(label) - 1]
    sample = str(task.get("sample") or "")
    if sample:
        match = re.search(r"\[([^\[\]]*)\]$", nodeid)
        if match:
            parts = [p for p in match.group(1).split("-") if p]
            sample_parts = sample.split("-")
            # parametrize joins ids with "-": drop the sample's own parts wherever they sit
            for i in range(len(parts) - len(sample_parts) + 1):
                if parts[i : i + len(sample_parts)] == sample_parts:
                    parts = parts[:i] + parts[i + len(sample_parts) :]
                    break
            nodeid = nodeid[: match.start()] + (f"[{'-'.join(parts)}]" if parts else "")
    return nodeid


def _run_label(path: Path, task: dict[str, Any]) -> str:
    """Which candidate run a task entry is: report, candidate, sample and repeat."""
    where = path.name if path.is_dir() else path.parent.name
    return f"{where}:{RunKey.of(str(task['task']), str(task.get('sample') or ''), int(task.get('repeat') or 0))}"


def collect_records(paths: list[Path]) -> tuple[dict[tuple[str, str], ItemRecord], int]:
    """Every oracle item's verdict in every judged run; also how many runs were left out."""
    if not paths:
        raise HarnessError("report suspects needs at least one report (a report folder or its report.json)")
    records: dict[tuple[str, str], ItemRecord] = {}
    skipped_runs = 0
    seen_runs: set[str] = set()
    for path in paths:
        document = load_report(path)
        for task in document["tasks"]:
            run = _run_label(path, task)
            if run in seen_runs:
                raise HarnessError(f"{path}: run {run!r} appears twice; give each report its own folder name")
            seen_runs.add(run)
            if task.get("phase_failed"):
                skipped_runs += 1
                continue
            for item in task["items"]:
                if item.get("kind") not in ORACLE_KINDS or item.get("outcome") not in ("passed", "failed"):
                    continue
                key = (str(task["task"]), _item_key(item, task))
                record = records.get(key)
                if record is None:
                    record = records[key] = ItemRecord(
                        task=key[0], item=key[1], kind=str(item["kind"]), category=item.get("category"),
                        requirements=tuple(sorted(item.get("requirements") or ())),
                    )
                passed = item["outcome"] == "passed"
                record.verdicts[run] = passed
                if not passed and item.get("message"):
                    record.messages[str(item["message"]).strip().splitlines()[0][:200]] += 1
    return records, skipped_runs


def find_suspects(records: dict[tuple[str, str], ItemRecord], thresholds: SuspectThresholds) -> list[Suspect]:
    """The items that fail for most runs while their requirement's other items pass, worst first."""
    by_requirement: dict[tuple[str, str], list[ItemRecord]] = defaultdict(list)
    by_task: dict[str, list[ItemRecord]] = defaultdict(list)
    for record in records.values():
        by_task[record.task].append(record)
        for requirement in record.requirements:
            by_requirement[(record.task, requirement)].append(record)
    suspects = []
    for record in records.values():
        runs = len(record.verdicts)
        passed = sum(record.verdicts.values())
        if runs < thresholds.min_runs or passed / runs > thresholds.max_pass_rate:
            continue
        if record.requirements:
            siblings = {id(r): r for req in record.requirements for r in by_requirement[(record.task, req)] if r is not record}
        else:  # an item without a requirement is compared with the rest of its task
            siblings = {id(r): r for r in by_task[record.task] if r is not record}
        failing = [run for run, ok in record.verdicts.items() if not ok]
        sibling_verdicts = [s.verdicts[run] for run in failing for s in siblings.values() if run in s.verdicts]
        if not sibling_verdicts:
            continue  # nothing to compare with: not evidence either way
        sibling_rate = sum(sibling_verdicts) / len(sibling_verdicts)
        if sibling_rate < thresholds.min_sibling_rate:
            continue
        message = record.messages.most_common(1)[0][0] if record.messages else ""
        suspects.append(
            Suspect(
                task=record.task, item=record.item, kind=record.kind, category=record.category,
                requirements=list(record.requirements), runs=runs, passed=passed, pass_rate=passed / runs,
                sibling_pass_rate=sibling_rate, siblings=len(siblings), failing_runs=sorted(failing), typical_message=message,
            )
        )
    suspects.sort(key=lambda s: (s.pass_rate, -s.sibling_pass_rate, -s.runs, s.task, s.item))
    return suspects


def suspects_document(paths: list[Path], thresholds: SuspectThresholds) -> dict[str, Any]:
    """The suspects of several reports, with what was read and the thresholds used (JSON-ready)."""
    records, skipped_runs = collect_records(paths)
    runs = {run for record in records.values() for run in record.verdicts}
    return {
        "reports": [str(p) for p in paths],
        "runs": len(runs),
        "runs_left_out": skipped_runs,
        "items": len(records),
        "thresholds": asdict(thresholds),
        "suspects": [asdict(s) for s in find_suspects(records, thresholds)],
    }


def suspects_markdown(document: dict[str, Any]) -> str:
    """The suspects as a Markdown table, with one line saying how they were chosen."""
    t = document["thresholds"]
    lines = [
        "# Suspect items",
        "",
        (f"{document['items']} oracle items over {document['runs']} judged runs"
        f" ({document['runs_left_out']} runs left out: build or boot failed)."
        f" Listed: pass rate <= {t['max_pass_rate']:.0%} over >= {t['min_runs']} runs, while the other items of"
        f" their requirement passed >= {t['min_sibling_rate']:.0%} in the runs where they failed."),
        "",
    ]
    suspects = document["suspects"]
    if not suspects:
        lines.append("No suspect items.")
        return "\n".join(lines) + "\n"
    lines += [
        "| task | item | requirements | category | pass rate | runs | siblings pass | typical failure |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in suspects:
        message = s["typical_message"].replace("|", "\\|")
        lines.append(
            f"| {s['task']} | `{s['item']}` | {', '.join(s['requirements']) or '-'} | {s['category'] or '-'}"
            f" | {s['pass_rate']:.0%} ({s['passed']}/{s['runs']}) | {s['runs']} | {s['sibling_pass_rate']:.0%} | {message} |"
        )
    return "\n".join(lines) + "\n"
