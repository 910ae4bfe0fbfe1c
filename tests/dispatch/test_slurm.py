"""``backendbench dispatch --executor slurm`` on a real Slurm cluster of one node.

.ci/slurm-setup.sh starts munge, slurmctld and slurmd on this machine; jobs are submitted
through submitit and their states read from the controller, as on a lab's cluster.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_backendbench.dispatch.dispatcher import dispatch
from pytest_backendbench.dispatch.executors import ShardJob, SlurmExecutor, SlurmJob, SlurmOptions, scontrol_state

from ..conftest import read_report
from .test_dispatch import RUN, outcomes

pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.usefixtures("slurm")]


class CancelShardTwoOnce(SlurmExecutor):
    """Slurm jobs, except that shard 2's first job is scancel'ed once it runs (as an admin or a
    preemption would), to show that the dispatcher resubmits it."""

    cancelled: list[str]

    def submit(self, job: ShardJob) -> SlurmJob:
        submitted = super().submit(job)
        if job.index == 2 and job.attempt == 1:
            deadline = time.monotonic() + 120
            while scontrol_state(submitted.job_id) not in ("RUNNING", None) and time.monotonic() < deadline:
                time.sleep(0.2)
            time.sleep(2)  # let pytest start, so the retry has a journal to resume from or not
            subprocess.run(["scancel", submitted.job_id], check=True, timeout=30)
            self.cancelled = [submitted.job_id]
        return submitted


def test_slurm_dispatch_equals_the_unsharded_run_even_when_a_job_is_cancelled(
    pytester: pytest.Pytester, bench: Path, three_tasks: Path
) -> None:
    pytester.runpytest(f"--candidate={three_tasks}", "--bench-report-dir=whole", *RUN).assert_outcomes(passed=20, failed=1)
    executor = CancelShardTwoOnce(SlurmOptions(time_min=10, cpus=1), bench / "jobs")
    lines: list[str] = []
    result = dispatch(executor, [f"--candidate={three_tasks}", *RUN], 3, bench / "dispatched", cwd=bench, poll_s=1.0, progress=lines.append)
    assert result.failed == [], result.failed
    assert result.retries == 1
    assert any("shard-2-of-3 the job was cancelled (Slurm CANCELLED); resubmitting (attempt 2)" in line for line in lines), lines
    whole, merged = read_report(bench / "whole"), read_report(bench / "dispatched")
    assert merged["summary"] == whole["summary"]
    assert outcomes(merged) == outcomes(whole)


def test_a_job_past_its_time_limit_is_an_infrastructure_error(bench: Path, make_candidate: Callable[..., Path]) -> None:
    # A candidate that never listens keeps its shard booting for --bench-boot-timeout 600 s, far past
    # the job's one-minute limit: Slurm ends the job (TIMEOUT), not the candidate's verdict.
    candidate = make_candidate("sleepy")
    (candidate / "candidate.yaml").write_text("task: notes\nrun: sleep 900\n")
    executor = SlurmExecutor(SlurmOptions(time_min=1, cpus=1), bench / "jobs")
    result = dispatch(executor, [f"--candidate={candidate}", "--bench-boot-timeout=600", *RUN], 1, bench / "dispatched", cwd=bench, retries=0, poll_s=1.0)
    assert len(result.failed) == 1
    assert "the job reached its time limit" in result.failed[0], result.failed
    if result.report is not None:  # pytest's SIGTERM handler may have written an interrupted report
        merged = read_report(bench / "dispatched")
        assert merged["manifest"]["interrupted"] is True
        failed_items = [i for t in merged["tasks"] for i in t["items"] if i["outcome"] == "failed"]
        assert failed_items == []


def test_bundled_tasks_dispatched_on_slurm_equal_the_unsharded_run() -> None:
    # bench/dispatch_bundled.py: the references of four bundled tasks, unsharded and in 3 Slurm
    # shard jobs (process runtime); it exits non-zero unless summary and items are equal. Four
    # tasks, not all: the whole suite (over 1,600 items) took 510 s of CI's budget for the same
    # property; `python bench/dispatch_bundled.py` without --task checks every task.
    script = Path(__file__).resolve().parents[2] / "bench" / "dispatch_bundled.py"
    tasks = [arg for task in ("url-shortener", "notifications", "shop-orders", "booking") for arg in ("--task", task)]
    done = subprocess.run([sys.executable, str(script), "--shards", "3", "--executor", "slurm", "--runtime", "process", *tasks],
                          capture_output=True, text=True, timeout=1500, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "summary equal: True; items equal (node id, outcome, requests): True" in done.stdout
