"""The whole bundled suite dispatched in shards vs. one unsharded run: the reports must agree.

Generates the reference candidates once, evaluates them unsharded, then through
``backendbench dispatch`` (Slurm when it answers, else local processes) in N shards, and
compares the two reports the way a merge must equal an unsharded run: the summary, and every
item's node id, outcome and request count (timings aside). Prints the wall times.

    python bench/dispatch_bundled.py [--shards 3] [--executor slurm|local] [--runtime process|docker]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pytest_backendbench.dispatch.dispatcher import dispatch, summary_lines
from pytest_backendbench.dispatch.executors import Executor, LocalExecutor, SlurmExecutor, SlurmOptions

REPO = Path(__file__).resolve().parents[1]


def outcomes(document: dict[str, Any]) -> list[tuple[str, str, int]]:
    """What must be equal between the merged and the unsharded report."""
    return sorted((i["nodeid"], i["outcome"], i["requests"]) for t in document["tasks"] for i in t["items"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=3)
    parser.add_argument("--executor", choices=("slurm", "local"), default="slurm")
    parser.add_argument("--runtime", choices=("process", "docker"), default="process")
    parser.add_argument("--task", action="append", default=[], metavar="ID", help="only these bundled tasks (repeatable; default: all)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bb-dispatch-bundled-", dir=REPO.parent) as tmp:
        root = Path(tmp)
        candidates = root / "candidates"
        common = ["-p", "no:cacheprovider", "-q", f"--bench-root={REPO}", f"--bench-runtime={options.runtime}",
                  *(f"--bench-task={task}" for task in options.task)]
        started = time.monotonic()
        whole = subprocess.run(
            [sys.executable, "-m", "pytest", *common, "--bench-generate", "--bench-model=reference", f"--candidate={candidates}",
             f"--bench-report-dir={root / 'whole'}"],
            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
        )
        whole_s = time.monotonic() - started
        if whole.returncode not in (0, 1):
            raise SystemExit(f"the unsharded run ended with exit code {whole.returncode}")
        executor: Executor = (
            SlurmExecutor(SlurmOptions(time_min=60, cpus=2), root / "jobs") if options.executor == "slurm" else LocalExecutor()
        )
        started = time.monotonic()
        result = dispatch(executor, [*common, f"--candidate={candidates}"], options.shards, root / "dispatched", cwd=REPO, poll_s=1.0,
                          progress=lambda line: print(line, file=sys.stderr, flush=True))
        dispatched_s = time.monotonic() - started
        for line in summary_lines(result):
            print(line)
        if result.report is None or result.failed:
            raise SystemExit("the dispatch did not finish")
        a = json.loads((root / "whole" / "report.json").read_text())
        b = json.loads(result.report.read_text())
        same_summary = a["summary"] == b["summary"]
        same_items = outcomes(a) == outcomes(b)
        print(f"unsharded: {whole_s:.1f}s (includes generation), {len(outcomes(a))} items, Final SR {a['summary']['sr']}")
        print(f"dispatch --executor {options.executor} --shards {options.shards}: {dispatched_s:.1f}s, {len(outcomes(b))} items")
        print(f"summary equal: {same_summary}; items equal (node id, outcome, requests): {same_items}")
        if not (same_summary and same_items):
            raise SystemExit(1)


if __name__ == "__main__":
    main()
