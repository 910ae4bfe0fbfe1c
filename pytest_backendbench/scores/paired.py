"""Paired comparison of two runs on the same tasks: which tasks one gained or lost against the
other, an exact McNemar test on task success, and a paired bootstrap interval for the
difference in SR and Test.Acc (InfiniteWeb reports a significance test beside mean ± std)."""

from __future__ import annotations

import random
from collections import defaultdict
from math import comb
from statistics import mean
from typing import Any

from ..markers import ordered_tiers
from ..results import TaskResult
from .backendforge import success_at
from .e2edev import project_scores

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test of the discordant pairs against 1/2
    (scipy's ``binomtest`` when installed, the same sum of binomial terms otherwise)."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    try:
        from scipy.stats import binomtest
    except ImportError:
        tail = sum(comb(n, i) for i in range(min(only_a, only_b) + 1)) / 2**n
        return min(1.0, 2 * tail)
    return float(binomtest(min(only_a, only_b), n, 0.5).pvalue)


def _unit_values(results: list[TaskResult]) -> dict[tuple[str, str, int], tuple[bool, float]]:
    """(task, sample, repeat) -> (final-tier success, Test.Acc with errors as not passed)."""
    out = {}
    for result in results:
        tiers = ordered_tiers(i.tier for i in result.items if i.is_oracle)
        success = success_at(result, tiers[-1]) if tiers else False
        out[(result.task, result.sample, result.repeat)] = (success, project_scores(result)["test_acc"] or 0.0)
    return out


def _by_task(values: dict[tuple[str, str, int], tuple[bool, float]], keys: list[tuple[str, str, int]]) -> dict[str, tuple[float, float]]:
    groups: dict[str, list[tuple[bool, float]]] = defaultdict(list)
    for key in keys:
        groups[key[0]].append(values[key])
    return {task: (mean(float(s) for s, _ in vs), mean(t for _, t in vs)) for task, vs in groups.items()}


def bootstrap_interval(differences: list[float], resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> tuple[float, float] | None:
    """95% percentile interval of the mean of paired per-task differences, tasks resampled."""
    if not differences:
        return None
    rng = random.Random(seed)
    n = len(differences)
    means = sorted(sum(rng.choices(differences, k=n)) / n for _ in range(resamples))
    return means[int(0.025 * resamples)], means[min(resamples - 1, int(0.975 * resamples))]


def paired_comparison(a: list[TaskResult], b: list[TaskResult]) -> dict[str, Any]:
    """Run B against run A over the candidates (task, sample, repeat) both judged."""
    va, vb = _unit_values(a), _unit_values(b)
    common = sorted(set(va) & set(vb))
    gained = sorted({k[0] for k in common if not va[k][0] and vb[k][0]})
    lost = sorted({k[0] for k in common if va[k][0] and not vb[k][0]})
    only_a = sum(1 for k in common if va[k][0] and not vb[k][0])
    only_b = sum(1 for k in common if not va[k][0] and vb[k][0])
    ta, tb = _by_task(va, common), _by_task(vb, common)
    tasks = sorted(ta)
    sr_ci = bootstrap_interval([tb[t][0] - ta[t][0] for t in tasks])
    acc_ci = bootstrap_interval([tb[t][1] - ta[t][1] for t in tasks])
    return {
        "paired_candidates": len(common),
        "tasks": len(tasks),
        "only_in_a": sorted({k[0] for k in set(va) - set(vb)}),
        "only_in_b": sorted({k[0] for k in set(vb) - set(va)}),
        "gained": gained,
        "lost": lost,
        "discordant": {"a_only_success": only_a, "b_only_success": only_b},
        "mcnemar_p": mcnemar_exact(only_a, only_b),
        "sr_difference": mean(tb[t][0] - ta[t][0] for t in tasks) if tasks else None,
        "sr_difference_ci95": list(sr_ci) if sr_ci else None,
        "test_acc_difference": mean(tb[t][1] - ta[t][1] for t in tasks) if tasks else None,
        "test_acc_difference_ci95": list(acc_ci) if acc_ci else None,
        "bootstrap": {"resamples": BOOTSTRAP_RESAMPLES, "seed": BOOTSTRAP_SEED, "unit": "task"},
    }
