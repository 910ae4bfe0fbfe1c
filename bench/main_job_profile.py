"""Where the README's main job spends its time: per task, per phase, and inside items the
candidate's share against the harness's own.

    python bench/main_job_profile.py                          # run the main job under py-spy, then print
    python bench/main_job_profile.py --out /tmp/prof/after    # keep the run's files there
    python bench/main_job_profile.py --no-stacks              # no sampler: wall and CPU seconds only
    python bench/main_job_profile.py --analyse /tmp/prof/before   # print from an earlier run's folder

The run is the README's first command (``--bench-generate --bench-model=reference``, ``-n 2
--dist loadgroup``, ``--bench-runtime`` auto) with its report in ``<out>/report``. py-spy
(``pip install py-spy``) samples the controller and both workers with ``--idle``, so a
worker's main-thread samples add up to its wall time, busy or not; each sample is put in one
bucket by the innermost frame that names a concern (contract check, statement log, report,
request to the candidate, a timer the oracle waits out, ...) and counted as *waiting* when its
innermost Python line blocks (a socket read, a sleep, a subprocess or engine call) and as
*harness CPU* otherwise.

Printed: the run's wall time and the CPU seconds of all its Python processes (``getrusage``
of the children: the controller, the workers, py-spy when used; not the Docker engine or the
candidates' containers); per task its build, boot (of which the candidate's readiness, the
rest being network, sidecar PostgreSQL and mocks), item count and item seconds; the workers'
main-thread time by bucket; and the list-scheduling makespan of the task groups on two workers
in xdist's order (most items first) and longest first. The machine may be shared: shares and
CPU seconds move less with other load than wall seconds do.
"""

from __future__ import annotations

import argparse
import json
import linecache
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from cpu_by_kind import XDIST_WORKER, account
from cpu_by_kind import render as render_cpu

ROOT = Path(__file__).resolve().parents[1]
RATE = 25
"""Samples per second and process: enough for shares over a six-minute run, light on two cores."""

# (bucket, pattern on one frame) - the innermost frame that matches decides the bucket
BUCKETS: list[tuple[str, re.Pattern[str]]] = [
    ("contract check (openapi-core)", re.compile(r"Contract\.violations|openapi_contract\.py")),
    ("statement log: read (engine exec / file)", re.compile(r"read_log \(|StatementLog\._through")),
    ("statement log: marker", re.compile(r"StatementLog\.mark")),
    ("statement log: parse + judge (sqlglot)", re.compile(r"parse_csvlog|statements_of|_parsed_effects|statement_effects|effects\.py|finish_capture|records_after_marker")),
    ("db fixture queries", re.compile(r"DatabaseHandle\.")),
    ("report, journal, recorder", re.compile(r"recorder\.py|report/|journal\.py|protocol\.py:.*makereport|pytest_runtest_makereport \(pytest_backendbench")),
    ("request to the candidate", re.compile(r"ContractSession\.request|accounts\.py.*(hash|login|token)")),
    ("waiting for a service slot (max_running_services, shared by every run here)", re.compile(r"SlotLock\.acquire")),
    ("build", re.compile(r"ensure_built|image_build\.py|ImageBuild")),
    ("boot: database (sidecar / cluster)", re.compile(r"_start_database|start_sidecar|PostgresReady|local_cluster\.py")),
    ("boot: candidate, network, mocks", re.compile(r"ensure_started|ensure_fresh|_start_candidate|_start_mock|DockerService\.start|ProcessService\.start|docker_service\.py")),
    ("service stop, cleanup", re.compile(r"TaskRun\.finish|\.stop \(pytest_backendbench|cleanup\.py")),
    ("browser (Gherkin)", re.compile(r"bdd/|selenium/")),
    ("oracle code", re.compile(r"oracles/|test_[a-z0-9_]+\.py|conftest\.py")),
]
OTHER = "pytest, xdist, fixtures, other"
IDLE_BETWEEN_ITEMS = "between items (xdist)"
# an innermost line that blocks: the sample waits on something outside this process
WAITING_LINE = re.compile(
    r"\bsleep\(|\.recv|recv_into|readinto|\.read\(|\.accept\(|select\(|\.poll\(|\.wait\(|communicate\(|"
    r"waitpid|\.acquire\(|create_connection|sock\.connect|\.getresponse\(|receive\(|_recv|readline\(|\.write\(|\.flush\("
)
ORACLE_FRAME = re.compile(r"\((?:oracles/[^:]*|test_[a-z0-9_]+\.py|conftest\.py):\d+\)$")
TIMER_LINE = re.compile(r"\btime\.sleep\(|\bsleep\(")
ACCOUNT_HELPER = re.compile(r"login|register|registration|staff|user|customer|agent|admin|patron|member|token|signup|account", re.IGNORECASE)
"""Oracle helpers that create or log in accounts: the candidate hashes a password."""
STACK_HEAD = re.compile(r'^(?P<processes>(?:process \d+:"[^"]*";)*)(?P<thread>thread [^;]*);(?P<frames>.*)$', re.DOTALL)
PROCESS = re.compile(r'process \d+:"([^"]*)";')
FRAME = re.compile(r"^(?P<function>.*) \((?P<file>[^()]*):(?P<line>\d+)\)$")


