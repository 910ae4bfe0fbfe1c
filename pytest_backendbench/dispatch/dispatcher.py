"""``backendbench dispatch``: split a run into shard jobs, run them on an executor, merge.

Pytest stays the unit of work: each shard job is the user's pytest command plus
``--bench-shard K/N --bench-report-dir <dir>/shard-K`` (and ``--bench-shard-durations`` when durations are
known). Jobs that die for reasons of the infrastructure are resubmitted with ``--bench-resume`` on
their own report folder, so finished tasks are not run again; when every shard is done the
shard reports merge into ``<dir>/report.json``, which equals an unsharded run's (timings
aside), and ``<dir>/durations.json`` is updated for the next split.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import HarnessError
from .balance import DURATIONS_NAME, durations_from_report, load_durations, write_durations
from .executors import Executor, JobState, JobStatus, ShardJob, SubmittedJob

SHARD_DIR = "shard-{index}"
DISPATCHED_SETTINGS = ("shard", "report_dir", "resume", "shard_durations")
"""Settings dispatch sets per shard job; the user's pytest arguments must leave them out."""


def option_of(name: str) -> str:
    """The command-line spelling of a plugin setting (the settings table is the one truth)."""
    from ..config import all_settings

    for setting in all_settings():
        if setting.name == name and setting.option:
            return setting.option
    raise HarnessError(f"the plugin has no command-line option for the setting {name!r}")


@dataclass
class ShardProgress:
    """What the dispatcher knows of one shard."""

    job: ShardJob
    submitted: SubmittedJob
    status: JobStatus = field(default_factory=lambda: JobStatus(JobState.QUEUED))
    attempts: int = 1
    history: list[str] = field(default_factory=list)
    journal_size: int = -1
    passed: int = 0


@dataclass(frozen=True)
class DispatchResult:
    """How a dispatch ended: the merged report (if any) and the shards that did not finish."""

    report: Path | None
    failed: list[str]
    retries: int
    seconds: float


def check_pytest_args(args: Sequence[str]) -> list[str]:
    """Refuse options the dispatcher sets itself per shard, with what to do instead."""
    reserved = [option_of(name) for name in DISPATCHED_SETTINGS]
    for arg in args:
        for option in reserved:
            if arg == option or arg.startswith(option + "="):
                raise HarnessError(
                    f"{option} is set by dispatch for each shard; leave it out of the pytest arguments "
                    "(use dispatch's own --report-dir and --shards)"
                )
    return list(args)


def shard_command(args: Sequence[str], index: int, count: int, report_dir: Path, durations: Path | None, resume: bool) -> tuple[str, ...]:
    """The pytest command line of one shard job."""
    argv = [sys.executable, "-m", "pytest", *args, f"{option_of('shard')}={index}/{count}", f"{option_of('report_dir')}={report_dir}"]
    if durations is not None:
        argv.append(f"{option_of('shard_durations')}={durations}")
    if resume:
        argv.append(f"{option_of('resume')}={report_dir}")
    return tuple(argv)


def items_passed(shard: ShardProgress) -> int:
    """Items passed so far in one shard, from its journal; re-read only when the journal changed."""
    journal = shard.job.report_dir / "journal.jsonl"
    try:
        size = journal.stat().st_size
        if size != shard.journal_size:
            shard.passed = journal.read_text(encoding="utf-8").count('"outcome": "passed"')
            shard.journal_size = size
    except OSError:
        return 0
    return shard.passed


def progress_line(shards: Sequence[ShardProgress]) -> str:
    """``dispatch: 3 shards — 1 queued, 1 running, 1 done, 0 failed; 412 items passed``."""
    counts = {state: 0 for state in ("queued", "running", "done", "failed")}
    for shard in shards:
        state = shard.status.state
        key = "failed" if state in (JobState.FAILED, JobState.INFRA) else state.value
        counts[key] += 1
    passed = sum(items_passed(s) for s in shards)
    parts = ", ".join(f"{n} {k}" for k, n in counts.items())
    return f"dispatch: {len(shards)} shards - {parts}; {passed} items passed"


