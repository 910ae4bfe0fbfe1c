"""The incremental journal: one JSON line per finished item and task, flushed as they end.

An interrupted or killed run keeps every finished task here; ``--bench-resume`` reads it back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any

from ..errors import HarnessError
from ..results import ItemResult, TaskResult

JOURNAL_NAME = "journal.jsonl"


class Journal:
    """Appends result lines to ``<report-dir>/journal.jsonl`` (truncated at session start)."""

    def __init__(self, report_dir: Path) -> None:
        report_dir.mkdir(parents=True, exist_ok=True)
        self.path = report_dir / JOURNAL_NAME
        self._handle: IO[str] | None = self.path.open("w", encoding="utf-8")

    def _write(self, record: dict[str, Any]) -> None:
        if self._handle is None:
            return
        self._handle.write(json.dumps(record, sort_keys=True) + "\n")
        self._handle.flush()

    def item(self, result: ItemResult) -> None:
        """Record one finished item."""
        self._write({"type": "item", **result.to_dict()})

    def task(self, result: TaskResult) -> None:
        """Record a finished task's phase data (its items were written as they ended)."""
        data = result.to_dict()
        data.pop("items")
        self._write({"type": "task", **data})

    def close(self) -> None:
        """Close the file; later writes are ignored."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def load_results(path: Path) -> list[TaskResult]:
    """Task results from a report dir, report.json or journal.jsonl (for --bench-resume)."""
    from .json_report import REPORT_NAME, load_report

    if path.is_dir():
        report = path / REPORT_NAME
        path = report if report.is_file() else path / JOURNAL_NAME
    if path.name.endswith(".json"):
        return [TaskResult.from_dict(t) for t in load_report(path)["tasks"]]
    if not path.is_file():
        raise HarnessError(f"{path}: no report or journal to resume from")
    tasks: dict[str, TaskResult] = {}
    items: dict[str, list[ItemResult]] = {}
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):
                break  # the last line of a killed run may be cut short
            raise HarnessError(f"{path}:{number}: not a JSON line") from None
        kind = record.pop("type", None)
        if kind == "item":
            item = ItemResult.from_dict(record)
            items.setdefault(item.candidate, []).append(item)
        elif kind == "task":
            result = TaskResult.from_dict(record)
            tasks[result.candidate] = result
    for key, result in tasks.items():
        result.items = items.get(key, [])
    return list(tasks.values())
