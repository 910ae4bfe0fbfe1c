"""The backendbench console script on real runs: merge, compare, self-verify."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_backendbench.cli import main

from .conftest import read_report

RUN = ("--bench-runtime=process", "-p", "no:cacheprovider")


def _add_second_task(root: Path) -> None:
    """A copy of the notes task under another id, so there is something to shard."""
    import shutil

    shutil.copytree(root / "benchmarks" / "notes", root / "benchmarks" / "notes2")
    shutil.copytree(root / "oracles" / "notes", root / "oracles" / "notes2")
    task_yaml = root / "benchmarks" / "notes2" / "task.yaml"
    task_yaml.write_text(task_yaml.read_text().replace("id: notes", "id: notes2"))


def test_merge_of_shards_equals_the_unsharded_run(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]) -> None:
    _add_second_task(bench)
    root = bench / "root"
    make_candidate("notes", task=None, where=root)
    make_candidate("notes2", "--skip-ownership", task=None, where=root)
    pytester.runpytest(f"--candidate={root}", "--bench-report-dir=whole", *RUN).assert_outcomes(passed=13, failed=1)
    pytester.runpytest(f"--candidate={root}", "--bench-shard=1/2", "--bench-report-dir=part1", *RUN).assert_outcomes(passed=7)
    pytester.runpytest(f"--candidate={root}", "--bench-shard=2/2", "--bench-report-dir=part2", *RUN).assert_outcomes(passed=6, failed=1)
    assert read_report(bench / "part2")["manifest"]["shard"] == "2/2"
    assert main(["report", "merge", str(bench / "part1"), str(bench / "part2"), "--out", str(bench / "merged")]) == 0
    whole, merged = read_report(bench / "whole"), read_report(bench / "merged")
    assert merged["summary"] == whole["summary"]
    strip = lambda doc: [[(i["nodeid"], i["outcome"], i["requests"]) for i in t["items"]] for t in doc["tasks"]]
    assert strip(merged) == strip(whole)


def test_compare_makes_a_leaderboard(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    pytester.runpytest(f"--candidate={make_candidate('good')}", "--bench-report-dir=model-a", *RUN)
    pytester.runpytest(f"--candidate={make_candidate('bad', '--accept-invalid')}", "--bench-report-dir=model-b", *RUN)
    capsys.readouterr()
    assert main(["report", "compare", str(bench / "model-b"), str(bench / "model-a"), "--out", str(bench / "board")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| run | tasks | Base SR | +R1 SR | Final SR | Delta")
    assert lines[2].startswith("| model-a | 1 | 100.0% | 100.0% | 100.0%")
    assert lines[3].startswith("| model-b | 1 | 0.0% | 0.0% | 0.0%")
    out = "\n".join(lines)  # then every run paired against the first one named
    assert "## model-a against model-b (paired on 1 candidates of 1 tasks)" in out
    assert "- tasks gained by model-a: notes" in out and "- tasks lost by model-a: none" in out
    assert "0 only in model-b; p = 1" not in out and "1 only in model-a; p = 1" in out
    assert "95% paired bootstrap interval [+1.000, +1.000]" in out and "| validation | 1 / 0 |" in out
    assert (bench / "board" / "leaderboard.json").is_file()
    html = (bench / "board" / "leaderboard.html").read_text()
    assert "model-a" in html and "model-b" in html


def test_self_verify_prints_only_the_verdict_and_phase(bench: Path, make_candidate: Callable[..., Path]) -> None:
    def verify(candidate: Path, *extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pytest_backendbench.cli", "self-verify", "--task=notes", f"--candidate={candidate}", f"--bench-root={bench}", "--runtime=process", *extra],
            capture_output=True, text=True, timeout=300, check=False,
        )

    good = verify(make_candidate("good"))
    assert (good.returncode, good.stdout, good.stderr) == (0, "SELF_VERIFY_PASS\nPhase: tests\n", "")
    bad = verify(make_candidate("bad", "--skip-ownership"))
    assert (bad.returncode, bad.stdout) == (1, "SELF_VERIFY_FAIL\nPhase: tests\n")
    for hidden in ("test_", "oracles", "other_user", "assert", "/notes", "404"):
        assert hidden not in bad.stdout + bad.stderr
    deaf = verify(make_candidate("deaf", "--never-listen"))
    assert deaf.stdout == "SELF_VERIFY_FAIL\nPhase: startup\n"
    (bench / "candidates" / "broken").mkdir()
    (bench / "candidates" / "broken" / "candidate.yaml").write_text("task: notes\n")
    assert verify(bench / "candidates" / "broken").stdout == "SELF_VERIFY_FAIL\nPhase: build\n"
    reward = verify(make_candidate("bad2", "--accept-invalid"), "--reward")
    assert reward.stdout == "0.8000\n"  # passed weight 1 + 2 + 1 of 1 + 2 + 1 + 1


def test_bad_shard_is_a_usage_error(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]) -> None:
    result = pytester.runpytest(f"--candidate={make_candidate('good')}", "--bench-shard=3/2", *RUN)
    result.stderr.fnmatch_lines(["*--bench-shard='3/2': expected K/N, whole numbers with 1 <= K <= N*"])
