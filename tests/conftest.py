"""Shared fixtures: a small real benchmark (tests/data/bench) and purpose-written candidates."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

# Imported before any in-process pytester run. pytester restores sys.modules after each run,
# dropping what the run imported first; the plugin imports these lazily (to stay cheap in
# projects that do not use it), so without this a later run in the same worker would meet a
# second copy of requests ("You can only merge into CookieJar") or of a harness module.
import requests  # noqa: F401

# selenium likewise: a WebDriver made before a pytester run raises the exception classes of the
# copy it was made with, so after that run dropped selenium, ``except NoAlertPresentException`` or
# WebDriverWait's ignored NoSuchElementException (imported afresh) would no longer match them.
import selenium.common.exceptions
import selenium.webdriver
import selenium.webdriver.support.wait  # noqa: F401

# tests/judges monkeypatch pool_of on bdd.scheduling.worker_pool, which gui_item imports when it runs: both must
# be the modules a pytester run cannot drop
import pytest_backendbench.bdd.scheduling.worker_pool
import pytest_backendbench.judges.gui_item
import pytest_backendbench.session
import pytest_backendbench.taskrun  # noqa: F401

DATA = Path(__file__).parent / "data"
collect_ignore = ["data"]  # benchmark fixtures: their oracles run only inside pytester runs


def pytest_addoption(parser: pytest.Parser) -> None:
    """The harness's own test options."""
    parser.addoption(
        "--all-mutants",
        action="store_true",
        default=False,
        help="tests/test_benchmark_oracles.py: judge every mutant of every task, not one per task",
    )
    parser.addoption(
        "--with-alternates",
        action="store_true",
        default=False,
        help="tests/test_benchmark_oracles.py: also judge every task's alternates (as backendbench validate does)",
    )


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytester, its runs without pytest-benchmark: CI's environment has it installed (nothing
    here uses it), and under -n it warns in every run that it is disabled."""
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:benchmark")
    return pytester


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One venv cache for the whole test session, so candidates build once."""
    return tmp_path_factory.mktemp("backendbench-cache")


@pytest.fixture
def bench(pytester: pytest.Pytester, shared_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The notes benchmark copied into the pytester folder (which becomes the rootdir)."""
    monkeypatch.setenv("BACKENDBENCH_CACHE", str(shared_cache))
    shutil.copytree(DATA / "bench", pytester.path, dirs_exist_ok=True)
    return pytester.path


@pytest.fixture
def make_candidate(pytester: pytest.Pytester) -> Callable[..., Path]:
    """Write a candidate folder running the notes app with defect flags (e.g. --skip-ownership)."""

    def make(name: str, *flags: str, task: str | None = "notes", where: Path | None = None) -> Path:
        folder = (where or pytester.path / "candidates") / name
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(DATA / "bench" / "oracles" / "notes" / "reference" / "app.py", folder / "app.py")
        shutil.copy(DATA / "bench" / "oracles" / "notes" / "reference" / "Dockerfile", folder / "Dockerfile")
        lines = [f"run: python app.py {' '.join(flags)}".rstrip()]
        if task:
            lines.insert(0, f"task: {task}")
        (folder / "candidate.yaml").write_text("\n".join(lines) + "\n")
        return folder

    return make


def read_report(folder: Path) -> dict[str, Any]:
    """The report.json a run wrote."""
    return dict(json.loads((folder / "report.json").read_text()))
