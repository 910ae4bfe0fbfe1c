"""``backendbench report compare``'s paired part: run B against run A, task by task.

Beside the leaderboard: which tasks B gained or lost against A, the exact McNemar p-value on
task success, paired bootstrap intervals for the SR and Test.Acc differences, the category x
tier table of failures (BackendForge's oracle table), runs that may not be published, and a
warning per task judged on different task versions.
"""

from __future__ import annotations

from typing import Any

from ..markers import ordered_tiers
from ..results import TaskResult
from ..scores.backendforge import failures_by_category_and_tier
from ..scores.paired import paired_comparison
from ..scores.publication import publication_line
from .cells import fmt


def results_of(document: dict[str, Any]) -> list[TaskResult]:
    """The report's candidates as result records."""
    return [TaskResult.from_dict(task) for task in document["tasks"]]


def version_warnings(a: dict[str, Any], b: dict[str, Any], label_a: str, label_b: str) -> list[str]:
    """One line per task both runs judged on different (or unrecorded) task versions."""
    va = a["manifest"].get("task_versions") or {}
    vb = b["manifest"].get("task_versions") or {}
    tasks = sorted({t["task"] for t in a["tasks"]} & {t["task"] for t in b["tasks"]})
    lines = []
    unversioned = [label for label, versions in ((label_a, va), (label_b, vb)) if not versions]
    if unversioned:  # reports written before task versions were recorded: one line, not one per task
        lines.append(f"{' and '.join(unversioned)} recorded no task versions: the runs may have judged different oracles ({len(tasks)} tasks)")
        tasks = []
    for task in tasks:
        ha, hb = va.get(task), vb.get(task)
        if ha is None or hb is None:
            missing = " and ".join(label for label, h in ((label_a, ha), (label_b, hb)) if h is None)
            lines.append(f"task {task}: {missing} recorded no task version; the runs may have judged different oracles")
        elif ha != hb:
            lines.append(f"task {task}: judged on different task versions ({label_a} {ha[:12]}, {label_b} {hb[:12]}); its figures do not compare")
    if a["manifest"].get("harness_version") != b["manifest"].get("harness_version"):
        lines.append(f"harness versions differ: {label_a} {a['manifest'].get('harness_version')}, {label_b} {b['manifest'].get('harness_version')}")
    return lines


def pair_document(a: dict[str, Any], b: dict[str, Any], label_a: str, label_b: str) -> dict[str, Any]:
    """Everything the paired comparison prints, as plain data (for compare.json)."""
    ra, rb = results_of(a), results_of(b)
    return {
        "a": label_a,
        "b": label_b,
        **paired_comparison(ra, rb),
        "failures_by_category_and_tier": {label_a: failures_by_category_and_tier(ra), label_b: failures_by_category_and_tier(rb)},
        "not_publishable": {label: line for label, d in ((label_a, a), (label_b, b)) if (line := publication_line(d))},
        "version_warnings": version_warnings(a, b, label_a, label_b),
    }


def _interval(values: list[float] | None) -> str:
    return f"[{values[0]:+.3f}, {values[1]:+.3f}]" if values else "-"


def pair_markdown(pair: dict[str, Any]) -> str:
    """The paired comparison as Markdown (what the console prints after the leaderboard)."""
    a, b = pair["a"], pair["b"]
    lines = [f"## {b} against {a} (paired on {pair['paired_candidates']} candidates of {pair['tasks']} tasks)", ""]
    for label, line in pair["not_publishable"].items():
        lines.append(f"- **{label}: {line}**")
    for warning in pair["version_warnings"]:
        lines.append(f"- warning: {warning}")
    lines += [
        f"- tasks gained by {b}: {', '.join(pair['gained']) or 'none'}",
        f"- tasks lost by {b}: {', '.join(pair['lost']) or 'none'}",
        (f"- exact McNemar test on task success: {pair['discordant']['a_only_success']} succeed only in {a}, "
        f"{pair['discordant']['b_only_success']} only in {b}; p = {pair['mcnemar_p']:.4g}"),
        f"- SR difference ({b} - {a}): {fmt(pair['sr_difference'], percent=False)}, 95% paired bootstrap interval {_interval(pair['sr_difference_ci95'])}",
        (f"- Test.Acc difference ({b} - {a}): {fmt(pair['test_acc_difference'], percent=False)}, "
        f"95% paired bootstrap interval {_interval(pair['test_acc_difference_ci95'])} "
        f"({pair['bootstrap']['resamples']} resamples of tasks, seed {pair['bootstrap']['seed']})"),
    ]
    for side in ("only_in_a", "only_in_b"):
        if pair[side]:
            lines.append(f"- tasks only in {a if side == 'only_in_a' else b} (not paired): {', '.join(pair[side])}")
    tables = pair["failures_by_category_and_tier"]
    tiers = ordered_tiers(t for table in tables.values() for counts in table.values() for t in counts)
    categories = sorted({c for table in tables.values() for c in table})
    lines += ["", f"Failed oracle items by category x tier ({a} / {b}):", ""]
    if not categories:
        lines.append("no oracle item failed in either run")
    else:
        lines += ["| category | " + " | ".join(tiers) + " |", "|---|" + "---|" * len(tiers)]
        for category in categories:
            cells = [f"{tables[a].get(category, {}).get(t, 0)} / {tables[b].get(category, {}).get(t, 0)}" for t in tiers]
            lines.append(f"| {category} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
