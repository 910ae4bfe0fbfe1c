"""Settings of the browser that runs Gherkin scenarios (part of config.py's table), and their readers.

Cheap to import on purpose: it is read at every pytest start, selenium and behave are not.
The readers (``browser_options``, ``browser_locale``, ``sleep_policy``) turn the resolved values
and a task's E2EDev hints into what the browser and the scenario runner take.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ..config import Setting, bench_config
from ..errors import OracleError
from ..setting_values import seconds
from .browser.options import REMOTE_HOST_MODES, BrowserOptions
from .browser.page_random import DEFAULT_SEED, parse_seed

if TYPE_CHECKING:
    from ..tasks import Task
    from .scenarios.step_loading import SleepPolicy

CDN_MODES = ("offline", "live", "off")
DEFAULT_SCENARIO_TIMEOUT_S = 120.0


def _sessions(text: str) -> str:
    """auto or a whole number of at least 1 (kept as text: the pool resolves ``auto`` per worker)"""
    value = text.strip().lower()
    if value != "auto" and not (value.isdigit() and int(value) >= 1):
        raise ValueError(text)
    return value

SETTINGS: tuple[Setting, ...] = (
    # BACKENDBENCH_CHROMIUM / _CHROMEDRIVER are read by bdd/browser/discovery.py, which reports the source
    Setting("chromium", "--chromium", help="Chromium binary for Gherkin scenarios (default: discovered)", group="browser", metavar="PATH", ini=""),
    Setting("chromedriver", "--chromedriver", help="ChromeDriver matching --chromium (default: discovered)", group="browser", metavar="PATH", ini=""),
    Setting("headed", "--bench-headed", action="store_true", default=False, help="show the browser instead of running it headless", group="browser"),
    Setting("browser_locale", "--browser-locale", help="the browser's locale (LANG), e.g. zh-CN; default: the task's e2edev.browser_locale, else en-US", group="browser", metavar="LOCALE"),
    Setting("browser_args", "--browser-arg", action="append", default=[], help="extra Chromium flag (repeatable)", group="browser", metavar="ARG"),
    Setting("cdn", "--bench-cdn", default="offline", choices=CDN_MODES, group="browser",
            help="CDN hosts in the browser: offline serves them from npm packages cached locally, live uses the internet, off makes them fail fast"),
    Setting("remote_hosts", "--bench-remote-hosts", default="live", choices=REMOTE_HOST_MODES, group="browser",
            help="other hosts than the candidate's (loopback, private networks) and the CDN's: live uses the network, off makes every request to them fail at once, as without internet but without DNS waits"),
    Setting("bdd_seed", "--bench-bdd-seed", parse_seed, DEFAULT_SEED, group="browser", metavar="N|off",
            help="seed of Math.random in scenario pages: each scenario and repeat draws its own numbers, the same in every run; off leaves the browser's own"),
    Setting("bdd_sessions", "--bench-bdd-sessions", _sessions, "auto", group="browser", metavar="N|auto",
            help="browser sessions per worker that run a candidate's scenarios at once: auto (starts from free memory and load, then one more a second while the CPU idles, one fewer while it is saturated) or N; 1 runs them one by one"),
    Setting("bdd_timeout", "--bench-bdd-timeout", seconds, DEFAULT_SCENARIO_TIMEOUT_S, group="browser", metavar="S",
            help="seconds one Gherkin scenario may take; past it the scenario fails ('ran out of time') and its browser is replaced"),
    Setting("page_screenshot", "--bench-page-screenshot", action="store_true", default=False, group="browser",
            help="keep one full-page screenshot of each browser-UI candidate's primary route (artifacts/<candidate>/page.png), for report compare --visual"),
    Setting("bdd_sleep", "--bdd-sleep", default="task", help="time.sleep in step code: real, cap:S, S, or task (the task's e2edev.sleep_policy)", group="browser", metavar="POLICY"),
)


# --- readers -----------------------------------------------------------------------------------


def browser_options(config: pytest.Config) -> BrowserOptions:
    """BrowserOptions from the plugin's options (absent options mean defaults)."""
    bench = bench_config(config)
    return BrowserOptions(
        chromium=bench.chromium or None,
        chromedriver=bench.chromedriver or None,
        headless=not bench.headed,
        locale=bench.browser_locale or None,
        extra_args=tuple(bench.browser_args),
        cdn=bench.cdn,
        remote_hosts=bench.remote_hosts,
    )


def browser_locale(config: pytest.Config, task: Task | None) -> str | None:
    """--browser-locale if given, else the task's ``e2edev.browser_locale`` hint, else none (en-US)."""
    option = bench_config(config).browser_locale
    if option:
        return str(option)
    hints = task.extra.get("e2edev") if task is not None else None
    if isinstance(hints, dict) and hints.get("browser_locale"):
        return str(hints["browser_locale"])
    return None


def sleep_policy(config: pytest.Config, task: Task | None) -> SleepPolicy:
    """--bdd-sleep (real, cap:SECONDS, SECONDS), else the task's ``e2edev.sleep_policy`` hint, else real."""
    from .scenarios.step_loading import SleepPolicy  # behave: imported when a scenario needs it, not at every start

    option = bench_config(config).bdd_sleep
    if option and option != "task":
        try:
            return SleepPolicy.parse(option)
        except ValueError as err:
            raise pytest.UsageError(f"--bdd-sleep: {err}") from err
    hints = task.extra.get("e2edev") if task is not None else None
    if isinstance(hints, dict) and hints.get("sleep_policy") is not None:
        try:
            return SleepPolicy.parse(str(hints["sleep_policy"]))
        except ValueError as err:
            raise OracleError(f"{task.task_yaml if task else 'task.yaml'}: e2edev.sleep_policy: {err}") from err
    return SleepPolicy.real()
