"""A worker's browser sessions, and scenarios run in them under a deadline, several at once.

E2EDev-style step code mostly waits (``time.sleep``, ``WebDriverWait``), so one browser per
xdist worker leaves the machine idle. The pool gives each worker several browser sessions
(:func:`pool_size`: ``--bench-bdd-sessions``, or ``auto`` from free memory and load) and runs the
scenarios of one candidate in them at the same time: when pytest reaches a scenario, the pool
starts it and the next scenarios of the same run in the free sessions (each in a thread of its
own); pytest then takes their results in its own order, so reports, hooks and verdicts are
those of a sequential run. Every session is its own Chromium with its own profile and is reset
before each scenario exactly as a lone browser is; only candidates served as static files
(no server-side state that concurrent scenarios could share) run concurrently, others one by one.

Every scenario runs under a deadline (``--bench-bdd-timeout``, default 120 s, counted from the moment
its browser session is reset and ready, so a browser launch does not count): past it the session's
browser is killed (the step code's pending WebDriver call ends at once), the scenario fails
with "ran out of time", and its session starts a new browser for the next scenario. A thread
whose step code never returns even then is abandoned with its session.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from ..errors import BrowserError
from .behave_runner import ScenarioResult, ScenarioRunner, SleepPolicy
from .browser import BrowserOptions, FailureCapture, SharedBrowser
from .cdn import CdnServer, NpmCache, default_cdn_cache

SESSION_MEMORY_BYTES = 400 * 1024 * 1024
"""What one more Chromium with a typical app page costs (measured ~300 MB, with a margin)."""
MEMORY_RESERVE_BYTES = 1024 * 1024 * 1024
SESSIONS_PER_CORE = 4
"""Scenarios mostly wait: about four sessions keep one idle core busy."""
MAX_AUTO_SESSIONS = 8
ABANDON_GRACE_S = 10.0
"""After the deadline and the kill, how long the step code's thread may take to notice."""
TIMED_OUT = "the scenario ran out of time: it was still running after {timeout:g} s (--bench-bdd-timeout); its page was abandoned"


def pool_size(setting: str | int, workers: int = 1) -> int:
    """Sessions per worker: the number given, or for ``auto`` what free memory and load allow."""
    if str(setting).strip().lower() != "auto":
        return max(1, int(setting))
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = 0.0
    busy = min(1.0, cores / load) if load > 0 else 1.0  # a machine loaded past its cores gets fewer
    by_cpu = round(SESSIONS_PER_CORE * cores * busy / max(1, workers))
    available = psutil.virtual_memory().available
    by_memory = (available - MEMORY_RESERVE_BYTES) // (SESSION_MEMORY_BYTES * max(1, workers))
    return int(max(1, min(MAX_AUTO_SESSIONS, by_cpu, by_memory)))


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


@dataclass
class ScenarioJob:
    """One scenario submitted to the pool, and how it ended."""

    work: ScenarioWork
    result: ScenarioResult | None = None
    capture: FailureCapture | None = None
    error: BaseException | None = None
    started: float | None = None
    timed_out: bool = False
    abandoned: bool = False
    session: SharedBrowser | None = None
    done: threading.Event = field(default_factory=threading.Event)


class BrowserPool:
    """Up to ``size`` browser sessions of one worker and the scenario jobs running in them."""

    def __init__(self, options: BrowserOptions, size: int, timeout_s: float, runner: ScenarioRunner | None = None) -> None:
        self.options = options
        self.size = max(1, size)
        self.timeout_s = timeout_s
        self.runner = runner or ScenarioRunner()
        self.stopping = False
        self._sessions: list[SharedBrowser] = []
        self._idle: list[SharedBrowser] = []
        self._changed = threading.Condition()
        self._cdn: CdnServer | None = None
        self._jobs: dict[str, ScenarioJob] = {}

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

    def _acquire(self) -> SharedBrowser | None:
        with self._changed:
            while not self.stopping:
                if self._idle:
                    return self._idle.pop()
                if len(self._sessions) < self.size:
                    return self._new_session()
                self._changed.wait(0.5)
        return None

    def _release(self, session: SharedBrowser, abandoned: bool = False) -> None:
        with self._changed:
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
        threading.Thread(target=self._execute, args=(job,), name=f"backendbench-scenario-{work.line}", daemon=True).start()
        return job

    def in_flight(self) -> int:
        """Jobs submitted and not yet taken by pytest's thread."""
        return len(self._jobs)

    def take(self, key: str) -> ScenarioJob:
        """Wait for the job of key (submitted before) and hand it over: its deadline applies."""
        job = self._jobs.pop(key)
        while not job.done.wait(0.2):
            started = job.started
            if started is not None and time.monotonic() > started + self.timeout_s + ABANDON_GRACE_S:
                job.abandoned = job.timed_out = True
                if job.session is not None:
                    job.session.kill()
                    self._release(job.session, abandoned=True)
                break
        return job

    def _execute(self, job: ScenarioJob) -> None:
        session = self._acquire()
        if session is None:
            job.error = BrowserError("the run is stopping: the scenario was not started")
            job.done.set()
            return
        job.session = session
        watchdog = threading.Timer(self.timeout_s, self._deadline_passed, args=(job, session))
        watchdog.daemon = True

        def start_clock() -> None:  # the deadline is the scenario's: a browser launch does not count
            job.started = time.monotonic()
            watchdog.start()

        try:
            job.result, job.capture = self._run(job.work, session, start_clock)
        except BaseException as err:  # noqa: BLE001 - handed to pytest's thread, which raises it
            job.error = err
        finally:
            watchdog.cancel()
            if not job.abandoned:
                self._release(session)
            job.done.set()

    def _run(self, work: ScenarioWork, session: SharedBrowser, start_clock: Callable[[], None]) -> tuple[ScenarioResult, FailureCapture | None]:
        if work.app_dir is not None and self._cdn is not None:
            self._cdn.learn_integrity(work.app_dir)  # the pages' SRI hashes pick the CDN files that match
        session.use_locale(work.locale)
        session.reset(work.base_url)
        start_clock()
        result = self.runner.run(
            work.feature, work.line, work.step_modules, driver=session.driver, base_url=work.base_url, entry_url=work.entry_url,
            environment_file=work.environment, sleep=work.sleep, app_dir=work.app_dir, entry_file=work.entry_file,
        )
        capture = None
        if not result.passed and (result.steps_run or result.status == "failed"):
            capture = session.capture_failure()
        return result, capture

    def _deadline_passed(self, job: ScenarioJob, session: SharedBrowser) -> None:
        """The watchdog: the scenario overran; kill its browser so its pending call ends now."""
        job.timed_out = True
        session.hung = True
        session.kill()

    def outcome(self, job: ScenarioJob) -> ScenarioResult:
        """The job's result, with an overrun turned into the candidate's failure."""
        if job.timed_out:
            result = job.result or ScenarioResult(status="failed", scenario="", feature=str(job.work.feature), line=job.work.line)
            result.status = "failed"
            result.message = TIMED_OUT.format(timeout=self.timeout_s)
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
            self._changed.notify_all()
        for session in sessions:
            session.kill(wait=False)
        for session in sessions:
            session.close()  # waits until the killed processes are gone, removes the profiles
        cdn, self._cdn = self._cdn, None
        if cdn is not None:
            cdn.close()

