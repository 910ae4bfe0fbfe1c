"""The watchdog that removes a dead run's labelled objects (runtime/reaper.py)."""

from __future__ import annotations

import io
import secrets
import subprocess
import sys
import time

import pytest
from docker import DockerClient

from pytest_backendbench.runtime.base import SESSION_LABEL
from pytest_backendbench.runtime.cleanup import WORKER_LABEL
from pytest_backendbench.runtime.reaper import Reaper, watch


def test_a_clean_close_leaves_without_touching_the_engine() -> None:
    # an engine call would fail here: DOCKER_HOST is not consulted when "done" came first
    assert watch(io.BytesIO(b"done\n"), "no-such-session", None) == 0


@pytest.mark.docker
@pytest.mark.slow
def test_when_the_harness_dies_its_objects_are_removed(docker_client: DockerClient, base_image: str) -> None:
    session = f"reaper-{secrets.token_hex(4)}"
    labels = {SESSION_LABEL: session, WORKER_LABEL: "gw7"}
    network = docker_client.networks.create(f"bb-{session}", labels=labels)
    container = docker_client.containers.create(base_image, ["sleep", "300"], labels=labels, network=network.name)
    other = docker_client.containers.create(base_image, ["sleep", "300"], labels={SESSION_LABEL: session, WORKER_LABEL: "gw8"})
    try:
        # a harness process that starts its watchdog and dies without a word (as by SIGKILL)
        harness = (
            "import os\nfrom pytest_backendbench.runtime.reaper import Reaper\n"
            f"Reaper({session!r}, 'gw7').start()\nos._exit(9)\n"
        )
        assert subprocess.run([sys.executable, "-c", harness], timeout=60, check=False).returncode == 9
        filters = {"label": f"{SESSION_LABEL}={session}"}
        deadline = time.monotonic() + 60
        while docker_client.networks.list(filters=filters) and time.monotonic() < deadline:
            time.sleep(0.3)
        assert [c.id for c in docker_client.containers.list(all=True, filters=filters)] == [other.id], "only that worker's objects go"
        assert docker_client.networks.list(filters=filters) == []
    finally:
        for leftover in (container, other):
            try:
                leftover.remove(force=True)
            except Exception:  # noqa: BLE001, S110 - already removed by the reaper
                pass
        try:
            network.remove()
        except Exception:  # noqa: BLE001, S110 - already removed by the reaper
            pass


def test_done_stops_the_watchdog() -> None:
    reaper = Reaper("no-such-session", None)
    reaper.start()
    assert reaper.done() == 0
    assert reaper.done() is None  # idempotent
