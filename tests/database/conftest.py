"""Fixtures for the database tests: real PostgreSQL (never mocked) and the event-registration task.

Tests marked ``postgres`` need PostgreSQL's server binaries (Debian: postgresql); tests marked
``browser`` need Chromium. Without them they skip with the reason on a developer's machine
and fail when CI is set, so a CI image that lost them cannot pass silently.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_backendbench.db.providers.local_cluster import LocalPostgres, server_unavailable_reason

REPO = Path(__file__).resolve().parents[2]
TASK = "event-registration"
# Registers the database plugin explicitly; harmless once plugin.py loads it too (same name).
PLUGIN = ("-p", "pytest_backendbench.db.checks.dbcheck")
RUN = ("-p", "no:cacheprovider", "--bench-runtime=process", *PLUGIN)


def pytest_runtest_setup(item: pytest.Item) -> None:
    missing = []
    if item.get_closest_marker("postgres") is not None:
        reason = server_unavailable_reason()
        if reason:
            missing.append(reason)
    if item.get_closest_marker("browser") is not None:
        from pytest_backendbench.bdd.browser.shared import browser_available

        reason = browser_available()
        if reason:
            missing.append(f"needs Chromium and chromedriver: {reason}")
    if not missing:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI is set and this test cannot run: {'; '.join(missing)}", pytrace=False)
    pytest.skip("; ".join(missing))


@pytest.fixture
def postgres(tmp_path: Path) -> Iterator[LocalPostgres]:
    """A started throwaway cluster (the process runtime's database), stopped afterwards."""
    if server_unavailable_reason():
        pytest.skip("no PostgreSQL")
    database = LocalPostgres(Path(os.environ.get("BACKENDBENCH_CACHE", tmp_path / "cache")), "test").start()
    try:
        yield database
    finally:
        database.stop()


@pytest.fixture
def er_bench(pytester: pytest.Pytester, shared_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The event-registration task (contract + oracle) copied into the pytester folder."""
    monkeypatch.setenv("BACKENDBENCH_CACHE", str(shared_cache))
    for part in ("benchmarks", "oracles"):
        shutil.copytree(REPO / part / TASK, pytester.path / part / TASK)
    return pytester.path


def materialize(bench: Path, mutant_name: str) -> Path:
    """A mutant of the reference from oracles/<task>/mutants.yaml, as a candidate folder."""
    from pytest_backendbench.cli.validate import load_mutants, materialize_mutant
    from pytest_backendbench.tasks import TaskCatalog

    task = TaskCatalog(bench).load(TASK)
    (mutant,) = [m for m in load_mutants(task) if m.name == mutant_name]
    return materialize_mutant(task, mutant, bench / "candidates" / mutant_name)


def postgres_processes() -> list[tuple[int, str]]:
    """(pid, command line) of every running ``postgres`` server process on this machine."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"/postgres") and b"-D" in argv:
            found.append((int(entry.name), b" ".join(argv).decode(errors="replace")))
    return found


def clusters_of(pid: int) -> list[Path]:
    """Cluster folders (and running servers) a harness process left behind."""
    import tempfile

    left = []
    for folder in Path(tempfile.gettempdir()).glob("backendbench-pg-*"):
        try:
            owner = int((folder / "harness.pid").read_text())
        except (OSError, ValueError):
            continue
        if owner == pid:
            left.append(folder)
    running = [Path(cmd.split(" -D ", 1)[1].split(" ", 1)[0]).parent for _, cmd in postgres_processes() if " -D " in cmd]
    return left + [folder for folder in running if _owner_of(folder) == pid and folder not in left]


def _owner_of(folder: Path) -> int | None:
    try:
        return int((folder / "harness.pid").read_text())
    except (OSError, ValueError):
        return None
