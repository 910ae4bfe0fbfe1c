"""Gherkin oracles as pytest items: one ``ScenarioItem`` per scenario (per example row of an outline).

A ``.feature`` file is parsed with behave's parser into small dataclasses first (features.py),
so a syntax error is a collection error naming the file, the line and the text. Each item runs its
scenario through :mod:`pytest_backendbench.bdd.scenarios.behave_runner` in the worker's shared headless
Chromium (:mod:`pytest_backendbench.bdd.browser.shared`), against the candidate that
``taskrun.base_url_for`` boots. Gherkin tags become the markers the metrics read:
``@R3`` (or ``@requirement:R3``), ``@category:workflow``, ``@tier:r1``, ``@weight:2``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..db.checks.effects import tag_expectations
from ..errors import BackendBenchFormatError, CandidateFailure, HarnessError, OracleError, TaskFormatError
from ..items import BenchItem, ItemKind
from ..results import CDN_PACKAGES_PROPERTY
from ..runkey import RunKey
from ..tasks import Task, load_task
from .browser.failure_capture import FailureCapture
from .browser.page_random import scenario_seed_key
from .browser.shared import SharedBrowser
from .cdn.server import CdnServer
from .scenarios.behave_runner import ORACLE_FAULT, ScenarioResult
from .scenarios.features import (
    GherkinFeature,
    GherkinScenario,
    GherkinStep,
    ScenarioTags,
    StepsLayout,
    find_steps,
    interpret_tags,
    parse_feature_file,
)
from .scenarios.goal_items import check_goal, record_goal
from .scenarios.goals import Goal, goals_for_feature
from .scheduling.pool import ScenarioWork
from .scheduling.worker_pool import pool_of, run_in_pool
from .settings import browser_locale, sleep_policy

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr

def _task_of(feature_path: Path, config: pytest.Config) -> Task | None:
    """The task whose oracle holds this feature file, if it lives in a bench's oracles/<task>/."""
    parts = feature_path.resolve().parts
    if "oracles" not in parts:
        return None
    index = len(parts) - 1 - parts[::-1].index("oracles")
    if index + 1 >= len(parts):
        return None
    task_id = parts[index + 1]
    bench_root = Path(*parts[:index])
    try:
        from ..taskrun import registry_of

        return registry_of(config).task(task_id)
    except (HarnessError, ImportError):
        pass
    except BackendBenchFormatError:
        return None
    try:
        return load_task(bench_root / "benchmarks" / task_id, bench_root / "oracles")
    except BackendBenchFormatError:
        return None


def _run_keys_of(task: Task | None, config: pytest.Config) -> list[RunKey | None]:
    """The runs a scenario of ``task`` is collected for; [None] outside a benchmark session."""
    if task is None:
        return [None]
    try:
        from ..taskrun import registry_of

        return list(registry_of(config).run_keys(task.id))
    except (HarnessError, ImportError):
        return [None]


# --- per-worker resources ------------------------------------------------------------------


def shared_browser(config: pytest.Config) -> SharedBrowser:
    """The worker's first browser session (the pool starts more as scenarios need them)."""
    return pool_of(config).first_session()


def prestart_browser(session: pytest.Session) -> None:
    """Launch the worker's browser in the background, in the locale of its first scenario's task."""
    first = next((item for item in session.items if isinstance(item, ScenarioItem)), None)
    if first is None or first.oracle_problems:
        return
    browser = shared_browser(session.config)
    browser.use_locale(browser_locale(session.config, first.task))
    browser.start_in_background()


# --- failures --------------------------------------------------------------------------------


MAX_REASON_CHARS = 300
"""A failing step's message is cut here in the one-line reason (the full text stays in the item's report)."""


class ScenarioFailed(CandidateFailure):
    """A scenario failed against the candidate (assertion, missing element, timeout)."""

    def __init__(self, item: ScenarioItem, result: ScenarioResult) -> None:
        step = result.failing_step
        title = f"scenario '{item.spec.name}' failed" + (f" at step '{step.keyword} {step.text}' (line {step.line})" if step else "")
        # the why (the assertion's text, the exception) belongs in the one-line reason that the
        # journal, report.json and the summary keep: a step's name alone does not say it
        first, _, rest = result.message.strip().partition("\n")
        if first:
            title += ": " + (first if len(first) <= MAX_REASON_CHARS else first[: MAX_REASON_CHARS - 1] + "…")
        super().__init__(title, "\n".join(part for part in (rest.rstrip(), item.location_text) if part))
        self.result = result


