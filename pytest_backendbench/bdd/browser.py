"""The shared headless Chromium of one (xdist) worker.

Starting Chromium through chromedriver costs one to two seconds; running a scenario costs
milliseconds. So each worker starts one browser lazily (or in the background while xdist
waits for its other workers' collection: :meth:`SharedBrowser.start_in_background`), isolates
scenarios from each other with :meth:`SharedBrowser.reset` (fresh tab, no cookies, no storage, empty cache) instead of
relaunching, and makes sure that no chromium or chromedriver process outlives it: every
process it starts runs in its own session and carries a private temporary folder on its
command line, so :meth:`SharedBrowser.close` (also run at exit, e.g. after Ctrl-C) finds and
ends exactly those processes and nothing else.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..errors import BrowserError
from .cdn import CdnServer, NpmCache, cdn_flags, default_cdn_cache

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver
    from typing_extensions import Self

    from .discovery import BrowserInstall

INSTALL_HINT = (
    "install Debian's packages with `apt-get install chromium chromium-driver`, "
    "or point --chromium and --chromedriver at other binaries"
)
# --disable-crashpad-for-testing would spare the crashpad helpers, but with Debian's
# Chromium 156 it leaves every page blank; the helpers are found and ended by close().
BASE_FLAGS = (
    "--no-sandbox",  # Chromium refuses to start as root without it
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--no-default-browser-check",
)
SHUTDOWN_GRACE_S = 5.0
# "all" would also clear shader and other browser caches, several times slower; local_storage
# covers sessionStorage as well.
STORAGE_TYPES = "local_storage,indexeddb,websql,cache_storage,service_workers,file_systems,cookies"


@dataclass(frozen=True)
class BrowserOptions:
    """How to start the shared browser; ``None`` paths are looked up in the usual places.

    ``locale`` (e.g. ``de-DE``) sets LANG/LANGUAGE for the browser process, ``--lang`` and
    the Accept-Language preference: date and time inputs follow it, and Debian needs the
    ``chromium-l10n`` package for any locale but en-US. ``cdn`` is the --bench-cdn mode (see
    :mod:`pytest_backendbench.bdd.cdn`): ``offline`` answers CDN hosts from the npm cache in
    ``cdn_cache``, ``live`` leaves them alone, ``off`` makes them fail fast.
    """

    chromium: str | None = None
    chromedriver: str | None = None
    headless: bool = True
    extra_args: tuple[str, ...] = ()
    window_size: tuple[int, int] = (1280, 1024)
    locale: str | None = None
    page_load_timeout_s: float = 30.0
    script_timeout_s: float = 30.0
    cdn: str = "offline"
    cdn_cache: Path | None = None

    def install(self) -> BrowserInstall:
        """The browser + driver pair to start (see :mod:`.discovery`), or a BrowserError saying how to get one."""
        from .discovery import discover_browser

        return discover_browser(self.chromium, self.chromedriver)

    def chromium_path(self) -> str:
        """The Chromium binary to start, or a BrowserError saying how to get one."""
        return self.install().chromium

    def chromedriver_path(self) -> str:
        """The chromedriver binary to start, or a BrowserError saying how to get one."""
        return self.install().chromedriver

    def arguments(self, profile_dir: Path) -> list[str]:
        """Chromium's command-line flags for a browser whose profile lives in profile_dir."""
        width, height = self.window_size
        args = list(BASE_FLAGS)
        if self.headless:
            # a screen as large as the window: maximize_window() keeps the configured size
            # instead of shrinking to headless Chromium's 800x600 default screen
            args += ["--headless=new", f"--screen-info={{{width}x{height}}}"]
        args += [f"--window-size={width},{height}", f"--user-data-dir={profile_dir}"]
        if self.locale:
            args.append(f"--lang={self.locale}")
        args += list(self.extra_args)
        return args

    def environment(self, home: Path) -> dict[str, str]:
        """The environment of chromedriver and Chromium.

        XDG folders inside ``home`` keep Chromium's crash database and caches out of the
        user's home and put ``home`` on the command line of every helper process.
        """
        env = dict(os.environ)
        # Chromium puts its singleton socket below TMPDIR; a long TMPDIR (pytest's tmp_path)
        # exceeds the 108-byte socket path limit and Chromium exits at once.
        env["TMPDIR"] = str(home)
        env["XDG_CONFIG_HOME"] = str(home / "config")
        env["XDG_CACHE_HOME"] = str(home / "cache")
        if self.locale:
            posix = self.locale.replace("-", "_")
            env["LANG"] = f"{posix}.UTF-8"
            env["LANGUAGE"] = f"{posix}:{posix.split('_')[0]}"
            env.pop("LC_ALL", None)
        return env


