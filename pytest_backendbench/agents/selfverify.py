"""Self-verification for agents in the loop: a coarse PASS/FAIL and the phase, nothing more.

The oracle stays hidden: the run's output is captured and discarded; only the report's
verdict and the failing phase (build | startup | tests) come back, or the dense score.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import HarnessError
from ..report.json_report import load_report


@dataclass(frozen=True)
class Verdict:
    """What an agent may learn from one self-verify run."""

    passed: bool
    phase: str
    reward: float

    def lines(self, reward: bool = False) -> list[str]:
        """The only output self-verify prints."""
        if reward:
            return [f"{self.reward:.4f}"]
        return ["SELF_VERIFY_PASS" if self.passed else "SELF_VERIFY_FAIL", f"Phase: {self.phase}"]


def self_verify(task: str, candidate: Path, bench_root: Path, runtime: str = "auto", timeout_s: float = 3600) -> Verdict:
    """Build, boot and run the final oracle of one task against one candidate."""
    with tempfile.TemporaryDirectory(prefix="backendbench-self-verify-") as tmp:
        command = [
            sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--no-header",
            f"--rootdir={bench_root}", f"--bench-root={bench_root}", f"--candidate={candidate.resolve()}",
            f"--bench-task={task}", f"--bench-runtime={runtime}", f"--bench-report-dir={tmp}", "--oracle-tier=final",
        ]
        try:
            subprocess.run(command, cwd=bench_root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired as err:
            raise HarnessError(
                f"self-verify took longer than {timeout_s:g}s; raise the limit with `backendbench self-verify --timeout SECONDS` "
                "(or self_verify(..., timeout_s=...))"
            ) from err
        report = Path(tmp) / "report.json"
        if not report.is_file():
            raise HarnessError("the evaluation wrote no report (is the task id right and the bench root valid?)")
        document = load_report(report)
    tasks = document["tasks"]
    if not tasks:
        raise HarnessError(f"task {task!r} produced no results")
    result = tasks[0]
    metrics = result["metrics"]
    phase_failed = result["phase_failed"]
    if phase_failed in ("missing", "build"):
        phase = "build"
    elif phase_failed == "startup":
        phase = "startup"
    else:
        phase = "tests"
    passed = bool(metrics["success"]) and not metrics["errors"]
    return Verdict(passed=passed, phase=phase, reward=float(metrics["dense"] or 0.0))
