"""Spread across runs: mean ± standard deviation over repeats and over samples.

E2EDev and InfiniteWeb report each figure as the mean ± std over three runs. A run here is
one repeat index (``--bench-repeat``) or one sample index (``--bench-samples``): the figure is
computed over all tasks within it, then mean and sample std (n - 1) taken across them. Per
task the same is done over the task's candidates.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from statistics import mean, stdev
from typing import Any

from ..markers import ordered_tiers
from ..results import TaskResult
from .backendforge import success_at
from .e2edev import project_scores
from .records import by_task, macro


def mean_std(values: list[float]) -> dict[str, float | int] | None:
    """{"mean", "std", "n"}; std is 0 for a single value."""
    if not values:
        return None
    return {"mean": mean(values), "std": stdev(values) if len(values) > 1 else 0.0, "n": len(values)}


def _final_success(result: TaskResult) -> float:
    tiers = ordered_tiers(i.tier for i in result.items if i.is_oracle)
    return float(success_at(result, tiers[-1])) if tiers else 0.0


FIGURES: dict[str, Callable[[TaskResult], float | None]] = {
    "sr": _final_success,
    "test_acc": lambda r: project_scores(r)["test_acc"],
    "req_acc": lambda r: project_scores(r)["req_acc"],
}


def _across(results: list[TaskResult], key: Callable[[TaskResult], Any]) -> dict[str, Any] | None:
    groups: dict[Any, list[TaskResult]] = defaultdict(list)
    for result in results:
        groups[key(result)].append(result)
    if len(groups) < 2:
        return None
    out: dict[str, Any] = {}
    for name, figure in FIGURES.items():
        per_run = [macro([figure(r) for r in rs] for rs in by_task(group).values()) for group in groups.values()]
        out[name] = mean_std([v for v in per_run if v is not None])
    return out


def spread(results: list[TaskResult]) -> dict[str, Any]:
    """Mean ± std over repeats and over samples (None when there is only one), and per task."""
    per_task: dict[str, Any] = {}
    for task, rs in by_task(results).items():
        if len(rs) > 1:
            per_task[task] = {
                name: mean_std([v for v in (figure(r) for r in rs) if v is not None]) for name, figure in FIGURES.items()
            }
    return {
        "over_repeats": _across(results, lambda r: r.repeat),
        "over_samples": _across(results, lambda r: r.sample),
        "per_task": per_task,
    }
