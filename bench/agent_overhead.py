"""Agent sandbox: start time (cold/warm) and the harness's overhead per agent step.

Per-step overhead is a command's round trip through ``Sandbox.run`` minus the command's own
time, next to the same command through a plain ``docker exec`` (the SDK's ``exec_run`` and the
``docker exec`` CLI) against the same container in the same run. The command's own time is
measured inside the container (the median of ``bash -lc true`` timed by ``date`` around it), so
what remains is what the harness adds. Cold start is the first sandbox of a fresh process (engine
connection, image lookup); warm starts are the following ones. Targets (issue 13): warm start
at most 1 s, overhead at most 50 ms per step. Prints figures, asserts nothing.

    python bench/agent_overhead.py [--steps 100] [--starts 5] [--network bridge|none] [--image IMAGE]

Needs a docker engine and the offline base image (BACKENDBENCH_BASE_IMAGE, default
backendbench/python:3.11); without --image the default agent image is built on first use
(apt inside the build, a minute or two, once). Everything it creates is labelled with a
``bench-agent-*`` session id and removed at the end.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pytest_backendbench.agents.sandbox import DockerSandbox, SandboxLimits, SandboxSpec, open_sandbox
from pytest_backendbench.runtime.base_image import DEFAULT_TAG
from pytest_backendbench.runtime.cleanup import remove_session_objects
from pytest_backendbench.runtime.docker import docker_available
from pytest_backendbench.tasks import TaskCatalog, VisibleTask

STEP = "true"


def visible_task() -> VisibleTask:
    for root in (REPO, REPO / "tests" / "data" / "bench"):
        catalog = TaskCatalog(root)
        if catalog.task_ids():
            return catalog.load(catalog.task_ids()[0]).visible
    raise SystemExit("no task found under benchmarks/ or tests/data/bench/benchmarks/")


def timed(call: Callable[[], object], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return samples


def ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"median {statistics.median(samples) * 1000:7.1f} ms   p95 {p95 * 1000:7.1f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100, help="commands per method (default 100)")
    parser.add_argument("--starts", type=int, default=5, help="warm sandbox starts (default 5)")
    parser.add_argument("--network", default="bridge", choices=("bridge", "none"))
    parser.add_argument("--image", default=None, help="sandbox image (default: the default agent image)")
    args = parser.parse_args()
    reason = docker_available()
    if reason is not None:
        print(f"skipped: {reason}")
        return 1
    task = visible_task()
    session = f"bench-agent-{secrets.token_hex(4)}"
    limits = SandboxLimits(memory="1g", disk="256m")

    def spec(key: str) -> SandboxSpec:
        return SandboxSpec(
            task=task, key=key, session_id=session, image=args.image, network=args.network, limits=limits,
            base_image=os.environ.get("BACKENDBENCH_BASE_IMAGE") or DEFAULT_TAG,
        )

    try:
        # The default image is built (once per machine) before timing: a build is not a start.
        started = time.perf_counter()
        first = open_sandbox(spec("cold"), "docker")
        cold = time.perf_counter() - started
        first.close()
        warm_starts, closes = [], []
        for k in range(args.starts):
            started = time.perf_counter()
            box = open_sandbox(spec(f"warm-{k}"), "docker")
            warm_starts.append(time.perf_counter() - started)
            started = time.perf_counter()
            box.close()
            closes.append(time.perf_counter() - started)

        with open_sandbox(spec("steps"), "docker") as box:
            if not isinstance(box, DockerSandbox):
                raise SystemExit("expected a docker sandbox")
            container = box.container
            loop = box.run(
                f"for i in $(seq {args.steps}); do s=$(date +%s%N); bash -lc {STEP}; e=$(date +%s%N); echo $((e - s)); done",
                timeout_s=600,
            )
            own = statistics.median(int(line) for line in loop.output.split()) / 1e9
            for _ in range(5):  # warm-up of every path
                box.run(STEP)
                container.exec_run(["bash", "-lc", STEP])
            sandbox_rtt = timed(lambda: box.run(STEP), args.steps)
            sdk_rtt = timed(lambda: container.exec_run(["bash", "-lc", STEP]), args.steps)
            cli = shutil.which("docker")
            cli_rtt = (
                timed(lambda: subprocess.run([cli, "exec", container.id, "bash", "-lc", STEP], check=True, capture_output=True), args.steps)
                if cli
                else []
            )
            megabyte = "head -c 1000000 /dev/zero | tr '\\0' x"
            big_sandbox = timed(lambda: box.run(megabyte), 20)
            big_sdk = timed(lambda: container.exec_run(["bash", "-lc", megabyte]), 20)
            image = box.image
    finally:
        remove_session_objects(None, session)

    sandbox_over = statistics.median(sandbox_rtt) - own
    sdk_over = statistics.median(sdk_rtt) - own
    print(f"agent sandbox overhead: image {image}, network {args.network}, {args.steps} steps of `bash -lc {STEP}`")
    print(f"  sandbox start, cold (first in process)  {cold * 1000:7.1f} ms")
    print(f"  sandbox start, warm ({args.starts} runs)           {ms(warm_starts)}   (target <= 1000 ms)")
    print(f"  sandbox close                           {ms(closes)}")
    print(f"  command's own time (inside container)   {own * 1000:7.1f} ms")
    print(f"  Sandbox.run round trip                  {ms(sandbox_rtt)}   overhead {sandbox_over * 1000:6.1f} ms (target <= 50 ms)")
    print(f"  SDK exec_run round trip                 {ms(sdk_rtt)}   overhead {sdk_over * 1000:6.1f} ms")
    if cli_rtt:
        cli_over = statistics.median(cli_rtt) - own
        print(f"  docker exec CLI round trip              {ms(cli_rtt)}   overhead {cli_over * 1000:6.1f} ms")
    print(f"  1 MB of output: Sandbox.run {ms(big_sandbox)}; exec_run {ms(big_sdk)}")
    print(f"  ratio exec_run / Sandbox.run round trip: {statistics.median(sdk_rtt) / statistics.median(sandbox_rtt):.1f}x")
    if cli_rtt:
        print(f"  ratio docker exec CLI / Sandbox.run round trip: {statistics.median(cli_rtt) / statistics.median(sandbox_rtt):.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
