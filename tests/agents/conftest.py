"""Fixtures for agent tests: the notes task's visible view, and a live docker engine.

Sandbox tests run against the real engine (never a mocked client). Without an engine or the
offline base image they skip with the reason, except under CI (CI=true), where that fails them.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
from docker import DockerClient
from docker.errors import ImageNotFound

from pytest_backendbench.runtime.base_image import DEFAULT_TAG
from pytest_backendbench.runtime.cleanup import count_session_objects, remove_session_objects
from pytest_backendbench.tasks import TaskCatalog, VisibleTask

BENCH = Path(__file__).resolve().parents[1] / "data" / "bench"


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
        pytest.fail(f"CI requires the docker tests to run: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def agent_base_image() -> str:
    """The offline base image the default agent image builds on (BACKENDBENCH_BASE_IMAGE)."""
    return os.environ.get("BACKENDBENCH_BASE_IMAGE") or DEFAULT_TAG


@pytest.fixture(scope="session")
def engine(agent_base_image: str) -> Iterator[DockerClient]:
    """A client of a live engine holding the base image, or a skip (a failure under CI)."""
    from pytest_backendbench.runtime.docker import docker_available

    reason = docker_available()
    if reason is not None:
        _unavailable(reason)
    client = docker.from_env()
    try:
        client.images.get(agent_base_image)
    except ImageNotFound:
        client.close()
        _unavailable(f"base image {agent_base_image} is missing; build it with: python -m pytest_backendbench.runtime.base_image")
    yield client
    client.close()


@pytest.fixture
def session_id(request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh session id; anything a docker test leaves labelled with it is removed afterwards."""
    value = f"test-agents-{secrets.token_hex(4)}"
    yield value
    if "engine" in request.fixturenames:
        client = request.getfixturevalue("engine")
        if count_session_objects(client, value).total:
            remove_session_objects(client, value)


@pytest.fixture(scope="session")
def notes_task() -> VisibleTask:
    """The visible view of the small notes task (tests/data/bench)."""
    return TaskCatalog(BENCH).load("notes").visible
