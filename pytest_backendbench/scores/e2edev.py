"""E2EDev: Req.Acc, Test.Acc and their weighted Balanced score, as its runner counts them.

Per project (our task): Test.Acc = tests whose result is "pass" / all tests; Req.Acc =
requirements all of whose tests passed / all requirements; Balanced = 0.6 Req.Acc + 0.4
Test.Acc; each averaged over projects (E2EDev's Metrics/effectiveness.py). Anything but a pass
is a failed test: an undefined step, a step module that does not import, and a harness error.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ..results import TaskResult
from .records import by_task, counted, macro, passed, ratio


def project_scores(result: TaskResult, alpha: float = 0.6, beta: float = 0.4) -> dict[str, float | None]:
    """One candidate's Test.Acc, Req.Acc and Balanced (E2EDev's final score)."""
    tests = counted(result)
    by_requirement: dict[str, bool] = defaultdict(lambda: True)
    for item in tests:
        for requirement in item.requirements:
            by_requirement[requirement] = by_requirement[requirement] and passed(item)
    test_acc = ratio(sum(1 for i in tests if passed(i)), len(tests))
    req_acc = ratio(sum(1 for ok in by_requirement.values() if ok), len(by_requirement))
    balanced = alpha * req_acc + beta * test_acc if req_acc is not None and test_acc is not None else None
    return {"test_acc": test_acc, "req_acc": req_acc, "balanced": balanced}


def e2edev(results: list[TaskResult], alpha: float = 0.6, beta: float = 0.4) -> dict[str, Any]:
    """E2EDev's figures for one run: project scores averaged over projects."""
    groups = by_task(results)
    scores = {task: [project_scores(r, alpha, beta) for r in rs] for task, rs in groups.items()}
    return {
        "projects": len(groups),
        "req_acc": macro([s["req_acc"] for s in ss] for ss in scores.values()),
        "test_acc": macro([s["test_acc"] for s in ss] for ss in scores.values()),
        "balanced": macro([s["balanced"] for s in ss] for ss in scores.values()),
        "alpha": alpha,
        "beta": beta,
    }
