"""What a judge did in one case, step by step: kept under the report dir, shown in report.html.

Every judge (GUI, API, database) returns a ``JudgeOutcome`` whose ``steps`` are ``JudgeStep``s;
the judge item writes them to ``artifacts/<run>/judge/<case>/trajectory.json`` (screenshots
beside it, paths relative to the report dir) and the report lists them. gui_judge.py imports
these two classes from here: one definition for the three judges.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .verdicts import Verdict

TRAJECTORY_FILE = "trajectory.json"


@dataclass
class JudgeStep:
    """One step of a trajectory: what the judge saw (a screenshot), said, and did."""

    index: int
    screenshot: str | None  # path relative to the report dir
    model_text: str
    action: str  # e.g. "Click [5]", "Type [3]; hello", "GET /events -> 200", "ANSWER; YES"


@dataclass
class JudgeOutcome:
    """What a judge concluded about one case (GUI, API and database judges all return one)."""

    verdict: Verdict
    reason: str
    steps: list[JudgeStep]
    tokens_in: int
    tokens_out: int
    db_confirmed: bool | None = None  # FullStack-Bench's DB-log check: None when not asked
    facts: dict[str, Any] = field(default_factory=dict)  # judge-specific facts for the report (appearance, ...)


def write_trajectory(folder: Path, case_id: str, kind: str, instruction: str, expected: str, outcome: JudgeOutcome | None, steps: list[JudgeStep], error: str | None = None) -> Path:
    """``folder/trajectory.json``: the case, its steps and its verdict (or the error that ended it)."""
    folder.mkdir(parents=True, exist_ok=True)
    document = {
        "case": case_id,
        "kind": kind,
        "instruction": instruction,
        "expected": expected,
        "verdict": outcome.verdict.value if outcome is not None else None,
        "reason": outcome.reason if outcome is not None else None,
        "db_confirmed": outcome.db_confirmed if outcome is not None else None,
        "error": error,
        "steps": [asdict(step) for step in steps],
    }
    path = folder / TRAJECTORY_FILE
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False), encoding="utf-8")
    return path


def read_trajectory(path: Path) -> dict[str, Any] | None:
    """A trajectory written by ``write_trajectory``, or None when it is missing or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
