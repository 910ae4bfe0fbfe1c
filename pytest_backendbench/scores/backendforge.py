"""BackendForge: success rate per cumulative oracle tier over a fixed task set, and Delta.

SR at tier T = tasks whose candidate passed every item of the tiers up to T / all selected
tasks (a harness error, a build or boot failure and a missing candidate are not a success);
Delta = (Final SR - Base SR) / Base SR. Its oracle table counts failed items by category x tier.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..markers import ordered_tiers, tier_sort_key
from ..results import TaskResult
from .records import by_task, counted, macro, passed, ratio


def success_at(result: TaskResult, tier: str) -> bool:
    """Every counted item of the tiers up to ``tier`` passed, the candidate reached the oracle,
    and at least one item ran (a task whose items never ran is not a success)."""
    scope = [i for i in counted(result) if tier_sort_key(i.tier) <= tier_sort_key(tier)]
    return result.phase_failed is None and bool(scope) and all(passed(i) for i in scope)


def sr_by_tier(results: list[TaskResult]) -> dict[str, float | None]:
    """SR at each cumulative tier; every task of the run in every denominator."""
    tiers = ordered_tiers(i.tier for r in results for i in r.items if i.is_oracle)
    groups = by_task(results)
    return {tier: macro([float(success_at(r, tier)) for r in rs] for rs in groups.values()) for tier in tiers}


def delta(by_tier: dict[str, float | None]) -> float | None:
    """(Final SR - Base SR) / Base SR; None without a base tier or with Base SR 0."""
    if not by_tier:
        return None
    base = by_tier.get("base")
    final = list(by_tier.values())[-1]
    return (final - base) / base if base and final is not None else None


def failures_by_category_and_tier(results: list[TaskResult]) -> dict[str, dict[str, int]]:
    """Failed oracle items (the candidate's fault) per category, then per tier."""
    table: dict[str, Counter[str]] = {}
    for result in results:
        for item in counted(result):
            if item.outcome == "failed" and item.phase == "tests":
                table.setdefault(item.category or "uncategorised", Counter())[item.tier] += 1
    return {category: dict(sorted(counts.items(), key=lambda kv: tier_sort_key(kv[0]))) for category, counts in sorted(table.items())}


def backendforge(results: list[TaskResult]) -> dict[str, Any]:
    """BackendForge's figures for one run."""
    by_tier = sr_by_tier(results)
    tasks = by_task(results)
    return {
        "tasks": len(tasks),
        "sr_by_tier": by_tier,
        "final_sr": list(by_tier.values())[-1] if by_tier else ratio(0, len(tasks)),
        "delta": delta(by_tier),
        "failures_by_category_and_tier": failures_by_category_and_tier(results),
    }
