"""Fixtures for runtime tests against the real docker engine (never a mocked client).

Without an engine the docker tests skip with the reason, except under CI (CI=true), where a
missing engine or base image fails them: CI must not go green without having run them.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
from docker import DockerClient
from docker.errors import ImageNotFound

from pytest_backendbench.runtime.base import RuntimeOptions
from pytest_backendbench.runtime.base_image import DEFAULT_TAG

REPO = Path(__file__).resolve().parents[2]
CANDIDATES = Path(__file__).resolve().parent / "candidates"
PROBE_BENCH = Path(__file__).resolve().parent / "data" / "probe-bench"
PROBE = CANDIDATES / "probe"
collect_ignore = ["data", "candidates"]  # the probe task's oracle runs only inside pytester runs


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
        pytest.fail(f"CI requires the docker tests to run: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def base_image() -> str:
    """The offline base image that ``python:3.12-slim`` is aliased to (BACKENDBENCH_BASE_IMAGE)."""
    return os.environ.get("BACKENDBENCH_BASE_IMAGE") or DEFAULT_TAG


@pytest.fixture(scope="session")
def docker_client(base_image: str) -> Iterator[DockerClient]:
    """A client of a live engine that has the base image, or a skip (a failure under CI)."""
    from pytest_backendbench.runtime.docker import docker_available

    reason = docker_available()
    if reason is not None:
        _unavailable(reason)
    client = docker.from_env()
    try:
        client.images.get(base_image)
    except ImageNotFound:
        client.close()
        _unavailable(f"base image {base_image} is missing; build it with: python -m pytest_backendbench.runtime.base_image --tag {base_image}")
    yield client
    client.close()


@pytest.fixture(scope="module")
def runtime_options(base_image: str, tmp_path_factory: pytest.TempPathFactory) -> RuntimeOptions:
    """Small limits and short timeouts so misbehaving candidates are caught quickly."""
    return RuntimeOptions(
        session_id=f"test-{secrets.token_hex(4)}",
        worker_id=os.environ.get("PYTEST_XDIST_WORKER", "master"),
        cache_dir=tmp_path_factory.mktemp("cache"),
        mocks_dir=REPO / "mocks",
        build_timeout_s=120,
        memory_limit="96m",
        cpu_limit=1.0,
        pids_limit=48,
        image_aliases={"python:3.12-slim": base_image},
        base_image=base_image,
        max_parallel_builds=1,
        max_running_services=4,
    )


@pytest.fixture
def probe_bench(pytester: pytest.Pytester, shared_cache: Path, base_image: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The probe task (it supplies its Dockerfile; isolation: item) in the pytester folder, with
    its code-only candidate in ``candidate/``."""
    monkeypatch.setenv("BACKENDBENCH_CACHE", str(shared_cache))
    monkeypatch.setenv("BACKENDBENCH_IMAGE_ALIASES", f"python:3.12-slim={base_image}")
    shutil.copytree(PROBE_BENCH, pytester.path, dirs_exist_ok=True)
    shutil.copytree(PROBE, pytester.path / "candidate")
    return pytester.path
