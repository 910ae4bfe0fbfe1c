"""The browser sessions of one (xdist) worker: each a headless Chromium of its own.

Starting Chromium through chromedriver costs one to two seconds; running a scenario costs
milliseconds. So a worker starts its browsers lazily (the first one in the background while xdist
waits for its other workers' collection: :meth:`SharedBrowser.start_in_background`), isolates
scenarios from each other with :meth:`SharedBrowser.reset` (fresh tab, no cookies, no storage,
empty cache) instead of relaunching, and makes sure that no chromium or chromedriver process
outlives it (:mod:`.processes`).

A page that stops answering (a renderer stuck in a script loop) would make every WebDriver call
wait selenium's 120 s read timeout, retried by urllib3: the reset, the failure capture and the
quit here therefore run under short deadlines (:meth:`SharedBrowser.bounded`). The first call
that overruns marks the browser hung, the rest of the capture is skipped, and the browser's
process group is killed instead of quit politely; the next scenario gets a new browser.
"""

from __future__ import annotations

import atexit
import contextlib
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ...errors import BrowserError
from ..cdn.server import CdnServer, NpmCache, cdn_flags, default_cdn_cache
from .command_clock import CommandClock
from .failure_capture import FailureCapture, format_log_entry
from .options import BASE_FLAGS, INSTALL_HINT, BrowserOptions, browser_available
from .page_probe import PROBE_TIMEOUT_S, debugger_address, pages_answer
from .page_reset import clean_tab, leave_page, origin_of
from .processes import KILLED_WAIT_S, BrowserProcesses, log_tail, short_temp_root
from .remote_hosts import RefusingPort, remote_host_flags
from .watchdog import WATCHDOG_OF_THIS_PROCESS

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver
    from typing_extensions import Self

T = TypeVar("T")
SHUTDOWN_GRACE_S = 5.0
RESET_TIMEOUT_S = 20.0
"""A reset is about ten round trips; one that takes longer faces a page that stopped answering."""
CAPTURE_TIMEOUT_S = 10.0
PARK_TIMEOUT_S = 10.0
QUIT_TIMEOUT_S = 5.0


PROBE_AFTER_S = 10.0
"""A WebDriver call in flight this long gets its page probed (a page's own work answers in milliseconds)."""
HUNG_PAST_TIMEOUTS = (
    "the page stopped answering: the WebDriver call '{command}' got no answer for {waited:.0f} s, longer than any of the "
    "session's timeouts allow ({limit:g} s; a script that never yields)"
)
HUNG_UNRESPONSIVE = (
    "the page stopped answering: the WebDriver call '{command}' waited {waited:.0f} s and the page's main thread did not "
    "answer a DevTools probe within {probe:g} s (a script that never yields)"
)


class BrowserHung(BrowserError):
    """A WebDriver call overran its deadline: the page stopped answering; the browser was killed."""


