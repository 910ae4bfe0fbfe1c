"""Cold versus warm: build + boot + first healthy answer, with and without the image cache.

Cold: the candidate's cached image is removed first, so its own layers (dependencies included)
are rebuilt; only the base image is reused. Warm: the cached image is reused and only the
containers start. Prints figures, asserts nothing.

    python bench/docker_cold_warm.py [--candidate DIR --task ID] [--warm-runs 3]

Defaults to oracles/taskboard/reference when it exists, else the runtime tests' stdlib
candidate. Needs a docker engine and the base image (BACKENDBENCH_BASE_IMAGE, default
backendbench/python:3.11), which stands in for python:3.12-slim.
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

import requests

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pytest_backendbench.candidates import Candidate
from pytest_backendbench.runtime.base import RuntimeOptions, load_mock
from pytest_backendbench.runtime.base_image import DEFAULT_TAG
from pytest_backendbench.runtime.docker import DockerRuntime, docker_available
from pytest_backendbench.tasks import HealthCheck, Task, TaskCatalog


def pick(candidate: str | None, task_id: str | None) -> tuple[Candidate, Task]:
    catalog = TaskCatalog(REPO)
    if candidate:
        task = catalog.load(task_id or Path(candidate).name)
        return Candidate(task.id, Path(candidate).resolve()), task
    if (REPO / "oracles/taskboard/reference/Dockerfile").is_file():
        task = catalog.load("taskboard")
        return Candidate(task.id, task.reference_dir), task
    stdlib = REPO / "tests/runtime/candidates/stdlib"
    task = Task(
        id="bench-stdlib",
        title="stdlib candidate",
        kind="backend",
        domains=(),
        port=8000,
        health=HealthCheck("/health", 60),
        database="none",
        mocks=(),
        env={},
        requirements={},
        benchmark_dir=stdlib,
        oracle_dir=stdlib,
    )
    return Candidate(task.id, stdlib), task


def first_answer(url: str, deadline_s: float = 30) -> None:
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            if requests.get(url, timeout=2).status_code < 500:
                return
        except requests.RequestException:
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"no answer from {url} within {deadline_s}s")
        time.sleep(0.05)


def once(runtime: DockerRuntime, candidate: Candidate, task: Task) -> dict[str, float | bool]:
    mocks = [load_mock(REPO / "mocks", name) for name in task.mocks]
    started = time.perf_counter()
    image = runtime.build(candidate, task)
    built = time.perf_counter()
    service = runtime.start(image, task, mocks)
    try:
        first_answer(service.base_url + (task.primary_route or "/"))
        answered = time.perf_counter()
    finally:
        service.stop()
    return {"cached": image.cached, "build": built - started, "boot": answered - built, "total": answered - started}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidate", help="candidate folder (default: the taskboard reference, else a stdlib candidate)")
    parser.add_argument("--task", help="task id of --candidate (default: the folder name)")
    parser.add_argument("--warm-runs", type=int, default=3)
    args = parser.parse_args()

    reason = docker_available()
    if reason:
        print(f"skipped: {reason}")
        return 0
    base = os.environ.get("BACKENDBENCH_BASE_IMAGE") or DEFAULT_TAG
    candidate, task = pick(args.candidate, args.task)
    with tempfile.TemporaryDirectory() as cache:
        options = RuntimeOptions(
            session_id=f"bench-{secrets.token_hex(4)}",
            cache_dir=Path(cache),
            mocks_dir=REPO / "mocks",
            image_aliases={"python:3.12-slim": base},
            base_image=base,
        )
        runtime = DockerRuntime(options)
        try:
            tag = f"backendbench/{task.id}:{candidate.content_hash()[:16]}"
            if runtime.image_id(tag) is not None:
                runtime.client.images.remove(tag, force=True)  # untagged parent layers go with it
            cold = once(runtime, candidate, task)
            warm = [once(runtime, candidate, task) for _ in range(max(1, args.warm_runs))]
        finally:
            runtime.close()

    def median(key: str) -> float:
        return statistics.median(float(run[key]) for run in warm)

    print(f"candidate: {candidate.path.relative_to(REPO) if candidate.path.is_relative_to(REPO) else candidate.path} (task {task.id}); base image {base}")
    print(f"{'':6} {'build s':>8} {'boot+answer s':>14} {'total s':>8}")
    print(f"{'cold':6} {cold['build']:8.2f} {cold['boot']:14.2f} {cold['total']:8.2f}")
    print(f"{'warm':6} {median('build'):8.2f} {median('boot'):14.2f} {median('total'):8.2f}   (median of {len(warm)}, all cached: {all(r['cached'] for r in warm)})")
    print(f"cold/warm ratio: {float(cold['total']) / median('total'):.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
