"""The database judge (FullStack-Bench's database test): does the candidate's database hold what
a case describes?

The task's real PostgreSQL is dumped once per run (db/providers/snapshot.py: every table's columns and its
first five rows), reduced to FullStack-Bench's JSON (table -> columns and rows), and put to the
judge with FullStack-Bench's prompt (its Figure 21); the answer is a fenced JSON object
``{"answer": "Yes"}`` or ``{"answer": "No"}``: YES or NO.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from ..db.providers.database import database_of
from ..errors import HarnessError
from .case_run import CaseRun
from .cases import JudgeCase
from .model import JudgeModel
from .trajectory import JudgeOutcome, JudgeStep
from .verdicts import JudgeAnswerError, Verdict

PURPOSE = "db-verdict"
JUDGE_SNAPSHOTS_KEY = pytest.StashKey[dict[str, dict[str, Any]]]()
"""The snapshot each run's database cases share (taken once, at the run's first database case)."""
ANSWER_PATTERN = re.compile(r"\{\s*\"answer\"\s*:\s*\"(yes|no)\"\s*\}", re.IGNORECASE)

PROMPT = """\
You are a meticulous software engineer specialised in databases.

Below is the implemented database schema (tables → columns with a few rows) dumped at runtime.

**IMPLEMENTED DATABASE SCHEMA:**

```json
{schema}
```

Answer the following question:

Does the database contain {description}?

Consider whether the implemented database contains a table (or a combination of tables) that can provide the content in the question.

Answer "Yes" if:

- a single table matches, OR
- several tables together cover the purpose, OR
- a superset of a table matches.

Otherwise answer "No".

**Steps for you:**

1. Think step-by-step. Show your reasoning for each question.
2. After finishing all reasoning, output ONLY one valid JSON object fenced in ```json ... ``` with the key "answer".
  - If the answer is yes, output: {{"answer": "Yes"}}
  - Otherwise, output: {{"answer": "No"}}
"""


def fullstack_schema(snapshot: dict[str, Any]) -> dict[str, Any]:
    """FullStack-Bench's view of a snapshot: each table's column names and first rows."""
    return {name: {"columns": list(table.get("columns") or {}), "rows": list(table.get("rows") or [])} for name, table in (snapshot.get("tables") or {}).items()}


def database_question(case: JudgeCase, schema: dict[str, Any]) -> str:
    """The prompt for one case: the data description is the case's instruction, its expectation beside."""
    description = case.instruction.rstrip(" .?")
    if case.expected:
        description += f" (expected: {case.expected.rstrip('.')})"
    return PROMPT.format(schema=json.dumps(schema, indent=1, ensure_ascii=False), description=description)


def parse_database_answer(text: str) -> Verdict:
    """YES or NO from the answer's ``{"answer": ...}`` object (the last one); none is a ``JudgeAnswerError``."""
    found = ANSWER_PATTERN.findall(text)
    if not found:
        raise JudgeAnswerError('no {"answer": "Yes"} or {"answer": "No"} object in it', text)
    return Verdict.YES if found[-1].lower() == "yes" else Verdict.NO


def judge_database(model: JudgeModel, case: JudgeCase, snapshot: dict[str, Any]) -> JudgeOutcome:
    """One question, one answer."""
    answer = model.ask([{"role": "user", "content": database_question(case, fullstack_schema(snapshot))}], purpose=PURPOSE)
    verdict = parse_database_answer(answer.text)
    step = JudgeStep(index=0, screenshot=None, model_text=answer.text, action=f"ANSWER; {verdict.value}")
    return JudgeOutcome(verdict, f"the database judge answered {verdict.value}", [step], answer.tokens_in, answer.tokens_out)


def run_database_case(item: CaseRun) -> JudgeOutcome:
    """The database case of a judge item, on the run's snapshot (taken by its first database case)."""
    run = item.task_run
    if run.task.database != "postgres":
        raise HarnessError(f"{item.nodeid}: database judge cases need `database: postgres` in {run.task.task_yaml}")
    snapshots = item.config.stash.setdefault(JUDGE_SNAPSHOTS_KEY, {})
    if run.key not in snapshots:
        database = database_of(run.ensure_started())
        if database is None:
            raise HarnessError(f"the {run.task.id!r} service was started without its database (runtime bug)")
        try:
            snapshots[run.key] = database.snapshot()
        except HarnessError:
            raise
        except Exception as err:  # psycopg errors: our server, not the candidate
            raise HarnessError(f"could not take the database snapshot for the database judge: {err}") from err
        (item.record_dir.parent / "db-judge-snapshot.json").write_text(json.dumps(fullstack_schema(snapshots[run.key]), indent=1), encoding="utf-8")
    return judge_database(item.judge_model, item.case, snapshots[run.key])

