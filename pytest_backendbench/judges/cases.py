"""Natural-language test cases of a task: ``oracles/<task>/judge/cases.yaml``.

The file (docs/judges.md)::

    cases:
      - id: BE-1                      # unique in the task
        kind: backend                 # frontend | backend | database
        requirement: R3               # a requirement id of task.yaml (Req.Acc groups by it)
        instruction: Register Ada for the event "PyCon" with her e-mail address.
        expected: The registration is accepted and the event lists Ada among its registrations.
        category: state               # optional (task categories), default "workflow"
        tier: base                    # optional, default "base"
        db_interaction: A row is inserted into the registrations table.   # optional
        goal: register-for-event      # optional, frontend: a goal whose evaluator runs after the session (docs/evaluators.md)

``instruction``/``expected`` are WebGen-Bench's ``task``/``expected_result``; ``db_interaction``
is FullStack-Bench's DB-interaction question: a YES or PARTIAL counts only when the statements
logged during the case show it. Errors name the file, the case and the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import TaskFormatError, load_yaml_file
from ..tasks import CATEGORIES

CASES_FILE = "cases.yaml"
JUDGE_FOLDER = "judge"
KINDS = ("frontend", "backend", "database")
DEFAULT_CATEGORY = "workflow"
DEFAULT_TIER = "base"
FIELDS = ("id", "kind", "instruction", "expected", "requirement", "category", "tier", "db_interaction", "goal")


@dataclass(frozen=True)
class JudgeCase:
    """One natural-language test case; a judge carries out ``instruction`` and checks ``expected``."""

    id: str
    kind: str
    instruction: str
    expected: str
    requirement: str
    category: str | None = None
    tier: str | None = None
    db_interaction: str | None = None
    goal: str | None = None  # a frontend case: the InfiniteWeb goal (oracles/<task>/goals/<id>.yaml) evaluated in the page the judge left


def cases_path(oracles_dir: Path, task_id: str) -> Path:
    """Where a task's judge cases live."""
    return oracles_dir / task_id / JUDGE_FOLDER / CASES_FILE


def load_cases(path: Path, requirements: dict[str, Any] | None = None) -> list[JudgeCase]:
    """The cases of one file, checked; ``requirements`` (task.yaml's) names the ids a case may give.

    Raises ``TaskFormatError`` naming the file, the case (``cases[2] (BE-1)``) and the field.
    """
    data = load_yaml_file(path, TaskFormatError)
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        raise TaskFormatError(path, "expected a mapping with a list of cases (cases: [- id: ..., kind: ..., ...])", field="cases")
    cases: list[JudgeCase] = []
    seen: set[str] = set()
    for index, raw in enumerate(data["cases"]):
        where = f"cases[{index}]"
        if not isinstance(raw, dict):
            raise TaskFormatError(path, f"got {type(raw).__name__}; expected a mapping with {', '.join(FIELDS[:5])}", field=where)
        case_id = raw.get("id")
        if not isinstance(case_id, str) or not case_id.strip():
            raise TaskFormatError(path, f"missing; expected a name unique in the task, e.g. BE-{index + 1}", field=f"{where}.id")
        where = f"{where} ({case_id})"
        if case_id in seen:
            raise TaskFormatError(path, f"{case_id!r} is given twice; ids are unique in a task", field=f"{where}.id")
        seen.add(case_id)
        unknown = sorted(set(raw) - set(FIELDS))
        if unknown:
            raise TaskFormatError(path, f"unknown field(s) {', '.join(unknown)}; known: {', '.join(FIELDS)}", field=where)

        def text(name: str, required: bool, hint: str, raw: dict[str, Any] = raw, where: str = where) -> str | None:
            return _text_field(path, raw, where, name, required, hint)

        kind = text("kind", True, f"one of {', '.join(KINDS)}")
        if kind not in KINDS:
            raise TaskFormatError(path, f"got {kind!r}; expected one of {', '.join(KINDS)}", field=f"{where}.kind")
        requirement = text("requirement", True, "a requirement id of task.yaml, e.g. R3")
        if requirements and requirement not in requirements:
            raise TaskFormatError(path, f"{requirement} is not a requirement of the task (known: {', '.join(sorted(requirements))})", field=f"{where}.requirement")
        category = text("category", False, "a task category") or DEFAULT_CATEGORY
        if category not in CATEGORIES:
            raise TaskFormatError(path, f"got {category!r}; expected one of {', '.join(CATEGORIES)}", field=f"{where}.category")
        cases.append(
            JudgeCase(
                id=case_id.strip(),
                kind=str(kind),
                instruction=str(text("instruction", True, "what the judge should do, in a sentence or three")),
                expected=str(text("expected", True, "what the judge should observe when the candidate is right")),
                requirement=str(requirement),
                category=category,
                tier=text("tier", False, "a tier name, e.g. base") or DEFAULT_TIER,
                db_interaction=text("db_interaction", False, "the database interaction the action needs, in a sentence"),
                goal=text("goal", False, "the id of a goal under oracles/<task>/goals/ whose evaluator runs after the case"),
            )
        )
    return cases


def _text_field(path: Path, raw: dict[str, Any], where: str, name: str, required: bool, hint: str) -> str | None:
    value = raw.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise TaskFormatError(path, f"got {value!r}; expected {hint}", field=f"{where}.{name}")
    return value.strip()
