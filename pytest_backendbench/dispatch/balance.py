"""Shards balanced by recorded durations: each task's last known wall time decides its shard.

A task's duration is the sum of its items' durations (build, boot and oracle items) in a
report; ``durations.json`` keeps the latest value per task id. With durations, tasks are
assigned greedily longest-first to the least loaded shard (ties broken by task id, so the
split is deterministic for a given file); without any, every N-th task of the sorted ids.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..errors import HarnessError

DURATIONS_NAME = "durations.json"
DURATIONS_VERSION = 1


def split_by_id(task_ids: Iterable[str], count: int) -> list[list[str]]:
    """The fallback: shard k holds every N-th task of the sorted ids."""
    shards: list[list[str]] = [[] for _ in range(count)]
    for position, task_id in enumerate(sorted(set(task_ids))):
        shards[position % count].append(task_id)
    return shards


def split_by_duration(task_ids: Iterable[str], count: int, durations: Mapping[str, float]) -> list[list[str]]:
    """Greedy longest-first: each task, longest first, goes to the shard with the least work.

    Tasks without a recorded duration weigh the median of the known ones, so a new task
    neither lands everywhere nor nowhere. Within a shard the tasks keep id order.
    """
    ids = sorted(set(task_ids))
    known = [durations[t] for t in ids if t in durations]
    if not known:
        return split_by_id(ids, count)
    fill = statistics.median(known)
    weight = {t: float(durations.get(t, fill)) for t in ids}
    loads = [0.0] * count
    shards: list[list[str]] = [[] for _ in range(count)]
    for task_id in sorted(ids, key=lambda t: (-weight[t], t)):
        target = min(range(count), key=lambda k: (loads[k], k))
        shards[target].append(task_id)
        loads[target] += weight[task_id]
    return [sorted(s) for s in shards]


def shard_tasks(task_ids: Iterable[str], index: int, count: int, durations: Mapping[str, float] | None = None) -> list[str]:
    """The tasks of shard ``index`` (1-based) of ``count``."""
    shards = split_by_duration(task_ids, count, durations) if durations else split_by_id(task_ids, count)
    return shards[index - 1]


def expected_wall(shards: list[list[str]], durations: Mapping[str, float]) -> list[float]:
    """Each shard's expected wall time (tasks without a duration count 0)."""
    return [sum(durations.get(t, 0.0) for t in shard) for shard in shards]


def load_durations(path: Path) -> dict[str, float]:
    """Durations per task from a durations.json, a report.json or a report folder."""
    if path.is_dir():
        for name in (DURATIONS_NAME, "report.json"):
            if (path / name).is_file():
                path = path / name
                break
    if not path.is_file():
        raise HarnessError(f"{path}: no durations.json or report.json to read task durations from")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise HarnessError(f"{path}: not a readable JSON file ({err}); pass a durations.json or report.json") from err
    if isinstance(document, dict) and "tasks" in document and isinstance(document["tasks"], list):
        return durations_from_report(document)
    if isinstance(document, dict) and isinstance(document.get("durations"), dict):
        values = document["durations"]
        bad = [k for k, v in values.items() if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0]
        if bad:
            raise HarnessError(f"{path}: durations of {', '.join(sorted(bad))} are not non-negative numbers of seconds")
        return {str(k): float(v) for k, v in values.items()}
    raise HarnessError(f"{path}: expected a durations.json ({{\"durations\": {{task: seconds}}}}) or a report.json")


def durations_from_report(document: Mapping[str, object]) -> dict[str, float]:
    """Wall time per task id in a report: its items' durations summed over samples and repeats."""
    totals: dict[str, float] = {}
    tasks = document.get("tasks")
    for task in tasks if isinstance(tasks, list) else []:
        items = task.get("items", [])
        seconds = sum(float(i.get("duration") or 0.0) for i in items)
        totals[str(task["task"])] = totals.get(str(task["task"]), 0.0) + seconds
    return {k: round(v, 3) for k, v in totals.items()}


def write_durations(path: Path, durations: Mapping[str, float], previous: Mapping[str, float] | None = None) -> None:
    """Write durations.json: the new values over the previous ones (tasks not run keep theirs)."""
    merged = {**(previous or {}), **durations}
    data = {"version": DURATIONS_VERSION, "durations": {k: merged[k] for k in sorted(merged)}}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
