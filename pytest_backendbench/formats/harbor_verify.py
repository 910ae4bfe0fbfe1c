"""The verifier of an exported Harbor task: this harness's oracle on /app, then Harbor's reward file.

``tests/test.sh`` of an exported task runs ``python -m pytest_backendbench.formats.harbor_verify``
inside the task's container: pytest with the task's hidden oracle against the candidate, the
process runtime (no Docker inside Harbor's container), the report in ``/logs/verifier/report``.
``/logs/verifier/reward.json`` then holds ``reward`` (1.0 when the task is a success: every item
passed, the harness's SR) and the named figures Harbor keeps beside it (``test_acc``,
``req_acc``, ``contract_conformance``, the item counts, the failed security items). When the harness itself fails (no report, or an undetermined verdict) no
reward is written and the exit status is 2: Harbor then reports a missing reward, never a 0.

A task with its own Dockerfile (imported BaxBench) was exported with that Dockerfile as the
environment; ``--entry``/``--entry-port`` name its entry point and fixed port. The verifier then
writes the candidate's ``candidate.yaml`` (run: ``harbor_entry``, which makes ``/app`` fresh for
every item, starts the entry point and forwards the process runtime's port to it) and the
exported oracle's ``conftest.py`` answers the tests' container calls with this container
(``harbor_local``).
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
import tempfile
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
    parser.add_argument("--entry", default=None, help="the task image's entry point (a task with its own Dockerfile)")
    parser.add_argument("--entry-port", type=int, default=None, help="the port the entry point listens on")
    args = parser.parse_args(argv)
    args.logs.mkdir(parents=True, exist_ok=True)
    if args.entry is not None:
        if args.entry_port is None:
            parser.error("--entry needs --entry-port")
        run_entry_point(args.candidate, args.entry, args.entry_port)
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


def run_entry_point(candidate: Path, entry: str, port: int) -> None:
    """``candidate.yaml`` running ``harbor_entry`` with the entry point, and the copy it restores each start from."""
    config_dir = Path(tempfile.mkdtemp(prefix="backendbench-entry-"))
    launcher = f"{shlex.quote(sys.executable)} -m pytest_backendbench.formats.harbor_entry --config {config_dir / 'entry.json'}"
    (candidate / "candidate.yaml").write_text(json.dumps({"run": launcher}) + "\n", encoding="utf-8")
    snapshot = config_dir / "snapshot"
    shutil.copytree(candidate, snapshot, symlinks=True)
    config = {"entry": entry, "port": port, "workdir": str(candidate.resolve()), "snapshot": str(snapshot)}
    (config_dir / "entry.json").write_text(json.dumps(config), encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
