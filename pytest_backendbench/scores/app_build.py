"""app.build: its six checks per app, viability, the quality score Q and its Table 4.

Per app (candidate): AB-01 from the smoke item (build and boot passed, the primary route
answered 2xx/3xx); AB-03 and AB-04 from the oracle items a task tags with them
(``@pytest.mark.ab_check("AB-03")``, Gherkin ``@ab:AB-03``): PASS when all passed, WARN when some
did, FAIL when none did; AB-02, AB-06 and AB-07 from the harness's own app-check items
(pytest_backendbench/appbuild/). A check without items is NA. Viability V = 1 when neither AB-01
nor AB-02 is FAIL (app.build's equation 1); Q = 10 * sum(w s) / sum(w) over the checks that are
not NA, equal weights, s = 1 PASS, 0.5 WARN, 0 FAIL, and for AB-07 Lighthouse's performance
score itself. A check the harness could not measure (an errored item) is ERROR: s = 0, as every
figure here keeps its denominators fixed, but it never makes an app non-viable.
"""

from __future__ import annotations

from collections import defaultdict
from statistics import mean
from typing import Any

from ..appbuild.grades import BOOT, CHECKS, PERFORMANCE, PROMPT, VIABILITY_GATES, Grade, grade_of_items
from ..results import ItemResult, TaskResult
from .records import counted, passed, phases_passed, ratio

PASS, WARN, FAIL = 1.0, 0.5, 0.0
BOOT_CHECK = BOOT
APP_CHECK_KIND = "app_check"


def boot_ok(result: TaskResult) -> bool:
    """AB-01: build and boot passed and the primary route answered 2xx/3xx (a smoke item of an
    older report without the status counts by its outcome)."""
    if not phases_passed(result):
        return False
    smoke = [i for i in result.items if i.kind == "smoke"]
    if not smoke:
        return False
    status = smoke[-1].primary_status
    if status is None:
        return smoke[-1].outcome == "passed"
    return 200 <= status < 400


def measured_grade(item: ItemResult) -> tuple[Grade, float | None]:
    """An app-check item's grade and s: its measurement; without one, ERROR when it errored (ours),
    FAIL when it failed (its candidate did not build or boot)."""
    if not item.app_check.get("grade"):
        return (Grade.ERROR, 0.0) if item.outcome == "error" else (Grade.FAIL, 0.0)
    grade = Grade(item.app_check["grade"])
    score = item.app_check.get("score")
    return grade, float(score) if isinstance(score, (int, float)) and grade is not Grade.NA else grade.score


def check_table(result: TaskResult) -> dict[str, tuple[Grade, float | None]]:
    """Every one of app.build's six checks for one app: its grade and its s (None for NA)."""
    grades: dict[str, tuple[Grade, float | None]] = {check: (Grade.NA, None) for check in CHECKS}
    grades[BOOT] = (Grade.PASS, 1.0) if boot_ok(result) else (Grade.FAIL, 0.0)
    items_by_check: dict[str, list[bool]] = defaultdict(list)
    for item in counted(result):
        for check in item.ab_checks:
            items_by_check[check].append(passed(item))
    for check, outcomes in items_by_check.items():
        if check in CHECKS and check != BOOT:
            grade = grade_of_items(outcomes)
            grades[check] = (grade, grade.score)
    for item in result.items:
        measured = str(item.app_check.get("check", "")) if item.kind == APP_CHECK_KIND else ""
        if measured in CHECKS:
            grades[measured] = measured_grade(item)
    return grades


def viable(result: TaskResult) -> bool:
    """V = 1: neither AB-01 nor AB-02 is FAIL (an AB-02 that was not measured does not gate)."""
    return is_viable(check_table(result))


def is_viable(table: dict[str, tuple[Grade, float | None]]) -> bool:
    """app.build's equation 1 over one app's check table."""
    return all(table[check][0] is not Grade.FAIL for check in VIABILITY_GATES)


def check_grades(result: TaskResult) -> dict[str, float]:
    """s per applicable check (NA checks are absent)."""
    return {check: score for check, (grade, score) in check_table(result).items() if grade is not Grade.NA and score is not None}


def quality(grades: dict[str, float], weights: dict[str, float] | None = None) -> float | None:
    """Q = 10 * sum(w s) / sum(w) over the applicable checks."""
    weights = weights or {}
    total = sum(weights.get(c, 1.0) for c in grades)
    return 10 * sum(weights.get(c, 1.0) * s for c, s in grades.items()) / total if total else None


def check_counts(tables: list[dict[str, tuple[Grade, float | None]]]) -> dict[str, dict[str, Any]]:
    """app.build's Table 4: per check the apps with each grade and the pass rate excluding NA."""
    counts: dict[str, dict[str, Any]] = {}
    for check, name in CHECKS.items():
        grades = [table[check][0] for table in tables]
        row: dict[str, Any] = {"name": name, **{g.value.lower(): sum(1 for x in grades if x is g) for g in Grade}}
        applicable = len(grades) - row["na"]
        row["pass_rate"] = ratio(row["pass"], applicable)
        counts[check] = row
    return counts


def unmeasured_notes(tables: list[dict[str, tuple[Grade, float | None]]], apps: list[TaskResult]) -> list[str]:
    """Why a check is NA for every app, said once for the run (e.g. "AB-02 NA: no judge model")."""
    notes = []
    measured = {i.app_check.get("check") for r in apps for i in r.items if i.kind == APP_CHECK_KIND}
    judged = any(i.kind == "judge" for r in apps for i in r.items)  # a judge was named: AB-02 waited only for the app checks
    if tables and PROMPT not in measured:
        notes.append(f"{PROMPT} NA: not measured (--bench-app-checks)" if judged else f"{PROMPT} NA: no judge model (--bench-judge)")
    for check in ("AB-06", PERFORMANCE):
        if tables and check not in measured:
            notes.append(f"{check} NA: not measured (--bench-app-checks)")
    for check in ("AB-03", "AB-04"):
        if tables and all(t[check][0] is Grade.NA for t in tables):
            notes.append(f"{check} NA: no oracle item is tagged with it")
    return notes


def app_build(results: list[TaskResult]) -> dict[str, Any]:
    """app.build's figures over every generated app (candidate) of the run."""
    tables = [check_table(r) for r in results]
    apps: list[dict[str, Any]] = []
    for result, table in zip(results, tables):
        scores = {c: s for c, (g, s) in table.items() if g is not Grade.NA and s is not None}
        apps.append({
            "task": result.task, "candidate": result.candidate, "viable": is_viable(table), "q": quality(scores),
            "checks": {c: g.value for c, (g, _) in table.items()},
        })
    q_all: list[float] = [a["q"] for a in apps if a["q"] is not None]
    q_viable: list[float] = [a["q"] for a in apps if a["viable"] and a["q"] is not None]
    return {
        "apps": len(apps),
        "viability": ratio(sum(1 for a in apps if a["viable"]), len(apps)),
        "mean_q_viable": mean(q_viable) if q_viable else None,
        "mean_q_all": mean(q_all) if q_all else None,
        "perfect_quality_rate": ratio(sum(1 for q in q_all if q == 10), len(apps)),
        "checks_mapped": sorted({c for r in results for i in r.items for c in i.ab_checks}),
        "checks": check_counts(tables),
        "per_app": apps,
        "notes": unmeasured_notes(tables, results),
    }
