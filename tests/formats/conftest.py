"""A live docker engine holding the offline base image, or a skip (a failure under CI)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import docker
import pytest
from docker import DockerClient
from docker.errors import ImageNotFound

from pytest_backendbench.runtime.base_image import DEFAULT_TAG


@pytest.fixture(scope="session")
def base_image() -> str:
    return os.environ.get("BACKENDBENCH_BASE_IMAGE") or DEFAULT_TAG


@pytest.fixture(scope="session")
def docker_client(base_image: str) -> Iterator[DockerClient]:
    from pytest_backendbench.runtime.docker import docker_available

    reason = docker_available() or None
    client = docker.from_env() if reason is None else None
    if client is not None:
        try:
            client.images.get(base_image)
        except ImageNotFound:
            reason = f"base image {base_image} is missing; build it with: python -m pytest_backendbench.runtime.base_image"
    if reason is not None:
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(f"CI requires the docker tests to run: {reason}", pytrace=False)
        pytest.skip(reason)
    assert client is not None
    yield client
    client.close()
