"""FullStack-Bench's DB-log check: a YES or PARTIAL counts only when the database log shows the
interaction the case needs.

The statements the candidate sent while a case ran are read from the task's PostgreSQL
statement log (the same log the ``db_effect`` checks read, db/checks/dbcheck.py) and put to the judge
model with FullStack-Bench's database-interaction validation prompt (its Figures 18 and 20);
the case's ``db_interaction`` says what to look for. FullStack-Bench appends the question to the
end of the testing conversation; here it is asked on its own (the case's task, expected result
and the logged statements are the whole of what the question needs), so the check is cached and
replayed independently of the steps before it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..db.providers.database import database_of
from ..db.providers.statement_log import records_after_marker, statements_of
from ..errors import HarnessError
from .cases import JudgeCase
from .model import JudgeModel
from .verdicts import Verdict, parse_verdict

if TYPE_CHECKING:
    from ..taskrun import TaskRun

MAX_STATEMENTS = 200
MAX_STATEMENT_CHARS = 500
PURPOSE = "db-interaction"

FRONTEND_PROMPT = """\
You have just finished performing a GUI testing task based on the following task description and expected result:

#### Task:

{task}

Expected result: {expected}

The GUI testing task may or may not require interactions with the database through the backend. The following are the database log entries that were written during the UI testing process:

#### Database Logs:

{logs}

You should judge whether the database interactions that occurred during the UI testing process were appropriate and correct based on the above logs. Consider:

- Are the database operations consistent with what would be expected for the given UI testing task?
- Do the database operations support the functionality being tested?
- Are there appropriate database operations for actions such as form submissions, data updates, or searches?
- If the UI task involves viewing data, are there appropriate `SELECT` operations?
- If the UI task involves modifying data, are there appropriate `INSERT`, `UPDATE`, or `DELETE` operations?
- If the GUI task is purely navigation or viewing, it may not require database operations.
{needed}
Answer based on the following criterion:

- If the GUI task does not require database operations, answer **YES**.
- If the database logs contain the necessary operations to support the testing task, answer **YES**.
- If the database logs do not contain the necessary operations to support the testing task, answer **NO**.

**Note:** Output the database interaction correctness judgement *exactly* in the following format:

Database Interaction Correctness: [YES | NO]
"""

BACKEND_PROMPT = """\
You have completed a backend testing process based on the following task and expected result:

**Task:** {task}

**Expected Result:** {expected}

#### Database Logs:

{logs}

Judge whether the backend performed correct database interactions:

- If no database interaction is required, answer **YES**.
- If interaction is required, verify the presence of necessary operations:
  - `SELECT` for data retrieval.
  - `INSERT` or `UPDATE` for data creation or modification.
  - `DELETE` for data removal.
  - Ignore unrelated database operations.
- Output **YES** if required operations exist; otherwise output **NO**.
{needed}
**Note:** Output exactly:

Database Interaction Correctness: [YES | NO]
"""


@dataclass
class StatementWindow:
    """The statements logged while a case ran; ``available`` is False for a task without a database."""

    available: bool
    statements: list[str] = field(default_factory=list)


@contextmanager
def statements_during(run: TaskRun) -> Iterator[StatementWindow]:
    """Collect the statements the candidate sends while the block runs (only those that took effect
    or were attempted: failed and rolled-back ones are marked, as FullStack-Bench's log shows them)."""
    database = database_of(run.service) if run.task.database == "postgres" and run.service is not None else None
    if database is None:
        yield StatementWindow(False)
        return
    log = database.statement_log
    start = log.mark()
    window = StatementWindow(True)
    try:
        yield window
    finally:
        try:
            records = records_after_marker(log.read_until(log.mark()), start)
        except HarnessError:
            raise
        except Exception as err:  # an unreadable log is ours, never the candidate's
            raise HarnessError(f"the database log of {run.key} cannot be read for the judge's DB check: {err}") from err
        for statement in statements_of(records):
            flag = "" if statement.effective else (" -- failed" if statement.failed else " -- rolled back")
            window.statements.append(" ".join(statement.sql.split())[:MAX_STATEMENT_CHARS] + flag)


def format_logs(statements: list[str]) -> str:
    """The statements as the prompt shows them (the last ``MAX_STATEMENTS`` when there are more)."""
    if not statements:
        return "(no database statements were logged)"
    shown = statements[-MAX_STATEMENTS:]
    skipped = f"({len(statements) - len(shown)} earlier statements not shown)\n" if len(statements) > len(shown) else ""
    return skipped + "\n".join(shown)


def interaction_question(case: JudgeCase, statements: list[str]) -> str:
    """FullStack-Bench's validation prompt for the case (frontend wording for GUI cases, backend otherwise)."""
    template = FRONTEND_PROMPT if case.kind == "frontend" else BACKEND_PROMPT
    needed = f"\nThe test case's author says the action needs: {case.db_interaction}\n" if case.db_interaction else ""
    return template.format(task=case.instruction, expected=case.expected, logs=format_logs(statements), needed=needed)


def interaction_confirmed(model: JudgeModel, case: JudgeCase, statements: list[str]) -> bool:
    """Whether the logged statements show the interaction the case needs (True when it names none).

    An answer without YES/NO is a ``JudgeAnswerError`` (a harness error, never a NO).
    """
    if case.db_interaction is None:
        return True
    answer = model.ask([{"role": "user", "content": interaction_question(case, statements)}], purpose=PURPOSE)
    return parse_verdict(answer.text, allowed=(Verdict.YES, Verdict.NO)) is Verdict.YES
