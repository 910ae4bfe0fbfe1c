"""A fresh machine with Python only: does the README's first command evaluate the whole benchmark?

Runs the first command of README.md (read from the file, not copied here) in a clean container
from the project's offline base image (``backendbench/python:3.11``: Python, no Docker, no
PostgreSQL, no Chromium; PyPI reachable for pip), on a snapshot of this working tree, then
``backendbench doctor`` in the same container. Checks what issue 14 asks: all 9 tasks evaluate,
every item that needs only PostgreSQL passes, and the Gherkin items are harness errors whose
message says how to get a browser. Prints figures (wall times, items per outcome per task, the
SR line, which PostgreSQL and browser served the run) and the doctor's screen; exit 0 when every
check holds.

    python bench/fresh_machine.py [--image backendbench/python:3.11] [--out DIR]

The container carries the label ``io.backendbench.session=fresh-<id>`` and is removed at the end
(``backendbench clean --session fresh-<id>`` if this script is killed).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
EXPECTED_TASKS = 9
BROWSER_HINT = "to get one: apt-get install chromium chromium-driver"


def readme_first_command(readme: Path = ROOT / "README.md") -> str:
    """The first line of README.md's first bash block, without its trailing comment."""
    match = re.search(r"```bash\n(.+?)\n", readme.read_text(encoding="utf-8"))
    if match is None:
        raise SystemExit("README.md has no ```bash block")
    return match.group(1).split("   #")[0].strip()


def snapshot(target: Path) -> None:
    """Copy the tracked and untracked-but-not-ignored files: the tree as a user would get it."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def run_in_container(image: str, source: Path, out: Path, command: str, session: str) -> tuple[int, float]:
    """Install + run the README command, then the doctor; returns docker's exit code and seconds."""
    script = (
        "set -u; cp -a /src /work && cd /work && start=$(date +%s)\n"
        f"( {command} ) > /out/main.log 2>&1; echo $? > /out/main.rc\n"
        "echo $(( $(date +%s) - start )) > /out/main.seconds\n"
        "backendbench doctor > /out/doctor.txt 2>&1; echo $? > /out/doctor.rc\n"
        "cp -r backendbench-report /out/ 2>/dev/null; true\n"
    )
    argv = [
        "docker", "run", "--rm", "--name", session, "--label", f"io.backendbench.session={session}",
        "-v", f"{source}:/src:ro", "-v", f"{out}:/out", "--shm-size=256m",
    ]
    if CA_BUNDLE.is_file():  # this machine reaches PyPI through a proxy whose CA is in the bundle
        argv += ["-v", f"{CA_BUNDLE}:{CA_BUNDLE}:ro", "-e", f"PIP_CERT={CA_BUNDLE}", "-e", f"REQUESTS_CA_BUNDLE={CA_BUNDLE}"]
    argv += [image, "sh", "-c", script]
    started = time.monotonic()
    proc = subprocess.run(argv, check=False)
    return proc.returncode, time.monotonic() - started


def check(report: dict[str, Any]) -> list[str]:
    """The issue's conditions, as a list of violations (empty: all hold)."""
    problems: list[str] = []
    tasks = report["tasks"]
    if len({t["task"] for t in tasks}) != EXPECTED_TASKS:
        problems.append(f"{len(tasks)} tasks evaluated, expected {EXPECTED_TASKS}")
    for task in tasks:
        for item in task["items"]:
            if item["kind"] == "bdd":
                if item["outcome"] == "error" and BROWSER_HINT not in item["message"]:
                    problems.append(f"{item['nodeid']}: error without the browser hint: {item['message'][:200]}")
                elif item["outcome"] == "failed":
                    problems.append(f"{item['nodeid']}: Gherkin item failed (expected a pass or a harness error)")
            elif item["outcome"] != "passed":
                problems.append(f"{item['nodeid']}: {item['outcome']}: {item['message'][:200]}")
    return problems


def main() -> int:
    """Run, check, print figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", default=os.environ.get("BACKENDBENCH_BASE_IMAGE", "backendbench/python:3.11"))
    parser.add_argument("--out", help="where logs and the report go (default: a temp folder, kept)")
    args = parser.parse_args()
    session = f"fresh-{secrets.token_hex(4)}"
    out = Path(args.out or tempfile.mkdtemp(prefix="backendbench-fresh-")).resolve()
    out.mkdir(parents=True, exist_ok=True)
    command = readme_first_command()
    print(f"image {args.image}; session {session}; output in {out}")
    print(f"README's first command: {command}")
    with tempfile.TemporaryDirectory(prefix="backendbench-src-") as source:
        snapshot(Path(source))
        rc, seconds = run_in_container(args.image, Path(source), out, command, session)
    if rc != 0:
        print(f"the container exited {rc}", file=sys.stderr)
    main_rc = (out / "main.rc").read_text().strip() if (out / "main.rc").is_file() else "?"
    main_s = (out / "main.seconds").read_text().strip() if (out / "main.seconds").is_file() else "?"
    print(f"container wall time {seconds:.0f} s; the README command (pip install + run) {main_s} s, exit {main_rc}")
    log = (out / "main.log").read_text(errors="replace") if (out / "main.log").is_file() else ""
    for line in log.splitlines():
        if line.startswith(("backendbench", "SR ", "tasks ", "items passed", "=====")) and "warning" not in line.lower():
            print(f"  | {line}")
    print("backendbench doctor in the container (exit " + ((out / "doctor.rc").read_text().strip() if (out / "doctor.rc").is_file() else "?") + "):")
    print((out / "doctor.txt").read_text() if (out / "doctor.txt").is_file() else "(no output)")
    report_path = out / "backendbench-report" / "report.json"
    if not report_path.is_file():
        print(f"no report: see {out / 'main.log'}", file=sys.stderr)
        return 1
    report = json.loads(report_path.read_text())
    print(f"engines: {json.dumps(report['manifest'].get('engines', {}))}")
    print(f"{'task':<20} {'http/db passed':>14} {'bdd passed':>10} {'bdd errors':>10} {'other':>6}")
    for task in sorted(report["tasks"], key=lambda t: t["task"]):
        items = task["items"]
        http_ok = sum(1 for i in items if i["kind"] != "bdd" and i["outcome"] == "passed")
        bdd_ok = sum(1 for i in items if i["kind"] == "bdd" and i["outcome"] == "passed")
        bdd_err = sum(1 for i in items if i["kind"] == "bdd" and i["outcome"] == "error")
        other = len(items) - http_ok - bdd_ok - bdd_err
        print(f"{task['task']:<20} {http_ok:>14} {bdd_ok:>10} {bdd_err:>10} {other:>6}")
    from pytest_backendbench.report.tables import sr_line

    print(sr_line(report["summary"]))
    example = next((i["message"] for t in report["tasks"] for i in t["items"] if i["kind"] == "bdd" and i["outcome"] == "error"), "")
    if example:
        print("a Gherkin item's error: " + example.strip().splitlines()[0][:400])
    problems = check(report)
    for problem in problems[:20]:
        print(f"PROBLEM {problem}")
    print("FRESH MACHINE: OK" if not problems else f"FRESH MACHINE: {len(problems)} problems")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
