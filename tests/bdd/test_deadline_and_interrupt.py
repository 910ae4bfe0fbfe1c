"""A page that spins forever costs one deadline, SIGTERM ends a hung run at once, the pool keeps verdicts.

These run pytest in a subprocess with its own short TMPDIR: every browser the run starts keeps
its profile below it, so "nothing left running" is checked on exactly this run's processes
(other runs on the machine have browsers of their own).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from .conftest import TODO_APP, TODO_BENCH, write_static_bench

REPO = Path(__file__).resolve().parents[2]
DB_TASK = "event-registration"

TASK_YAML = """id: spin
title: A page that spins forever when asked to
kind: frontend
domains: [testing]
port: 8000
health: {path: /, timeout_s: 30}
requirements:
  R1: "The page shows its title"
"""
FEATURE = """@R1
Feature: Spinning
  Scenario: [Error] The page spins forever
    Given the page is open at "#spin"
    Then the title reads "Spinner"

  Scenario: [Normal] The next scenario gets a page that answers
    Given the page is open at "#calm"
    Then the title reads "Spinner"
"""
STEPS = """from behave import given, then
from selenium import webdriver
from selenium.webdriver.common.by import By


@given('the page is open at "{fragment}"')
def open_page(context, fragment):
    context.driver = webdriver.Chrome()
    context.driver.get("file://index.html" + fragment)


@then('the title reads "{title}"')
def title_reads(context, title):
    assert context.driver.find_element(By.ID, "title").text == title
"""
PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>Spinner</title></head>
<body><h1 id="title">Spinner</h1>
<script>if (location.hash === "#spin") { setTimeout(function () { for (;;) {} }, 50); }</script>
</body></html>
"""


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A TMPDIR short enough for Chromium's sockets, private to this test's run."""
    folder = Path(tempfile.mkdtemp(prefix="bbt-", dir="/tmp"))
    folder.chmod(0o755)  # as root the PostgreSQL server runs as postgres: its cluster then lives here too
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _spin_bench(root: Path) -> Path:
    return write_static_bench(root, "spin", TASK_YAML, "A page titled Spinner.\n", FEATURE, STEPS, PAGE)


def _pytest_argv(candidate: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "pytest", f"--candidate={candidate}", "--bench-runtime=process", "--bench-report-dir=out",
            "-p", "no:cacheprovider", *extra]


def _env(tmp: Path, cache: Path) -> dict[str, str]:
    return {**os.environ, "TMPDIR": str(tmp), "BACKENDBENCH_CACHE": str(cache), "PYTHONDONTWRITEBYTECODE": "1"}


def _processes_below(folder: Path) -> list[str]:
    """Live processes (not zombies) whose command line or working directory lies in folder.

    The command line finds this run's browsers and postmasters; the working directory finds the
    postmaster's children too (they retitle themselves ``postgres: checkpointer`` but work in
    the cluster's data directory, which lies below the run's TMPDIR).
    """
    found = []
    for process in psutil.process_iter(["cmdline", "status", "name", "cwd"]):
        try:
            if process.info["status"] == psutil.STATUS_ZOMBIE or process.pid == os.getpid():
                continue
            if any(str(folder) in part for part in process.info["cmdline"] or ()) or str(process.info["cwd"] or "").startswith(str(folder)):
                found.append(f"{process.pid} {process.info['name']}")
        except psutil.Error:
            continue
    return found


def _bdd_outcomes(report_path: Path) -> dict[str, str]:
    report = json.loads(report_path.read_text())
    return {i["nodeid"].split("::")[-1]: i["outcome"] for t in report["tasks"] for i in t["items"] if i["kind"] == "bdd"}


def _run_spinning_page(tmp_path: Path, short_tmp: Path, cache: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """The spinning page's two scenarios in one session; nothing may be left running, the second must pass."""
    candidate = _spin_bench(tmp_path)
    started = time.monotonic()
    run = subprocess.run(
        _pytest_argv(candidate, *extra, "--bench-bdd-sessions=1"), cwd=tmp_path, env=_env(short_tmp, cache),
        capture_output=True, text=True, timeout=300, check=False,
    )
    elapsed = time.monotonic() - started
    assert _processes_below(short_tmp) == []
    outcomes = _bdd_outcomes(tmp_path / "out" / "report.json")
    assert outcomes == {"[Error] The page spins forever": "failed", "[Normal] The next scenario gets a page that answers": "passed"}, run.stdout[-3000:]
    return run, elapsed


