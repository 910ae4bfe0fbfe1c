"""app.build: viability and the quality score Q.

Viability (V = 1) = the app builds, boots and its primary route answers 2xx or 3xx (AB-01).
Q = 10 * sum(w * s) / sum(w) over the applicable checks, s = 1 PASS, 0.5 WARN, 0 FAIL; a check
without items is NA and dropped, the others re-weighted. The checks of an app are AB-01 (from
viability) and every ``AB-xx`` its oracle items are tagged with (``@pytest.mark.ab_check`` or
``@ab:AB-03`` on a scenario): PASS when all of a check's items passed, WARN when some did,
FAIL when none did. Reported: viability rate, mean Q over viable apps and over all apps, and
the perfect-quality rate (Q = 10).
"""

from __future__ import annotations

from collections import defaultdict
from statistics import mean
from typing import Any

from ..results import TaskResult
from .records import counted, passed, phases_passed, ratio

PASS, WARN, FAIL = 1.0, 0.5, 0.0
BOOT_CHECK = "AB-01"


def viable(result: TaskResult) -> bool:
    """Build and boot passed and the primary route answered 2xx/3xx (a smoke item of an older
    report without the status counts by its outcome)."""
    if not phases_passed(result):
        return False
    smoke = [i for i in result.items if i.kind == "smoke"]
    if not smoke:
        return False
    status = smoke[-1].primary_status
    if status is None:
        return smoke[-1].outcome == "passed"
    return 200 <= status < 400


def check_grades(result: TaskResult) -> dict[str, float]:
    """PASS/WARN/FAIL per applicable check (NA checks are absent)."""
    items_by_check: dict[str, list[bool]] = defaultdict(list)
    for item in counted(result):
        for check in item.ab_checks:
            items_by_check[check].append(passed(item))
    grades = {BOOT_CHECK: PASS if viable(result) else FAIL}
    for check, outcomes in items_by_check.items():
        if check == BOOT_CHECK:
            continue
        grades[check] = PASS if all(outcomes) else WARN if any(outcomes) else FAIL
    return dict(sorted(grades.items()))


def quality(grades: dict[str, float], weights: dict[str, float] | None = None) -> float | None:
    """Q = 10 * sum(w s) / sum(w) over the applicable checks."""
    weights = weights or {}
    total = sum(weights.get(c, 1.0) for c in grades)
    return 10 * sum(weights.get(c, 1.0) * s for c, s in grades.items()) / total if total else None


def app_build(results: list[TaskResult]) -> dict[str, Any]:
    """app.build's figures over every generated app (candidate) of the run."""
    apps = [(viable(r), quality(check_grades(r))) for r in results]
    q_all = [q for _, q in apps if q is not None]
    q_viable = [q for v, q in apps if v and q is not None]
    return {
        "apps": len(apps),
        "viability": ratio(sum(1 for v, _ in apps if v), len(apps)),
        "mean_q_viable": mean(q_viable) if q_viable else None,
        "mean_q_all": mean(q_all) if q_all else None,
        "perfect_quality_rate": ratio(sum(1 for q in q_all if q == 10), len(apps)),
        "checks_mapped": sorted({c for r in results for i in r.items for c in i.ab_checks}),
    }