class SharedBrowser:
    """One Chromium for many scenarios: started on first use, reset between scenarios, closed once.

    ``cdn_server`` is an offline CDN server shared with other browsers of the worker (it is
    then not closed here); without one, a browser in ``--bench-cdn=offline`` mode starts its own.
    """

    def __init__(self, options: BrowserOptions | None = None, cdn_server: CdnServer | None = None) -> None:
        self.options = options or BrowserOptions()
        self.launches = 0
        self.hung = False
        self._driver: WebDriver | None = None
        self._service_pid: int | None = None
        self._home: Path | None = None
        self._origins: set[str] = set()
        self._atexit_registered = False
        self._cdn: CdnServer | None = cdn_server
        self._owns_cdn = cdn_server is None
        self._unavailable: BrowserError | None = None
        self._start_lock = threading.Lock()
        self._starter: threading.Thread | None = None
        self.clock: CommandClock | None = None
        """The WebDriver calls in flight on the running browser (None before the first launch)."""
        self._debugger_address: str | None = None
        self._refusing: RefusingPort | None = None
        self._random_script: str | None = None
        """The identifier of the seeded-Math.random script registered by the last reset, if any."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def started(self) -> bool:
        """Whether a browser is running (or was, and has not been closed)."""
        return self._driver is not None

    @property
    def driver(self) -> WebDriver:
        """The selenium driver, starting the browser on first use."""
        driver = self._driver
        if driver is None:
            driver = self.start()
        return driver

    def start_in_background(self) -> None:
        """Launch now in a thread, so the launch overlaps other work; the first use waits for it.

        A launch that fails here is retried (and its error raised) by the first real use.
        """
        if self._driver is not None or self._starter is not None:
            return
        self._starter = threading.Thread(target=self._start_quietly, name="backendbench-browser-start", daemon=True)
        self._starter.start()

    def _start_quietly(self) -> None:
        # whatever fails here fails again, with its message, in the first real start()
        with contextlib.suppress(Exception):
            self.start()

    def _join_starter(self) -> None:
        starter, self._starter = self._starter, None
        if starter is not None and starter is not threading.current_thread():
            starter.join()

    def start(self) -> WebDriver:
        """Launch Chromium through chromedriver, or raise BrowserError saying why it cannot."""
        if self._driver is not None:
            return self._driver
        with self._start_lock:
            if self._driver is not None:  # a background launch finished while we waited
                return self._driver
            return self._launch()

    def _launch(self) -> WebDriver:
        if self._unavailable is not None:
            # the search (Selenium Manager's deadline included) is paid once, not per scenario
            raise BrowserError(str(self._unavailable))
        try:
            install = self.options.install()
        except BrowserError as err:
            self._unavailable = err
            raise
        chromium, chromedriver = install.chromium, install.chromedriver
        from selenium import webdriver
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.chrome.service import Service

        home = Path(tempfile.mkdtemp(prefix="backendbench-chromium-", dir=short_temp_root()))
        self._home = home
        if not self._atexit_registered:
            atexit.register(self.close)
            self._atexit_registered = True
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for arg in self.options.arguments(home / "profile") + self._cdn_flags() + self._remote_host_flags():
            options.add_argument(arg)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        if self.options.locale:
            language = self.options.locale.split("-")[0]
            options.add_experimental_option("prefs", {"intl.accept_languages": f"{self.options.locale},{language}"})
        log_path = home / "chromedriver.log"
        class GuardedService(Service):
            """Chromedriver registered with the browser watchdog before Chromium starts."""

            def start(self) -> None:
                super().start()
                if self.process is not None:
                    WATCHDOG_OF_THIS_PROCESS.register(self.process.pid)

        service = GuardedService(
            executable_path=chromedriver,  # both paths given: selenium never runs Selenium Manager
            env=self.options.environment(home),
            log_output=str(log_path),
            # Its own session: Ctrl-C in the terminal does not kill the browser mid-scenario,
            # and the whole tree can be ended as one process group.
            popen_kw={"start_new_session": True},
        )
        try:
            driver = webdriver.Chrome(options=options, service=service)
            driver.set_page_load_timeout(self.options.page_load_timeout_s)
            driver.set_script_timeout(self.options.script_timeout_s)
        except (WebDriverException, OSError) as err:
            self._service_pid = service.process.pid if getattr(service, "process", None) else None
            self._processes().end(0.0)
            self._remove_home()
            detail = (getattr(err, "msg", None) or str(err)).strip().splitlines()
            raise BrowserError(
                f"Chromium did not start ({chromium} driven by {chromedriver}): {detail[0] if detail else type(err).__name__}\n"
                f"hint: check that both come from the same Chromium release, or {INSTALL_HINT}\n{log_tail(log_path)}".rstrip()
            ) from err
        clock = CommandClock(self.options.page_load_timeout_s, self.options.script_timeout_s)
        executor: Any = driver.command_executor
        executor.execute = clock.wrap(executor.execute)
        self.clock = clock
        self._debugger_address = debugger_address(driver.capabilities)
        self._driver = driver
        self._service_pid = service.process.pid
        self._origins.clear()
        self._random_script = None
        self.hung = False
        self.launches += 1
        return driver

    def _cdn_flags(self) -> list[str]:
        if self.options.cdn == "offline" and self._cdn is None:
            self._cdn = CdnServer(NpmCache(self.options.cdn_cache or default_cdn_cache()))
            self._owns_cdn = True
        return cdn_flags(self.options.cdn, self._cdn)

    def _remote_host_flags(self) -> list[str]:
        if self.options.remote_hosts == "off" and self._refusing is None:
            self._refusing = RefusingPort()
        return remote_host_flags(self.options.remote_hosts, self._refusing)

    @property
    def cdn_server(self) -> CdnServer | None:
        """The offline CDN server of this browser (``--bench-cdn=offline``, once started)."""
        return self._cdn

    def use_locale(self, locale: str | None) -> None:
        """Relaunch with another browser locale if it differs (the locale is fixed at launch)."""
        if (locale or None) == (self.options.locale or None):
            return
        self.close()
        self.options = replace(self.options, locale=locale or None)

    def call_waiting_s(self) -> float:
        """How long the WebDriver call in flight longest has waited (0 with none): cheap, no I/O."""
        oldest = self.clock.oldest_call() if self.clock is not None else None
        return oldest[1] if oldest is not None else 0.0

    def hung_call(self) -> str | None:
        """Why the WebDriver call in flight is a hung page, or None while it may still be a wait.

        Hung when it waited past the session's own timeouts (plus a margin), or when it waited
        :data:`PROBE_AFTER_S` and the page's main thread does not answer a DevTools probe
        (:mod:`.page_probe`). The probe blocks up to its timeout: call it off the scenario's thread.
        """
        clock = self.clock
        if clock is None or self._driver is None or self.call_waiting_s() < PROBE_AFTER_S:
            return None
        overdue = clock.overdue()
        if overdue is not None:
            return HUNG_PAST_TIMEOUTS.format(command=overdue[0], waited=overdue[1], limit=clock.limit_s)
        if self._debugger_address is None or pages_answer(self._debugger_address) is not False:
            return None
        still = clock.oldest_call()  # the probe took its timeout: report how long the call has waited now
        if still is None:
            return None  # answered meanwhile after all
        return HUNG_UNRESPONSIVE.format(command=still[0], waited=still[1], probe=PROBE_TIMEOUT_S)

    def alive(self) -> bool:
        """Whether the browser still answers (a crashed browser is relaunched by reset)."""
        driver = self._driver
        if driver is None or self.hung:
            return False
        try:
            self.bounded(lambda: driver.window_handles, CAPTURE_TIMEOUT_S, "checking the browser")
        except _hung_or_driver_errors():
            return False
        return True

    def bounded(self, call: Callable[[], T], timeout_s: float, what: str) -> T:
        """``call()`` (WebDriver commands), but at most timeout_s: past it the browser is killed.

        The call runs in a helper thread; when it overruns, the page is taken as hung, the
        browser's process group is killed (which ends the helper's blocked request at once)
        and :class:`BrowserHung` is raised. Errors of the call itself propagate.
        """
        outcome: dict[str, Any] = {}

        def run() -> None:
            try:
                outcome["value"] = call()
            except BaseException as err:  # noqa: BLE001 - handed to the caller's thread
                outcome["error"] = err

        helper = threading.Thread(target=run, name="backendbench-browser-call", daemon=True)
        helper.start()
        helper.join(timeout_s)
        if helper.is_alive():
            self.hung = True
            self.kill()
            raise BrowserHung(f"the page stopped answering: {what} took more than {timeout_s:g} s; its browser was killed")
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]  # type: ignore[no-any-return]

    def reset(self, origin: str | None = None, random_seed_key: str | None = None) -> None:
        """Give the next scenario a fresh page: one tab on about:blank, no cookies, storage or cache.

        ``random_seed_key`` (see :mod:`.page_random`) seeds ``Math.random`` in the documents
        the scenario opens in that tab; None leaves the browser's own.

        ``origin`` (scheme://host:port of the page under test) and the origin of the previous
        scenario get their storage cleared (local and session storage, IndexedDB, service
        workers, cache storage). Extra windows are closed, an open alert dismissed, and the
        per-session settings a step may have changed (implicit wait, timeouts, window size)
        restored. A browser that died or hung is relaunched. Costs about ten driver round trips.
        """
        if origin:
            self._origins.add(origin_of(origin))
        if self.hung:
            self.kill()
        try:
            driver = self.driver
            self.bounded(lambda: self._clean_tab(driver, random_seed_key), RESET_TIMEOUT_S, "resetting the page")
        except _hung_or_driver_errors() as err:
            # one relaunch: a crashed or wedged browser must not fail every later scenario
            self.close()
            if origin:
                self._origins.add(origin_of(origin))
            try:
                driver = self.driver
                self.bounded(lambda: self._clean_tab(driver, random_seed_key), RESET_TIMEOUT_S, "resetting the page")
            except _hung_or_driver_errors() as again:
                raise BrowserError(f"the browser could not be reset, even after a relaunch: {error_first_line(again)}") from err
        self._origins = {origin_of(origin)} if origin else set()

    def park(self) -> None:
        """Unload the finished scenario's page now: an idle session then costs no CPU until its next reset.

        A page left open animates, polls and redraws while its session waits in the pool; on a
        saturated machine that starved the running scenarios (measured: a GPU process at 20-30 %
        of a core per idle session). The reset before the next scenario still does everything
        it did (and finds about:blank); a page that does not leave in time is hung, and the
        reset relaunches its browser.
        """
        driver = self._driver
        if driver is None or self.hung:
            return
        with contextlib.suppress(*_hung_or_driver_errors()):
            self.bounded(lambda: leave_page(driver), PARK_TIMEOUT_S, "leaving the page")

    def _clean_tab(self, driver: WebDriver, random_seed_key: str | None) -> None:
        self._random_script = clean_tab(driver, self._origins, self.options, self._random_script, random_seed_key)

    def capture_failure(self) -> FailureCapture:
        """Screenshot (PNG), current URL and the console log since the last reset.

        Each part is captured on its own: a browser that cannot take a screenshot (an open
        alert, a crashed tab) still yields the URL and the log, and says what is missing. A
        page that stopped answering is detected once: the browser is killed and the rest of
        the capture skipped (``hung``).
        """
        capture = FailureCapture()
        driver = self._driver
        if driver is None or self.hung:
            capture.hung = self.hung
            capture.problems.append("the page stopped answering: nothing captured" if self.hung else "the browser was not started")
            return capture
        errors = _driver_errors()
        parts: list[tuple[str, Callable[[], Any], Callable[[Any], None]]] = [
            ("URL", lambda: driver.current_url, lambda v: setattr(capture, "url", v)),
            ("screenshot", driver.get_screenshot_as_png, lambda v: setattr(capture, "screenshot", v)),
            ("console log", lambda: driver.get_log("browser"), lambda v: setattr(capture, "console", [format_log_entry(e) for e in v])),
        ]
        for what, call, keep in parts:
            try:
                keep(self.bounded(call, CAPTURE_TIMEOUT_S, f"capturing the {what}"))
            except BrowserHung as err:
                capture.hung = True
                capture.problems.append(f"no {what}: {err}; the rest of the capture was skipped")
                break
            except errors as err:
                capture.problems.append(f"no {what}: {error_first_line(err)}")
        return capture

    def process_ids(self) -> set[int]:
        """The live processes this browser started (chromedriver, Chromium and its helpers)."""
        return self._processes().live()

    def _processes(self) -> BrowserProcesses:
        return BrowserProcesses(self._service_pid, self._home)

    def kill(self, wait: bool = True) -> None:
        """End the browser at once: its process group is killed, nothing waits on a renderer.

        ``wait=False`` (a signal handler) only sends the signals; otherwise this returns when
        the processes are gone. The browser can be started again afterwards.
        """
        processes = self._processes()
        self._driver = None
        processes.kill()
        if wait:
            processes.wait_gone(KILLED_WAIT_S)
            WATCHDOG_OF_THIS_PROCESS.unregister(self._service_pid)
            self._service_pid = None
            self._remove_home()

    def close(self) -> None:
        """Quit the browser and make sure none of its processes remain; idempotent.

        A hung browser is killed; otherwise quit() gets QUIT_TIMEOUT_S before the kill.
        """
        self._join_starter()  # a launch in progress finishes first, then is ended like any other
        driver, self._driver = self._driver, None
        if driver is not None and not self.hung:
            with contextlib.suppress(Exception):  # whatever quit raises, the reaping below is the guarantee
                self.bounded(driver.quit, QUIT_TIMEOUT_S, "quitting the browser")
        self._processes().end(0.0 if self.hung else SHUTDOWN_GRACE_S)
        WATCHDOG_OF_THIS_PROCESS.unregister(self._service_pid)
        self._service_pid = None
        self._remove_home()
        self.hung = False
        cdn, self._cdn = self._cdn, None
        if cdn is not None and self._owns_cdn:
            cdn.close()
        elif cdn is not None:
            self._cdn = cdn  # shared with other browsers: kept for the next launch
        refusing, self._refusing = self._refusing, None
        if refusing is not None:
            refusing.close()
        if self._atexit_registered:
            atexit.unregister(self.close)
            self._atexit_registered = False

    def _remove_home(self) -> None:
        if self._home is not None:
            shutil.rmtree(self._home, ignore_errors=True)
            self._home = None


def _driver_errors() -> tuple[type[BaseException], ...]:
    """What a driver call raises when the browser misbehaves or chromedriver is gone."""
    from selenium.common.exceptions import WebDriverException
    from urllib3.exceptions import HTTPError

    return (WebDriverException, OSError, HTTPError)


def _hung_or_driver_errors() -> tuple[type[BaseException], ...]:
    return (BrowserHung, *_driver_errors())


def error_first_line(err: BaseException) -> str:
    """The first line of a WebDriver error's message (its stack trace and session info left out)."""
    text = (getattr(err, "msg", None) or str(err) or type(err).__name__).strip().splitlines()
    return text[0] if text else type(err).__name__


__all__ = ["BASE_FLAGS", "BrowserHung", "BrowserOptions", "SharedBrowser", "browser_available"]