def run_job(out: Path, workers: int, stacks: bool, runtime: str, tasks: list[str] | None = None) -> dict[str, Any]:
    """Run the README's main job (or its ``tasks``) into ``out``; return its wall and CPU seconds and engine execs."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    command = [
        sys.executable, "-m", "pytest", "--bench-generate", "--bench-model=reference", f"--candidate={out / 'runs' / 'reference'}",
        "-n", str(workers), "--dist", "loadgroup", "-p", "no:cacheprovider", f"--bench-report-dir={out / 'report'}",
        f"--bench-runtime={runtime}", *(f"--bench-task={task}" for task in tasks or []),
    ]
    if stacks:
        if shutil.which("py-spy") is None:
            raise SystemExit("py-spy is not installed: pip install py-spy (or run with --no-stacks)")
        command = ["py-spy", "record", "--subprocesses", "--idle", "--threads", "--rate", str(RATE), "--format", "raw",
                   "-o", str(out / "stacks.txt"), "--", *command]
    events = None
    if shutil.which("docker") is not None:  # every exec the engine runs for this run's containers (labelled with its session)
        events = subprocess.Popen(
            ["docker", "events", "--filter", "event=exec_create", "--format", '{{index .Actor.Attributes "io.backendbench.session"}}'],
            stdout=(out / "exec-events.txt").open("w"), stderr=subprocess.DEVNULL,
        )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    with (out / "pytest.log").open("w") as log:
        machine = account(command, out / "report", cwd=ROOT, stdout=log)
    code = machine["exit_code"]
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if events is not None:
        events.terminate()
        events.wait()
    figures = {
        "exit_code": code, "wall_s": round(wall, 1), "cpu_user_s": round(after.ru_utime - before.ru_utime, 1),
        "cpu_system_s": round(after.ru_stime - before.ru_stime, 1), "stacks": stacks, "workers": workers,
        "load_average": os.getloadavg(), "engine_execs": engine_execs(out), "cpu_by_kind": machine,
    }
    (out / "figures.json").write_text(json.dumps(figures, indent=2))
    return figures


def engine_execs(out: Path) -> int | None:
    """How many execs the engine ran in this run's containers (None without docker or a report)."""
    events, report = out / "exec-events.txt", out / "report" / "report.json"
    if not events.is_file() or not report.is_file():
        return None
    session = json.loads(report.read_text())["manifest"]["session_id"]
    return sum(1 for line in events.read_text().splitlines() if line.strip() == session)