def browser_available(options: BrowserOptions | None = None) -> str | None:
    """None when both binaries are present, else the reason why the browser cannot start."""
    options = options or BrowserOptions()
    try:
        options.install()
    except BrowserError as err:
        return str(err)
    return None


@dataclass
class FailureCapture:
    """What the browser showed when a scenario failed: for the report, never for the verdict."""

    screenshot: bytes | None = None
    url: str = ""
    console: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def console_text(self) -> str:
        """The console log, one message a line."""
        return "\n".join(self.console) if self.console else "(empty)"


class SharedBrowser:
    """One Chromium for many scenarios: started on first use, reset between scenarios, closed once."""

    def __init__(self, options: BrowserOptions | None = None) -> None:
        self.options = options or BrowserOptions()
        self.launches = 0
        self._driver: WebDriver | None = None
        self._service_pid: int | None = None
        self._home: Path | None = None
        self._origins: set[str] = set()
        self._atexit_registered = False
        self._cdn: CdnServer | None = None
        self._unavailable: BrowserError | None = None
        self._start_lock = threading.Lock()
        self._starter: threading.Thread | None = None

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
        if self._driver is None:
            self.start()
        assert self._driver is not None
        return self._driver

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
        # Selenium Manager is never needed (both paths are given); it must not try the network either.
        os.environ.setdefault("SE_OFFLINE", "true")
        from selenium import webdriver
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.chrome.service import Service

        home = Path(tempfile.mkdtemp(prefix="backendbench-chromium-", dir=_short_temp_root()))
        self._home = home
        if not self._atexit_registered:
            atexit.register(self.close)
            self._atexit_registered = True
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for arg in self.options.arguments(home / "profile") + self._cdn_flags():
            options.add_argument(arg)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        if self.options.locale:
            language = self.options.locale.split("-")[0]
            options.add_experimental_option("prefs", {"intl.accept_languages": f"{self.options.locale},{language}"})
        log_path = home / "chromedriver.log"
        service = Service(
            executable_path=chromedriver,
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
            log_tail = _tail(log_path)
            self._reap()
            detail = (getattr(err, "msg", None) or str(err)).strip().splitlines()
            raise BrowserError(
                f"Chromium did not start ({chromium} driven by {chromedriver}): {detail[0] if detail else type(err).__name__}\n"
                f"hint: check that both come from the same Chromium release, or {INSTALL_HINT}\n{log_tail}".rstrip()
            ) from err
        self._driver = driver
        self._service_pid = service.process.pid
        self._origins.clear()
        self.launches += 1
        return driver

    def _cdn_flags(self) -> list[str]:
        if self.options.cdn == "offline" and self._cdn is None:
            self._cdn = CdnServer(NpmCache(self.options.cdn_cache or default_cdn_cache()))
        return cdn_flags(self.options.cdn, self._cdn)

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

    def alive(self) -> bool:
        """Whether the browser still answers (a crashed browser is relaunched by reset)."""
        if self._driver is None:
            return False
        try:
            _ = self._driver.window_handles
        except _driver_errors():
            return False
        return True

    def reset(self, origin: str | None = None) -> None:
        """Give the next scenario a fresh page: one tab on about:blank, no cookies, storage or cache.

        ``origin`` (scheme://host:port of the page under test) and the origin of the previous
        scenario get their storage cleared (local and session storage, IndexedDB, service
        workers, cache storage). Extra windows are closed, an open alert dismissed, and the
        per-session settings a step may have changed (implicit wait, timeouts, window size)
        restored. A browser that died is relaunched. Costs about ten driver round trips.
        """
        if origin:
            self._origins.add(_origin_of(origin))
        if self._driver is None:
            self.start()
        try:
            self._reset(self.driver)
        except _driver_errors() as err:
            # one relaunch: a crashed or wedged browser must not fail every later scenario
            self.close()
            if origin:
                self._origins.add(_origin_of(origin))
            try:
                self._reset(self.driver)
            except _driver_errors() as again:
                raise BrowserError(f"the shared browser could not be reset, even after a relaunch: {_first_line(again)}") from err
        self._origins = {_origin_of(origin)} if origin else set()

    def _reset(self, driver: WebDriver) -> None:
        from selenium.common.exceptions import UnexpectedAlertPresentException
        from selenium.webdriver.remote.command import Command

        handles = driver.window_handles
        if len(handles) > 1:
            for handle in handles[1:]:
                driver.switch_to.window(handle)
                try:
                    driver.close()
                except UnexpectedAlertPresentException:
                    driver.close()  # chromedriver dismissed the alert when it reported it
            driver.switch_to.window(handles[0])
        try:
            url = driver.current_url
        except UnexpectedAlertPresentException:
            url = driver.current_url  # chromedriver dismissed the alert when it reported it
        if url != "about:blank":
            _leave_page(driver)  # the last page's scripts must not write storage after it is cleared
        driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
        driver.execute_cdp_cmd("Network.clearBrowserCache", {})
        for origin in sorted(self._origins):
            # clears sessionStorage too (tests/bdd/test_browser.py checks), so no new tab is needed
            driver.execute_cdp_cmd("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": STORAGE_TYPES})
        # one round trip; selenium's Timeouts object would drop the implicit wait of 0
        driver.execute(
            Command.SET_TIMEOUTS,
            {"implicit": 0, "pageLoad": int(self.options.page_load_timeout_s * 1000), "script": int(self.options.script_timeout_s * 1000)},
        )
        width, height = self.options.window_size
        driver.set_window_size(width, height)
        driver.get_log("browser")  # drop the last scenario's console messages

    def capture_failure(self) -> FailureCapture:
        """Screenshot (PNG), current URL and the console log since the last reset.

        Each part is captured on its own: a browser that cannot take a screenshot (an open
        alert, a crashed tab) still yields the URL and the log, and says what is missing.
        """
        capture = FailureCapture()
        if self._driver is None:
            capture.problems.append("the browser was not started")
            return capture
        errors = _driver_errors()
        driver = self._driver
        try:
            capture.url = driver.current_url
        except errors as err:
            capture.problems.append(f"no URL: {_first_line(err)}")
        try:
            capture.screenshot = driver.get_screenshot_as_png()
        except errors as err:
            capture.problems.append(f"no screenshot: {_first_line(err)}")
        try:
            capture.console = [_format_log_entry(entry) for entry in driver.get_log("browser")]
        except errors as err:
            capture.problems.append(f"no console log: {_first_line(err)}")
        return capture

    def process_ids(self) -> set[int]:
        """The live processes this browser started (chromedriver, Chromium and its helpers)."""
        return _processes_of(self._service_pid, self._home)

    def close(self) -> None:
        """Quit the browser and make sure none of its processes remain; idempotent."""
        self._join_starter()  # a launch in progress finishes first, then is ended like any other
        driver, self._driver = self._driver, None
        if driver is not None:
            with contextlib.suppress(Exception):  # whatever quit raises, _reap below is the guarantee
                driver.quit()
        self._reap()
        cdn, self._cdn = self._cdn, None
        if cdn is not None:
            cdn.close()
        if self._atexit_registered:
            atexit.unregister(self.close)
            self._atexit_registered = False

    def _reap(self) -> None:
        """End every process of this browser (grace period first), then remove its folder."""
        deadline = time.monotonic() + SHUTDOWN_GRACE_S
        remaining = _processes_of(self._service_pid, self._home)
        while remaining and time.monotonic() < deadline:
            time.sleep(0.05)
            remaining = _processes_of(self._service_pid, self._home)
        if remaining:
            if self._service_pid is not None:
                try:
                    os.killpg(self._service_pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            for pid in remaining:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            deadline = time.monotonic() + SHUTDOWN_GRACE_S
            while _processes_of(self._service_pid, self._home) and time.monotonic() < deadline:
                time.sleep(0.05)
        self._service_pid = None
        if self._home is not None:
            shutil.rmtree(self._home, ignore_errors=True)
            self._home = None


def _leave_page(driver: WebDriver) -> None:
    """Unload the current page: its timers and handlers stop before its storage is cleared.

    A page-initiated ``location.replace('about:blank')`` stays in the page's renderer and
    leaves no history entry to keep in the back/forward cache; ``driver.get('about:blank')``
    is browser-initiated, so with the back/forward cache on (as in a normal Chrome) Chromium
    parks the page and starts two new renderer processes per scenario: about 0.15 s more of
    Chromium's CPU time per scenario, a quarter of it (measured for bench/e2edev_speed.py). A page where the script cannot run (an error
    page, an alert that opened meanwhile) is left the old way.
    """
    from selenium.common.exceptions import WebDriverException

    try:
        driver.execute_script("location.replace('about:blank')")
        if driver.current_url == "about:blank":  # chromedriver waits for the navigation it started
            return
    except WebDriverException:
        pass
    driver.get("about:blank")


def _short_temp_root() -> str:
    """The temp folder for the browser's home: TMPDIR unless that is too long for Chromium's sockets."""
    root = tempfile.gettempdir()
    if len(root) > 40 and os.path.isdir("/tmp") and os.access("/tmp", os.W_OK):
        return "/tmp"
    return root


def _tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    if not text:
        return ""
    return "chromedriver log (last lines):\n" + "\n".join("  " + line for line in text[-lines:])


def _driver_errors() -> tuple[type[BaseException], ...]:
    """What a driver call raises when the browser misbehaves or chromedriver is gone."""
    from selenium.common.exceptions import WebDriverException
    from urllib3.exceptions import HTTPError

    return (WebDriverException, OSError, HTTPError)


def _origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else url


def _first_line(err: BaseException) -> str:
    text = (getattr(err, "msg", None) or str(err) or type(err).__name__).strip().splitlines()
    return text[0] if text else type(err).__name__


def _format_log_entry(entry: dict[str, Any]) -> str:
    return f"[{entry.get('level', '?')}] {entry.get('source', '')}: {entry.get('message', '')}".rstrip()


def _processes_of(session_pid: int | None, home: Path | None) -> set[int]:
    """Live (non-zombie) processes in chromedriver's session or naming our private folder."""
    if sys.platform != "linux":
        return set()
    marker = str(home).encode() if home is not None else None
    found: set[int] = set()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat_file:
                stat = stat_file.read()
            # fields after the command name, which may itself contain spaces and parentheses
            state, _ppid, _pgrp, session = stat[stat.rindex(b")") + 2 :].split()[:4]
            if state == b"Z":
                continue
            if session_pid is not None and int(session) == session_pid:
                found.add(pid)
                continue
            if marker is not None:
                with open(f"/proc/{pid}/cmdline", "rb") as cmdline_file:
                    if marker in cmdline_file.read():
                        found.add(pid)
        except (OSError, ValueError):
            continue  # the process ended while we looked
    return found