class ScenarioOracleError(OracleError):
    """A scenario could not be judged: the oracle is broken (undefined/ambiguous step,
    unloadable steps module, bad tags) or the browser died."""

    def __init__(self, item: ScenarioItem, message: str, detail: str = "") -> None:
        message = message.removeprefix(ORACLE_FAULT)
        self.title = f"scenario '{item.spec.name}' ({item.location_text}): {message}"
        self.detail = detail
        super().__init__(f"{self.title}\n{detail}".rstrip())


# --- collection ------------------------------------------------------------------------------


class FeatureFile(pytest.File):
    """A .feature file of a task's oracle: yields one ScenarioItem per scenario (and candidate sample)."""

    def collect(self) -> Iterator[ScenarioItem]:
        try:
            feature = parse_feature_file(self.path)
        except TaskFormatError as err:
            raise self.CollectError(str(err)) from err
        steps = find_steps(self.path)
        try:
            goals = goals_for_feature(self.path, [s.name for s in feature.scenarios])
        except TaskFormatError as err:
            raise self.CollectError(str(err)) from err
        task = _task_of(self.path, self.config)
        run_keys = _run_keys_of(task, self.config)
        seen: set[str] = set()
        for scenario in feature.scenarios:
            name = scenario.name or f"scenario at line {scenario.line}"
            if name in seen:
                name = f"{name} [line {scenario.line}]"
            seen.add(name)
            for run_key in run_keys:
                yield ScenarioItem.from_parent(
                    self,
                    name=f"{name}[{run_key.label}]" if run_key is not None and run_key.label else name,
                    spec=scenario,
                    feature=feature,
                    steps=steps,
                    task=task,
                    run_key=run_key,
                    goal=goals.get(scenario.name),
                )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | TerminalRepr:
        """Syntax errors read as one line naming file, line and text."""
        if isinstance(excinfo.value, TaskFormatError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class ScenarioItem(BenchItem):
    """One Gherkin scenario run in the worker's shared browser against the task's candidate."""

    def __init__(
        self,
        *,
        spec: GherkinScenario,
        feature: GherkinFeature,
        steps: StepsLayout,
        task: Task | None = None,
        run_key: RunKey | None = None,
        goal: Goal | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(kind=ItemKind.BDD, run_key=run_key, **kwargs)
        self.goal = goal
        self.spec = spec
        self.feature = feature
        self.steps = steps
        self.task = task
        self.result: ScenarioResult | None = None
        tags = interpret_tags(spec.tags)
        problems = list(tags.problems)
        if task is not None and task.requirements:
            unknown = [r for r in tags.requirements if r not in task.requirements]
            if unknown:
                problems.append(f"requirement tag(s) {', '.join('@' + r for r in unknown)} not in {task.task_yaml} (known: {', '.join(sorted(task.requirements))})")
            if not tags.requirements:
                problems.append("no requirement tag: tag the scenario with the task.yaml requirement it checks, e.g. @R1")
        if steps.problem:
            problems.append(steps.problem)
        self.oracle_problems = tuple(problems)
        for marker in [*tags.markers(), *tag_expectations(spec.tags)]:  # @db_effect:OP:table tags too
            self.add_marker(marker)

    @property
    def location_text(self) -> str:
        """``path:line`` of the scenario, relative to the rootdir when possible."""
        try:
            path = self.path.relative_to(self.config.rootpath)
        except ValueError:
            path = self.path
        return f"{path}:{self.spec.line}"

    def reportinfo(self) -> tuple[Path, int, str]:
        """The feature file and the scenario's line (0-based, as pytest wants it)."""
        return self.path, self.spec.line - 1, f"Scenario: {self.spec.name}"

    def followers(self, base_url: str) -> Iterator[tuple[str, Callable[[], ScenarioWork]]]:
        """The scenario items after this one of the same run, in pytest's order, with their work
        (a run's items are contiguous: another kind or run ends them; malformed ones are skipped)."""
        items = self.session.items
        try:
            index = items.index(self)
        except ValueError:
            return
        for follower in items[index + 1 :]:
            if not isinstance(follower, ScenarioItem) or follower.run_key != self.run_key or self.run_key is None:
                return
            if not follower.oracle_problems:
                yield follower.nodeid, partial(work_for, follower, base_url)

    def runtest(self) -> None:
        """Boot (via taskrun), reset the shared browser, run the scenario, raise on anything but a pass."""
        __tracebackhide__ = True
        if self.oracle_problems:
            raise ScenarioOracleError(self, "the oracle is malformed (not the candidate's fault)", "\n".join(self.oracle_problems))
        from ..taskrun import base_url_for

        base_url = base_url_for(self)
        job = run_in_pool(self.config, self.nodeid, work_for(self, base_url), self.followers(base_url))  # in one of the worker's browser sessions
        pool = pool_of(self.config)
        result = self.result = pool.outcome(job)
        _record_cdn_packages(self, pool.cdn_server)
        goal = record_goal(self, self.goal, job.goal, result.message.partition("\n")[0]) if self.goal is not None else None
        if result.passed:
            if goal is not None:
                check_goal(goal, self.location_text)
            return
        if job.capture is not None or job.timed_out:
            self._attach_browser_state(job.capture or FailureCapture(hung=True, problems=["the page was abandoned at the deadline"]), result)
        if result.oracle_fault:
            raise ScenarioOracleError(self, result.message, result.traceback if result.traceback else "")
        if goal is not None and goal.status == "broken":
            check_goal(goal, self.location_text)  # a broken evaluator is the oracle's error, whatever the scenario did
        raise ScenarioFailed(self, result)

    def _attach_browser_state(self, capture: FailureCapture, result: ScenarioResult) -> None:
        """Screenshot, page URL, failing step and console log, as a report section."""
        lines = [f"page URL: {capture.url or '(unknown)'}"]
        if result.failing_step is not None:
            lines.append(f"failing step: {result.failing_step}")
        if capture.screenshot:
            try:
                from ..taskrun import artifact_dir_for

                folder = artifact_dir_for(self)
                folder.mkdir(parents=True, exist_ok=True)
                path = folder / f"{_slug(self.path.stem)}-{self.spec.line}-{_slug(self.name)}.png"
                path.write_bytes(capture.screenshot)
            except (HarnessError, OSError) as err:
                lines.append(f"screenshot: not saved ({err})")
            else:
                lines.append(f"screenshot: {path}")
                self.user_properties.append(("screenshot", str(path)))
        lines += [f"note: {problem}" for problem in capture.problems]
        lines.append("console log:")
        lines += ["  " + line for line in capture.console] or ["  (empty)"]
        self.add_report_section("call", "browser", "\n".join(lines))
        if result.traceback and not result.oracle_fault:
            self.add_report_section("call", "step traceback", result.traceback)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | TerminalRepr:
        """Scenario, failing step and message; a full traceback only for bugs of ours."""
        exc = excinfo.value
        if isinstance(exc, CandidateFailure):
            return f"[{exc.phase.value}] {exc.title}\n{exc.detail}".rstrip()
        if isinstance(exc, ScenarioOracleError):
            return f"[oracle error, not the candidate's fault] {exc.title}\n{exc.detail}".rstrip()
        if isinstance(exc, HarnessError):
            return f"[harness error, not the candidate's fault] {exc}"
        return super().repr_failure(excinfo)


def _record_cdn_packages(item: pytest.Item, cdn: CdnServer | None) -> None:
    """Hand the packages the offline CDN served since the last scenario to the report (via xdist too)."""
    served = cdn.take_unreported() if cdn is not None else []
    if served:
        item.user_properties.append((CDN_PACKAGES_PROPERTY, [entry.to_dict() for entry in served]))


def _static_site_files(item: pytest.Item) -> tuple[Path | None, Path | None]:
    """The entry page's folder and file of the item's candidate when it is served as files."""
    from ..taskrun import session_registry

    registry = session_registry(item.config)
    run = registry.for_item(item) if registry is not None else None  # no registry: items run without --candidate
    service = run.service if run is not None else None
    return getattr(service, "app_dir", None), getattr(service, "entry_file", None)


def work_for(item: ScenarioItem, base_url: str) -> ScenarioWork:
    """What the item's scenario needs, decided in pytest's thread (options, task hints, files)."""
    from ..config import bench_config
    from ..runkey import split_run_label

    app_dir, entry_file = _static_site_files(item)
    repeat = split_run_label(item.run_key.label)[1] if item.run_key is not None else 0
    task_id = item.task.id if item.task is not None else item.path.parent.name
    entry = base_url.rstrip("/") + (item.task.primary_route if item.task is not None else "/")
    return ScenarioWork(
        feature=item.path,
        line=item.spec.line,
        step_modules=tuple(item.steps.modules),
        base_url=base_url,
        entry_url=entry,
        environment=item.steps.environment,
        sleep=sleep_policy(item.config, item.task),
        locale=browser_locale(item.config, item.task),
        app_dir=app_dir,
        entry_file=entry_file,
        random_seed_key=scenario_seed_key(bench_config(item.config).bdd_seed, task_id, repeat, item.path.name, item.spec.line),
        goal=item.goal,
    )


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")[:80] or "scenario"


__all__ = [
    "FeatureFile",
    "GherkinFeature",
    "GherkinScenario",
    "GherkinStep",
    "ScenarioItem",
    "ScenarioTags",
    "StepsLayout",
    "find_steps",
    "interpret_tags",
    "parse_feature_file",
    "prestart_browser",
    "shared_browser",
    "work_for",
]
