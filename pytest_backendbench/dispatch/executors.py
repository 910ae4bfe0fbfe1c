"""Where a shard job runs: local processes, or a Slurm cluster through submitit.

Each job runs ``python -m pytest … --bench-shard K/N --bench-report-dir <dir>/shard-K`` and returns
pytest's exit code. What the dispatcher needs from an executor is small: submit a job, read
its state, cancel it. States are normalised to ``JobState``; a job that died for reasons of
the infrastructure (node lost, preempted, cancelled, time limit, killed) is ``INFRA`` and may
be retried, one whose pytest ended with a usage or internal error is ``FAILED`` and is not.
"""

from __future__ import annotations

import enum
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..errors import HarnessError

# pytest's exit codes: 0 all passed, 1 some failed (both a finished evaluation), 2 interrupted,
# 3 internal error, 4 usage error, 5 no tests collected (a resumed shard with nothing left).
FINISHED_EXIT_CODES = (0, 1, 5)
INTERRUPTED_EXIT_CODE = 2
INFRA_SLURM_STATES = {
    "BOOT_FAIL": "the node failed to boot",
    "CANCELLED": "the job was cancelled",
    "DEADLINE": "the job reached its deadline",
    "NODE_FAIL": "the node was lost",
    "PREEMPTED": "the job was preempted",
    "TIMEOUT": "the job reached its time limit",
    "OUT_OF_MEMORY": "the job ran out of memory",
}
QUEUED_SLURM_STATES = ("PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "RESV_DEL_HOLD", "SUSPENDED")
RUNNING_SLURM_STATES = ("RUNNING", "COMPLETING", "STAGE_OUT", "SIGNALING", "RESIZING")


class JobState(enum.Enum):
    """A shard job's state as the dispatcher sees it."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    INFRA = "infra"

    @property
    def finished(self) -> bool:
        """True once the job will not change any more."""
        return self in (JobState.DONE, JobState.FAILED, JobState.INFRA)


@dataclass(frozen=True)
class JobStatus:
    """A state with what explains it (exit code, scheduler state)."""

    state: JobState
    detail: str = ""
    exit_code: int | None = None


@dataclass(frozen=True)
class ShardJob:
    """One shard's command and where it writes."""

    index: int
    count: int
    argv: tuple[str, ...]
    cwd: Path
    report_dir: Path
    log_path: Path
    attempt: int = 1
    env: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """``shard-K-of-N``, used in job names and messages."""
        return f"shard-{self.index}-of-{self.count}"


class SubmittedJob(Protocol):
    """A job an executor accepted."""

    job_id: str

    def status(self) -> JobStatus: ...

    def cancel(self) -> None: ...


class Executor(Protocol):
    """Runs shard jobs somewhere."""

    name: str

    def submit(self, job: ShardJob) -> SubmittedJob: ...


def status_from_exit_code(code: int | None) -> JobStatus:
    """A finished pytest process's exit code as a job state."""
    if code is None:
        return JobStatus(JobState.RUNNING)
    if code in FINISHED_EXIT_CODES:
        return JobStatus(JobState.DONE, f"pytest exited {code}", code)
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return JobStatus(JobState.INFRA, f"killed by {name}", code)
    if code == INTERRUPTED_EXIT_CODE:
        return JobStatus(JobState.INFRA, "pytest was interrupted (exit 2)", code)
    return JobStatus(JobState.FAILED, f"pytest exited {code} (usage or internal error; see the job log)", code)


class ShardStopped(RuntimeError):
    """Raised inside a Slurm job when Slurm warns it is about to end it (time limit, preemption)."""


STOPPED_MESSAGE = "Slurm stopped the job before its end (time limit or preemption)"


def run_shard_command(argv: list[str], cwd: str, log_path: str, env: dict[str, str]) -> int:
    """Run one shard's pytest with its output in ``log_path``; return its exit code.

    Module-level so that submitit can pickle it. SIGTERM (scancel) is forwarded to pytest,
    which then writes its interrupted report. SIGUSR2, which Slurm sends ``--signal`` seconds
    before the time limit, is forwarded as SIGTERM too, and the job then fails with
    ``ShardStopped`` so the dispatcher sees an infrastructure stop, not a finished shard.
    """
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    stopped = False
    with open(log_path, "ab") as log:
        process = subprocess.Popen(argv, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **env})

        def forward(signum: int, frame: Any) -> None:
            nonlocal stopped
            stopped = stopped or signum == signal.SIGUSR2
            process.send_signal(signal.SIGTERM)

        previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGUSR2)}
        try:
            code = process.wait()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    if stopped:
        raise ShardStopped(f"{STOPPED_MESSAGE}; pytest exited {code} after SIGTERM")
    return code


# --- local ---------------------------------------------------------------------------------


class LocalJob:
    """A shard job as a local process group."""

    def __init__(self, job: ShardJob) -> None:
        job.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = job.log_path.open("ab")
        self._process = subprocess.Popen(
            list(job.argv), cwd=job.cwd, stdout=self._log, stderr=subprocess.STDOUT, env={**os.environ, **job.env}, start_new_session=True
        )
        self.job_id = f"local-{self._process.pid}"

    def status(self) -> JobStatus:
        """Running until the process ends; then its exit code decides."""
        code = self._process.poll()
        if code is not None and not self._log.closed:
            self._log.close()
        return status_from_exit_code(code)

    def cancel(self) -> None:
        """SIGTERM the process group (pytest writes its interrupted report), SIGKILL after 10 s."""
        if self._process.poll() is not None:
            return
        try:
            os.killpg(self._process.pid, signal.SIGTERM)
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self._process.pid, signal.SIGKILL)
            self._process.wait()
        except ProcessLookupError:
            pass
        finally:
            self._log.close()


