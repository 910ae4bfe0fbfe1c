"""The docker runtime against rootless Podman's Docker-compatible API (a real engine).

.ci/podman-setup.sh starts `podman system service` as an unprivileged user and loads the
base image; the same runtime code then builds, boots and probes a candidate there, reaching
it through the relay container (Podman's container IPs are not routable from the host).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import docker
import pytest

from ..conftest import read_report

REPO = Path(__file__).resolve().parents[2]
SETUP = REPO / ".ci" / "podman-setup.sh"
RUN = ("-p", "no:cacheprovider", "--bench-runtime=docker")

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="session")
def podman_host() -> str:
    """DOCKER_HOST of a rootless Podman service (started by .ci/podman-setup.sh), or a skip."""
    ci = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
    if (shutil.which("podman") is None or os.geteuid() != 0) and not ci:
        pytest.skip("rootless Podman is not set up here (run bash .ci/podman-setup.sh as root)")
    done = subprocess.run(["bash", str(SETUP)], capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0:
        message = f"podman-setup failed: {done.stderr[-1500:]}"
        pytest.fail(message) if ci else pytest.skip(message)
    return done.stdout.strip().rpartition("DOCKER_HOST=")[2]


def test_a_task_passes_under_rootless_podman_and_nothing_is_left(
    pytester: pytest.Pytester, bench: Path, podman_host: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", podman_host)
    engine = docker.DockerClient(base_url=podman_host, timeout=30)
    assert "podman" in engine.version()["Components"][0]["Name"].lower()
    if engine.info().get("CgroupVersion") == "1":
        # Rootless Podman on cgroups v1 accepts limits and enforces none: refused unless allowed.
        refused = pytester.runpytest(f"--candidate={REPO / 'tests' / 'data' / 'bench' / 'oracles' / 'notes' / 'reference'}", *RUN)
        refused.stdout.fnmatch_lines(["*does not enforce them (rootless Podman on cgroups v1*"])
        monkeypatch.setenv("BACKENDBENCH_ALLOW_UNENFORCED_LIMITS", "1")
    result = pytester.runpytest(f"--candidate={REPO / 'tests' / 'data' / 'bench' / 'oracles' / 'notes' / 'reference'}", "--bench-report-dir=podman", *RUN)
    result.assert_outcomes(passed=7)
    report = read_report(bench / "podman")
    assert set(report["summary"]["sr_by_tier"].values()) == {1.0}
    session = report["manifest"]["session_id"]
    labelled = {"label": f"io.backendbench.session={session}"}
    assert engine.containers.list(all=True, filters=labelled) == []
    assert engine.networks.list(filters=labelled) == []


def test_the_container_fixture_under_rootless_podman(
    pytester: pytest.Pytester, probe_bench: Path, podman_host: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """exec, files both ways, stats, processes, the localhost forwarder (through the relay) and
    per-item isolation, against Podman's Docker-compatible API."""
    monkeypatch.setenv("DOCKER_HOST", podman_host)
    engine = docker.DockerClient(base_url=podman_host, timeout=30)
    selection = "not exhausts_memory and not memory_limit"  # both need enforced limits
    if engine.info().get("CgroupVersion") == "1":
        monkeypatch.setenv("BACKENDBENCH_ALLOW_UNENFORCED_LIMITS", "1")
        selection += " and not test_stats"  # no memory limit to compare the usage with
    result = pytester.runpytest(f"--candidate={probe_bench / 'candidate'}", "--bench-report-dir=podman", "--bench-task=probe", "-k", selection, *RUN)
    report = read_report(probe_bench / "podman")
    items = report["tasks"][0]["items"]
    assert {i["nodeid"].rpartition("::")[2]: i["outcome"] for i in items if i["outcome"] != "passed"} == {}, result.stdout.str()[-3000:]
    assert sum(1 for i in items if i["kind"] == "http") >= 5
    labelled = {"label": f"io.backendbench.session={report['manifest']['session_id']}"}
    assert engine.containers.list(all=True, filters=labelled) == []
    assert engine.networks.list(filters=labelled) == []
