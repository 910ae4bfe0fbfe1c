"""Where the browser for Gherkin scenarios comes from: the one place that looks.

In this order: the explicit ``--chromium``/``--chromedriver`` options (or
``BACKENDBENCH_CHROMIUM``/``BACKENDBENCH_CHROMEDRIVER``); Debian/Ubuntu's ``chromium`` +
``chromium-driver`` on PATH; Google Chrome with a ``chromedriver`` on PATH; last Selenium
Manager, which downloads Chrome for Testing on machines with internet. Selenium Manager runs
with ``--offline`` when ``SE_OFFLINE`` is set and always under a short deadline, so a machine
without internet falls through in well under a second instead of waiting on the network.
Browser and driver versions are read and compared: a pair whose major versions differ never
starts ("This version of ChromeDriver only supports Chrome version ..."), so it is passed over.
When nothing usable is found, :class:`BrowserError` says what was tried and the one command
that installs a browser on this platform.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ...config import environment_value
from ...errors import BrowserError
from ...host.install_hints import current_platform

CHROMIUM_ENV = "BACKENDBENCH_CHROMIUM"
CHROMEDRIVER_ENV = "BACKENDBENCH_CHROMEDRIVER"
DEBIAN_BROWSERS = ("chromium", "chromium-browser")
CHROME_BROWSERS = ("google-chrome", "google-chrome-stable", "chrome")
DRIVERS = ("chromedriver",)
SELENIUM_MANAGER_TIMEOUT_S = 20.0
VERSION_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class BrowserInstall:
    """A browser and its driver that belong together, where they were found, and their versions."""

    chromium: str
    chromedriver: str
    source: str  # option | environment | debian | chrome | selenium-manager
    chromium_version: str | None = None
    chromedriver_version: str | None = None

    @property
    def versions_match(self) -> bool | None:
        """Whether the major versions agree; None when one of them could not be read."""
        browser, driver = _major(self.chromium_version), _major(self.chromedriver_version)
        if browser is None or driver is None:
            return None
        return browser == driver

    def describe(self) -> str:
        """One line for headers and ``backendbench doctor``."""
        return (
            f"{self.chromium_version or self.chromium} + {self.chromedriver_version or self.chromedriver} "
            f"({self.source}: {self.chromium}, {self.chromedriver})"
        )


@dataclass
class BrowserSearch:
    """One search for a browser; ``path`` replaces PATH (tests point it at an empty folder)."""

    chromium: str | None = None
    chromedriver: str | None = None
    path: str | None = None
    selenium_manager: bool = True
    selenium_manager_timeout_s: float = SELENIUM_MANAGER_TIMEOUT_S
    tried: list[str] = field(default_factory=list)

    def find(self) -> BrowserInstall:
        """The first usable browser + driver pair, or BrowserError listing what was tried and the fix."""
        chromium = self.chromium or environment_value("chromium") or None
        chromedriver = self.chromedriver or environment_value("chromedriver") or None
        if chromium or chromedriver:
            return self._explicit(chromium, chromedriver, "option" if (self.chromium or self.chromedriver) else "environment")
        for source, browsers in (("debian", DEBIAN_BROWSERS), ("chrome", CHROME_BROWSERS)):
            browser = self._which(browsers)
            if browser is None:
                self.tried.append(f"{source}: none of {', '.join(browsers)} on PATH")
                continue
            driver = self._which(DRIVERS)
            if driver is None:
                self.tried.append(f"{source}: {browser} found but no chromedriver on PATH")
                continue
            found = self._checked(browser, driver, source)
            if found is not None:
                return found
        if self.selenium_manager:
            found = self._selenium_manager()
            if found is not None:
                return found
        raise BrowserError(f"no browser for Gherkin scenarios ({'; '.join(self.tried)}); {install_hint()}")

    def _explicit(self, chromium: str | None, chromedriver: str | None, source: str) -> BrowserInstall:
        option = "--chromium" if source == "option" else CHROMIUM_ENV
        browser = _resolve(chromium, "Chromium", option) if chromium else self._which(DEBIAN_BROWSERS + CHROME_BROWSERS)
        driver_option = "--chromedriver" if source == "option" else CHROMEDRIVER_ENV
        driver = _resolve(chromedriver, "chromedriver", driver_option) if chromedriver else self._which(DRIVERS)
        if browser is None or driver is None:
            missing = "Chromium" if browser is None else "chromedriver"
            raise BrowserError(f"{missing} not found on PATH (the other binary came from {source}); {install_hint()}")
        found = self._checked(browser, driver, source)
        if found is None:
            raise BrowserError(f"{self.tried[-1]}; pass a matching pair, or {install_hint()}")
        return found

    def _checked(self, browser: str, driver: str, source: str) -> BrowserInstall | None:
        found = BrowserInstall(browser, driver, source, binary_version(browser), binary_version(driver))
        if found.versions_match is False:
            self.tried.append(f"{source}: {found.chromium_version} with {found.chromedriver_version}: major versions differ")
            return None
        return found

    def _which(self, names: tuple[str, ...]) -> str | None:
        for name in names:
            found = shutil.which(name, path=self.path)
            if found:
                return found
        return None

    def _selenium_manager(self) -> BrowserInstall | None:
        """Ask Selenium Manager (offline when SE_OFFLINE is set) under a deadline; None if it has no pair."""
        binary = selenium_manager_binary()  # run directly: selenium's wrapper has no timeout
        if binary is None:
            self.tried.append("selenium-manager: unavailable (no binary for this platform in the selenium package, SE_MANAGER_PATH unset)")
            return None
        offline = os.environ.get("SE_OFFLINE", "").lower() in ("1", "true", "yes")
        timeout = max(1, int(self.selenium_manager_timeout_s / 2))
        argv = [binary, "--browser", "chrome", "--output", "json", "--language-binding", "python", "--avoid-stats", "--timeout", str(timeout)]
        if offline:
            argv.append("--offline")
        env = dict(os.environ)
        if self.path is not None:
            env["PATH"] = self.path
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=self.selenium_manager_timeout_s, check=False, env=env)
            result = json.loads(proc.stdout or "{}").get("result", {})
        except subprocess.TimeoutExpired:
            self.tried.append(f"selenium-manager: no answer within {self.selenium_manager_timeout_s:g} s")
            return None
        except (OSError, ValueError) as err:
            self.tried.append(f"selenium-manager: {err}")
            return None
        browser, driver = result.get("browser_path") or "", result.get("driver_path") or ""
        if not (browser and driver and os.access(browser, os.X_OK) and os.access(driver, os.X_OK)):
            reason = (result.get("message") or "").strip() or "no browser and driver pair"
            mode = "offline (SE_OFFLINE)" if offline else "could not download Chrome for Testing"
            self.tried.append(f"selenium-manager {mode}: {reason.splitlines()[0][:160]}")
            return None
        return self._checked(browser, driver, "selenium-manager")


def selenium_manager_binary() -> str | None:
    """The Selenium Manager binary: ``SE_MANAGER_PATH`` (selenium's own override), else the one the
    selenium wheel ships for this platform (``webdriver/common/<platform>/selenium-manager``)."""
    override = os.environ.get("SE_MANAGER_PATH")
    if override:
        return override if os.access(override, os.X_OK) else None
    try:
        import selenium
    except ImportError:
        return None
    machine = platform.machine().lower()
    folder = {"win32": "windows", "cygwin": "windows", "darwin": "macos"}.get(sys.platform)
    if folder is None and sys.platform.startswith("linux"):
        folder = "linux-arm64" if machine in ("aarch64", "arm64") else "linux-x86_64"
    if folder is None:
        return None
    binary = Path(selenium.__file__).parent / "webdriver" / "common" / folder / ("selenium-manager.exe" if folder == "windows" else "selenium-manager")
    return str(binary) if binary.is_file() else None


def discover_browser(chromium: str | None = None, chromedriver: str | None = None, *, path: str | None = None, selenium_manager: bool = True) -> BrowserInstall:
    """The browser the harness will start, or BrowserError with the fix for this platform."""
    return BrowserSearch(chromium, chromedriver, path, selenium_manager).find()


def install_hint() -> str:
    """How to get a browser here, e.g. ``apt-get install chromium chromium-driver`` on Debian."""
    return f"to get one: {current_platform().install('chromium')}; or point --chromium and --chromedriver at installed binaries"


def binary_version(binary: str) -> str | None:
    """``Chromium 156.0.8078.79`` / ``ChromeDriver 156.0.8078.79`` from ``--version``; None if unreadable."""
    try:
        proc = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"([A-Za-z][A-Za-z ]*?)\s+(\d+(?:\.\d+)+)", proc.stdout)
    return f"{match.group(1).strip()} {match.group(2)}" if match else None


def _major(version: str | None) -> int | None:
    match = re.search(r"(\d+)\.", version or "")
    return int(match.group(1)) if match else None


def _resolve(configured: str, what: str, option: str) -> str:
    found = shutil.which(configured) or (configured if os.path.isfile(configured) and os.access(configured, os.X_OK) else None)
    if found is None:
        raise BrowserError(f"{what} not found at {configured!r} (from {option}); {install_hint()}")
    return found