class LocalExecutor:
    """N local processes: the default, and the test double for everything above executors."""

    name = "local"

    def submit(self, job: ShardJob) -> LocalJob:
        """Start the job now."""
        return LocalJob(job)


# --- slurm ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class SlurmOptions:
    """What a lab sets for its cluster; ``extra`` are further ``#SBATCH --key=value`` lines."""

    partition: str | None = None
    time_min: int = 120
    cpus: int = 2
    mem_gb: float | None = None
    extra: dict[str, str] = field(default_factory=dict)
    folder: Path | None = None


def scontrol_state(job_id: str) -> str | None:
    """The job's state from the controller (``scontrol show job``); None when it is unknown.

    submitit reads states with sacct, which needs an accounting database many small clusters
    (and this one) lack; scontrol answers from the controller's memory (MinJobAge).
    """
    try:
        answer = subprocess.run(["scontrol", "show", "job", "-o", job_id], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for part in answer.stdout.split():
        if part.startswith("JobState="):
            return part.partition("=")[2]
    return None


class SlurmJob:
    """A shard job submitted through submitit; its state read from the controller."""

    def __init__(self, job: Any, shard: ShardJob, uncompleted: type[Exception]) -> None:
        self._job = job
        self._uncompleted = uncompleted
        self._shard = shard
        self.job_id = str(job.job_id)

    def status(self) -> JobStatus:
        """Map the scheduler's state; a completed job's pytest exit code decides DONE or FAILED."""
        state = scontrol_state(self.job_id)
        if state is None:
            # Forgotten by the controller: the result file tells whether the function returned.
            if self._job.done():
                return self._finished()
            return JobStatus(JobState.INFRA, "the controller no longer knows the job and it left no result")
        base = state.split()[0].rstrip("+")
        if base in QUEUED_SLURM_STATES:
            return JobStatus(JobState.QUEUED, base)
        if base in RUNNING_SLURM_STATES:
            return JobStatus(JobState.RUNNING, base)
        if base in INFRA_SLURM_STATES:
            return JobStatus(JobState.INFRA, f"{INFRA_SLURM_STATES[base]} (Slurm {base})")
        if base == "COMPLETED":
            return self._finished()
        if base == "FAILED":
            error = self._job.exception()
            if error is not None and STOPPED_MESSAGE in str(error):
                return JobStatus(JobState.INFRA, "the job reached its time limit or was preempted (Slurm's USR2 warning)")
            # the job's own command failed: the runner raised, not the node
            return JobStatus(JobState.FAILED, f"the job failed (Slurm FAILED); see {self._job.paths.stderr}")
        return JobStatus(JobState.INFRA, f"Slurm state {base}; see {self._shard.log_path}")

    def _finished(self) -> JobStatus:
        try:
            code = self._job.result()
        except self._uncompleted as err:  # FailedJobError too: the job died or raised; its log tail says why
            lines = str(err).strip().splitlines()
            return JobStatus(JobState.INFRA, f"the job ended without a result: {lines[-1][:300] if lines else type(err).__name__}")
        return status_from_exit_code(int(code))

    def cancel(self) -> None:
        """scancel the job (Slurm sends SIGTERM, then SIGKILL after KillWait)."""
        self._job.cancel(check=False)


class SlurmExecutor:
    """Submits shard jobs to Slurm with submitit; the job folder must be on a shared filesystem."""

    name = "slurm"

    def __init__(self, options: SlurmOptions, folder: Path) -> None:
        try:
            import submitit
        except ImportError as err:
            raise HarnessError("--executor slurm needs submitit: pip install 'pytest-backendbench[cluster]'") from err
        self._submitit = submitit
        self._options = options
        self._folder = folder

    def submit(self, job: ShardJob) -> SlurmJob:
        """sbatch one shard job through submitit."""
        options = self._options
        executor = self._submitit.SlurmExecutor(folder=str(self._folder / "%j"), python=sys.executable)
        params: dict[str, Any] = {
            "job_name": f"backendbench-{job.name}",
            "time": options.time_min,
            "cpus_per_task": options.cpus,
            "ntasks_per_node": 1,
            "nodes": 1,
            # Slurm warns the job this long before its time limit, so pytest can write its report.
            "signal_delay_s": min(90, max(15, options.time_min * 60 // 4)),
        }
        if options.partition:
            params["partition"] = options.partition
        if options.mem_gb is not None:
            params["mem"] = f"{int(options.mem_gb * 1024)}M"
        if options.extra:
            params["additional_parameters"] = dict(options.extra)
        executor.update_parameters(**params)
        try:
            submitted = executor.submit(run_shard_command, list(job.argv), str(job.cwd), str(job.log_path), dict(job.env))
        except (self._submitit.core.utils.FailedSubmissionError, OSError) as err:
            raise HarnessError(f"sbatch refused {job.name}: {str(err).strip()[:500]} (is Slurm running? `sinfo`; see .ci/slurm-setup.sh)") from err
        return SlurmJob(submitted, job, self._submitit.core.utils.UncompletedJobError)