def dispatch(
    executor: Executor,
    pytest_args: Sequence[str],
    shards: int,
    report_dir: Path,
    *,
    cwd: Path,
    retries: int = 2,
    durations: Path | None = None,
    poll_s: float = 2.0,
    progress: Callable[[str], None] | None = None,
) -> DispatchResult:
    """Run ``shards`` shard jobs on ``executor`` and merge their reports into ``report_dir``.

    A shard whose job ends INFRA is resubmitted up to ``retries`` times (with --bench-resume);
    a FAILED shard (usage or internal error) is not. Returns the merged report's path, or
    None when no shard finished; the shards that did not finish are listed either way.
    """
    if shards < 1:
        raise HarnessError(f"--shards {shards}: expected at least 1")
    args = check_pytest_args(pytest_args)
    report_dir = report_dir.resolve()
    report_dir.mkdir(parents=True, exist_ok=True)
    durations_file = durations
    if durations_file is None and (report_dir / DURATIONS_NAME).is_file():
        durations_file = report_dir / DURATIONS_NAME
    if durations_file is not None:
        load_durations(durations_file)  # a malformed file is refused before any job starts
    started = time.monotonic()
    running: list[ShardProgress] = []
    for index in range(1, shards + 1):
        shard_dir = report_dir / SHARD_DIR.format(index=index)
        job = ShardJob(
            index=index,
            count=shards,
            argv=shard_command(args, index, shards, shard_dir, durations_file, resume=False),
            cwd=cwd,
            report_dir=shard_dir,
            log_path=report_dir / "logs" / f"shard-{index}.log",
        )
        running.append(ShardProgress(job, executor.submit(job)))
    last_line = ""
    total_retries = 0
    try:
        while True:
            for shard in running:
                if shard.status.state.finished:
                    continue
                shard.status = shard.submitted.status()
                if shard.status.state is JobState.INFRA and shard.attempts <= retries:
                    shard.history.append(f"attempt {shard.attempts} ({shard.submitted.job_id}): {shard.status.detail}")
                    resume = (shard.job.report_dir / "journal.jsonl").is_file() or (shard.job.report_dir / "report.json").is_file()
                    retry = replace(
                        shard.job,
                        argv=shard_command(args, shard.job.index, shards, shard.job.report_dir, durations_file, resume=resume),
                        attempt=shard.attempts + 1,
                    )
                    if progress is not None:
                        progress(f"dispatch: {shard.job.name} {shard.status.detail}; resubmitting (attempt {retry.attempt})")
                    shard.job = retry
                    shard.submitted = executor.submit(retry)
                    shard.attempts += 1
                    shard.status = JobStatus(JobState.QUEUED)
                    total_retries += 1
            line = progress_line(running)
            if progress is not None and line != last_line:
                progress(line)
                last_line = line
            if all(s.status.state.finished for s in running):
                break
            time.sleep(poll_s)
    except BaseException:
        for shard in running:
            if not shard.status.state.finished:
                shard.submitted.cancel()
        raise
    failed = []
    for shard in running:
        if shard.status.state is not JobState.DONE:
            history = "; ".join([*shard.history, f"attempt {shard.attempts} ({shard.submitted.job_id}): {shard.status.detail}"])
            failed.append(f"{shard.job.name}: {history} (log: {shard.job.log_path})")
    report = merge_shards(report_dir, [s.job.report_dir for s in running], failed)
    return DispatchResult(report=report, failed=failed, retries=total_retries, seconds=time.monotonic() - started)


def merge_shards(report_dir: Path, shard_dirs: Sequence[Path], failed: Sequence[str]) -> Path | None:
    """Merge the shard reports that exist; record infrastructure failures in the manifest."""
    from ..report.json_report import write_report
    from ..report.markdown import write_markdown
    from ..report.merge import merge_reports

    reports = [d / "report.json" for d in shard_dirs if (d / "report.json").is_file()]
    if not reports:
        return None
    document = merge_reports(reports)
    if failed:
        document["manifest"]["interrupted"] = True
        document["manifest"].setdefault("collection_errors", [])
        document["manifest"]["collection_errors"] = [
            *document["manifest"]["collection_errors"],
            *[{"nodeid": f"dispatch/{line.partition(':')[0]}", "message": f"infrastructure error: {line}"} for line in failed],
        ]
    write_report(report_dir, document)
    write_markdown(report_dir, document)
    durations_path = report_dir / DURATIONS_NAME
    previous = load_durations(durations_path) if durations_path.is_file() else None
    write_durations(durations_path, durations_from_report(document), previous)
    return report_dir / "report.json"


def summary_lines(result: DispatchResult) -> list[str]:
    """What the console script prints at the end."""
    lines = [f"dispatch: finished in {result.seconds:.1f}s with {result.retries} resubmission(s)"]
    if result.report is not None:
        summary = json.loads(result.report.read_text(encoding="utf-8"))["summary"]
        lines.append(f"dispatch: merged report {result.report} ({summary['tasks']} tasks)")
    for line in result.failed:
        lines.append(f"dispatch: INFRASTRUCTURE ERROR {line}")
    return lines
