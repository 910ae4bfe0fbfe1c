"""The judged figures: what agent judges concluded (judges/), never mixed with deterministic items.

Judge items (kind ``judge``) are left out of every deterministic figure (Test.Acc, Req.Acc, SR,
FullStack-Bench's fe/be/db accuracies over scenarios, http items and snapshot cases); their
figures stand under their own names:

- ``judged_test_acc``: per task, (YES + 0.5 PARTIAL) / judge cases, with the counted verdict
  (FullStack-Bench's DB-log rule applied); macro over tasks like Test.Acc. A harness error
  counts 0 (fixed denominators); ``judged_test_acc_determined`` leaves errors out.
- ``judged_req_acc``: per task, the share of requirements whose every judge case said YES.
- ``fullstack_bench``: FullStack-Bench's pooled accuracies over judge cases of each kind —
  ``fe_acc``/``be_acc`` on the judge's own verdict, ``*_valid_db`` with the DB-log rule, ``db_acc``.
- ``usage``: the judge's tokens, answers, replayed answers and cost, apart from the generator's;
  ``spread`` with ``--bench-repeat``: judged_test_acc mean ± std over repeats and the share of
  cases whose verdict changed between repeats.

WebGen-Bench's ``compute_acc.py`` table over the frontend cases is ``summary.webgen_bench``
(scores/webgen_bench.py).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ..judges.verdicts import CREDIT
from ..results import ItemResult, TaskResult
from .records import by_task, macro, ratio
from .spread import mean_std

JUDGE_KIND = "judge"
FULLSTACK_KINDS = {"fe": "frontend", "be": "backend", "db": "database"}


def judge_items(result: TaskResult) -> list[ItemResult]:
    """The candidate's judge cases that count (declared skips left out)."""
    return [i for i in result.items if i.kind == JUDGE_KIND and i.outcome != "skipped"]


def _facts(item: ItemResult) -> dict[str, Any]:
    return item.judge or {}


def counted_credit(item: ItemResult) -> float:
    """The item's credit as it ended: a pass 1, a PARTIAL 0.5, anything else (NO, demoted, error) 0."""
    if item.outcome == "passed":
        return 1.0
    if item.outcome == "failed" and item.partial:
        return 0.5
    return 0.0


def verdict_credit(item: ItemResult) -> float:
    """The judge's own verdict's credit, before the DB-log rule (0 when the case ended in an error)."""
    if item.outcome == "error":
        return 0.0
    return CREDIT.get(str(_facts(item).get("verdict")), 0.0)


def task_judged(result: TaskResult) -> dict[str, Any] | None:
    """One candidate's judged figures, or None when it has no judge cases."""
    items = judge_items(result)
    if not items:
        return None
    determined = [i for i in items if i.outcome in ("passed", "failed")]
    by_requirement: dict[str, list[ItemResult]] = defaultdict(list)
    for item in items:
        for requirement in item.requirements:
            by_requirement[requirement].append(item)
    satisfied = [r for r, its in by_requirement.items() if all(i.outcome == "passed" for i in its)]
    verdicts = [str(_facts(i).get("counted")) for i in determined]
    return {
        "cases": len(items),
        "yes": verdicts.count("YES"),
        "partial": verdicts.count("PARTIAL"),
        "no": verdicts.count("NO"),
        "errors": sum(1 for i in items if i.outcome == "error"),
        "judged_test_acc": ratio(sum(counted_credit(i) for i in items), len(items)),
        "judged_test_acc_determined": ratio(sum(counted_credit(i) for i in determined), len(determined)),
        "judged_req_acc": ratio(len(satisfied), len(by_requirement)),
        "requirements": {r: {"cases": len(its), "yes": sum(1 for i in its if i.outcome == "passed"), "satisfied": r in satisfied} for r, its in sorted(by_requirement.items())},
    }


