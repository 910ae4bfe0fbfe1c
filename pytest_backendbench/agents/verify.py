"""The ``self_verify`` tool: the final oracle on a snapshot of the workspace, PASS/FAIL and the phase.

BackendForge's protocol: an agent may ask, at most N times per sample, whether its current
workspace would pass. The answer is the two lines ``backendbench self-verify`` prints and
nothing else: the oracle's items, requests, file paths and assertion texts never reach the
model. The snapshot is a copy, so a verify run never sees (or disturbs) later edits.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import HarnessError
from .sandbox import Sandbox
from .selfverify import Verdict, self_verify

PASS = "SELF_VERIFY_PASS"
FAIL = "SELF_VERIFY_FAIL"

VerifyFunction = Callable[[str, Path, Path, str, float], Verdict]
MAX_VERIFY_S = 3600.0


def _final_oracle(task: str, candidate: Path, bench_root: Path, runtime: str, timeout_s: float) -> Verdict:
    return self_verify(task, candidate, bench_root, runtime, timeout_s=timeout_s)


@dataclass
class SelfVerifier:
    """Answers self_verify calls for one sample, counting them against ``budget``."""

    task_id: str
    bench_root: Path
    budget: int
    runtime: str = "auto"
    verify: VerifyFunction = _final_oracle
    calls: int = 0
    refused: int = 0
    passes: int = 0
    verdicts: list[str] = field(default_factory=list)

    @property
    def pass_seen(self) -> bool:
        """Whether any call answered PASS (for "submitted with a PASS seen")."""
        return self.passes > 0

    def __call__(self, sandbox: Sandbox, timeout_s: float = MAX_VERIFY_S) -> tuple[str, dict[str, object]]:
        """The observation for one call, and what the transcript records about it.

        ``timeout_s`` is what is left of the sample's wall time: a verify run never outlives it.
        """
        if self.calls >= self.budget:
            self.refused += 1
            message = (
                f"self_verify refused: the budget of {self.budget} call{'s' if self.budget != 1 else ''} per sample is spent. "
                "Test your service yourself (start it and send it requests), then submit."
            )
            return message, {"refused": True, "calls": self.calls, "budget": self.budget}
        self.calls += 1
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="backendbench-verify-") as tmp:
            snapshot = Path(tmp) / "candidate"
            snapshot.mkdir()
            sandbox.copy_out(snapshot)
            try:
                verdict = self.verify(self.task_id, snapshot, self.bench_root, self.runtime, max(1.0, min(timeout_s, MAX_VERIFY_S)))
            except HarnessError as err:
                # the harness failed, not the agent: the call is given back
                self.calls -= 1
                return (
                    "self_verify could not run (a harness problem, not your service's); this call was not counted.",
                    {"harness_error": str(err)[:500], "calls": self.calls, "budget": self.budget},
                )
        self.passes += verdict.passed
        lines = verdict.lines()
        self.verdicts.append(lines[0])
        left = self.budget - self.calls
        observation = "\n".join(lines) + f"\n({left} self_verify call{'s' if left != 1 else ''} left)"
        return observation, {
            "verdict": lines[0],
            "phase": verdict.phase,
            "calls": self.calls,
            "budget": self.budget,
            "seconds": round(time.monotonic() - started, 3),
        }
