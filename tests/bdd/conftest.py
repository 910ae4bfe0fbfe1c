"""Fixtures for the Gherkin/browser tests: the todo bench, a static file server, one shared browser.

Tests marked ``browser`` need Debian's chromium and chromium-driver. Without them they are
skipped, with the reason, on a developer's machine; with CI set they fail, so a CI image
that lost its browser cannot pass silently.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# Imported here, before any in-process pytester run: pytester drops the modules a run imported
# first, but the already imported ``http`` package keeps its ``cookiejar`` attribute, so a later
# run would mix two http.cookiejar modules in requests ("You can only merge into CookieJar").
# The same holds for the harness modules the plugin imports lazily: a test conftest patches
# pytest_backendbench.taskrun, and ``from ..taskrun import ...`` reads the package attribute.
import requests  # noqa: F401

import pytest_backendbench.taskrun  # noqa: F401
from pytest_backendbench.bdd.browser.shared import BrowserOptions, SharedBrowser, browser_available

DATA = Path(__file__).parent / "data"
TODO_BENCH = DATA / "bench"
TODO_ORACLE = TODO_BENCH / "oracles" / "todo"
TODO_FEATURES = TODO_ORACLE / "features"
TODO_APP = TODO_ORACLE / "reference"


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("browser") is None:
        return
    missing = browser_available()
    if missing is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI is set and the browser tests cannot run: {missing}", pytrace=False)
    pytest.skip(f"needs Chromium and chromedriver: {missing}")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


class StaticServer:
    """Serves one folder on 127.0.0.1 from a thread, like a static frontend candidate."""

    def __init__(self, folder: Path) -> None:
        handler = functools.partial(_QuietHandler, directory=str(folder))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="session")
def serve() -> Iterator[Callable[[Path], StaticServer]]:
    """serve(folder) -> a running StaticServer, stopped at the end of the session."""
    servers: list[StaticServer] = []

    def start(folder: Path) -> StaticServer:
        server = StaticServer(folder)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


@pytest.fixture(scope="session")
def todo_app(serve: Callable[[Path], StaticServer]) -> StaticServer:
    """The todo reference app, served over HTTP."""
    return serve(TODO_APP)


@pytest.fixture(scope="session")
def session_browser() -> Iterator[SharedBrowser]:
    """One headless Chromium for the session's browser tests (started on first use)."""
    browser = SharedBrowser(BrowserOptions())
    yield browser
    browser.close()


@pytest.fixture
def browser(session_browser: SharedBrowser, todo_app: StaticServer) -> SharedBrowser:
    """The session's browser, reset for the todo app's origin."""
    session_browser.reset(todo_app.base_url)
    return session_browser


def live_pids(pids: set[int]) -> set[int]:
    """Those of pids that still run (zombies count as gone)."""
    alive = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                state = stat.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if state != b"Z":
            alive.add(pid)
    return alive


def processes_mentioning(text: str) -> set[int]:
    """Live processes whose command line contains text."""
    found = set()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as cmdline:
                if text.encode() in cmdline.read():
                    found.add(int(entry.name))
        except OSError:
            continue
    return live_pids(found)


def write_static_bench(root: Path, task: str, task_yaml: str, spec: str, feature: str, steps: str, page: str) -> Path:
    """A one-task benchmark below root (task.yaml, spec.md, one feature with its steps module) and its static candidate."""
    (root / "benchmarks" / task).mkdir(parents=True)
    (root / "benchmarks" / task / "task.yaml").write_text(task_yaml)
    (root / "benchmarks" / task / "spec.md").write_text(spec)
    steps_dir = root / "oracles" / task / "features" / "steps"
    steps_dir.mkdir(parents=True)
    (steps_dir.parent / f"{task}.feature").write_text(feature)
    (steps_dir / f"{task}.py").write_text(steps)
    candidate = root / "candidate"
    candidate.mkdir()
    (candidate / "index.html").write_text(page)
    return candidate
