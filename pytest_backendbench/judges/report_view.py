"""What report.html shows of the judge cases: each case's verdict and its trajectory, step by step.

report/html.py calls ``judge_cases`` for each run; report/judge_trajectories.html renders it.
The steps come from report.json (``judge.trajectory_steps``); screenshots are linked, relative
to the report folder, never embedded (the page stays one small file that fetches nothing).
"""

from __future__ import annotations

from typing import Any

VERDICT_ORDER = {"NO": 0, "PARTIAL": 1, None: 2, "YES": 3}


def judge_cases(document: dict[str, Any]) -> list[dict[str, Any]]:
    """One entry per judge case of the run: NO first, then PARTIAL, errors, YES."""
    cases = []
    for task in document.get("tasks") or []:
        for item in task.get("items") or []:
            facts = item.get("judge")
            if item.get("kind") != "judge" or not isinstance(facts, dict):
                continue
            verdict = facts.get("verdict")
            counted = facts.get("counted")
            shown = "error" if item.get("outcome") == "error" else str(counted or verdict)
            if counted and verdict and counted != verdict:
                shown = f"{counted} (judge said {verdict}; the DB log does not show the interaction)"
            cases.append(
                {
                    "candidate": task.get("candidate", ""),
                    "case": facts.get("case", item.get("nodeid", "")),
                    "kind": facts.get("case_kind", ""),
                    "requirement": ", ".join(item.get("requirements") or []),
                    "verdict": shown,
                    "reason": facts.get("reason") or (item.get("message") or "").split("\n")[0],
                    "trajectory": facts.get("trajectory"),
                    "tokens": f"{facts.get('tokens_in', 0)} / {facts.get('tokens_out', 0)}",
                    "replayed": facts.get("replayed", 0),
                    "steps": list(facts.get("trajectory_steps") or []),
                    "appearance": (facts.get("appearance") or {}).get("grade"),  # WebGen-Bench's grade, on a run's first frontend case
                    "order": VERDICT_ORDER.get(counted if item.get("outcome") != "error" else None, 2),
                }
            )
    return sorted(cases, key=lambda c: (c["order"], c["candidate"], c["case"]))
