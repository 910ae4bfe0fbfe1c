"""Every oracle item must pass alone, in any order, and twice in a row against the same service.

Two uses:

* as a pytest plugin (``-p bench.oracle_order --oracle-order=reverse|shuffle:SEED|twice``) it
  reorders the oracle items of each candidate run after the harness has sorted them: Python
  items, Gherkin scenarios and DB cases alike; build, boot and smoke stay first. ``twice`` runs
  every oracle item a second time after all of them, against the same service;
* with ``--oracle-fresh`` it stops the task's service before every oracle item and boots a
  new one (new work directory, port, mocks and PostgreSQL cluster): every item alone by state,
  all in one session (~1 s per item, against ~5 s for a session of its own);
* as a script it runs the tasks' references (or a candidate root) in those orders and fresh,
  then items alone by node id, each in a session of its own, and prints a table per task::

      python bench/oracle_order.py --all --alone 20 --jobs 2        # the check (~25 min, 2 cores)
      python bench/oracle_order.py --all --alone all --jobs 2       # every item in its own session
      python bench/oracle_order.py booking --orders reverse --no-fresh --alone 0

"Alone" is exact: each item is selected by its node id (a positional argument), never by
``-k``, whose substring match selects ``test_a`` together with ``test_a_b``. Covered: Python
items per parameter (``test_x[case]``), Gherkin scenarios (``features/x.feature::Scenario``)
and DB cases (``db/x.yaml::case``); a sample always holds one scenario and one DB case when the
task has them, and items that failed in another run are re-run alone (``--confirm``). Build,
boot and smoke are not oracle items: they run first in every session and are never reordered.

An alone run that does not end with exactly one passed item is a failure (``not selected``),
so a node id the harness cannot select again is not silently skipped. A harness fault shows up
as ``ERROR``; every session's output is kept in ``--log-dir``/logs.

pytest-randomly is not installed here; this is the small option that replaces it.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Generator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ORDERS = ("reverse", "shuffle", "twice")


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--oracle-order``: how to reorder the oracle items of this run."""
    parser.addoption(
        "--oracle-order", default="", metavar="ORDER",
        help="reorder oracle items: reverse, shuffle:SEED or twice (each item run a second time after all others)",
    )
    parser.addoption(
        "--oracle-fresh", action="store_true", default=False,
        help="stop the task's service before every oracle item, so each item meets a freshly started service "
        "(new data directory, database and mocks): every item alone by state, in one session",
    )


def _is_oracle(item: pytest.Item) -> bool:
    """Oracle items (Python, Gherkin, DB) of a task run; the harness's build/boot/smoke are not."""
    from pytest_backendbench.items import item_kind

    return "oracles" in Path(str(item.path)).parts and item_kind(item).is_oracle


