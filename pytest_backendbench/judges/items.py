"""Judge cases as pytest items: ``oracles/<task>/judge/cases.yaml``, one item per case and run.

A judge item belongs to its candidate's run like any oracle item (build and boot preconditions,
``isolation``, the run's xdist group; kind ``judge`` sorts after the deterministic items, so a
judge's writes never reach a snapshot case), but its verdict is the model's: YES passes, NO
fails, PARTIAL fails with ``bench_partial`` (0.5 in the judged figures), and a YES or PARTIAL
whose DB-log check says the interaction is missing counts as NO (FullStack-Bench's rule; the
judge's own verdict stays in the report). An answer the harness cannot read, or a judge server
that fails, is a harness error, never a NO. Judged items feed their own figures
(scores/judged.py), never Test.Acc or Req.Acc of the deterministic items.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..errors import BackendBenchFormatError, CandidateFailure, HarnessError
from ..items import BenchItem, CaseFile, ItemKind
from ..outcomes import describe_failure
from ..results import PARTIAL_PROPERTY
from ..runkey import RunKey
from ..taskrun import TaskRun, artifact_dir_for, item_extra, registry_of, session_registry
from .cases import CASES_FILE, JUDGE_FOLDER, JudgeCase, load_cases
from .context import JudgeContext, judge_context
from .model import JudgeAnswer, JudgeModel
from .trajectory import JudgeOutcome, write_trajectory
from .verdicts import Verdict

JUDGE_FOLDER_IN_ARTIFACTS = "judge"
MAX_STEP_TEXT = 2000
"""Characters of the model's text per step kept in report.json (trajectory.json keeps all of it)."""


class JudgeVerdictFailure(CandidateFailure):
    """The judge answered NO (or PARTIAL, or a YES the database log does not bear out)."""


class CountingModel:
    """A judge model that counts what one case asked: answers, replayed answers, tokens."""

    def __init__(self, inner: JudgeModel) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls = 0
        self.replayed = 0
        self.tokens_in = 0
        self.tokens_out = 0
        self._lock = threading.Lock()

    def ask(self, messages: list[dict[str, Any]], *, purpose: str, tools: list[dict[str, Any]] | None = None) -> JudgeAnswer:
        """The inner model's answer, counted."""
        answer = self.inner.ask(messages, purpose=purpose, tools=tools)
        with self._lock:
            self.calls += 1
            self.replayed += int(answer.replayed)
            self.tokens_in += answer.tokens_in
            self.tokens_out += answer.tokens_out
        return answer


def collect_judge_cases(file_path: Path, parent: pytest.Collector) -> pytest.File | None:
    """``JudgeCaseFile`` for ``oracles/<task>/judge/cases.yaml`` of a bench session, else None."""
    registry = session_registry(parent.config)
    if registry is None or file_path.name != CASES_FILE or file_path.parent.name != JUDGE_FOLDER:
        return None
    oracles = registry.catalog.oracles_dir
    if not file_path.is_relative_to(oracles) or len(file_path.relative_to(oracles).parts) != 3:
        return None
    return JudgeCaseFile.from_parent(parent, path=file_path)  # type: ignore[no-any-return]


class JudgeCaseFile(CaseFile):
    """``oracles/<task>/judge/cases.yaml``: one JudgeItem per case and candidate run."""

    def collect(self) -> Iterator[JudgeItem]:
        registry = registry_of(self.config)
        task = self.case_task(registry.task)
        try:
            cases = load_cases(self.path, task.requirements)
        except BackendBenchFormatError as err:
            raise self.CollectError(str(err)) from err
        for case in cases:
            if case.kind == "database" and task.database != "postgres":
                raise self.CollectError(f"{self.path}: {case.id}: database cases need `database: postgres` in {task.task_yaml}")
            for run_key in registry.run_keys(task.id):
                yield JudgeItem.from_parent(self, name=self.run_item_name(case.id, run_key), case=case, run_key=run_key)


