"""``backendbench dispatch`` with the local executor: shard jobs as local processes.

The local executor is the test double for everything above the executor (splitting,
progress, retries with --bench-resume, merging); test_slurm.py runs the same path on real Slurm.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from pytest_backendbench.cli import main
from pytest_backendbench.dispatch.dispatcher import check_pytest_args, dispatch
from pytest_backendbench.dispatch.executors import LocalExecutor, LocalJob, ShardJob
from pytest_backendbench.errors import HarnessError

from ..conftest import read_report

RUN = ("--bench-runtime=process", "-p", "no:cacheprovider")


def outcomes(document: dict) -> list[tuple[str, str, int]]:
    """What must be equal between a merged and an unsharded report (timings aside)."""
    return sorted((i["nodeid"], i["outcome"], i["requests"]) for t in document["tasks"] for i in t["items"])


def test_dispatch_merges_shards_into_the_unsharded_report(pytester: pytest.Pytester, bench: Path, three_tasks: Path) -> None:
    pytester.runpytest(f"--candidate={three_tasks}", "--bench-report-dir=whole", *RUN).assert_outcomes(passed=20, failed=1)
    lines: list[str] = []
    result = dispatch(LocalExecutor(), [f"--candidate={three_tasks}", *RUN], 3, bench / "dispatched", cwd=bench, poll_s=0.2, progress=lines.append)
    assert result.failed == [] and result.retries == 0
    whole, merged = read_report(bench / "whole"), read_report(bench / "dispatched")
    assert merged["summary"] == whole["summary"]
    assert outcomes(merged) == outcomes(whole)
    assert read_report(bench / "dispatched" / "shard-2")["manifest"]["shard"] == "2/3"
    assert lines[-1] == "dispatch: 3 shards - 0 queued, 0 running, 3 done, 0 failed; 20 items passed"
    durations = json.loads((bench / "dispatched" / "durations.json").read_text())["durations"]
    assert sorted(durations) == ["notes", "notes2", "notes3"] and all(v > 0 for v in durations.values())


class KillFirstAttempt(LocalExecutor):
    """Local jobs, except that shard 2's first attempt is killed as a lost node would be."""

    def __init__(self) -> None:
        self.submitted: list[tuple[int, int, tuple[str, ...]]] = []

    def submit(self, job: ShardJob) -> LocalJob:
        self.submitted.append((job.index, job.attempt, job.argv))
        started = super().submit(job)
        if job.index == 2 and job.attempt == 1:
            os.killpg(started._process.pid, signal.SIGKILL)
        return started


def test_a_shard_killed_by_the_infrastructure_is_resubmitted_and_the_report_is_complete(
    pytester: pytest.Pytester, bench: Path, three_tasks: Path
) -> None:
    executor = KillFirstAttempt()
    result = dispatch(executor, [f"--candidate={three_tasks}", *RUN], 3, bench / "dispatched", cwd=bench, poll_s=0.2)
    assert result.failed == [] and result.retries == 1
    retried = [argv for index, attempt, argv in executor.submitted if index == 2 and attempt == 2]
    assert len(retried) == 1
    merged = read_report(bench / "dispatched")
    assert merged["summary"]["tasks"] == 3
    assert len(outcomes(merged)) == 21


def test_a_shard_that_keeps_dying_is_an_infrastructure_error_not_a_candidate_failure(bench: Path, three_tasks: Path) -> None:
    class AlwaysKilled(LocalExecutor):
        def submit(self, job: ShardJob) -> LocalJob:
            started = super().submit(job)
            if job.index == 1:
                os.killpg(started._process.pid, signal.SIGKILL)
            return started

    result = dispatch(AlwaysKilled(), [f"--candidate={three_tasks}", *RUN], 3, bench / "dispatched", cwd=bench, retries=1, poll_s=0.2)
    assert len(result.failed) == 1
    assert result.failed[0].startswith("shard-1-of-3: attempt 1 (local-") and "killed by SIGKILL" in result.failed[0]
    merged = read_report(bench / "dispatched")
    assert merged["manifest"]["interrupted"] is True
    errors = merged["manifest"]["collection_errors"]
    assert [e["nodeid"] for e in errors] == ["dispatch/shard-1-of-3"]
    assert errors[0]["message"].startswith("infrastructure error: shard-1-of-3: attempt 1")
    # The other shards' tasks are there and nothing counts as a candidate failure of shard 1's task.
    assert {t["task"] for t in merged["tasks"]} == {"notes2", "notes3"}


def test_options_that_dispatch_sets_are_refused() -> None:
    with pytest.raises(HarnessError, match="--bench-shard is set by dispatch for each shard"):
        check_pytest_args(["--candidate=x", "--bench-shard=1/2"])
    with pytest.raises(HarnessError, match="--bench-report-dir is set by dispatch"):
        check_pytest_args(["--bench-report-dir", "x"])


def test_the_console_script_runs_a_dispatch(bench: Path, three_tasks: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(bench)
    code = main(["dispatch", "--shards", "2", "--report-dir", "out", "--poll", "0.2", "--", f"--candidate={three_tasks}", *RUN])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "dispatch: merged report" in captured.out and "(3 tasks)" in captured.out
    assert "dispatch: 2 shards - 0 queued, 0 running, 2 done, 0 failed" in captured.err
    # A second dispatch balances by the durations the first one wrote.
    assert (bench / "out" / "durations.json").is_file()
    assert main(["dispatch", "--shards", "2", "--report-dir", "out", "--poll", "0.2", "--", f"--candidate={three_tasks}", *RUN]) == 0
    recorded = read_report(bench / "out" / "shard-1")["manifest"]["options"]["shard_durations"]
    assert recorded == str(bench / "out" / "durations.json")
    assert read_report(bench / "out")["summary"]["tasks"] == 3


def test_shard_durations_option_balances_a_plain_pytest_run(pytester: pytest.Pytester, bench: Path, three_tasks: Path) -> None:
    (bench / "durations.json").write_text(json.dumps({"durations": {"notes": 100, "notes2": 1, "notes3": 1}}))
    result = pytester.runpytest(f"--candidate={three_tasks}", "--bench-shard=1/2", "--bench-shard-durations=durations.json", "--bench-report-dir=p1", *RUN)
    assert {t["task"] for t in read_report(bench / "p1")["tasks"]} == {"notes"}
    result.assert_outcomes(passed=7)
    bad = pytester.runpytest(f"--candidate={three_tasks}", "--bench-shard=1/2", "--bench-shard-durations=missing.json", *RUN)
    bad.stderr.fnmatch_lines(["*--bench-shard-durations='missing.json': expected the path of a file or folder that exists*"])
