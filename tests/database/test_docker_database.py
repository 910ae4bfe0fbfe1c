"""The event-registration reference under the docker runtime: a PostgreSQL sidecar on the task network."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ..conftest import read_report
from .conftest import PLUGIN, TASK

pytestmark = [pytest.mark.docker, pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def base_image() -> str:
    """The offline base image candidates and the sidecar build FROM, or a skip (a failure under CI)."""
    from pytest_backendbench.runtime.base_image import DEFAULT_TAG
    from pytest_backendbench.runtime.docker import docker_available

    image = os.environ.get("BACKENDBENCH_BASE_IMAGE") or DEFAULT_TAG
    reason = docker_available()
    if reason is None:
        import docker

        client = docker.from_env()
        try:
            if not client.images.list(name=image):
                reason = f"base image {image} is missing; build it with: python -m pytest_backendbench.runtime.base_image --tag {image}"
        finally:
            client.close()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI requires the docker tests to run: {reason}", pytrace=False)
        pytest.skip(reason)
    return image


def test_reference_passes_with_a_sidecar_and_leaves_no_container(pytester: pytest.Pytester, er_bench: Path, base_image: str) -> None:
    import docker

    result = pytester.runpytest(
        f"--candidate={er_bench / 'oracles' / TASK / 'reference'}", f"--bench-task={TASK}", "--bench-report-dir=out", "--bench-runtime=docker",
        f"--base-image={base_image}", f"--image-alias=python:3.12-slim={base_image}", "-p", "no:cacheprovider", *PLUGIN,
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) >= 63 and not outcomes.get("failed") and not outcomes.get("errors"), outcomes
    report = read_report(pytester.path / "out")
    summary = report["summary"]
    for key in ("fe_acc_valid_db", "be_acc_valid_db", "db_acc"):
        assert summary[key] == 1.0, (key, summary[key])
    client = docker.from_env()
    try:
        left = client.containers.list(all=True, filters={"label": f"io.backendbench.session={report['manifest']['session_id']}"})
    finally:
        client.close()
    assert left == []
