"""Two runs' report.json compared item by item: the same items with the same verdicts, or the differences.

For a change that must not move a verdict (a faster harness, a different scheduling): run the
same candidates before and after, then

    python bench/report_items_equal.py before/report.json after/report.json

Each item is keyed by (candidate, node id) and compared on outcome, request count, contract
checks, category, tier, db_valid and the database effects it saw (op, table, count); each
candidate on its phase failure and success. Durations are not compared. Exit 0 when equal,
1 with one line per difference otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ITEM_FIELDS = ("outcome", "requests", "contract_checked", "category", "tier", "kind", "db_valid")
TASK_FIELDS = ("phase_failed",)


def load(path: Path) -> dict[str, Any]:
    """A report.json, or the one inside a report folder."""
    if path.is_dir():
        path = path / "report.json"
    return json.loads(path.read_text(encoding="utf-8"))


def item_view(item: dict[str, Any]) -> dict[str, Any]:
    """What must not change for one item."""
    view = {name: item.get(name) for name in ITEM_FIELDS}
    view["db_effects"] = sorted((e.get("op"), e.get("table"), e.get("count"), bool(e.get("expected"))) for e in item.get("db_effects") or [])
    return view


def items_of(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(candidate, node id) -> the item's comparable fields."""
    return {(task["candidate"], item["nodeid"]): item_view(item) for task in report["tasks"] for item in task["items"]}


def tasks_of(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """candidate -> its phase failure and success."""
    return {
        task["candidate"]: {**{name: task.get(name) for name in TASK_FIELDS}, "success": (task.get("metrics") or {}).get("success")}
        for task in report["tasks"]
    }


def differences(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """One readable line per item or candidate that differs."""
    lines = []
    items_a, items_b = items_of(before), items_of(after)
    for key in sorted(items_a.keys() - items_b.keys()):
        lines.append(f"only before: {key[0]} {key[1]}")
    for key in sorted(items_b.keys() - items_a.keys()):
        lines.append(f"only after: {key[0]} {key[1]}")
    for key in sorted(items_a.keys() & items_b.keys()):
        a, b = items_a[key], items_b[key]
        for name in a:
            if a[name] != b[name]:
                lines.append(f"{key[0]} {key[1]}: {name} {a[name]!r} -> {b[name]!r}")
    tasks_a, tasks_b = tasks_of(before), tasks_of(after)
    for candidate in sorted(tasks_a.keys() ^ tasks_b.keys()):
        lines.append(f"candidate in one run only: {candidate}")
    for candidate in sorted(tasks_a.keys() & tasks_b.keys()):
        for name, value in tasks_a[candidate].items():
            if tasks_b[candidate][name] != value:
                lines.append(f"{candidate}: {name} {value!r} -> {tasks_b[candidate][name]!r}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="report.json (or its folder) of the run before")
    parser.add_argument("after", type=Path, help="report.json (or its folder) of the run after")
    args = parser.parse_args()
    before, after = load(args.before), load(args.after)
    found = differences(before, after)
    count_a = sum(len(t["items"]) for t in before["tasks"])
    count_b = sum(len(t["items"]) for t in after["tasks"])
    print(f"before: {len(before['tasks'])} candidates, {count_a} items; after: {len(after['tasks'])} candidates, {count_b} items")
    if found:
        print(f"{len(found)} difference(s):")
        for line in found:
            print(f"  {line}")
        return 1
    print(f"equal item by item ({', '.join(ITEM_FIELDS)}, db_effects) and per candidate ({', '.join(TASK_FIELDS)}, success)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
