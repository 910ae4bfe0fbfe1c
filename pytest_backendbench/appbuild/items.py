"""app.build's measured checks as items of a candidate's run: AB-06 sweep, AB-07 Lighthouse, AB-02 prompt.

A task with a browser UI (``kind: fullstack`` or ``frontend``; the page is its ``primary_route``,
``/`` by default) gets one item per check that ``--bench-app-checks`` turns on, after its oracle
items (``ItemKind.APP_CHECK`` sorts last), so the controls the sweep clicks cannot disturb the
oracle. They are not oracle items: Test.Acc, Req.Acc and SR do not see them; scores/app_build.py
reads their grade (``ItemResult.app_check``). A FAIL is the candidate's failure; a check the
harness could not make (no Lighthouse, a Lighthouse run past its deadline, a judge server down) is
a harness error.

The checks run in a browser of their own per worker (a ``SharedBrowser`` with the options every
scenario gets: flags, offline CDN, remote-host policy), not in a session of the scenario pool:
the sweep resets its page before every click and relaunches a browser whose page stopped
answering, which needs the session itself; Lighthouse attaches to the same browser's DevTools port.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import CandidateFailure, HarnessError
from ..items import BenchItem, ItemKind
from ..judges.context import judge_context
from ..runkey import RunKey
from ..tasks import Task
from .grades import CHECKS, PERFORMANCE, PROMPT, SWEEP, Grade, performance_grade, sweep_grade

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr

    from ..bdd.browser.shared import SharedBrowser
    from ..taskrun import TaskRun

BROWSER_UI_KINDS = ("fullstack", "frontend")
"""Task kinds whose candidates serve a page at ``primary_route``: app.build's browser checks apply."""
MEASURE_CHECKS = {"sweep": SWEEP, "lighthouse": PERFORMANCE, "prompt": PROMPT}
APP_BROWSER_KEY = pytest.StashKey["SharedBrowser"]()
"""The worker's browser for app checks, launched on first use and closed at the end of the run."""


class AppCheckFailed(CandidateFailure):
    """An app.build check graded the candidate FAIL."""


def checks_for(config: pytest.Config, task: Task) -> list[str]:
    """The app.build checks measured for ``task`` in this run (none without a browser UI)."""
    from ..config import bench_config

    if task.kind not in BROWSER_UI_KINDS:
        return []
    from .settings import parse_measures

    measures = list(parse_measures(bench_config(config).app_checks))
    if measures and judge_context(config) is not None:
        measures.append("prompt")  # AB-02 needs a judge model; without one it stays NA
    return [MEASURE_CHECKS[m] for m in measures if m in MEASURE_CHECKS]


def app_check_items(parent: pytest.File, task: Task, run_key: RunKey) -> Iterator[AppCheckItem]:
    """The app-check items of one run of ``task`` (collected with its build/boot/smoke items)."""
    for check in checks_for(parent.config, task):
        name = f"{check}-{CHECKS[check].lower().replace(' ', '-').replace('/', '-')}"
        yield AppCheckItem.from_parent(parent, name=f"{name}[{run_key.label}]" if run_key.label else name, check=check, task=task, run_key=run_key)