def _reordered(oracle: list[pytest.Item], order: str) -> list[pytest.Item]:
    if order == "reverse":
        return oracle[::-1]
    if order.startswith("shuffle"):
        seed_text = order.partition(":")[2] or "0"
        if not seed_text.isdigit():
            raise pytest.UsageError(f"--oracle-order={order!r}: the seed must be a whole number (shuffle:7)")
        shuffled = list(oracle)
        random.Random(int(seed_text)).shuffle(shuffled)
        return shuffled
    if order == "twice":
        return oracle + oracle
    raise pytest.UsageError(f"--oracle-order={order!r}: expected reverse, shuffle:SEED or twice")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Reorder the oracle items within each candidate run; the harness's own items keep their places.

    The harness sorted items by task and run (build < boot < smoke < oracle items); each
    contiguous block of one run's oracle items is reordered in place, so runs never interleave.
    """
    order = str(config.getoption("oracle_order") or "")
    if not order:
        return
    result: list[pytest.Item] = []
    block: list[pytest.Item] = []
    block_key: object = None
    for item in [*items, None]:
        key = _run_key(item) if item is not None and _is_oracle(item) else None
        if block and (key is None or key != block_key):
            result += _reordered(block, order)
            block = []
        if item is None:
            break
        if key is None:
            result.append(item)
        else:
            block.append(item)
            block_key = key
    items[:] = result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    """With ``--oracle-fresh``: stop the item's service so its fixtures boot a new one.

    A new ProcessService (or container) has a new work directory, port, mocks and database,
    so the item sees nothing another item wrote. Oracle fixtures of wider scope only hold
    constants (tokens read from task.yaml), so nothing stale survives the restart. A wrapper,
    so the service is gone before any setup hook (the statement-log window of db/checks/dbcheck.py)
    looks at it, and the new one is booted here so that hook sees the new database.
    """
    if item.config.getoption("oracle_fresh") and _is_oracle(item):
        from pytest_backendbench.taskrun import registry_of

        run = registry_of(item.config).for_item(item)
        if run is not None and run.service is not None:
            service, run.service = run.service, None
            service.stop()
            run.ensure_started()
    return (yield)


def _run_key(item: pytest.Item) -> object:
    from pytest_backendbench.runkey import RUN_KEY

    return item.stash.get(RUN_KEY, None) or Path(str(item.path)).parts


@dataclasses.dataclass
class Run:
    """One pytest session's outcome."""

    seconds: float
    summary: str
    problems: list[str]  # "FAILED node" / "ERROR node" / "not selected" lines
    log: Path | None = None


@dataclasses.dataclass
class TaskResult:
    """A task's figures for the final table."""

    task: str
    items: int = 0
    orders: dict[str, Run] = dataclasses.field(default_factory=dict)
    alone_run: int = 0
    alone_failed: list[str] = dataclasses.field(default_factory=list)
    alone_seconds: float = 0.0
    seconds: float = 0.0  # wall time of the whole task (collection, sessions, alone runs)
    collect_problem: str = ""


_OUTCOME = re.compile(r"^(FAILED|ERROR) (.+)$", re.MULTILINE)  # node id, then " - message" (names may hold " - ")
_COUNTS = re.compile(r"(\d+) (passed|failed|errors?|skipped|deselected|xfailed|xpassed)")


