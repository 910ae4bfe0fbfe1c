"""WebGen-Bench's table, as its ``src/ui_test_*/compute_acc.py`` prints it, over frontend judge cases.

compute_acc.py reads the GUI agent's last answer of every UI test case: YES scores 1, PARTIAL
0.5, anything else NO; a case without an answer (the site did not start) is ``start_failed``.
Over all cases: accuracy = (YES + 0.5 PARTIAL) / total and the YES / PARTIAL / NO /
start-failed rates; the same accuracy per category of the instruction (Content Presentation,
User Interaction, Data Management) and of the case (Functional, Data Display, Design Validation
Testing). The judge's own verdict counts, as in WebGen-Bench (FullStack-Bench's DB-log rule is
in the judged figures). Here a case the harness could not judge (an error) is counted apart
from start_failed: it is re-runnable and says nothing about the site. Fractions, not percents.

``appearance_grade`` is compute_grade.py's: the sum of the sites' grades (1-5; a site not graded
counts 0) over the sites, here the candidate runs with frontend cases.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ..results import ItemResult, TaskResult
from .records import ratio

CASE_CATEGORY_OF_REQUIREMENT = {"FT": "Functional Testing", "DDT": "Data Display Testing", "DVT": "Design Validation Testing"}
"""The requirement ids ``backendbench import webgen-bench`` gives each case category."""
CATEGORY_FACT = "webgen_category"
"""The judge fact (judges/gui_item.py) that carries the instruction's primary category."""
CREDIT = {"YES": 1.0, "PARTIAL": 0.5}


def case_answer(item: ItemResult) -> str:
    """YES, PARTIAL or NO as compute_acc reads it; ``start_failed`` without a judge's answer; ``error`` for a harness error."""
    if item.outcome == "error":
        return "error"
    verdict = (item.judge or {}).get("verdict")
    if verdict is None:
        return "start_failed"  # the run failed before the judge answered (build, boot)
    return str(verdict) if verdict in CREDIT else "NO"


def webgen_bench(results: list[TaskResult]) -> dict[str, Any] | None:
    """compute_acc.py's figures over every frontend judge case of the run; None without any."""
    cases = [i for r in results for i in r.items if i.kind == "judge" and i.outcome != "skipped" and (i.judge or {}).get("case_kind") == "frontend"]
    if not cases:
        return None
    answers = [case_answer(i) for i in cases]
    total = len(cases)
    counts = {name: answers.count(name) for name in ("YES", "PARTIAL", "NO", "start_failed", "error")}
    by_category: dict[str, list[str]] = defaultdict(list)
    for item, answer in zip(cases, answers, strict=True):
        category = (item.judge or {}).get(CATEGORY_FACT)
        if category:
            by_category[str(category)].append(answer)
        for requirement in item.requirements:
            if requirement in CASE_CATEGORY_OF_REQUIREMENT:
                by_category[CASE_CATEGORY_OF_REQUIREMENT[requirement]].append(answer)
    runs = {(r.task, r.candidate, r.sample, r.repeat): r for r in results if any(i in cases for i in r.items)}
    grades = [_appearance_grade(r) for r in runs.values()]
    return {
        "appearance_grade": ratio(sum(g or 0 for g in grades), len(grades)),
        "appearance_graded": sum(1 for g in grades if g is not None),
        "cases": total,
        "yes": counts["YES"],
        "partial": counts["PARTIAL"],
        "no": counts["NO"],
        "start_failed": counts["start_failed"],
        "errors": counts["error"],
        "accuracy": ratio(sum(CREDIT.get(a, 0.0) for a in answers), total),
        "yes_rate": ratio(counts["YES"], total),
        "partial_rate": ratio(counts["PARTIAL"], total),
        "no_rate": ratio(counts["NO"], total),
        "start_failed_rate": ratio(counts["start_failed"], total),
        "accuracy_by_category": {name: ratio(sum(CREDIT.get(a, 0.0) for a in got), len(got)) for name, got in sorted(by_category.items())},
    }


def _appearance_grade(result: TaskResult) -> int | None:
    """The run's appearance grade (judges/appearance.py, on its first frontend case), if it was graded."""
    for item in result.items:
        grade = ((item.judge or {}).get("appearance") or {}).get("grade")
        if isinstance(grade, int):
            return grade
    return None
