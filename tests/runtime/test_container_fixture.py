"""The ``container`` fixture, ``isolation: item`` and task-supplied images against the real engines.

The probe task (data/probe-bench) supplies its Dockerfile and a build file; its candidate
(candidates/probe) is only app.py. Its oracle items exec, move files both ways, sample stats,
list processes, talk through the localhost forwarder, see that each item meets a fresh
container, watch the candidate kill its own server, and watch it exhaust its memory. The
same items run under rootless Podman (where the relay carries the traffic).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from docker import DockerClient

from pytest_backendbench.candidates import Candidate
from pytest_backendbench.runtime.base import SESSION_LABEL
from pytest_backendbench.runtime.docker import _task_image_hash
from pytest_backendbench.runtime.docker_service import CONTENT_HASH_LABEL
from pytest_backendbench.tasks import TaskCatalog

from ..conftest import read_report
from .conftest import PROBE, PROBE_BENCH

RUN = ("--bench-runtime=docker", "-p", "no:cacheprovider", "--bench-memory=128m", "--bench-task=probe")
ORACLE_ITEMS = 10


def labelled(client: DockerClient, session_id: str) -> tuple[int, int]:
    """Containers and networks of one harness session (other tests may run beside us)."""
    filters = {"label": f"{SESSION_LABEL}={session_id}"}
    return len(client.containers.list(all=True, filters=filters)), len(client.networks.list(filters=filters))


def items_of(report: dict) -> dict[str, dict]:
    return {item["nodeid"].rpartition("::")[2]: item for item in report["tasks"][0]["items"]}


@pytest.mark.docker
@pytest.mark.slow
def test_the_container_fixture_under_docker(pytester: pytest.Pytester, probe_bench: Path, docker_client: DockerClient) -> None:
    result = pytester.runpytest(f"--candidate={probe_bench / 'candidate'}", "--bench-report-dir=out", *RUN)
    report = read_report(probe_bench / "out")
    items = items_of(report)
    failed = {name for name, item in items.items() if item["outcome"] != "passed"}
    assert failed == {"test_a_candidate_that_exhausts_memory"}, result.stdout.str()[-4000:]
    hog = items["test_a_candidate_that_exhausts_memory"]
    assert hog["outcome"] == "failed", "an OOM-killed service is the candidate's failure, not a harness error"
    assert "OOM" in hog["message"] and "96m" in hog["message"], hog["message"]
    # every oracle item met a fresh container and says what booting it cost
    oracle = [item for item in items.values() if item["kind"] == "http"]
    assert len(oracle) == ORACLE_ITEMS
    assert all(isinstance(item["boot_seconds"], float) and item["boot_seconds"] >= 0 for item in oracle)  # ~0 when the pool had it ready
    assert all(item["boot_seconds"] is None for item in items.values() if item["kind"] != "http")
    task = report["tasks"][0]
    assert task["image"].startswith("backendbench/environment:"), "the probe's Dockerfile ends in COPY . /app: one image for every candidate"
    assert labelled(docker_client, report["manifest"]["session_id"]) == (0, 0)


@pytest.mark.docker
@pytest.mark.slow
def test_a_candidates_own_dockerfile_is_ignored_for_a_task_that_supplies_one(
    pytester: pytest.Pytester, probe_bench: Path, docker_client: DockerClient
) -> None:
    candidate = probe_bench / "candidate"
    (candidate / "Dockerfile").write_text("FROM scratch\nCMD [\"/nothing\"]\n")
    pytester.runpytest(f"--candidate={candidate}", "--bench-report-dir=out", "-k", "localhost or exec", *RUN)
    report = read_report(probe_bench / "out")
    assert {item["outcome"] for item in report["tasks"][0]["items"]} == {"passed"}
    assert labelled(docker_client, report["manifest"]["session_id"]) == (0, 0)


@pytest.mark.slow
def test_the_container_fixture_is_a_harness_error_under_the_process_runtime(
    pytester: pytest.Pytester, bench: Path, make_candidate
) -> None:
    (bench / "oracles" / "notes" / "test_inside.py").write_text(
        "import pytest\n\n@pytest.mark.requirement('R1')\n@pytest.mark.category('state')\ndef test_inside(container):\n    container.exec('true')\n"
    )
    candidate = make_candidate("good")
    result = pytester.runpytest(f"--candidate={candidate}", "--bench-runtime=process", "-p", "no:cacheprovider", "-k", "test_inside")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*the 'container' fixture needs a container runtime, and this run uses the process runtime: run with --bench-runtime=docker*"]
    )


@pytest.mark.slow
def test_a_task_that_supplies_its_image_is_a_harness_error_under_the_process_runtime(
    pytester: pytest.Pytester, shared_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BACKENDBENCH_CACHE", str(shared_cache))
    shutil.copytree(PROBE_BENCH, pytester.path, dirs_exist_ok=True)
    shutil.copytree(PROBE, pytester.path / "candidate")
    result = pytester.runpytest(
        f"--candidate={pytester.path / 'candidate'}", "--bench-runtime=process", "-p", "no:cacheprovider", "--bench-task=probe", "-k", "exec"
    )
    result.assert_outcomes(errors=1, deselected=ORACLE_ITEMS + 2)
    result.stdout.fnmatch_lines(["*task probe supplies its own image (Dockerfile in *); the process runtime cannot run it: use --bench-runtime=docker*"])


def wait_until_clean(client: DockerClient, session_id: str, timeout_s: float = 90) -> tuple[int, int]:
    """What is left of a session once its reaper had time to act."""
    deadline = time.monotonic() + timeout_s
    while (left := labelled(client, session_id)) != (0, 0) and time.monotonic() < deadline:
        time.sleep(0.5)
    return left


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill-9"])
def test_stopping_a_run_during_per_item_containers_leaves_nothing(
    pytester: pytest.Pytester, probe_bench: Path, docker_client: DockerClient, signum: signal.Signals
) -> None:
    candidate = probe_bench / "candidate"
    # a candidate of its own, so its containers are told apart from a parallel run's by its content-hash label
    (candidate / "app.py").write_text((candidate / "app.py").read_text() + f"\n# {signum.name}\n")
    content_hash = _task_image_hash(Candidate("probe", candidate), TaskCatalog(probe_bench).load("probe"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", f"--candidate={probe_bench / 'candidate'}", "--bench-report-dir=out", *RUN, "-k", "isolation or localhost or exec"],
        cwd=probe_bench, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=dict(os.environ),
    )
    deadline = time.monotonic() + 180
    seen: dict[str, str] = {}  # container id -> session id
    # stop the run once it is on its second per-item container
    while time.monotonic() < deadline and len(seen) < 2 and proc.poll() is None:
        services = docker_client.containers.list(all=True, sparse=True, filters={"label": ["io.backendbench.role=service", f"{CONTENT_HASH_LABEL}={content_hash}"]})
        seen.update({c.id: c.attrs["Labels"][SESSION_LABEL] for c in services})
        time.sleep(0.1)
    assert len(seen) >= 2, "the run never reached its second item's container"
    session_id = next(iter(seen.values()))
    proc.send_signal(signum)
    output = proc.communicate(timeout=120)[0].decode()
    if signum == signal.SIGINT:
        assert proc.returncode == int(pytest.ExitCode.INTERRUPTED), output[-3000:]
        if (probe_bench / "out" / "report.json").is_file():  # absent when the shutdown outlived its grace period
            assert read_report(probe_bench / "out")["manifest"]["interrupted"] is True
    assert wait_until_clean(docker_client, session_id) == (0, 0), f"labelled objects left after {signum.name}"

