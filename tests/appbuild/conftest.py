"""Fixtures for app.build's checks: the sweep's fixture pages served over HTTP, one shared browser.

Tests marked ``browser`` need Debian's chromium and chromium-driver (and those that run
Lighthouse, ``lighthouse`` on PATH: `.ci/run` installs it). Without them they are skipped, with
the reason, on a developer's machine; with CI set they fail, so a CI image that lost them cannot
pass silently.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_backendbench.appbuild.settings import LIGHTHOUSE_VERSION
from pytest_backendbench.bdd.browser.shared import BrowserOptions, SharedBrowser, browser_available

PAGES = Path(__file__).parent / "pages"


def _missing(item: pytest.Item) -> str | None:
    if item.get_closest_marker("browser") is None:
        return None
    missing = browser_available()
    if missing is None and "lighthouse" in item.fixturenames and shutil.which("lighthouse") is None:
        missing = f"lighthouse is not on PATH (npm install -g lighthouse@{LIGHTHOUSE_VERSION})"
    return missing


def pytest_runtest_setup(item: pytest.Item) -> None:
    missing = _missing(item)
    if missing is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI is set and the app.build browser tests cannot run: {missing}", pytrace=False)
    pytest.skip(f"needs Chromium and chromedriver: {missing}")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="session")
def pages() -> Iterator[str]:
    """The base URL of tests/appbuild/pages, served from a thread."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(PAGES)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="session")
def browser() -> Iterator[SharedBrowser]:
    """One headless Chromium for the session's sweeps (CDN hosts fail fast: the pages need none)."""
    with SharedBrowser(BrowserOptions(cdn="off")) as shared:
        yield shared


@pytest.fixture
def lighthouse() -> str:
    """The lighthouse command (the setup hook above skips or fails without one)."""
    return shutil.which("lighthouse") or "lighthouse"