def _pytest(task: str, candidate: Path, runtime: str, extra: list[str], report_dir: Path, log_dir: Path, name: str) -> Run:
    """One pytest session of the task; the output is kept in log_dir/name.log."""
    command = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "bench.oracle_order", "-q", "-rfE", f"--rootdir={ROOT}",
        f"--bench-root={ROOT}", f"--candidate={candidate}", f"--bench-task={task}", f"--bench-runtime={runtime}",
        f"--bench-report-dir={report_dir}", *extra,
    ]
    started = time.monotonic()
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    log = log_dir / f"{name}.log"
    log.write_text(" ".join(command) + "\n\n" + proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    lines = proc.stdout.strip().splitlines()
    summary = lines[-1] if lines else (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
    problems = [f"{kind} {rest[:240]}" for kind, rest in _OUTCOME.findall(proc.stdout)]
    if not problems and proc.returncode not in (0,):
        problems.append(f"EXIT {proc.returncode}: {summary}")
    return Run(seconds, summary.strip("= "), problems, log)


def _collect(task: str, candidate: Path, runtime: str, report_dir: Path) -> tuple[list[str], str]:
    """The oracle items' node ids (Python, Gherkin, DB) of the task, from a collection-only run."""
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--co", f"--rootdir={ROOT}", f"--bench-root={ROOT}",
               f"--candidate={candidate}", f"--bench-task={task}", f"--bench-runtime={runtime}", f"--bench-report-dir={report_dir}"]
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    nodes = [line for line in proc.stdout.splitlines() if line.startswith(f"oracles/{task}/") and "::" in line]
    problem = "" if proc.returncode == 0 and nodes else f"collection exit {proc.returncode}: {(proc.stdout + proc.stderr)[-400:]}"
    return nodes, problem


def _alone(task: str, candidate: Path, runtime: str, node: str, work: Path, index: int) -> Run:
    """The item by node id, alone in a fresh session; anything but exactly one passed item is a problem."""
    run = _pytest(task, candidate, runtime, [node], work / f"report-{task}-alone-{index}", work / "logs", f"{task}-alone-{index:04d}")
    counts = {kind.rstrip("s") if kind.startswith("error") else kind: int(n) for n, kind in _COUNTS.findall(run.summary)}
    if not run.problems and counts.get("passed") != 1:
        run.problems.append(f"not selected ({run.summary}) {node}")
    return run


def _order_name(args: argparse.Namespace, order: str) -> str:
    """The --oracle-order value of a column (shuffle carries its seed)."""
    return f"shuffle:{args.seed}" if order == "shuffle" else order


def _node_of(problem: str, nodes: list[str]) -> str:
    """The collected node id a "FAILED node - message" line names (the longest that fits)."""
    rest = problem.partition(" ")[2]
    fitting = [n for n in nodes if rest == n or rest.startswith(n + " - ")]
    return max(fitting, key=len) if fitting else rest


def check_task(task: str, args: argparse.Namespace, work: Path) -> TaskResult:
    """The orders and the fresh-service run, then items alone by node id; prints as runs end.

    Items alone: a sample of ``--alone`` (or all; with a Gherkin scenario and a DB case when the
    task has them) plus up to ``--confirm`` items that failed in another run, so a failure is
    also seen (or cleared) in a session of its own.
    """
    candidate = args.candidate / task / "reference" if args.candidate else ROOT / "oracles" / task / "reference"
    if args.candidate and not candidate.is_dir():
        candidate = args.candidate / task
    result = TaskResult(task)
    nodes, result.collect_problem = _collect(task, candidate, args.runtime, work / f"report-{task}-collect")
    result.items = len(nodes)
    if result.collect_problem:
        print(f"{task:<19} collect    {result.collect_problem}", flush=True)
        return result
    sessions = {order: [f"--oracle-order={_order_name(args, order)}"] for order in args.orders}
    if args.fresh:
        sessions["fresh"] = ["--oracle-fresh"]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(_pytest, task, candidate, args.runtime, extra, work / f"report-{task}-{name}", work / "logs",
                               f"{task}-{name}"): name for name, extra in sessions.items()}
        for future in concurrent.futures.as_completed(futures):
            name, run = futures[future], future.result()
            result.orders[name] = run
            print(f"{task:<19} {_order_name(args, name):<10} {run.seconds:6.1f}s  {run.summary}" + "".join(f"\n    {p}" for p in run.problems), flush=True)
    if args.alone == "all":
        chosen = list(nodes)
    else:
        chosen = random.Random(args.seed).sample(nodes, min(int(args.alone), len(nodes)))
        if chosen:  # one Gherkin scenario and one DB case at least, so their node ids are shown to select
            chosen += [next(n for n in nodes if f".{suffix}::" in n) for suffix in ("feature", "yaml")
                       if any(f".{suffix}::" in n for n in nodes) and not any(f".{suffix}::" in n for n in chosen)]
    failed = [n for n in dict.fromkeys(_node_of(p, nodes) for run in result.orders.values() for p in run.problems) if n in nodes and n not in chosen]
    chosen += failed[: args.confirm]
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        alone = {pool.submit(_alone, task, candidate, args.runtime, node, work, i): node for i, node in enumerate(chosen)}
        for future in concurrent.futures.as_completed(alone):
            run = future.result()
            result.alone_run += 1
            if run.problems:
                result.alone_failed += run.problems
                print(f"{task:<19} alone      {run.seconds:6.1f}s  {alone[future]}\n    "
                      + "\n    ".join(run.problems) + f"\n    log: {run.log}", flush=True)
    result.alone_seconds = time.monotonic() - started
    if chosen:
        print(f"{task:<19} alone      {result.alone_seconds:6.1f}s  {result.alone_run} items run alone by node id, "
              f"{len(result.alone_failed)} failed", flush=True)
    return result


