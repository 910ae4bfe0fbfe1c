"""The sidecar's statement log followed through one exec reads what one exec per read reads."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from typing import Any

import pytest
from docker import DockerClient

from pytest_backendbench.db.providers.sidecar import CONTAINER_LOG, ContainerPostgres

pytestmark = pytest.mark.docker


@pytest.fixture
def writer(docker_client: DockerClient, base_image: str) -> Iterator[Any]:
    """A container that writes 20,000 lines to the sidecar's log path, then 5 more a second later."""
    script = f"mkdir -p $(dirname {CONTAINER_LOG}); seq 1 20000 > {CONTAINER_LOG}; sleep 1; seq 1 5 >> {CONTAINER_LOG}; sleep 60"
    container = docker_client.containers.run(
        base_image, ["sh", "-c", script], detach=True, entrypoint=[], name=f"bb-test-log-follow-{secrets.token_hex(4)}"
    )
    try:
        yield container
    finally:
        container.remove(force=True)


def read_until(database: ContainerPostgres, size: int, timeout_s: float = 20.0) -> bytes:
    deadline = time.monotonic() + timeout_s
    while True:
        data = database.read_log(0)
        if len(data) >= size or time.monotonic() > deadline:
            return data
        time.sleep(0.05)


def test_the_followed_log_equals_the_file_and_survives_a_resumed_stream(writer: Any) -> None:
    database = ContainerPostgres()
    database.container = writer
    whole = len("".join(f"{n}\n" for n in range(1, 20001)) + "1\n2\n3\n4\n5\n")
    data = read_until(database, whole)
    assert database.follower.starts == 1 and len(data) == whole
    assert data == database.read_log_through_exec(0)
    assert database.read_log(whole - 4) == b"4\n5\n"
    # a stream the engine ended is resumed where it stopped, from the file itself
    del database.follower.data[-4:]
    database.follower.alive = False
    assert read_until(database, whole) == data and database.follower.starts == 2
