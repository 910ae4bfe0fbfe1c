"""How the worker's browsers are started: binaries, flags, locale, environment.

Cheap to import (no selenium): the plugin builds these options at configure time.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import BrowserError

if TYPE_CHECKING:
    from .discovery import BrowserInstall

INSTALL_HINT = (
    "install Debian's packages with `apt-get install chromium chromium-driver`, "
    "or point --chromium and --chromedriver at other binaries"
)
REMOTE_HOST_MODES = ("live", "off")  # BrowserOptions.remote_hosts (--bench-remote-hosts), see remote_hosts.py
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


@dataclass(frozen=True)
class BrowserOptions:
    """How to start the shared browser; ``None`` paths are looked up in the usual places.

    ``locale`` (e.g. ``de-DE``) sets LANG/LANGUAGE for the browser process, ``--lang`` and
    the Accept-Language preference: date and time inputs follow it, and Debian needs the
    ``chromium-l10n`` package for any locale but en-US. ``cdn`` is the --bench-cdn mode (see
    :mod:`pytest_backendbench.bdd.cdn.server`): ``offline`` answers CDN hosts from the npm cache in
    ``cdn_cache``, ``live`` leaves them alone, ``off`` makes them fail fast. ``remote_hosts``
    is the --bench-remote-hosts mode (see :mod:`pytest_backendbench.bdd.browser.remote_hosts`).
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
    remote_hosts: str = "live"

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
        # Selenium Manager is never needed (both paths are given); should anything start it, it stays offline
        env["SE_OFFLINE"] = "true"
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
