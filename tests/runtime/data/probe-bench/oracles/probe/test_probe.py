"""Oracle items of the probe task: each exercises one part of the ``container`` fixture.

Run by tests/runtime/test_container_fixture.py under Docker and rootless Podman; every item
meets a fresh container (``isolation: item``), which the counter items check.
"""

import time

import pytest
import requests

from pytest_backendbench.errors import ServiceCrashed
from pytest_backendbench.runtime.container_access import ExecTimeout

pytestmark = [pytest.mark.requirement("R1"), pytest.mark.category("state")]

def test_exec_returns_exit_code_and_output(container):
    result = container.exec(["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert result.exit_code == 3
    assert sorted(result.text.splitlines()) == ["err", "out"]  # two streams: their interleaving is not fixed
    assert isinstance(result.output, bytes)
    assert container.exec("id -u", user="nobody").text.strip() == "65534"
    assert container.exec(["pwd"], workdir="/tmp").text.strip() == "/tmp"
    assert container.exec("cat /app/started.txt").text.strip() == "probe-secret"
    started = time.monotonic()
    with pytest.raises(ExecTimeout, match="did not finish within 1s; it was killed"):
        container.exec("sleep 60 & sleep 61", timeout=1)
    assert time.monotonic() - started < 30
    assert not any("sleep 6" in p.command for p in container.processes()), "the timed-out command and its children were killed"


def test_files_both_ways(container):
    data = bytes(range(256)) * 64
    container.put_file("/tmp/deep/er/blob.bin", data, mode=0o600)
    assert container.get_file("/tmp/deep/er/blob.bin") == data
    assert container.exec("stat -c %a /tmp/deep/er/blob.bin").text.strip() == "600"
    assert container.exec("sha256sum /tmp/deep/er/blob.bin").exit_code == 0
    assert container.get_file("/app/started.txt") == b"probe-secret\n"
    with pytest.raises(FileNotFoundError):
        container.get_file("/nowhere/at/all.txt")
    with pytest.raises(IsADirectoryError):
        container.get_file("/app")
    assert container.exec("ln -s ../app/started.txt /tmp/link").exit_code == 0
    assert container.get_file("/tmp/link") == b"probe-secret\n"


def test_stats(container):
    stats = container.stats()
    assert 0 < stats.memory_bytes < stats.memory_limit_bytes
    assert stats.pids >= 1
    assert stats.cpu_percent >= 0.0


def test_processes(container, service):
    commands = [p.command for p in container.processes()]
    assert any("app.py" in c for c in commands), commands
    assert all(p.pid > 0 for p in container.processes())
    assert container.alive() and service.alive()
    assert container.id and container.engine.containers.get(container.id).status == "running"


def test_memory_limit_is_the_tasks(container):
    assert container.stats().memory_limit_bytes == 96 * 1024 * 1024


def test_localhost_forwarder(container, http):
    assert container.localhost_url == f"http://localhost:{container.localhost_port}"
    assert requests.get(container.localhost_url + "/health", timeout=10).json() == {"status": "ok"}
    with requests.Session() as session:  # one kept-alive connection, several requests
        hits = [session.get(f"http://127.0.0.1:{container.localhost_port}/counter", timeout=10).json()["hits"] for _ in range(3)]
    assert hits == [1, 2, 3]
    assert http.get("/counter").json() == {"hits": 4}


@pytest.mark.parametrize("round", [1, 2])
def test_isolation_each_item_meets_a_fresh_container(container, http, round):
    assert http.get("/counter").json() == {"hits": 1}
    assert container.get_file("/tmp/probe-state.txt") == b"hit\n"
    container.put_file("/tmp/left-by-an-earlier-item", b"x")
    assert container.exec("ls /tmp").text.split().count("left-by-an-earlier-item") == 1


def test_a_candidate_that_kills_its_own_server(container, http):
    assert any("app.py" in p.command for p in container.processes())
    http.get("/kill")
    deadline = time.monotonic() + 20
    while container.alive() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not container.alive()
    assert not any("app.py" in p.command for p in container.processes())
    assert container.get_file("/app/started.txt") == b"probe-secret\n", "a stopped container's files stay readable"
    with pytest.raises(ServiceCrashed, match="the candidate's container has stopped"):
        container.exec("true")


def test_a_candidate_that_exhausts_memory(container, http, service, record_property):
    before = container.stats().memory_bytes
    assert http.get("/hog").status_code == 200
    samples = [before]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if not container.alive():
            break
        try:
            samples.append(container.stats().memory_bytes)
        except Exception:  # noqa: BLE001 - the container may die between the check and the sample
            break
    record_property("memory_samples", samples)
    assert max(samples) > before + 16 * 1024 * 1024, samples
    # the service is gone: this request fails, and that is the candidate's failure
    requests.get(service.base_url + "/health", timeout=10)
