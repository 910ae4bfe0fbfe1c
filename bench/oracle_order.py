"""Every oracle item must pass alone, in any order, and twice in a row against the same service.

Two uses:

* as a pytest plugin (``-p bench.oracle_order --oracle-order=reverse|shuffle:SEED|twice``) it
  reorders the Python oracle items of a run after the harness has sorted them (build, boot and
  smoke items stay first);
* as a script it runs one task's reference (or any candidate) in those orders plus a sample of
  items alone (``-k``), and prints one line per run with the failures, so an order-dependent
  item shows up by name::

      python bench/oracle_order.py url-shortener            # reverse, shuffle:1, twice, 20 alone
      python bench/oracle_order.py booking --alone all      # every item alone (slow)

pytest-randomly is not installed here; this is the small option that replaces it.
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--oracle-order``: how to reorder the oracle items of this run."""
    parser.addoption(
        "--oracle-order", default="", metavar="ORDER",
        help="reorder oracle items: reverse, shuffle:SEED or twice (each item run a second time after all others)",
    )


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Reorder only ordinary test functions of oracles/; the harness's own items keep their places."""
    order = str(config.getoption("oracle_order") or "")
    if not order:
        return
    oracle: list[pytest.Item] = [i for i in items if isinstance(i, pytest.Function) and "oracles" in Path(str(i.path)).parts]
    others = [i for i in items if i not in set(oracle)]
    if order == "reverse":
        oracle.reverse()
    elif order.startswith("shuffle"):
        seed = int(order.partition(":")[2] or 0)
        random.Random(seed).shuffle(oracle)
    elif order == "twice":
        oracle = oracle + oracle
    else:
        raise pytest.UsageError(f"--oracle-order={order!r}: expected reverse, shuffle:SEED or twice")
    items[:] = others + oracle


def _run(task: str, candidate: Path, extra: list[str], runtime: str) -> tuple[float, str, list[str]]:
    """One pytest run of the task; (seconds, summary line, failed node ids)."""
    command = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "bench.oracle_order", "-q", "-rf", f"--rootdir={ROOT}",
        f"--bench-root={ROOT}", f"--candidate={candidate}", f"--bench-task={task}", f"--bench-runtime={runtime}", "--bench-report-dir=/tmp/oracle-order-report", *extra,
    ]
    started = time.monotonic()
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    lines = proc.stdout.strip().splitlines()
    failed = [m.group(1) for m in re.finditer(r"^FAILED (\S+)", proc.stdout, re.MULTILINE)]
    errors = [m.group(1) for m in re.finditer(r"^ERROR (\S+)", proc.stdout, re.MULTILINE)]
    return time.monotonic() - started, (lines[-1] if lines else proc.stderr[-300:]), failed + errors


def _item_names(task: str, candidate: Path, runtime: str) -> list[str]:
    """The test function names (with parameters) of the task's oracle, from a collection-only run."""
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--co", f"--rootdir={ROOT}", f"--bench-root={ROOT}",
               f"--candidate={candidate}", f"--bench-task={task}", f"--bench-runtime={runtime}"]
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    return [line.split("::")[-1] for line in proc.stdout.splitlines() if "::test_" in line and line.startswith("oracles/")]


def main() -> int:
    """Run the orders and print figures; exit 1 when any run had a failure."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("task")
    parser.add_argument("--candidate", type=Path, help="default: oracles/<task>/reference")
    parser.add_argument("--runtime", default="process")
    parser.add_argument("--alone", default="20", help="how many items to run alone (-k), sampled with --seed, or 'all'")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    candidate = args.candidate or ROOT / "oracles" / args.task / "reference"
    bad = 0
    for order in ("reverse", f"shuffle:{args.seed}", "twice"):
        seconds, summary, failed = _run(args.task, candidate, [f"--oracle-order={order}"], args.runtime)
        bad += len(failed)
        print(f"{args.task} {order:<10} {seconds:6.1f}s  {summary}" + "".join(f"\n    FAILED {f}" for f in failed), flush=True)
    names = _item_names(args.task, candidate, args.runtime)
    chosen = names if args.alone == "all" else random.Random(args.seed).sample(names, min(int(args.alone), len(names)))
    alone_failed = []
    started = time.monotonic()
    for name in chosen:
        # -k matches substrings; the exact name in brackets-free form keeps the selection to this item
        expression = re.sub(r"\[.*\]$", "", name)
        _, _, failed = _run(args.task, candidate, ["-k", expression], args.runtime)
        alone_failed += failed
    bad += len(alone_failed)
    print(f"{args.task} alone      {time.monotonic() - started:6.1f}s  {len(chosen)} items run alone, {len(alone_failed)} failed"
          + "".join(f"\n    FAILED {f}" for f in alone_failed), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