def _table(results: list[TaskResult], columns: list[str]) -> str:
    """Failures per order run, items alone and their failures, wall seconds, per task."""
    header = ["task", "items", *columns, "alone", "alone fail", "seconds"]
    rows = []
    for r in results:
        fails = [str(len(r.orders[c].problems)) if c in r.orders else "-" for c in columns]
        rows.append([r.task, str(r.items), *fails, str(r.alone_run), str(len(r.alone_failed)) if r.alone_run else "-", f"{r.seconds:.0f}"])
    if len(results) > 1:
        rows.append(["total", str(sum(r.items for r in results)),
                     *[str(sum(len(r.orders[c].problems) for r in results if c in r.orders)) for c in columns],
                     str(sum(r.alone_run for r in results)), str(sum(len(r.alone_failed) for r in results)),
                     f"{sum(r.seconds for r in results):.0f}"])
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
                     for row in [header, *rows])


def main(argv: list[str] | None = None) -> int:
    """Run the orders and items alone per task and print the table; exit 1 when any run had a failure."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks", nargs="*", help="task ids (benchmarks/<task>); or --all")
    parser.add_argument("--all", action="store_true", help="every task in benchmarks/")
    parser.add_argument("--candidate", type=Path, help="a candidate root (<root>/<task>); default: oracles/<task>/reference")
    parser.add_argument("--runtime", default="process")
    parser.add_argument("--orders", default=",".join(ORDERS), help="comma-separated subset of reverse,shuffle,twice ('' for none)")
    parser.add_argument("--no-fresh", dest="fresh", action="store_false",
                        help="skip the session that gives every item a freshly started service (--oracle-fresh)")
    parser.add_argument("--alone", default="20",
                        help="how many items to run alone by node id, each in a session of its own (sampled with --seed), or 'all'; "
                        "items that failed in another run are added (up to --confirm)")
    parser.add_argument("--confirm", type=int, default=20, help="at most this many failed items re-run alone per task")
    parser.add_argument("--jobs", type=int, default=1, help="alone runs at a time (each is a fresh session with its own service)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--log-dir", type=Path, help="keep every session's output here (default: a new temporary directory)")
    parser.add_argument("--json", type=Path, help="write the figures as JSON too")
    args = parser.parse_args(argv)
    known = sorted(p.parent.name for p in (ROOT / "benchmarks").glob("*/task.yaml"))
    tasks = known if args.all else args.tasks
    unknown = [t for t in tasks if t not in known]
    if not tasks or unknown:
        parser.error(f"name tasks or pass --all; unknown: {', '.join(unknown) or '-'}; known: {', '.join(known)}")
    args.orders = [o for o in args.orders.split(",") if o]
    if any(o not in ORDERS for o in args.orders):
        parser.error(f"--orders: expected a subset of {','.join(ORDERS)}")
    if args.alone != "all" and not args.alone.isdigit():
        parser.error("--alone: a number or 'all'")
    work = args.log_dir or Path(tempfile.mkdtemp(prefix="oracle-order-"))
    (work / "logs").mkdir(parents=True, exist_ok=True)
    print(f"logs: {work / 'logs'}", flush=True)
    started = time.monotonic()
    results = []
    for task in tasks:
        task_started = time.monotonic()
        results.append(check_task(task, args, work))
        results[-1].seconds = time.monotonic() - task_started
    columns = [*args.orders, *(["fresh"] if args.fresh else [])]
    print(f"\n{_table(results, columns)}\nwhole check: {time.monotonic() - started:.0f}s", flush=True)
    if args.json:
        args.json.write_text(json.dumps([{
            "task": r.task, "items": r.items, "collect_problem": r.collect_problem,
            "seconds": round(r.seconds, 1), "orders": {o: {"seconds": round(run.seconds, 1), "summary": run.summary, "problems": run.problems} for o, run in r.orders.items()},
            "alone": r.alone_run, "alone_failed": r.alone_failed, "alone_seconds": round(r.alone_seconds, 1),
        } for r in results], indent=2))
    bad = any(r.collect_problem or r.alone_failed or any(run.problems for run in r.orders.values()) for r in results)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