def task_table(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Per task: build, boot (and the candidate's readiness in it), items and their seconds, from report.json."""
    rows = []
    for task in report["tasks"]:
        items = task["items"]
        seconds = {kind: sum(i.get("duration") or 0.0 for i in items if i.get("kind") == kind) for kind in ("build", "boot", "smoke")}
        oracle = [i for i in items if i.get("kind") not in ("build", "boot", "smoke")]
        rows.append({
            "task": task["task"],
            "build_s": seconds["build"],
            "build_cached": bool(task.get("build_cached")),
            "boot_s": seconds["boot"],
            "ready_s": task.get("ready_seconds") or 0.0,
            "database": "database: postgres" in _task_yaml(task["task"]),
            "items": len(oracle),
            "requests": sum(i.get("requests") or 0 for i in oracle),
            "item_s": sum(i.get("duration") or 0.0 for i in oracle),
            "total_s": sum(i.get("duration") or 0.0 for i in items),
        })
    return sorted(rows, key=lambda row: -row["total_s"])


def _task_yaml(task: str) -> str:
    path = ROOT / "benchmarks" / task / "task.yaml"
    return path.read_text() if path.is_file() else ""


def list_schedule(durations: list[float], workers: int) -> float:
    """Makespan of greedy list scheduling in the given order (what xdist's loadgroup does)."""
    loads = [0.0] * workers
    for duration in durations:
        loads[loads.index(min(loads))] += duration
    return max(loads)


def read_stacks(path: Path) -> list[tuple[list[str], int, str]]:
    """(frames root first, samples, process) of each main-thread stack of the controller and its xdist workers.

    Other Python children (a browser reaper, a process-runtime candidate) are left out.
    """
    stacks = []
    for raw in path.read_text(errors="replace").splitlines():
        head, _, count = raw.rpartition(" ")
        match = STACK_HEAD.match(head)
        if not count.isdigit() or match is None:
            continue
        processes = PROCESS.findall(match.group("processes"))
        if "MainThread" not in match.group("thread") or len(processes) > 2 or (len(processes) == 2 and XDIST_WORKER not in processes[1]):
            continue
        stacks.append((match.group("frames").split(";"), int(count), "worker" if len(processes) == 2 else "controller"))
    return stacks


def source_file(name: str, function: str) -> Path | None:
    """The file py-spy names ``name`` (it shortens paths: a package path, or a bare file name for
    oracle modules and conftest.py files, which then must define ``function``)."""
    for base in (Path(name), ROOT / name, *(Path(p) / name for p in sys.path if p)):
        if base.is_file():
            return base
    if "/" in name:
        return None
    if name not in _ORACLE_FILES:
        _ORACLE_FILES[name] = sorted((ROOT / "oracles").glob(f"*/{name}"))
    defined = re.compile(rf"def {re.escape(function.rsplit('.', 1)[-1])}\b")
    return next((f for f in _ORACLE_FILES[name] if defined.search(f.read_text(errors="replace"))), None)


_ORACLE_FILES: dict[str, list[Path]] = {}


def source_line(frame: str) -> str:
    """The text of the frame's line when its file can be found."""
    match = FRAME.match(frame)
    if match is None:
        return ""
    found = source_file(match.group("file"), match.group("function"))
    return linecache.getline(str(found), int(match.group("line"))) if found is not None else ""


def classify(frames: list[str]) -> tuple[str, bool]:
    """(bucket, waiting) of one main-thread stack."""
    leaf_line = source_line(frames[-1]) if frames else ""
    waiting = bool(WAITING_LINE.search(leaf_line))
    if not any("runtestprotocol" in f for f in frames):
        worker = any("WorkerInteractor" in f or "xdist/remote.py" in f for f in frames)
        return (IDLE_BETWEEN_ITEMS if worker else "controller, collection, session"), waiting
    if TIMER_LINE.search(leaf_line) and ORACLE_FRAME.search(frames[-1]):
        return "a timer the oracle waits out (time.sleep)", True
    for index in range(len(frames) - 1, -1, -1):
        frame = frames[index]
        for bucket, pattern in BUCKETS:
            if not pattern.search(frame):
                continue
            if bucket == "request to the candidate":
                callers = [f.split(" (")[0] for f in frames[:index] if not re.search(r"requests/|pluggy/|_pytest/|\(api\.py:", f)]
                if callers and ACCOUNT_HELPER.search(callers[-1]):
                    return "request to the candidate: accounts (register, log in: password hashing)", waiting
            return bucket, waiting
    return OTHER, waiting


def task_of(frames: list[str]) -> str | None:
    """The task whose oracle module or conftest.py runs in this stack (None: a phase item, the harness)."""
    for frame in frames:
        if frame in _FRAME_TASKS:
            if _FRAME_TASKS[frame] is not None:
                return _FRAME_TASKS[frame]
            continue
        match = FRAME.match(frame)
        task = None
        if match is not None and ORACLE_FRAME.search(frame):
            found = source_file(match.group("file"), match.group("function"))
            if found is not None and found.is_relative_to(ROOT / "oracles"):
                task = found.relative_to(ROOT / "oracles").parts[0]
        _FRAME_TASKS[frame] = task
        if task is not None:
            return task
    return None


_FRAME_TASKS: dict[str, str | None] = {}
CANDIDATE_BUCKETS = ("request to the candidate", "browser (Gherkin)")
HARNESS_WAIT_BUCKETS = ("statement log", "boot", "waiting for a service slot", "build")


def task_split(stacks: list[tuple[list[str], int, str]]) -> dict[str, Counter[str]]:
    """task -> samples of its oracle items: waiting on the candidate, oracle timers, harness CPU, harness waits."""
    split: dict[str, Counter[str]] = defaultdict(Counter)
    for frames, count, _process in stacks:
        bucket, waiting = classify(frames)
        if bucket in (IDLE_BETWEEN_ITEMS, "controller, collection, session"):
            continue
        task = task_of(frames)
        if task is None:
            continue
        if bucket.startswith("a timer"):
            part = "timers"
        elif not waiting:
            part = "harness CPU"
        elif bucket.startswith(CANDIDATE_BUCKETS):
            part = "candidate"
        elif bucket.startswith(HARNESS_WAIT_BUCKETS):
            part = "harness waits"
        else:
            part = "other waits"
        split[task][part] += count
    return dict(split)


def stack_shares(stacks: list[tuple[list[str], int, str]]) -> dict[str, dict[str, int]]:
    """bucket -> {"cpu": samples, "wait": samples} over the workers' (and controller's) main threads."""
    shares: dict[str, dict[str, int]] = defaultdict(lambda: {"cpu": 0, "wait": 0})
    for frames, count, _process in stacks:
        bucket, waiting = classify(frames)
        shares[bucket]["wait" if waiting else "cpu"] += count
    return dict(shares)


def print_report(out: Path) -> None:
    """Print the figures, the task table, the scheduling and the buckets of a run folder."""
    figures = json.loads((out / "figures.json").read_text()) if (out / "figures.json").is_file() else {}
    report = json.loads((out / "report" / "report.json").read_text())
    rows = task_table(report)
    if figures:
        cpu = f"{figures['cpu_user_s'] + figures['cpu_system_s']:.1f} s" if figures.get("cpu_user_s") is not None else "(not recorded)"
        print(f"main job: {figures['wall_s']} s wall, {cpu} CPU of the harness's Python processes "
              f"(py-spy {'sampling, its CPU included' if figures.get('stacks') else 'not used'}), "
              f"exit {figures['exit_code']}, load average at the end {figures['load_average'][0]:.1f}, "
              f"engine execs in its containers {figures.get('engine_execs', 'not counted')}")
        if figures.get("cpu_by_kind"):
            print()
            print("who used the machine's cores meanwhile (bench/cpu_by_kind.py):")
            print("\n".join(render_cpu(figures["cpu_by_kind"])))
            print()
    items = sum(r["items"] for r in rows)
    print(f"{len(rows)} tasks, {items} oracle items, {sum(r['total_s'] for r in rows):.1f} s of item time on the workers")
    print()
    print("| task | PostgreSQL | build s | boot s | of which candidate ready s | items | requests | item s | task total s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        cached = " (cached)" if r["build_cached"] else ""
        print(f"| {r['task']} | {'yes' if r['database'] else ''} | {r['build_s']:.1f}{cached} | {r['boot_s']:.1f} | {r['ready_s']:.1f} | {r['items']} | "
              f"{r['requests']} | {r['item_s']:.1f} | {r['total_s']:.1f} |")
    for with_db in (True, False):
        group = [r for r in rows if r["database"] is with_db]
        if group:
            rest = sum(r["boot_s"] - r["ready_s"] for r in group) / len(group)
            print(f"boot less the candidate's readiness (network, relay, mocks{', PostgreSQL' if with_db else ''}), mean of "
                  f"{len(group)} tasks {'with' if with_db else 'without'} PostgreSQL: {rest:.1f} s")
    totals = [r["total_s"] for r in rows]
    by_items = [r["total_s"] for r in sorted(rows, key=lambda r: -r["items"])]
    longest = max(totals) if totals else 0.0
    print()
    workers = figures.get("workers", 2)
    print(f"scheduling on {workers} workers (list scheduling of whole tasks, from these durations): "
          f"most items first (xdist's order) {list_schedule(by_items, workers):.1f} s, longest first {list_schedule(sorted(totals, reverse=True), workers):.1f} s, "
          f"floor max(total/{workers}, longest task) {max(sum(totals) / workers, longest):.1f} s")
    stacks_path = out / "stacks.txt"
    if not stacks_path.is_file():
        return
    stacks = read_stacks(stacks_path)
    shares = stack_shares(stacks)
    total = sum(v["cpu"] + v["wait"] for v in shares.values()) or 1
    in_items = {k: v for k, v in shares.items() if k not in (IDLE_BETWEEN_ITEMS, "controller, collection, session")}
    item_total = sum(v["cpu"] + v["wait"] for v in in_items.values()) or 1
    print()
    print(f"main threads of the pytest processes, sampled at {RATE}/s with py-spy ({total} samples; shares of the samples inside items: {item_total})")
    print()
    print("| bucket | share of item time | harness CPU | waiting |")
    print("|---|---|---|---|")
    for bucket, value in sorted(in_items.items(), key=lambda kv: -(kv[1]["cpu"] + kv[1]["wait"])):
        print(f"| {bucket} | {(value['cpu'] + value['wait']) / item_total:.1%} | {value['cpu'] / item_total:.1%} | {value['wait'] / item_total:.1%} |")
    busy = sum(v["cpu"] for v in in_items.values())
    print(f"| **all items** | 100% | {busy / item_total:.1%} | {1 - busy / item_total:.1%} |")
    print()
    print("per task, its oracle items' samples (phase items and unattributed stacks left out):")
    print()
    print("| task | item s (sampled) | waiting on the candidate | oracle timers | harness CPU | harness waits (statement log, engine) | other waits |")
    print("|---|---|---|---|---|---|---|")
    split = task_split(stacks)
    for task, parts in sorted(split.items(), key=lambda kv: -sum(kv[1].values())):
        whole = sum(parts.values()) or 1
        cells = " | ".join(f"{parts[p] / whole:.0%}" for p in ("candidate", "timers", "harness CPU", "harness waits", "other waits"))
        print(f"| {task} | {whole / RATE:.1f} | {cells} |")
    print()
    for bucket in (IDLE_BETWEEN_ITEMS, "controller, collection, session"):
        if bucket in shares:
            value = shares[bucket]
            print(f"outside items, {bucket}: {(value['cpu'] + value['wait']) / RATE:.1f} s sampled")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/backendbench-main-job-profile"), help="folder for the run's report, log and stacks")
    parser.add_argument("--analyse", type=Path, help="print from this earlier run folder instead of running")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runtime", default="auto")
    parser.add_argument("--no-stacks", action="store_true", help="run without py-spy (wall and CPU seconds only)")
    parser.add_argument("--root", type=Path, help="with --analyse: the checkout whose oracles ran (py-spy's line numbers are its files')")
    parser.add_argument("--task", action="append", dest="tasks", help="only this task (repeatable): a quicker comparison")
    args = parser.parse_args()
    if args.analyse is not None:
        global ROOT
        ROOT = (args.root or ROOT).resolve()
        print_report(args.analyse)
        return
    run_job(args.out, args.workers, not args.no_stacks, args.runtime, args.tasks)
    print_report(args.out)


if __name__ == "__main__":
    main()