class AppCheckItem(BenchItem):
    """One of app.build's measured checks of one candidate."""

    def __init__(self, *, check: str, task: Task, run_key: RunKey, **kwargs: Any) -> None:
        super().__init__(kind=ItemKind.APP_CHECK, run_key=run_key, **kwargs)
        self.check = check
        self.task = task
        from ..taskrun import item_extra

        # the check is known before anything runs: a candidate that never boots still has its AB-06 FAIL
        item_extra(self)["app_check"] = {"check": check}

    def runtest(self) -> None:
        """Measure, record the grade and details for the report, fail on FAIL."""
        __tracebackhide__ = True
        from ..taskrun import base_url_for, registry_of

        run = registry_of(self.config).for_item(self)
        if run is None:
            raise HarnessError(f"{self.nodeid}: app check without a candidate run (collection bug)")
        url = base_url_for(self).rstrip("/") + self.task.primary_route
        if self.check == SWEEP:
            grade, score, details, summary = self._sweep(run, url)
        elif self.check == PERFORMANCE:
            grade, score, details, summary = self._lighthouse(run, url)
        else:
            from .prompt import grade_prompt

            grade, score, details, summary = grade_prompt(self, self._browser(run), url)
        self._record(grade, score, details)
        self.add_report_section("call", CHECKS[self.check].lower(), summary)
        if grade is Grade.FAIL:
            raise AppCheckFailed(f"{self.check} {CHECKS[self.check]}: FAIL: {summary.splitlines()[0]}", "\n".join(summary.splitlines()[1:]))

    def _record(self, grade: Grade, score: float | None, details: dict[str, Any]) -> None:
        from ..taskrun import item_extra

        record = {"check": self.check, "grade": grade.value, "score": score, "details": details}
        item_extra(self)["app_check"] = record

    def _browser(self, run: TaskRun) -> SharedBrowser:
        """The worker's app-check browser, in the task's locale, knowing the candidate's SRI hashes."""
        from ..bdd.settings import browser_locale

        browser = app_browser(self.config)
        browser.use_locale(browser_locale(self.config, self.task))
        app_dir = getattr(run.service, "app_dir", None)
        if app_dir is not None and browser.cdn_server is not None:
            browser.cdn_server.learn_integrity(app_dir)
        return browser

    def _sweep(self, run: TaskRun, url: str) -> tuple[Grade, float | None, dict[str, Any], str]:
        from ..config import bench_config
        from .sweep import ClickableSweep

        bench = bench_config(self.config)
        folder = self.artifacts_folder()
        report = ClickableSweep(self._browser(run), url, depth=bench.sweep_depth, budget=bench.sweep_budget, screenshots=folder).run()
        for outcome in report.outcomes:
            if outcome.screenshot:
                outcome.screenshot = self.report_path(Path(outcome.screenshot))
        counts = report.counts()
        grade = sweep_grade(counts)
        lines = [(
            f"{counts.clicked} controls clicked: {counts.broken} broken, {counts.console_errors} with console errors, {counts.dead} without a visible effect"
            f" ({report.seconds:g} s; {report.left_over} left over)"
        )]
        lines += [f"page load: {f.kind}: {f.detail}" for f in report.load_findings]
        for outcome in report.outcomes:
            what = f"{outcome.selector} ({outcome.text!r})"
            if outcome.not_clicked:
                lines.append(f"not clicked {what}: {outcome.not_clicked}")
            for finding in outcome.findings:
                lines.append(f"{finding.kind}: {what}: {finding.detail}" + (f" [screenshot {outcome.screenshot}]" if outcome.screenshot else ""))
        lines += report.notes
        return grade, grade.score, report.to_dict(), "\n".join(lines)

    def _lighthouse(self, run: TaskRun, url: str) -> tuple[Grade, float | None, dict[str, Any], str]:
        from ..bdd.browser.page_probe import debugger_address
        from ..config import bench_config
        from .lighthouse import find_lighthouse, run_lighthouse

        bench = bench_config(self.config)
        command = find_lighthouse(bench.lighthouse or "")
        browser = self._browser(run)
        browser.reset(url)
        address = debugger_address(browser.driver.capabilities)
        if address is None:
            raise HarnessError("Lighthouse needs the browser's DevTools address, and chromedriver did not report one")
        result = run_lighthouse(command, url, debugger_address=address, output=self.artifacts_folder() / "lighthouse.json", timeout_s=bench.lighthouse_timeout)
        result.report = self.report_path(Path(result.report))
        browser.reset(url)  # Lighthouse leaves its tab on a page of its own
        figures = ", ".join(f"{name} {value:g}" for name, value in result.metrics.items() if value is not None)
        if result.score is None:
            return Grade.FAIL, 0.0, result.to_dict(), f"Lighthouse could not score the page: {result.runtime_error}\n{figures}".rstrip()
        grade = performance_grade(result.score)
        return grade, result.score, result.to_dict(), f"performance score {result.score:.2f} ({grade.value}); {figures}; report {result.report}"

    def artifacts_folder(self) -> Path:
        from ..taskrun import artifact_dir_for

        folder = artifact_dir_for(self) / "app-checks"
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def report_path(self, path: Path) -> str:
        """A path relative to the report dir (the report links it), else as it is."""
        from ..taskrun import registry_of

        try:
            return str(path.relative_to(Path(registry_of(self.config).artifacts_dir).parent))
        except ValueError:
            return str(path)

    def reportinfo(self) -> tuple[Path, int, str]:
        """The task.yaml this check belongs to."""
        return self.path, 0, f"{self.run_key}: {self.check} {CHECKS[self.check]}"

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | TerminalRepr:
        """The check's verdict and findings; a full traceback only for bugs of ours."""
        from ..outcomes import describe_failure

        if isinstance(excinfo.value, (CandidateFailure, HarnessError)):
            return describe_failure(excinfo.value)
        return super().repr_failure(excinfo)


def app_browser(config: pytest.Config) -> SharedBrowser:
    """The worker's browser for app checks (options as for scenarios), closed with the run or on Ctrl-C."""
    browser = config.stash.get(APP_BROWSER_KEY, None)
    if browser is None:
        from ..bdd.browser.shared import SharedBrowser
        from ..bdd.settings import browser_options
        from ..interrupt import interrupt_of

        browser = config.stash[APP_BROWSER_KEY] = SharedBrowser(browser_options(config))
        config.add_cleanup(browser.close)
        interrupt = interrupt_of(config)
        if interrupt is not None:
            config.add_cleanup(interrupt.add_stop(lambda: browser.kill(wait=False)))
    return browser
