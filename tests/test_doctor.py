"""``backendbench doctor`` on this machine, with the browser hidden, and its line in a bench run's header."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_backendbench.diagnosis import MISSING, OK, WARN, Check, Diagnosis, browser_check, diagnose
from pytest_backendbench.host.install_hints import Platform, current_platform

LINE = re.compile(r"^(OK|MISSING|WARN) +\S")


def test_the_screen_has_one_status_per_line_and_a_verdict_matching_the_exit_code() -> None:
    proc = subprocess.run([sys.executable, "-m", "pytest_backendbench.cli", "doctor"], capture_output=True, text=True, timeout=120, check=False)
    lines = proc.stdout.rstrip("\n").splitlines()
    checks = [line for line in lines if line and not line.startswith(" ")]
    verdict = checks.pop()
    assert all(LINE.match(line) for line in checks), checks
    names = " ".join(checks)
    for name in ("Docker daemon", "Podman", "PostgreSQL (system)", "PostgreSQL (embedded)", "Chromium/ChromeDriver", "Disk (cache)", "Open files"):
        assert name in names
    assert proc.returncode == (0 if verdict.startswith("ready:") else 1), proc.stdout
    for index, line in enumerate(lines):  # every MISSING line is followed by its fix
        if line.startswith("MISSING"):
            assert lines[index + 1].strip().startswith("fix: ")


def test_without_a_browser_the_line_is_missing_with_this_platforms_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("SE_OFFLINE", "true")
    monkeypatch.delenv("BACKENDBENCH_CHROMIUM", raising=False)
    check, browser = browser_check()
    assert (check.status, browser) == (MISSING, None)
    assert check.fix.startswith(current_platform().install("chromium"))
    assert "selenium-manager offline" in check.detail


def test_exit_code_and_verdict_follow_what_a_run_would_miss() -> None:
    checks = [Check("Docker daemon", MISSING, "no engine", "apt-get install docker.io"), Check("Open files", WARN, "limit 1024", "ulimit -n 16384")]
    ready = Diagnosis(checks, "process", "embedded 18.6", "Chromium 156")
    assert ready.exit_code == 0 and ready.verdict().startswith("ready: runtime process, PostgreSQL embedded 18.6")
    degraded = Diagnosis(checks, "process", None, "Chromium 156")
    assert degraded.exit_code == 1
    assert degraded.verdict() == "degraded: runtime process; without PostgreSQL the tasks that need it are undetermined (their items end as harness errors)"
    assert degraded.summary_line().startswith("backendbench doctor: degraded (runtime process, PostgreSQL none, browser Chromium 156; missing: Docker daemon)")
    rendered = degraded.render().splitlines()
    assert rendered[0].startswith("MISSING  Docker daemon  no engine") and rendered[1].strip() == "fix: apt-get install docker.io"


def test_platform_commands() -> None:
    assert Platform("debian", "Debian").install("chromium") == "apt-get install chromium chromium-driver"
    assert Platform("fedora", "Fedora").install("postgresql").startswith("pip install 'pytest-backendbench[embedded]'")
    assert Platform("other", "?").install("nonexistent") == "install nonexistent"


def test_this_machine_is_diagnosed_with_ok_lines_for_what_it_has() -> None:
    diagnosis = diagnose()
    statuses = {c.name: c.status for c in diagnosis.checks}
    assert statuses["Python"] == OK
    assert diagnosis.runtime in ("docker", "process")
    assert diagnosis.summary_line().startswith("backendbench doctor: ")


def test_the_header_line_appears_in_bench_runs_only(bench: Path, pytester: pytest.Pytester, make_candidate: object) -> None:
    candidate = make_candidate("good")  # type: ignore[operator]
    result = pytester.runpytest(f"--candidate={candidate}", "--bench-runtime=process", "--collect-only", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["backendbench doctor: * details: backendbench doctor"])
    plain = pytester.mkdir("plain")
    (plain / "test_x.py").write_text("def test_x():\n    pass\n")
    other = pytester.runpytest(str(plain), "-p", "no:cacheprovider")
    other.assert_outcomes(passed=1)
    assert "backendbench doctor" not in other.stdout.str()
