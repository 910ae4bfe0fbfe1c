"""What dispatch costs per shard job, against running the same shard commands by hand.

A copy of the test bench (three small tasks, process runtime) is split into N shards and run
three ways in one go: the N shard commands as plain concurrent subprocesses (the baseline),
``backendbench dispatch --executor local`` and, when Slurm answers, ``--executor slurm``.
Overhead per shard job = (dispatch wall time - baseline wall time) / N, which includes
submission, scheduling, state polling (--poll) and the merge.

    python bench/dispatch_overhead.py [--shards 3] [--poll 0.5] [--no-slurm]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_backendbench.dispatch.dispatcher import dispatch, shard_command
from pytest_backendbench.dispatch.executors import Executor, LocalExecutor, SlurmExecutor, SlurmOptions

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "tests" / "data" / "bench"
TASKS = ("notes", "notes2", "notes3")


def make_bench(root: Path) -> Path:
    """The notes bench with two more copies of its task, and a candidate root for all three."""
    shutil.copytree(BENCH, root, dirs_exist_ok=True)
    for task_id in TASKS[1:]:
        shutil.copytree(root / "benchmarks" / "notes", root / "benchmarks" / task_id)
        shutil.copytree(root / "oracles" / "notes", root / "oracles" / task_id)
        task_yaml = root / "benchmarks" / task_id / "task.yaml"
        task_yaml.write_text(task_yaml.read_text().replace("id: notes", f"id: {task_id}"))
    candidates = root / "root"
    for task_id in TASKS:
        folder = candidates / task_id
        folder.mkdir(parents=True)
        for name in ("app.py", "Dockerfile"):
            shutil.copy(BENCH / "oracles" / "notes" / "reference" / name, folder / name)
        (folder / "candidate.yaml").write_text("run: python app.py\n")
    return candidates


def baseline(args: list[str], shards: int, root: Path) -> float:
    """The shard commands as plain concurrent subprocesses: what dispatch does, minus dispatch."""
    started = time.monotonic()
    processes = [
        subprocess.Popen(list(shard_command(args, k, shards, root / "plain" / f"shard-{k}", None, resume=False)), cwd=root,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for k in range(1, shards + 1)
    ]
    codes = [p.wait() for p in processes]
    if any(code not in (0, 1) for code in codes):
        raise SystemExit(f"baseline shard commands failed: exit codes {codes}")
    return time.monotonic() - started


def timed_dispatch(executor: Executor, args: list[str], shards: int, root: Path, name: str, poll: float) -> float:
    started = time.monotonic()
    result = dispatch(executor, args, shards, root / name, cwd=root, poll_s=poll)
    seconds = time.monotonic() - started
    if result.failed or result.report is None:
        raise SystemExit(f"{name}: dispatch did not finish: {result.failed}")
    return seconds


def slurm_answers() -> bool:
    try:
        return subprocess.run(["sinfo", "-h"], capture_output=True, timeout=10, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=3)
    parser.add_argument("--poll", type=float, default=0.5, help="dispatch's state polling interval")
    parser.add_argument("--no-slurm", action="store_true")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bb-dispatch-bench-") as tmp:
        root = Path(tmp)
        candidates = make_bench(root)
        os.environ.setdefault("BACKENDBENCH_CACHE", str(root / "cache"))
        args = [f"--candidate={candidates}", "--bench-runtime=process", "-p", "no:cacheprovider", "-q"]
        baseline(args, options.shards, root)  # warm the candidates' venv cache once
        plain = baseline(args, options.shards, root)
        rows = [("plain subprocesses (baseline)", plain)]
        rows.append(("dispatch --executor local", timed_dispatch(LocalExecutor(), args, options.shards, root, "local", options.poll)))
        if not options.no_slurm and slurm_answers():
            executor = SlurmExecutor(SlurmOptions(time_min=10, cpus=1), root / "jobs")
            rows.append(("dispatch --executor slurm", timed_dispatch(executor, args, options.shards, root, "slurm", options.poll)))
        print(f"{options.shards} shard jobs of the 3-task test bench (process runtime), poll {options.poll}s, python {sys.version.split()[0]}")
        print()
        print("| how | wall | vs baseline | overhead per shard job |")
        print("|---|---|---|---|")
        for name, seconds in rows:
            print(f"| {name} | {seconds:.2f} s | {seconds / plain:.2f}x | {(seconds - plain) / options.shards * 1000:+.0f} ms |")


if __name__ == "__main__":
    main()