def _pooled(items: list[ItemResult], case_kind: str, valid_db: bool) -> float | None:
    cases = [i for i in items if _facts(i).get("case_kind") == case_kind]
    score = counted_credit if valid_db else verdict_credit
    return ratio(sum(score(i) for i in cases), len(cases))


def fullstack_bench_judged(items: list[ItemResult]) -> dict[str, Any]:
    """FullStack-Bench's accuracies pooled over every judge case of a kind (not per task first)."""
    figures: dict[str, Any] = {}
    for name, case_kind in FULLSTACK_KINDS.items():
        figures[f"{name}_cases"] = sum(1 for i in items if _facts(i).get("case_kind") == case_kind)
        figures[f"{name}_acc"] = _pooled(items, case_kind, valid_db=False)
        if name != "db":
            figures[f"{name}_acc_valid_db"] = _pooled(items, case_kind, valid_db=True)
    return figures


def judge_usage(items: list[ItemResult]) -> dict[str, Any]:
    """What the judge was asked and what it cost (counted apart from the generator's)."""
    costs = [_facts(i).get("cost_usd") for i in items]
    known = [c for c in costs if isinstance(c, (int, float))]
    return {
        "model": next((str(_facts(i)["model"]) for i in items if _facts(i).get("model")), None),
        "calls": sum(int(_facts(i).get("calls") or 0) for i in items),
        "replayed": sum(int(_facts(i).get("replayed") or 0) for i in items),
        "tokens_in": sum(int(_facts(i).get("tokens_in") or 0) for i in items),
        "tokens_out": sum(int(_facts(i).get("tokens_out") or 0) for i in items),
        "cost_usd": round(sum(known), 6) if known else None,
    }


def judge_spread(results: list[TaskResult]) -> dict[str, Any] | None:
    """With --bench-repeat: judged_test_acc mean ± std over repeats and the cases whose verdict changed."""
    repeats: dict[int, list[TaskResult]] = defaultdict(list)
    for result in results:
        repeats[result.repeat].append(result)
    if len(repeats) < 2:
        return None
    per_repeat = [macro([(task_judged(r) or {}).get("judged_test_acc") for r in rs] for rs in by_task(group).values()) for group in repeats.values()]
    verdicts: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for result in results:
        for item in judge_items(result):
            if item.outcome != "error":
                verdicts[(result.task, result.sample, str(_facts(item).get("case")))].add(str(_facts(item).get("counted")))
    changed = sorted(f"{task}: {case}" for (task, _, case), seen in verdicts.items() if len(seen) > 1)
    return {
        "judged_test_acc": mean_std([v for v in per_repeat if v is not None]),
        "verdict_flip_rate": ratio(len(changed), len(verdicts)),
        "changed_cases": changed,
    }


def judged_figures(results: list[TaskResult]) -> dict[str, Any] | None:
    """Every judged figure of a run, or None when no judge case ran (a run without --bench-judge)."""
    items = [i for r in results for i in judge_items(r)]
    if not items:
        return None
    per_result = [(r, task_judged(r)) for r in results]
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for result, figures in per_result:
        if figures is not None:
            groups[result.task].append(figures)

    def task_mean(key: str) -> float | None:
        return macro([f[key] for f in fs] for fs in groups.values())

    return {
        "judged_test_acc": task_mean("judged_test_acc"),
        "judged_test_acc_determined": task_mean("judged_test_acc_determined"),
        "judged_req_acc": task_mean("judged_req_acc"),
        "cases": len(items),
        "yes": sum(f["yes"] for _, f in per_result if f),
        "partial": sum(f["partial"] for _, f in per_result if f),
        "no": sum(f["no"] for _, f in per_result if f),
        "errors": sum(f["errors"] for _, f in per_result if f),
        "fullstack_bench": fullstack_bench_judged(items),
        "usage": judge_usage(items),
        "spread": judge_spread(results),
        "per_task": {task: fs[0] if len(fs) == 1 else {"candidates": fs} for task, fs in sorted(groups.items())},
    }
