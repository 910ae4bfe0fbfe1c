"""FullStack-Bench: FE, BE and DB accuracies pooled over all test cases of the run.

Accuracy = (#YES + 0.5 #PARTIAL) / #cases over every case of a kind (browser scenarios: FE,
HTTP items: BE, database cases: DB), not averaged per task first: one task at 9/10 and one at
0/1 is 9/11 = 81.8%. "With valid DB" gives a case its credit only when its database effects
held; a case that needs no database work (``@db:none``) is valid by definition. A partial
verdict (0.5) exists only where a task's item records one (user property ``bench_partial``).
"""

from __future__ import annotations

from typing import Any

from ..results import ItemResult, TaskResult
from .records import counted, ratio

KINDS = {"fe": "bdd", "be": "http", "db": "snapshot"}


def credit(item: ItemResult, valid_db: bool = False) -> float:
    """1 for a pass, 0.5 for a partial verdict, 0 otherwise; with ``valid_db`` nothing for a
    case whose database effects did not hold."""
    if valid_db and item.db_valid is False:
        return 0.0
    if item.outcome == "passed":
        return 1.0
    if item.outcome == "failed" and item.partial:
        return 0.5
    return 0.0


def fullstack_bench(results: list[TaskResult]) -> dict[str, Any]:
    """Pooled accuracies (None for a kind without cases) and the case counts behind them."""
    figures: dict[str, Any] = {}
    for name, kind in KINDS.items():
        cases = [i for r in results for i in counted(r) if i.kind == kind]
        figures[f"{name}_cases"] = len(cases)
        figures[f"{name}_acc"] = ratio(sum(credit(i) for i in cases), len(cases))
        if name != "db":
            figures[f"{name}_acc_valid_db"] = ratio(sum(credit(i, valid_db=True) for i in cases), len(cases))
    figures["partial_cases"] = sum(1 for r in results for i in counted(r) if i.partial and i.outcome == "failed")
    return figures
