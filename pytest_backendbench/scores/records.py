"""What every paper's formula reads from result records, defined once.

Denominators are fixed, as in the papers: every selected task, item and requirement counts,
and a harness error counts as "not passed". A skipped oracle item reaching the metrics is one
the task declared skippable (an undeclared skip is recorded as an error), so it is left out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from statistics import mean

from ..results import ItemResult, TaskResult


def counted(result: TaskResult) -> list[ItemResult]:
    """The candidate's oracle items that count: every one but the declared skips."""
    return [i for i in result.items if i.is_oracle and i.outcome != "skipped"]


def passed(item: ItemResult) -> bool:
    """Only a pass is a pass: failed, error and anything else are not."""
    return item.outcome == "passed"


def ratio(numerator: float, denominator: float) -> float | None:
    """numerator / denominator, None for an empty denominator."""
    return numerator / denominator if denominator else None


def by_task(results: Iterable[TaskResult]) -> dict[str, list[TaskResult]]:
    """Candidates (samples, repeats) grouped by task id, in task order."""
    groups: dict[str, list[TaskResult]] = defaultdict(list)
    for result in results:
        groups[result.task].append(result)
    return dict(sorted(groups.items()))


def macro(values_by_task: Iterable[list[float | None]]) -> float | None:
    """Mean over tasks of the mean over each task's candidates (unknown values skipped)."""
    per_task = []
    for values in values_by_task:
        present = [v for v in values if v is not None]
        if present:
            per_task.append(mean(present))
    return mean(per_task) if per_task else None


def phases_passed(result: TaskResult, kinds: tuple[str, ...] = ("build", "boot")) -> bool:
    """The candidate reached the oracle: no phase failed and none of ``kinds`` failed or errored."""
    if result.phase_failed is not None:
        return False
    return all(i.outcome == "passed" for i in result.items if i.kind in kinds)
