"""The docker runtime through the plugin: a full run, the build cache, and no leaks after
a normal run, a crashing candidate, and SIGINT during boot and during items."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from docker import DockerClient

from pytest_backendbench.candidates import hash_tree
from pytest_backendbench.runtime.base import SESSION_LABEL

from ..conftest import read_report

pytestmark = [pytest.mark.docker, pytest.mark.slow]

RUN = ("--bench-runtime=docker", "-p", "no:cacheprovider", "--bench-memory=128m")

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def labelled(client: DockerClient, session_id: str) -> tuple[int, int, int]:
    """Containers, networks and volumes of one harness session (other tests may run beside us)."""
    filters = {"label": f"{SESSION_LABEL}={session_id}"}
    return (
        len(client.containers.list(all=True, filters=filters)),
        len(client.networks.list(filters=filters)),
        len(client.volumes.list(filters=filters)),
    )


@pytest.fixture
def engine(docker_client: DockerClient, base_image: str, monkeypatch: pytest.MonkeyPatch) -> DockerClient:
    monkeypatch.setenv("BACKENDBENCH_IMAGE_ALIASES", f"python:3.12-slim={base_image}")
    return docker_client


def session_of(report_dir: Path) -> str:
    return str(read_report(report_dir)["manifest"]["session_id"])


def test_reference_passes_under_docker_and_the_second_run_is_cached(
    pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path], engine: DockerClient
) -> None:
    good = make_candidate("good")
    pytester.runpytest(f"--candidate={good}", "--bench-report-dir=first", *RUN).assert_outcomes(passed=7)
    assert labelled(engine, session_of(pytester.path / "first")) == (0, 0, 0)
    pytester.runpytest(f"--candidate={good}", "--bench-report-dir=second", *RUN).assert_outcomes(passed=7)
    second = read_report(pytester.path / "second")
    assert second["tasks"][0]["build_cached"] is True
    assert second["tasks"][0]["image_digest"].startswith("sha256:")
    assert second["manifest"]["runtime"] == "docker"
    assert labelled(engine, second["manifest"]["session_id"]) == (0, 0, 0)


def test_crashing_candidate_leaves_nothing(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path], engine: DockerClient) -> None:
    crashy = make_candidate("crashy", task="notes")
    dockerfile = crashy / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace('CMD ["python", "app.py"]', 'CMD ["python", "app.py", "--crash-after-5"]'))
    pytester.runpytest(f"--candidate={crashy}", "--bench-report-dir=out", *RUN)
    report = read_report(pytester.path / "out")
    assert any("exited with code 3" in i["message"] for i in report["tasks"][0]["items"])
    assert labelled(engine, report["manifest"]["session_id"]) == (0, 0, 0)


def _interrupt_when(pytester: pytest.Pytester, candidate: Path, ready: Callable[[], bool], *extra: str) -> tuple[int, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", f"--candidate={candidate}", "--bench-report-dir=out", *RUN, *extra],
        cwd=pytester.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=dict(os.environ),
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not ready():
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    assert ready(), "the run never reached the point to interrupt"
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    output = proc.communicate(timeout=120)[0].decode()
    return proc.returncode, output


def wait_until_clean(client: DockerClient, session_id: str, timeout_s: float = 90) -> tuple[int, int, int]:
    """What is left of a session once its reaper (runtime/reaper.py) had time to act."""
    deadline = time.monotonic() + timeout_s
    while (left := labelled(client, session_id)) != (0, 0, 0) and time.monotonic() < deadline:
        time.sleep(0.5)
    return left


@pytest.mark.parametrize(("flag", "when"), [("--never-listen", "during boot"), ("--hang", "during items")])
def test_sigint_leaves_no_containers_or_networks(
    pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path], engine: DockerClient, flag: str, when: str
) -> None:
    candidate = make_candidate("stuck", task="notes")
    dockerfile = candidate / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace('CMD ["python", "app.py"]', f'CMD ["python", "app.py", "{flag}"]'))
    image = f"backendbench/notes:{hash_tree(candidate)[:16]}"  # tells our containers from other runs' on this engine
    sessions: set[str] = set()

    def running() -> bool:
        ours = [c for c in engine.containers.list(all=True, sparse=True, filters={"label": SESSION_LABEL}) if c.attrs.get("Image") == image]
        sessions.update(c.attrs["Labels"][SESSION_LABEL] for c in ours)
        return bool(ours)

    code, output = _interrupt_when(pytester, candidate, running, "--bench-boot-timeout=60", "--bench-request-timeout=60")
    assert code == int(pytest.ExitCode.INTERRUPTED), output[-3000:]
    if (pytester.path / "out" / "report.json").is_file():  # absent when the shutdown outlived its grace period
        report = read_report(pytester.path / "out")
        assert report["manifest"]["interrupted"] is True
        sessions = {report["manifest"]["session_id"]}
    for session in sessions:
        assert wait_until_clean(engine, session) == (0, 0, 0), f"leak after SIGINT {when}"