class JudgeItem(BenchItem):
    """One judge case of one candidate run; the judge for its kind decides."""

    def __init__(self, *, case: JudgeCase, run_key: RunKey, **kwargs: Any) -> None:
        super().__init__(kind=ItemKind.JUDGE, run_key=run_key, **kwargs)
        self.case = case
        self._model: CountingModel | None = None
        self.add_marker(pytest.mark.requirement(case.requirement))
        self.add_marker(pytest.mark.category(case.category or "workflow"))
        self.add_marker(pytest.mark.tier(case.tier or "base"))

    # --- what a judge needs (gui_item.run_frontend_case, api_judge, db_judge) ----------------

    @property
    def context(self) -> JudgeContext:
        """The run's judge; a judge item runs only with one (without, it is deselected)."""
        context = judge_context(self.config)
        if context is None:
            raise HarnessError(f"{self.nodeid} needs a judge model: run with --bench-judge=openai:<model>")
        return context

    @property
    def item(self) -> pytest.Item:
        """This item (``CaseRun.item``)."""
        return self

    @property
    def task_run(self) -> TaskRun:
        """The candidate run this case judges."""
        run = registry_of(self.config).for_item(self)
        if run is None:
            raise HarnessError(f"{self.nodeid} does not belong to a benchmark task")
        return run

    @property
    def judge_model(self) -> CountingModel:
        """The judge model for this case (seed shifted per --bench-repeat), counting what it is asked."""
        if self._model is None:
            self._model = CountingModel(self.context.model_for_repeat(self.run_key.repeat if self.run_key else 0))
        return self._model

    @property
    def max_steps(self) -> int:
        """Actions the judge may take (--bench-judge-max-steps)."""
        return self.context.max_steps

    @property
    def deadline_seconds(self) -> float:
        """Wall-clock seconds for the case (--bench-judge-deadline)."""
        return self.context.deadline_seconds

    @property
    def report_dir(self) -> Path:
        """The report dir; trajectory and screenshot paths are relative to it."""
        return registry_of(self.config).artifacts_dir.parent

    @property
    def record_dir(self) -> Path:
        """Where this case's trajectory and screenshots go."""
        folder = artifact_dir_for(self) / JUDGE_FOLDER_IN_ARTIFACTS / re.sub(r"[^A-Za-z0-9_.-]+", "_", self.case.id)
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    # --- the run ------------------------------------------------------------------------------

    def judge(self) -> JudgeOutcome:
        """The outcome of the judge for the case's kind."""
        if self.case.kind == "backend":
            from .api_judge import run_backend_case

            return run_backend_case(self)
        if self.case.kind == "database":
            from .db_judge import run_database_case

            return run_database_case(self)
        try:
            from .gui_item import run_frontend_case  # type: ignore[import-not-found,unused-ignore]
        except ImportError as err:
            raise HarnessError(f"frontend judge cases need the GUI judge (selenium and Chromium): {err}") from err
        outcome: JudgeOutcome = run_frontend_case(self)
        return outcome

    def runtest(self) -> None:
        __tracebackhide__ = True
        outcome: JudgeOutcome | None = None
        error: str | None = None
        try:
            outcome = self.judge()
        except (HarnessError, CandidateFailure) as err:
            error = str(err)
            raise
        finally:
            self._record(outcome, error)
        counted = self.counted_verdict(outcome)
        if counted is Verdict.YES:
            return
        if counted is Verdict.PARTIAL:
            self.user_properties.append((PARTIAL_PROPERTY, True))
        demoted = counted is not outcome.verdict
        title = (
            f"judge case {self.case.id}: the judge said {outcome.verdict.value}, but the database log does not show the interaction it needs"
            if demoted
            else f"judge case {self.case.id}: the judge said {counted.value}"
        )
        raise JudgeVerdictFailure(title, f"task: {self.case.instruction}\nexpected: {self.case.expected}\njudge: {outcome.reason}")

    @staticmethod
    def counted_verdict(outcome: JudgeOutcome) -> Verdict:
        """The verdict that counts: a YES or PARTIAL the DB log does not bear out is a NO."""
        if outcome.db_confirmed is False and outcome.verdict is not Verdict.NO:
            return Verdict.NO
        return outcome.verdict

    def _record(self, outcome: JudgeOutcome | None, error: str | None) -> None:
        """The trajectory file and the report's ``judge`` facts (also when the case ended in an error)."""
        model = self._model
        path = write_trajectory(
            self.record_dir, self.case.id, self.case.kind, self.case.instruction, self.case.expected, outcome, outcome.steps if outcome else [], error
        )
        context = judge_context(self.config)
        tokens_in = model.tokens_in if model else 0
        tokens_out = model.tokens_out if model else 0
        cost = None
        if context is not None and context.price is not None and model is not None and model.calls > model.replayed:
            share = (model.calls - model.replayed) / model.calls  # replayed answers cost nothing again
            cost = round(share * (tokens_in * context.price[0] + tokens_out * context.price[1]) / 1e6, 6)
        facts: dict[str, Any] = {
            "case": self.case.id,
            "case_kind": self.case.kind,
            "model": model.name if model else (context.name if context else None),
            "verdict": outcome.verdict.value if outcome else None,
            "counted": self.counted_verdict(outcome).value if outcome else None,
            "db_confirmed": outcome.db_confirmed if outcome else None,
            "reason": outcome.reason if outcome else error,
            "steps": len(outcome.steps) if outcome else 0,
            "trajectory_steps": [
                {"index": step.index, "action": step.action, "screenshot": step.screenshot, "model_text": step.model_text[:MAX_STEP_TEXT]} for step in (outcome.steps if outcome else [])
            ],
            "calls": model.calls if model else 0,
            "replayed": model.replayed if model else 0,
            "tokens_in": tokens_in,
            "tokens_out": tokens_out,
            "cost_usd": cost,
            "trajectory": path.relative_to(self.report_dir).as_posix() if path.is_relative_to(self.report_dir) else str(path),
            **(outcome.facts if outcome else {}),
        }
        extra = item_extra(self)
        extra["judge"] = facts
        if outcome is not None and outcome.db_confirmed is not None:
            extra["db_valid"] = outcome.db_confirmed

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        exc = excinfo.value
        if isinstance(exc, (CandidateFailure, HarnessError)):
            return describe_failure(exc)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"judge case {self.case.id} ({self.case.kind}): {self.case.instruction}"
