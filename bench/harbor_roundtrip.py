"""Harbor round trip: bundled tasks exported as Harbor tasks and run by Harbor's own ``harbor run``.

Harbor (PyPI ``harbor``) needs Python >= 3.12 and this machine's Debian has 3.11, so Harbor runs
from an image made here with the reachable registries only:

1. ``backendbench/python:3.13-trixie``: Debian trixie (Python 3.13) bootstrapped with debootstrap
   and ``docker import``\\ ed, the way ``.ci/docker-setup.sh`` makes the offline bookworm image
   (``python -m pytest_backendbench.runtime.base_image --suite trixie``);
2. ``backendbench/harbor:<version>``: that image with Debian's docker CLI and compose plugin and
   ``pip install harbor==<version>``.

Each task is exported twice (``backendbench export harbor``): with its reference as the
solution, and with its first mutant (``oracles/<task>/mutants.yaml``) as the solution. Harbor's
``oracle`` agent runs ``solution/solve.sh``, its verifier ``tests/test.sh`` (this harness's
hidden oracle against the service, process runtime), all in Harbor's local Docker environment:
the Harbor container talks to this machine's engine through its socket, with the job folder at
the same path inside and out (Harbor bind-mounts the trial's log folders). The reference must
score reward 1.0, the mutant less.

Prints per task and solution the reward, the named figures and the seconds; ``--out`` keeps
them as JSON. Exit 0 when every reference scored 1.0 and every mutant less.

    python bench/harbor_roundtrip.py                                  # url-shortener, notifications (a mock), library-loans (PostgreSQL)
    python bench/harbor_roundtrip.py --tasks url-shortener --no-mutants

An imported BaxBench task (its own Dockerfile is the environment; the verifier runs its entry
point as a local process of Harbor's container) comes from the bench root it was imported into:

    backendbench import baxbench --out /tmp/bax --framework Python-Flask <baxbench checkout>
    python bench/harbor_roundtrip.py --bench-root /tmp/bax --tasks baxbench-calculator-python-flask
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pytest_backendbench.cli.validate import load_mutants, materialize_mutant
from pytest_backendbench.formats.harbor_export import export_harbor_task
from pytest_backendbench.tasks import TaskCatalog

HARBOR_VERSION = "0.26.0"
TRIXIE_IMAGE = "backendbench/python:3.13-trixie"
HARBOR_IMAGE = f"backendbench/harbor:{HARBOR_VERSION}"
TASK_BASE_IMAGE = "backendbench/python:3.11"  # the offline bookworm image: the exported tasks' FROM
HARBOR_DOCKERFILE = f"""FROM {TRIXIE_IMAGE}
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends docker-cli docker-compose git \\
    && rm -rf /var/lib/apt/lists/*
RUN pip install --no-cache-dir harbor=={HARBOR_VERSION}
"""
DEFAULT_TASKS = ("url-shortener", "notifications", "library-loans")


def image_exists(tag: str) -> bool:
    return subprocess.run(["docker", "image", "inspect", tag], capture_output=True, check=False).returncode == 0


def ensure_harbor_image() -> None:
    """The trixie base (debootstrap) and Harbor on top of it, each built once."""
    if not image_exists(TRIXIE_IMAGE):
        print(f"building {TRIXIE_IMAGE} (debootstrap trixie, a few minutes)", flush=True)
        subprocess.run([sys.executable, "-m", "pytest_backendbench.runtime.base_image", "--suite", "trixie", "--tag", TRIXIE_IMAGE], check=True)
    if not image_exists(HARBOR_IMAGE):
        print(f"building {HARBOR_IMAGE} (pip install harbor=={HARBOR_VERSION})", flush=True)
        with tempfile.TemporaryDirectory() as context:
            (Path(context) / "Dockerfile").write_text(HARBOR_DOCKERFILE)
            subprocess.run(["docker", "build", "-q", "-t", HARBOR_IMAGE, context], check=True)


def harbor(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the harbor CLI in its image: the engine's socket mounted, ``work`` at the same path inside and out."""
    command = ["docker", "run", "--rm", "--network", "host", "-v", "/var/run/docker.sock:/var/run/docker.sock",
               "-v", f"{work}:{work}", "-w", str(work), HARBOR_IMAGE, "harbor", *args]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def trial_results(jobs: Path) -> list[dict[str, Any]]:
    """Every trial's result.json under a jobs folder."""
    return [json.loads(p.read_text()) for p in sorted(jobs.rglob("result.json")) if "trial_name" in p.read_text()[:20000]]


def run_one(work: Path, task_dir: Path, label: str) -> dict[str, Any]:
    jobs = work / "jobs" / label
    started = time.monotonic()
    proc = harbor(work, "run", "-p", str(task_dir), "-a", "oracle", "-o", str(jobs), "-n", "1")
    seconds = round(time.monotonic() - started, 1)
    trials = trial_results(jobs)
    if not trials:
        raise RuntimeError(f"harbor run wrote no trial result for {label} (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    trial = trials[0]
    rewards = (trial.get("verifier_result") or {}).get("rewards")
    error = (trial.get("exception_info") or {}).get("exception_message")
    return {"label": label, "rewards": rewards, "error": error, "seconds": seconds, "harbor_exit": proc.returncode}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="*", default=list(DEFAULT_TASKS), help=f"bundled task ids (default: {' '.join(DEFAULT_TASKS)})")
    parser.add_argument("--bench-root", type=Path, default=REPO, help="the bench root holding the tasks (default: this checkout's)")
    parser.add_argument("--no-mutants", action="store_true", help="only the references")
    parser.add_argument("--work", type=Path, default=None, help="keep the exported tasks and Harbor's jobs here (default: a temp folder)")
    parser.add_argument("--out", type=Path, default=None, help="write the results here as JSON")
    args = parser.parse_args(argv)
    ensure_harbor_image()
    version = harbor(Path(tempfile.gettempdir()), "--version")
    print(f"harbor: {version.stdout.strip() or version.stderr.strip()[-200:]} (in {HARBOR_IMAGE})", flush=True)
    work = (args.work or Path(tempfile.mkdtemp(prefix="harbor-roundtrip-"))).resolve()
    catalog = TaskCatalog(args.bench_root)
    results, ok = [], True
    for task_id in args.tasks:
        task = catalog.load(task_id)
        runs = [("reference", None)]
        mutants = [] if args.no_mutants else load_mutants(task)
        if mutants:
            shutil.rmtree(work / "mutants" / task_id, ignore_errors=True)
            runs.append((f"mutant {mutants[0].name}", materialize_mutant(task, mutants[0], work / "mutants" / task_id)))
        for kind, solution in runs:
            label = f"{task_id}-{'reference' if solution is None else 'mutant'}"
            task_dir = export_harbor_task(args.bench_root, task_id, work / "tasks" / label, solution=solution, base_image=TASK_BASE_IMAGE)
            result = {"task": task_id, "solution": kind, **run_one(work, task_dir, label)}
            reward = (result["rewards"] or {}).get("reward")
            good = reward == 1.0 if solution is None else (reward is not None and reward < 1.0)
            ok = ok and good
            figures = ", ".join(f"{k} {v}" for k, v in (result["rewards"] or {}).items() if k != "reward")
            print(f"{'ok ' if good else 'BAD'} {task_id:<16} {kind:<40} reward {reward}  ({figures})  {result['seconds']} s"
                  + (f"  error: {result['error']}" if result["error"] else ""), flush=True)
            results.append(result)
    if args.out is not None:
        args.out.write_text(json.dumps({"harbor": HARBOR_VERSION, "results": results}, indent=2) + "\n")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
