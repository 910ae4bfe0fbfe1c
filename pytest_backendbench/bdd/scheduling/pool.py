"""A worker's browser sessions, and scenarios run in them under a deadline, several at once.

E2EDev-style step code mostly waits (``time.sleep``, ``WebDriverWait``), so one browser per
xdist worker leaves the machine idle. The pool gives each worker several browser sessions
(:mod:`.pool_sizing`: ``--bench-bdd-sessions``, or ``auto``: a level that starts at a base from
free memory and load and follows the machine's idle CPU) and runs the scenarios of one
candidate in them at the same time: when pytest reaches a scenario, the pool starts it and the
next scenarios of the same run as sessions come free, strictly in pytest's order (each in a
thread of its own); pytest then takes their results in its own order, so reports, hooks and
verdicts are those of a sequential run. Every session is its own Chromium with its own profile,
reset before each scenario exactly as a lone browser is, and parked on about:blank as soon as
its scenario ends (an idle session costs nothing); only candidates served as static files (no
server-side state that concurrent scenarios could share) run concurrently, others one by one.

Every scenario runs under a deadline (``--bench-bdd-timeout``, default 120 s, counted from the moment
its browser session is reset and ready, so a browser launch does not count): past it the session's
browser is killed (the step code's pending WebDriver call ends at once), the scenario fails
with "ran out of time", and its session starts a new browser for the next scenario. A thread
whose step code never returns even then is abandoned with its session. A page that stops
answering (a script that never yields) is found long before the deadline: see
:meth:`SharedBrowser.hung_call`.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import BrowserError
from ..browser.failure_capture import FailureCapture
from ..browser.shared import PROBE_AFTER_S, BrowserHung, BrowserOptions, SharedBrowser
from ..cdn.server import CdnServer, NpmCache, default_cdn_cache
from ..scenarios.behave_runner import ScenarioResult, ScenarioRunner, SleepPolicy
from ..scenarios.evaluators import GoalOutcome, evaluate_goal
from ..scenarios.goals import Goal
from .pool_sizing import MAX_AUTO_SESSIONS, CpuHeadroom, PoolSize, pool_size, pool_sizing

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

__all__ = ["MAX_AUTO_SESSIONS", "BrowserPool", "ScenarioJob", "ScenarioWork", "pool_size", "pool_sizing"]

ABANDON_GRACE_S = 10.0
"""After the deadline and the kill, how long the step code's thread may take to notice."""
LOOKAHEAD_PER_SESSION = 4
"""Scenarios submitted ahead per session: while pytest waits on a slow one, the others keep the sessions busy."""
HANG_POLL_S = 1.0
"""How often the pool looks for a running scenario whose page stopped answering."""
TIMED_OUT = "the scenario ran out of time: it was still running after {timeout:g} s (--bench-bdd-timeout); its page was abandoned"


@dataclass(frozen=True)
class ScenarioWork:
    """Everything a scenario needs to run in a session, decided in pytest's thread."""

    feature: Path
    line: int
    step_modules: tuple[Path, ...]
    base_url: str
    entry_url: str
    environment: Path | None
    sleep: SleepPolicy
    locale: str | None
    app_dir: Path | None
    entry_file: Path | None
    random_seed_key: str | None = None
    """What the scenario's pages seed Math.random from (:mod:`pytest_backendbench.bdd.browser.page_random`); None: the browser's own."""
    drive: Callable[[WebDriver], None] | None = None
    """Run this on the reset session's driver instead of a behave scenario (the GUI judge's agent loop)."""
    timeout_s: float | None = None
    """This job's deadline instead of the pool's (a judge's, which includes the model's answers)."""
    goal: Goal | None = None
    """The InfiniteWeb goal this scenario reaches: its evaluator runs in the page after the last step (:mod:`pytest_backendbench.bdd.scenarios.evaluators`)."""


@dataclass
class ScenarioJob:
    """One scenario submitted to the pool, and how it ended."""

    work: ScenarioWork
    result: ScenarioResult | None = None
    capture: FailureCapture | None = None
    goal: GoalOutcome | None = None
    error: BaseException | None = None
    started: float | None = None
    timed_out: bool = False
    hung: str | None = None
    """Why the page was taken as hung (a WebDriver call past the session's timeouts, an unanswered probe)."""
    probing: bool = False
    abandoned: bool = False
    session: SharedBrowser | None = None
    released: bool = False
    done: threading.Event = field(default_factory=threading.Event)


