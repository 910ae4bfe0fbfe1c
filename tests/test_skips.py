"""An oracle item that skips without the task declaring why is an error, not a free pass."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

BENCH = Path(__file__).parent / "data" / "bench"

SKIPPING = '''
import pytest


@pytest.mark.requirement("R1")
@pytest.mark.category("state")
def test_skips_at_run_time(http):
    pytest.skip("the server looked busy")


@pytest.mark.requirement("R1")
@pytest.mark.category("state")
@pytest.mark.skip(reason="R1's export is optional in this release")
def test_declared_skip(http):
    raise AssertionError("never runs")
'''


@pytest.mark.slow
def test_an_undeclared_skip_is_a_harness_error_and_a_declared_one_is_left_out(pytester: pytest.Pytester, shared_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BACKENDBENCH_CACHE", str(shared_cache))
    shutil.copytree(BENCH, pytester.path, dirs_exist_ok=True)
    (pytester.path / "oracles" / "notes" / "test_skipping.py").write_text(SKIPPING)
    candidate = pytester.path / "candidate"
    shutil.copytree(BENCH / "oracles" / "notes" / "reference", candidate)

    pytester.runpytest(f"--candidate={candidate}", "--bench-runtime=process", "--bench-report-dir=out", "-p", "no:cacheprovider", "-k", "skip")

    report = json.loads((pytester.path / "out" / "report.json").read_text())
    items = {i["nodeid"].split("::")[-1].split("[")[0]: i for i in report["tasks"][0]["items"] if i["kind"] == "http"}
    undeclared, declared = items["test_skips_at_run_time"], items["test_declared_skip"]
    assert undeclared["outcome"] == "error"
    assert undeclared["message"].startswith("oracle item skipped without the task declaring why (the server looked busy)")
    assert declared["outcome"] == "skipped"
    summary = report["summary"]
    assert (summary["errors"], summary["sr"], summary["publication"]["publishable"]) == (1, 0.0, False)
