"""Reading the sidecar's statement log survives docker-py's misread frame headers."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from pytest_backendbench.db.providers.sidecar import READ_ATTEMPTS, ContainerPostgres
from pytest_backendbench.errors import HarnessError


class FlakyContainer:
    """exec_run fails with docker-py's demux ValueError ``failures`` times, then answers."""

    def __init__(self, failures: int) -> None:
        self.failures, self.calls = failures, 0

    def exec_run(self, argv: list[str], **_: Any) -> SimpleNamespace:
        self.calls += 1
        if self.calls <= self.failures:
            raise ValueError("58 is not a valid stream")
        return SimpleNamespace(exit_code=0, output=(b"log line\n", None))


def test_a_misread_frame_header_is_read_again() -> None:
    database = ContainerPostgres()
    database.container = FlakyContainer(READ_ATTEMPTS - 1)
    assert database.read_log(0) == b"log line\n"
    assert database.container.calls == READ_ATTEMPTS


def test_a_read_that_keeps_failing_is_a_harness_error_naming_the_attempts() -> None:
    database = ContainerPostgres()
    database.container = FlakyContainer(READ_ATTEMPTS)
    with pytest.raises(HarnessError, match=f"58 is not a valid stream .{READ_ATTEMPTS} attempts"):
        database.read_log(0)
