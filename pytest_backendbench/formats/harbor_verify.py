"""The verifier of an exported Harbor task: this harness's oracle on /app, then Harbor's reward file.

``tests/test.sh`` of an exported task runs ``python -m pytest_backendbench.formats.harbor_verify``
inside the task's container: pytest with the task's hidden oracle against the candidate, the
process runtime (no Docker inside Harbor's container), the report in ``/logs/verifier/report``.
``/logs/verifier/reward.json`` then holds ``reward`` (1.0 when the task is a success: every item
passed, the harness's SR) and the named figures Harbor keeps beside it (``test_acc``,
``req_acc``, ``contract_conformance``, the item counts, the failed security items). When the harness itself fails (no report, or an undetermined verdict) no
reward is written and the exit status is 2: Harbor then reports a missing reward, never a 0.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REWARD_FILE = "reward.json"
FIGURES = ("test_acc", "req_acc", "soft_req_acc", "balanced", "contract_conformance", "items", "passed", "failed", "errors")


class NoVerdictError(RuntimeError):
    """The run could not judge the candidate (no determined success rate): a harness error, no reward."""


def rewards_of(summary: dict[str, Any]) -> dict[str, float]:
    """Harbor's rewards from a report's summary: ``reward`` (SR) first, then every numeric figure it has."""
    sr = summary.get("sr")
    if not isinstance(sr, (int, float)):
        raise NoVerdictError("the report has no determined success rate (sr): the run could not judge the candidate")
    rewards: dict[str, float] = {"reward": float(sr)}
    for key in FIGURES:
        value = summary.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            rewards[key] = value
    failures = summary.get("failures_by_category") or {}
    rewards["security_failed"] = failures.get("security", 0)  # items of the security category that failed
    return rewards


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench-root", type=Path, required=True)
    parser.add_argument("--task", required=True)
    parser.add_argument("--candidate", type=Path, required=True)
    parser.add_argument("--logs", type=Path, required=True, help="Harbor's verifier log folder (/logs/verifier)")
    args = parser.parse_args(argv)
    args.logs.mkdir(parents=True, exist_ok=True)
    report_dir = args.logs / "report"
    root = args.bench_root
    command = [
        sys.executable, "-m", "pytest", f"--bench-root={root}", f"--candidate={args.candidate}", f"--bench-task={args.task}",
        "--bench-runtime=process", f"--bench-report-dir={report_dir}", "-p", "no:cacheprovider", "-q", "--rootdir", str(root),
        str(root / "benchmarks" / args.task), str(root / "oracles" / args.task),
    ]
    print("harbor_verify:", " ".join(command), flush=True)
    exit_code = subprocess.run(command, cwd=root, check=False).returncode
    report = report_dir / "report.json"
    if not report.is_file():
        print(f"harbor_verify: pytest exited {exit_code} and wrote no report ({report}): a harness error, no reward written", file=sys.stderr)
        return 2
    try:
        rewards = rewards_of(json.loads(report.read_text(encoding="utf-8"))["summary"])
    except (NoVerdictError, ValueError, KeyError) as err:
        print(f"harbor_verify: {report}: {err}; no reward written", file=sys.stderr)
        return 2
    (args.logs / REWARD_FILE).write_text(json.dumps(rewards, indent=2) + "\n", encoding="utf-8")
    print(f"harbor_verify: pytest exit {exit_code}; rewards {json.dumps(rewards)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
