"""Who uses the machine's cores while a command runs: CPU seconds by kind of process.

    python bench/cpu_by_kind.py --out /tmp/cpu.json -- python -m pytest ...

Wall seconds on a two-core machine say little about the harness when the candidates, Chromium,
PostgreSQL and the Docker engine share the same cores: an item that waits on a candidate waits
for a core too. This polls every process twice a second (psutil), keeps the last CPU time seen
of each (pid, start time), and at the end sums them by kind: the harness's own Python processes,
what runs in its containers (candidates, mocks, sidecars, told by their labels), its children (candidates
and PostgreSQL under the process runtime, behave, tools), Chromium, PostgreSQL, the engine.
The machine's busy seconds (/proc/stat) bound it all; what no poll saw (a process shorter than
half a second) is the difference. ``floor_s`` is the candidates' CPU seconds over the cores:
no scheduling of the harness makes the job shorter than that.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import IO, Any

import psutil

POLL_S = 0.5
HARNESS = "harness: pytest controller and workers"
CHILDREN = "children of the harness: process-runtime candidates, their PostgreSQL, tools"
BROWSER = "Chromium and chromedriver (Gherkin scenarios)"
ENGINE = "container engine (dockerd, containerd, shims, runc)"
CONTAINER_ROLES = {"service": "containers: the candidates", "database": "containers: PostgreSQL sidecars", "mock": "containers: mocks"}
OTHER_CONTAINERS = "containers: other (relay, warm pool spares)"
ENGINE_NAMES = ("dockerd", "containerd", "runc", "docker-proxy", "docker-init", "podman", "conmon", "crun", "slirp4netns", "rootlessport")
SERVICE_SIDE = (CHILDREN, CONTAINER_ROLES["service"], CONTAINER_ROLES["database"])
"""What runs the candidate's service and its database: their CPU bounds the job from below."""
CONTAINER_ID = re.compile(r"(?:docker-|/docker/|libpod-)([0-9a-f]{64})")
SESSION_LABEL = "io.backendbench.session"
XDIST_WORKER = "exec(eval(sys.stdin.readline()))"
"""What an xdist worker's command line (``python -c``, started by execnet) holds."""


def _is_pytest(process: psutil.Process) -> bool:
    try:
        command = process.cmdline()
    except (psutil.Error, OSError):
        return False
    # the program or module named pytest, not any path holding the word (the process runtime's
    # candidates run from ~/.cache/pytest-backendbench/venvs)
    return any(Path(part).name in ("pytest", "py.test") or XDIST_WORKER in part for part in command[:4])


class Kinds:
    """Tells the kind of a process of this run; containers are told by their labels (role, session)."""

    def __init__(self, root_pid: int) -> None:
        self.root_pid = root_pid
        self.labels: dict[str, dict[str, str]] = {}

    def container_labels(self, container_id: str) -> dict[str, str]:
        if container_id not in self.labels:
            answer = subprocess.run(["docker", "inspect", "--format", "{{json .Config.Labels}}", container_id], check=False, capture_output=True, text=True)
            self.labels[container_id] = (json.loads(answer.stdout or "null") or {}) if answer.returncode == 0 else {}
        return self.labels[container_id]

    def of(self, process: psutil.Process) -> tuple[str, str | None] | None:
        """(kind, session label or None), or None when the process is not this run's."""
        try:
            name = process.name()
            ancestors = [process, *process.parents()]
        except (psutil.Error, OSError):
            return None
        try:
            cgroup = Path(f"/proc/{process.pid}/cgroup").read_text()
        except OSError:
            return None
        # A container's first process is runc's init until it execs the container's command (same
        # pid): its cgroup, not its name, says whose it is.
        found = CONTAINER_ID.search(cgroup)
        if found is None:
            if name.startswith(ENGINE_NAMES):
                return ENGINE, None
            if any(a.pid == self.root_pid for a in ancestors):
                if "chrom" in name:
                    return BROWSER, None
                return (HARNESS if _is_pytest(process) else CHILDREN), None
            return None
        labels = self.container_labels(found.group(1))
        if SESSION_LABEL not in labels:
            return None
        return CONTAINER_ROLES.get(labels.get("io.backendbench.role", ""), OTHER_CONTAINERS), labels[SESSION_LABEL]


def busy_seconds() -> float:
    """Seconds the machine's cores spent on anything but idling and waiting for I/O, so far."""
    times = psutil.cpu_times()
    return sum(getattr(times, field, 0.0) for field in ("user", "nice", "system", "irq", "softirq", "steal"))


