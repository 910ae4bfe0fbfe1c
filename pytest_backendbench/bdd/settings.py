"""Settings of the browser that runs Gherkin scenarios (part of config.py's table).

Cheap to import on purpose: it is read at every pytest start, selenium and behave are not.
"""

from __future__ import annotations

from ..config import Setting

CDN_MODES = ("offline", "live", "off")

SETTINGS: tuple[Setting, ...] = (
    # BACKENDBENCH_CHROMIUM / _CHROMEDRIVER are read by bdd/discovery.py, which reports the source
    Setting("chromium", "--chromium", help="Chromium binary for Gherkin scenarios (default: discovered)", group="browser", metavar="PATH", env="", ini=""),
    Setting("chromedriver", "--chromedriver", help="ChromeDriver matching --chromium (default: discovered)", group="browser", metavar="PATH", env="", ini=""),
    Setting("headed", "--bench-headed", action="store_true", default=False, help="show the browser instead of running it headless", group="browser"),
    Setting("browser_locale", "--browser-locale", help="the browser's locale (LANG), e.g. zh-CN; default: the task's e2edev.browser_locale, else en-US", group="browser", metavar="LOCALE"),
    Setting("browser_args", "--browser-arg", action="append", default=[], help="extra Chromium flag (repeatable)", group="browser", metavar="ARG"),
    Setting("cdn", "--bench-cdn", default="offline", choices=CDN_MODES, group="browser",
            help="CDN hosts in the browser: offline serves them from npm packages cached locally, live uses the internet, off makes them fail fast"),
    Setting("bdd_sleep", "--bdd-sleep", default="task", help="time.sleep in step code: real, cap:S, S, or task (the task's e2edev.sleep_policy)", group="browser", metavar="POLICY"),
)