@pytest.mark.browser
@pytest.mark.slow
def test_a_page_that_spins_forever_fails_at_the_deadline_and_the_next_scenario_passes(
    tmp_path: Path, short_tmp: Path, shared_cache: Path
) -> None:
    run, elapsed = _run_spinning_page(tmp_path, short_tmp, shared_cache, "--bench-bdd-timeout=10")
    assert "ran out of time: it was still running after 10 s (--bench-bdd-timeout)" in run.stdout
    assert elapsed < 120, f"a hung page cost {elapsed:.0f} s"  # one deadline plus starting pytest and two browsers


@pytest.mark.browser
@pytest.mark.slow
def test_a_page_whose_main_thread_never_answers_is_hung_in_seconds_not_at_the_deadline(
    tmp_path: Path, short_tmp: Path, shared_cache: Path
) -> None:
    """A click's WebDriver call waits on a page spinning in a script loop: after 10 s the page is
    probed over DevTools, gives no answer for 10 s more, and is the candidate's failure — long
    before the 600 s deadline and the 45 s the session's timeouts would allow the call."""
    run, elapsed = _run_spinning_page(tmp_path, short_tmp, shared_cache, "--bench-bdd-timeout=600")
    assert "the page's main thread did not answer a DevTools probe within 10 s" in run.stdout, run.stdout[-3000:]
    assert elapsed < 90, f"a hung page cost {elapsed:.0f} s"


@pytest.mark.browser
@pytest.mark.slow
def test_sigterm_while_a_page_hangs_ends_the_run_within_ten_seconds_and_leaves_nothing_running(
    tmp_path: Path, short_tmp: Path, shared_cache: Path
) -> None:
    candidate = _spin_bench(tmp_path)
    process = subprocess.Popen(
        _pytest_argv(candidate, "--bench-bdd-timeout=600", "--bench-bdd-sessions=1"), cwd=tmp_path, env=_env(short_tmp, shared_cache),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not any("chrom" in p and "driver" not in p for p in _processes_below(short_tmp)) and time.monotonic() < deadline:
            time.sleep(0.5)
        time.sleep(6)  # the spinning scenario's first WebDriver call is now blocked on the renderer
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
        signalled = time.monotonic()
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=30)
        took = time.monotonic() - signalled
        left = _processes_below(short_tmp)
    finally:
        if process.poll() is None:
            process.kill()
    assert took < 10, f"pytest took {took:.1f} s to exit after SIGTERM\n{output[-3000:]}"
    assert left == []
    assert process.returncode == pytest.ExitCode.INTERRUPTED
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["manifest"]["interrupted"] is True
    assert [t["task"] for t in report["tasks"]] == ["spin"]