def account(command: list[str], report_dir: Path | None = None, poll_s: float = POLL_S, cwd: Path | None = None, stdout: IO[str] | None = None) -> dict[str, Any]:
    """Run ``command`` to its end and return its wall seconds, exit code and CPU seconds by kind.

    Only this run's processes count: the command's descendants, the engine, and containers
    labelled with the session of ``report_dir``'s report (without one: every backendbench
    container that ran meanwhile).
    """
    before: dict[int, tuple[float, float]] = {}
    for process in psutil.process_iter():
        try:
            times = process.cpu_times()
            before[process.pid] = (process.create_time(), times.user + times.system)
        except (psutil.Error, OSError):
            continue
    busy_before, started = busy_seconds(), time.monotonic()
    child = subprocess.Popen(command, cwd=cwd, stdout=stdout, stderr=subprocess.STDOUT if stdout is not None else None)
    kinds = Kinds(child.pid)
    seen: dict[tuple[int, float], list[Any]] = {}  # (pid, start) -> [kind, session, cpu now, cpu at the start, name]
    while True:
        done = child.poll() is not None
        for process in psutil.process_iter():
            try:
                key = (process.pid, process.create_time())
                times = process.cpu_times()
            except (psutil.Error, OSError):
                continue
            cpu = times.user + times.system
            try:
                name = process.name()
            except (psutil.Error, OSError):
                continue
            if key in seen and seen[key][4] == name:
                seen[key][2] = cpu
                continue
            told = kinds.of(process)  # first seen, or it exec'd another program since: told again
            if told is None:
                seen.pop(key, None)
                continue
            start_cpu = before[process.pid][1] if before.get(process.pid, (None, 0.0))[0] == key[1] else 0.0
            seen[key] = [told[0], told[1], cpu, start_cpu, name]
        if done:
            break
        time.sleep(poll_s)
    wall, busy = time.monotonic() - started, busy_seconds() - busy_before
    session = None
    if report_dir is not None and (report_dir / "report.json").is_file():
        session = json.loads((report_dir / "report.json").read_text()).get("manifest", {}).get("session_id")
    by_kind: Counter[str] = Counter()
    for kind, label, cpu, start_cpu, _name in seen.values():
        if label is None or session is None or label == session:
            by_kind[kind] += max(0.0, cpu - start_cpu)
    cores = psutil.cpu_count() or 1
    return {
        "exit_code": child.returncode,
        "wall_s": round(wall, 1),
        "cores": cores,
        "session": session,
        "machine_busy_cpu_s": round(busy, 1),
        "by_kind": {kind: round(seconds, 1) for kind, seconds in by_kind.most_common()},
        "not_this_run_or_unseen_cpu_s": round(busy - sum(by_kind.values()), 1),
        "floor_s": round(sum(by_kind[k] for k in SERVICE_SIDE) / cores, 1),
    }


def render(figures: dict[str, Any]) -> list[str]:
    """The table of one accounting, busiest kind first."""
    busy = figures["machine_busy_cpu_s"] or 1.0
    capacity = figures["wall_s"] * figures["cores"] or 1.0
    lines = [
        f"wall {figures['wall_s']} s on {figures['cores']} cores: the machine was busy {figures['machine_busy_cpu_s']} CPU-s ({busy / capacity:.0%} of what the cores could give)",
        "",
        "| who | CPU s | share of the busy time |",
        "|---|---|---|",
    ]
    for kind, seconds in figures["by_kind"].items():
        lines.append(f"| {kind} | {seconds} | {seconds / busy:.1%} |")
    rest = figures["not_this_run_or_unseen_cpu_s"]
    lines.append(f"| other work on the machine, and processes no poll saw (shorter than {POLL_S} s) | {rest} | {rest / busy:.1%} |")
    lines += ["", f"the service side's CPU (candidates and their databases) over the cores, a floor no harness goes below: {figures['floor_s']} s"]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the figures here as JSON")
    parser.add_argument("--report-dir", type=Path, help="the run's --bench-report-dir: count only containers of its session")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command to run, after --")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to account after --")
    figures = account(command, args.report_dir)
    if args.out is not None:
        args.out.write_text(json.dumps(figures, indent=2))
    print("\n".join(render(figures)))
    sys.exit(figures["exit_code"])


if __name__ == "__main__":
    main()
