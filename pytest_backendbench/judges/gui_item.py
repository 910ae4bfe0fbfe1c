"""A frontend judge case run the way a Gherkin scenario runs: in a session of the worker's browser pool.

The case is a job of the pool (bdd/scheduling/pool.py) like a scenario: its session is reset for the
candidate's origin and seeded like a scenario's, with the browser options every scenario gets
(the offline CDN shim, the remote-host policy, the locale), the candidate's SRI hashes learnt
when it is served as files; it runs under a deadline (the judge's, ``--bench-judge-deadline``,
which includes the model's answers) and the pool's hang watch. A page that stops answering is
the candidate's failure, as for a scenario; a case that merely runs out of time is a harness
error (the model may be what was slow). Around the judge, the task's statement log is read
(judges/db_log.py) and FullStack-Bench's DB-log question asked when the judge said YES or PARTIAL.
The first frontend case of each candidate run also takes WebGen-Bench's appearance grade
(judges/appearance.py) in the same session; it is the case's ``appearance`` fact.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from ..bdd.browser.page_random import scenario_seed_key
from ..bdd.scenarios.behave_runner import SleepPolicy
from ..bdd.scenarios.goal_items import record_goal
from ..bdd.scenarios.goals import goal_named
from ..bdd.scheduling.pool import ScenarioWork
from ..bdd.settings import browser_locale
from ..errors import CandidateFailure, HarnessError
from .appearance import AppearanceGrade, grade_appearance
from .case_run import CaseRun
from .db_log import interaction_confirmed, statements_during
from .gui_judge import GuiLimits, JudgeDeadlineError, judge_in_browser
from .trajectory import JudgeOutcome, JudgeStep
from .verdicts import Verdict

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

APPEARANCE_GRADED_KEY = pytest.StashKey[set[str]]()
"""The runs whose appearance this worker graded (a run's items stay on one worker)."""
PAUSE_SCALE_EXTRA = "gui_pause_scale"
"""``JudgeContext.extra`` key: WebVoyager's fixed pauses times this (default 1, as WebGen-Bench waits)."""
DEADLINE_GRACE_S = 30.0
"""Past the judge's own deadline (checked before each step), how long the pool waits before it kills the page."""


class JudgedPageHung(CandidateFailure):
    """The candidate's page stopped answering while the judge used it (as a scenario's hung page)."""


def run_frontend_case(case_run: CaseRun) -> JudgeOutcome:
    """Judge the item's frontend case in a pool session at the candidate's entry page, then check the DB log."""
    __tracebackhide__ = True
    from ..bdd.scheduling.worker_pool import pool_of
    from ..config import bench_config
    from ..taskrun import base_url_for

    run = case_run.task_run
    base_url = base_url_for(case_run.item)
    start_url = base_url.rstrip("/") + run.task.primary_route
    pause_scale = float(case_run.context.extra.get(PAUSE_SCALE_EXTRA, 1.0))
    limits = GuiLimits(max_steps=case_run.max_steps, deadline_seconds=case_run.deadline_seconds, pause_scale=pause_scale)
    model, case, record_dir, report_dir = case_run.judge_model, case_run.case, case_run.record_dir, case_run.report_dir
    steps: list[JudgeStep] = []
    outcomes: list[JudgeOutcome] = []
    graded = case_run.config.stash.setdefault(APPEARANCE_GRADED_KEY, set())
    grade_now = str(run.key) not in graded
    graded.add(str(run.key))
    appearance: list[AppearanceGrade | str] = []

    def drive(driver: WebDriver) -> None:
        outcomes.append(judge_in_browser(
            driver, start_url=start_url, case=case, model=model, limits=limits, record_dir=record_dir, report_dir=report_dir, trajectory=steps,
        ))
        if grade_now:  # WebGen-Bench's appearance grade, once per candidate run, in the same session
            try:
                appearance.append(grade_appearance(
                    driver, url=start_url, instruction=run.task.spec_path.read_text(encoding="utf-8").strip(), model=model,
                    record_dir=record_dir.parent / "appearance", report_dir=report_dir,
                ))
            except Exception as err:  # noqa: BLE001 - the grade is extra: its failure is reported, the case stands
                appearance.append(f"the appearance grade failed: {type(err).__name__}: {err}")

    goal = goal_named(run.task.oracle_dir, case.goal) if case.goal else None  # InfiniteWeb: evaluated in the page the judge left
    service: Any = run.service
    work = ScenarioWork(
        feature=case_run.item.path, line=0, step_modules=(), base_url=base_url, entry_url=start_url, environment=None,
        sleep=SleepPolicy.real(), locale=browser_locale(case_run.config, run.task),
        app_dir=getattr(service, "app_dir", None), entry_file=getattr(service, "entry_file", None),
        random_seed_key=scenario_seed_key(bench_config(case_run.config).bdd_seed, run.task.id, case_run.run_key.repeat if case_run.run_key else 0, "judge", 0),
        drive=drive, timeout_s=limits.deadline_seconds + DEADLINE_GRACE_S, goal=goal,
    )
    pool = pool_of(case_run.config)
    try:
        with statements_during(run) as window:
            pool.submit(case_run.nodeid, work)
            job = pool.take(case_run.nodeid)
        if goal is not None:
            record_goal(case_run.item, goal, job.goal, str(job.hung or ("the page was abandoned at the deadline" if job.timed_out else "")))
        if job.hung is not None:
            raise JudgedPageHung(f"judge case {case.id}: the candidate's page stopped answering", str(job.hung))
        if job.timed_out:
            raise JudgeDeadlineError(f"judge case {case.id}: the GUI judge was still running {limits.deadline_seconds + DEADLINE_GRACE_S:g} s after it started; its page was abandoned (raise --bench-judge-deadline)")
        if job.error is not None:
            raise job.error
        if not outcomes:
            raise HarnessError(f"judge case {case.id}: the GUI judge's session ended without an outcome")
    except BaseException:
        if steps:
            case_run.item.add_report_section("call", "judge steps before the error", _steps_text(steps))
        raise
    outcome = outcomes[0]
    if appearance:
        got = appearance[0]
        outcome.facts["appearance"] = got.to_dict() if isinstance(got, AppearanceGrade) else {"error": got}
    source = run.task.extra.get("webgen_bench")
    if isinstance(source, dict) and source.get("primary_category"):
        outcome.facts["webgen_category"] = str(source["primary_category"])  # compute_acc's per-category accuracy (scores/webgen_bench.py)
    if window.available and outcome.verdict is not Verdict.NO and case.db_interaction is not None:
        outcome.db_confirmed = interaction_confirmed(model, case, window.statements)
    return outcome


def _steps_text(steps: list[JudgeStep]) -> str:
    """The steps a case took before its error, for the item's report (nothing the judge did is lost)."""
    lines = []
    for step in steps:
        lines.append(f"step {step.index}: {step.action}" + (f"  (screenshot {step.screenshot})" if step.screenshot else ""))
        lines += ["    " + line for line in step.model_text.splitlines()]
    return "\n".join(lines)
