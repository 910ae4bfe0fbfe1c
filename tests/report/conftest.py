"""Real report documents for the report writers' tests, made by running the plugin."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

DATA = Path(__file__).parents[1] / "data"
REFERENCE = DATA / "bench" / "oracles" / "notes" / "reference"


def _candidate(folder: Path, *flags: str, generation: str = "", app: bool = True) -> None:
    folder.mkdir(parents=True)
    if app:
        shutil.copy(REFERENCE / "app.py", folder / "app.py")
        shutil.copy(REFERENCE / "Dockerfile", folder / "Dockerfile")
    lines = [f"run: python app.py {' '.join(flags)}".rstrip()] if app else []
    if generation:
        lines.append(f"generation: {generation}")
    (folder / "candidate.yaml").write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="session")
def real_reports(tmp_path_factory: pytest.TempPathFactory, shared_cache: Path) -> list[tuple[str, dict[str, Any]]]:
    """Three runs of a two-task bench (notes, notes2), as three models might produce them:

    - ``model-good``: both candidates pass;
    - ``model-flawed``: notes skips the ownership check, notes2 has no candidate (missing);
    - ``model-sampled``: three samples per task: one good, one accepting invalid input, one
      whose generation failed (no Dockerfile, no run: a failed build).
    """
    root = tmp_path_factory.mktemp("report-bench")
    shutil.copytree(DATA / "bench", root, dirs_exist_ok=True)
    shutil.copytree(root / "benchmarks" / "notes", root / "benchmarks" / "notes2")
    shutil.copytree(root / "oracles" / "notes", root / "oracles" / "notes2")
    task_yaml = root / "benchmarks" / "notes2" / "task.yaml"
    task_yaml.write_text(task_yaml.read_text().replace("id: notes", "id: notes2"))

    good_gen = "{model: model-good, tokens_in: 1200, tokens_out: 800, cost_usd: 0.004, seconds: 12.5}"
    for task in ("notes", "notes2"):
        _candidate(root / "good" / task, generation=good_gen)
    _candidate(root / "flawed" / "notes", "--skip-ownership", generation="{model: model-flawed, tokens_in: 900, tokens_out: 500}")
    for task in ("notes", "notes2"):
        _candidate(root / "sampled" / task / "sample-1")
        _candidate(root / "sampled" / task / "sample-2", "--accept-invalid")
        _candidate(
            root / "sampled" / task / "sample-3", app=False, generation="{model: model-sampled, error: 'no usable answer in 3 attempts'}"
        )

    env = {**os.environ, "BACKENDBENCH_CACHE": str(shared_cache)}
    documents = []
    for name in ("good", "flawed", "sampled"):
        report_dir = root / f"report-{name}"
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                f"--candidate={root / name}",
                f"--bench-report-dir={report_dir}",
                "--bench-runtime=process",
                "-p",
                "no:cacheprovider",
                "-q",
            ],
            check=False,
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if not (report_dir / "report.json").is_file():
            pytest.fail(f"the {name} run wrote no report (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        documents.append((f"model-{name}", json.loads((report_dir / "report.json").read_text())))
    return documents


ARTIFACTS_VARIABLE = "BACKENDBENCH_TEST_ARTIFACTS"
"""Where the browser tests also copy their screenshots (CI sets it and keeps the folder)."""


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder the browser tests write their screenshots to: ``$BACKENDBENCH_TEST_ARTIFACTS/
    screenshots`` when set (CI uploads it), else a folder under pytest's temporary directory."""
    kept = os.environ.get(ARTIFACTS_VARIABLE, "").strip()
    if kept:
        folder = Path(kept) / "screenshots"
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    return tmp_path_factory.mktemp("screenshots")


@pytest.fixture(scope="session")
def chromium() -> Iterator[WebDriver]:
    """One headless Chromium for every page test of the session (skipped locally without one;
    under CI=true a missing browser fails)."""
    from pytest_backendbench.bdd.browser.shared import BrowserOptions, SharedBrowser, browser_available

    missing = browser_available()
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set and Chromium cannot run: {missing}", pytrace=False)
        pytest.skip(f"needs Chromium and chromedriver: {missing}")
    with SharedBrowser(BrowserOptions(window_size=(1280, 900))) as browser:
        yield browser.driver