@pytest.mark.browser
@pytest.mark.postgres
@pytest.mark.slow
def test_sigterm_under_xdist_with_a_database_task_ends_within_ten_seconds_and_leaves_nothing_running(
    tmp_path: Path, short_tmp: Path, shared_cache: Path
) -> None:
    """The README's ``-n 2 --dist loadgroup``: one worker's page spins, the other runs a task with
    PostgreSQL (the process runtime's own cluster). SIGTERM to the controller alone, as a CI
    runner or Slurm sends it: within 10 s pytest has returned, report.json says interrupted, and
    no Chromium, chromedriver or postgres process of the run is left at that moment."""
    from pytest_backendbench.db.providers.local_cluster import server_unavailable_reason

    missing = server_unavailable_reason()
    if missing:
        (pytest.fail if os.environ.get("CI") else pytest.skip)(f"needs PostgreSQL: {missing}")
    spin_candidate = _spin_bench(tmp_path)
    for part in ("benchmarks", "oracles"):
        shutil.copytree(REPO / part / DB_TASK, tmp_path / part / DB_TASK)
    candidates = tmp_path / "candidates"
    candidates.mkdir()
    spin_candidate.rename(candidates / "spin")
    shutil.copytree(REPO / "oracles" / DB_TASK / "reference", candidates / DB_TASK)
    process = subprocess.Popen(
        _pytest_argv(candidates, "--bench-bdd-timeout=600", "--bench-bdd-sessions=1", "-n", "2", "--dist", "loadgroup"),
        cwd=tmp_path, env=_env(short_tmp, shared_cache), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        deadline = time.monotonic() + 300  # the first run builds the reference's environment
        while time.monotonic() < deadline and process.poll() is None:
            running = _processes_below(short_tmp)
            if any("chrom" in p and "driver" not in p for p in running) and any("postgres" in p for p in running):
                break
            time.sleep(0.5)
        time.sleep(6)  # the spinning scenario's WebDriver call is now blocked on the renderer
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
        assert any("postgres" in p for p in _processes_below(short_tmp)), "the database task's cluster never started"
        signalled = time.monotonic()
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=60)
        took = time.monotonic() - signalled
        left = _processes_below(short_tmp)  # at the moment pytest returned, not a second later
    finally:
        if process.poll() is None:
            process.kill()
    assert took < 10, f"pytest took {took:.1f} s to exit after SIGTERM\n{output[-3000:]}"
    assert left == [], output[-3000:]
    assert process.returncode == pytest.ExitCode.INTERRUPTED, output[-3000:]
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["manifest"]["interrupted"] is True
    assert {t["task"] for t in report["tasks"]} == {"spin", DB_TASK}


@pytest.mark.browser
@pytest.mark.slow
def test_scenarios_run_in_several_sessions_get_the_verdicts_of_one_session(tmp_path: Path, short_tmp: Path, shared_cache: Path) -> None:
    outcomes = {}
    for sessions in ("1", "4"):
        root = tmp_path / f"sessions-{sessions}"
        shutil.copytree(TODO_BENCH, root)
        shutil.copytree(TODO_APP, root / "candidate")
        subprocess.run(
            # under xdist: a worker's browsers must be gone before the controller tears the worker down
            _pytest_argv(root / "candidate", f"--bench-bdd-sessions={sessions}", "-n", "2", "--dist", "loadgroup"), cwd=root, env=_env(short_tmp, shared_cache),
            capture_output=True, text=True, timeout=600, check=False,
        )
        outcomes[sessions] = _bdd_outcomes(root / "out" / "report.json")
    assert outcomes["4"] == outcomes["1"]
    assert len(outcomes["1"]) == 17 and set(outcomes["1"].values()) == {"passed", "failed", "error"}
    assert _processes_below(short_tmp) == []


@pytest.mark.browser
@pytest.mark.slow
def test_a_harness_killed_with_sigkill_leaves_no_browser_running(tmp_path: Path, short_tmp: Path, shared_cache: Path) -> None:
    """kill -9 (an OOM kill, a cancelled job) runs no handler of ours: the browser watchdog
    sees its parent go and ends chromedriver, Chromium and their helpers."""
    candidate = _spin_bench(tmp_path)
    process = subprocess.Popen(
        _pytest_argv(candidate, "--bench-bdd-timeout=600", "--bench-bdd-sessions=1"), cwd=tmp_path, env=_env(short_tmp, shared_cache),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not any("chrom" in p and "driver" not in p for p in _processes_below(short_tmp)) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert any("chromedriver" in p for p in _processes_below(short_tmp)), "the browser never started"
        process.kill()
        process.wait(timeout=10)
        gone_by = time.monotonic() + 5
        while _processes_below(short_tmp) and time.monotonic() < gone_by:
            time.sleep(0.2)
        left = _processes_below(short_tmp)
    finally:
        if process.poll() is None:
            process.kill()
    assert left == []
