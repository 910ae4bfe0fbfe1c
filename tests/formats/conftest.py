"""A live docker engine holding the offline base image, or a skip (a failure under CI)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

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


TEST_SH = """#!/bin/bash
# Harbor's convention: a reward in /logs/verifier
if [ "$(cat /app/answer.txt 2>/dev/null)" = "42" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""


def _harbor_task(root: Path, base_image: str, *, toml: str = '[task]\nname = "demo/answer"\n[verifier]\ntimeout_sec = 60.0\n',
                dockerfile: str = "", test_sh: str = TEST_SH) -> Path:
    folder = root / "answer"
    (folder / "environment").mkdir(parents=True)
    (folder / "tests").mkdir()
    (folder / "task.toml").write_text(toml)
    (folder / "instruction.md").write_text("Write 42 into /app/answer.txt.\n")
    (folder / "environment" / "Dockerfile").write_text(f"FROM {base_image}\n{dockerfile}WORKDIR /app\n")
    (folder / "tests" / "test.sh").write_text(test_sh)
    return folder


@pytest.fixture
def make_harbor_task() -> Callable[..., Path]:
    """A tiny Harbor task (answer 42 into /app/answer.txt), written under a folder: (root, base_image, **parts)."""
    return _harbor_task