class BrowserPool:
    """Up to ``size`` browser sessions of one worker and the scenario jobs running in them.

    ``size`` is an int (that many sessions) or a :class:`PoolSize`: ``base`` sessions run at
    once, and up to ``limit`` while :class:`CpuHeadroom` finds the CPU idle. Jobs get a session
    in the order they were submitted (pytest's order), so the item pytest waits for is never
    overtaken by the ones submitted after it.
    """

    def __init__(
        self, options: BrowserOptions, size: int | PoolSize, timeout_s: float, runner: ScenarioRunner | None = None,
        headroom: CpuHeadroom | None = None,
    ) -> None:
        self.options = options
        sizing = size if isinstance(size, PoolSize) else PoolSize(max(1, size), max(1, size))
        self.base = max(1, sizing.base)
        self.size = max(self.base, sizing.limit)
        self.headroom = headroom if headroom is not None else (CpuHeadroom() if sizing.adaptive else None)
        self.level = self.base
        """Sessions that may run now: the base, then wherever the headroom moved it (``auto``)."""
        self.timeout_s = timeout_s
        self.runner = runner or ScenarioRunner()
        self.stopping = False
        self.most_at_once = 0
        """The most scenarios that ran at the same time (read by the tests)."""
        self._sessions: list[SharedBrowser] = []
        self._idle: list[SharedBrowser] = []
        self._busy = 0
        self._waiting: deque[ScenarioJob] = deque()
        self._changed = threading.Condition()
        self._cdn: CdnServer | None = None
        self._jobs: dict[str, ScenarioJob] = {}
        self._running: dict[int, ScenarioJob] = {}
        self._hang_watch: threading.Thread | None = None

    # --- sessions --------------------------------------------------------------------------

    def first_session(self) -> SharedBrowser:
        """A session to launch ahead of the first scenario (see gherkin.prestart_browser)."""
        with self._changed:
            if self._idle:
                return self._idle[0]
            session = self._new_session()
            self._idle.append(session)
            return session

    def _new_session(self) -> SharedBrowser:
        if self.options.cdn == "offline" and self._cdn is None:
            self._cdn = CdnServer(NpmCache(self.options.cdn_cache or default_cdn_cache()))
        session = SharedBrowser(self.options, cdn_server=self._cdn)
        self._sessions.append(session)
        return session

    @property
    def cdn_server(self) -> CdnServer | None:
        """The offline CDN server the sessions share (once started)."""
        return self._cdn

    def _acquire(self, job: ScenarioJob) -> SharedBrowser | None:
        """A session for job once the jobs submitted before it have one (None when the pool stops)."""
        with self._changed:
            while not self.stopping:
                if self._waiting and self._waiting[0] is job:
                    session = self._free_session()
                    if session is not None:
                        self._waiting.popleft()
                        self._busy += 1
                        self.most_at_once = max(self.most_at_once, self._busy)
                        self._changed.notify_all()
                        return session
                self._changed.wait(0.25)
            with contextlib.suppress(ValueError):
                self._waiting.remove(job)
        return None

    def _free_session(self) -> SharedBrowser | None:
        """An idle or new session if one may run now: fewer than the level are running."""
        if self.headroom is not None:
            self.level = self.headroom.adjust(self.level, self.size)
        if self._busy >= min(self.size, self.level):
            return None
        if self._idle:
            return self._idle.pop()
        if len(self._sessions) < self.size:
            return self._new_session()
        return None

    def _release(self, job: ScenarioJob, session: SharedBrowser, abandoned: bool = False) -> None:
        with self._changed:
            if job.released:
                return  # the abandoning thread and the job's own thread may both get here
            job.released = True
            self._busy -= 1
            if session in self._sessions:
                if abandoned:
                    self._sessions.remove(session)  # its thread may still hold it: a new one takes its place
                else:
                    self._idle.append(session)
            self._changed.notify_all()

    # --- jobs ------------------------------------------------------------------------------

    def submitted(self, key: str) -> bool:
        """Whether a job for this item key was submitted and not yet taken."""
        return key in self._jobs

    def submit(self, key: str, work: ScenarioWork) -> ScenarioJob:
        """Start a scenario as soon as a session is free (in a thread of its own)."""
        job = ScenarioJob(work)
        self._jobs[key] = job
        with self._changed:
            self._waiting.append(job)
            if self._hang_watch is None:
                self._hang_watch = threading.Thread(target=self._watch_for_hangs, name="backendbench-hang-watch", daemon=True)
                self._hang_watch.start()
        threading.Thread(target=self._execute, args=(job,), name=f"backendbench-scenario-{work.line}", daemon=True).start()
        return job

    def in_flight(self) -> int:
        """Jobs submitted and not yet taken by pytest's thread."""
        return len(self._jobs)

    def lookahead(self) -> int:
        """How many jobs may be submitted and not yet taken: a few per session."""
        return self.size * LOOKAHEAD_PER_SESSION

    def take(self, key: str) -> ScenarioJob:
        """Wait for the job of key (submitted before) and hand it over: its deadline applies."""
        job = self._jobs.pop(key)
        while not job.done.wait(0.2):
            started = job.started
            if started is not None and time.monotonic() > started + (job.work.timeout_s or self.timeout_s) + ABANDON_GRACE_S:
                job.abandoned = job.timed_out = True
                if job.session is not None:
                    job.session.kill()
                    self._release(job, job.session, abandoned=True)
                break
        return job

    def _execute(self, job: ScenarioJob) -> None:
        session = self._acquire(job)
        if session is None:
            job.error = BrowserError("the run is stopping: the scenario was not started")
            job.done.set()
            return
        job.session = session
        with self._changed:
            self._running[id(job)] = job
        watchdog = threading.Timer(job.work.timeout_s or self.timeout_s, self._deadline_passed, args=(job, session))
        watchdog.daemon = True

        def start_clock() -> None:  # the deadline is the scenario's: a browser launch does not count
            job.started = time.monotonic()
            watchdog.start()

        try:
            job.result, job.capture = self._run(job.work, session, start_clock)
            if job.work.goal is not None and not (job.timed_out or session.hung or not session.started):
                # in the scenario's own page, still under its deadline
                job.goal = evaluate_goal(
                    session.driver, job.work.goal, base_url=job.work.base_url, entry_url=job.work.entry_url,
                    bounded=session.bounded, hung=(BrowserHung,),
                )
        except BaseException as err:  # noqa: BLE001 - handed to pytest's thread, which raises it
            job.error = err
        finally:
            watchdog.cancel()
            with self._changed:
                self._running.pop(id(job), None)
            job.done.set()  # pytest's thread may go on; the session is parked before another job gets it
            if not job.abandoned:
                try:
                    if not self.stopping:
                        session.park()
                finally:
                    self._release(job, session)

    def _run(self, work: ScenarioWork, session: SharedBrowser, start_clock: Callable[[], None]) -> tuple[ScenarioResult, FailureCapture | None]:
        if work.app_dir is not None and self._cdn is not None:
            self._cdn.learn_integrity(work.app_dir)  # the pages' SRI hashes pick the CDN files that match
        session.use_locale(work.locale)
        session.reset(work.base_url, work.random_seed_key)
        start_clock()
        if work.drive is not None:
            work.drive(session.driver)
            return ScenarioResult(status="passed", scenario="", feature=str(work.feature), line=work.line), None
        result = self.runner.run(
            work.feature, work.line, work.step_modules, driver=session.driver, base_url=work.base_url, entry_url=work.entry_url,
            environment_file=work.environment, sleep=work.sleep, app_dir=work.app_dir, entry_file=work.entry_file,
        )
        capture = None
        if not result.passed and (result.steps_run or result.status == "failed"):
            capture = session.capture_failure()
        return result, capture

    def _watch_for_hangs(self) -> None:
        """Look for running scenarios whose page stopped answering (a WebDriver call that waits long gets its page checked)."""
        while not self.stopping:
            time.sleep(HANG_POLL_S)
            with self._changed:
                running = [job for job in self._running.values() if job.started is not None and not job.timed_out and job.hung is None]
            for job in running:
                # a thread only for a call that has waited long (a check may probe, and a probe waits)
                if not job.probing and job.session is not None and job.session.call_waiting_s() >= PROBE_AFTER_S:
                    job.probing = True
                    threading.Thread(target=self._check_hung, args=(job, job.session), name="backendbench-hang-check", daemon=True).start()

    def _check_hung(self, job: ScenarioJob, session: SharedBrowser) -> None:
        why = None
        try:
            with contextlib.suppress(Exception):  # a failed check is no evidence; the deadline still applies
                why = session.hung_call()
            if why is not None and job.session is session and not job.done.is_set():
                job.hung = f"{why}; its page was abandoned"
                session.hung = True
                session.kill()
        finally:
            job.probing = False

    def _deadline_passed(self, job: ScenarioJob, session: SharedBrowser) -> None:
        """The watchdog: the scenario overran; kill its browser so its pending call ends now."""
        job.timed_out = True
        session.hung = True
        session.kill()

    def outcome(self, job: ScenarioJob) -> ScenarioResult:
        """The job's result, with an overrun turned into the candidate's failure."""
        if job.timed_out or job.hung is not None:
            result = job.result or ScenarioResult(status="failed", scenario="", feature=str(job.work.feature), line=job.work.line)
            result.status = "failed"
            result.message = TIMED_OUT.format(timeout=self.timeout_s) if job.timed_out else str(job.hung)
            result.traceback = ""
            return result
        if job.error is not None:
            raise job.error
        if job.result is None:
            raise BrowserError("the scenario's thread ended without a result")  # pragma: no cover - _execute sets one
        return job.result

    # --- stopping --------------------------------------------------------------------------

    def kill_all(self) -> None:
        """Emergency stop (a signal handler): no new scenario starts, every browser is killed now."""
        self.stopping = True
        for session in list(self._sessions):
            session.kill(wait=False)

    def close(self) -> None:
        """End every session and the shared CDN server; idempotent.

        The browsers are killed, all at once, not quit one by one: nothing of a scenario's
        browser is worth a polite goodbye, and with xdist the controller stops waiting for a
        worker after a few seconds, which a row of quits under load can exceed (orphaning the rest).
        """
        with self._changed:
            self.stopping = True
            sessions, self._sessions, self._idle = list(self._sessions), [], []
            self._waiting.clear()
            self._changed.notify_all()
        for session in sessions:
            session.kill(wait=False)
        for session in sessions:
            session.close()  # waits until the killed processes are gone, removes the profiles
        cdn, self._cdn = self._cdn, None
        if cdn is not None:
            cdn.close()

