"""Fixtures oracle items use to reach the candidate: ``service``, ``http``, ``mocks``.

They only exist for items of a benchmark task; used elsewhere they say so.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import requests

from .contract import ContractSession
from ..errors import HarnessError
from ..runtime.base import RunningService
from ..taskrun import TaskRun, registry_of

HTTP_STATS_KEY = pytest.StashKey[list[ContractSession]]()
"""Every ContractSession an item used, so its requests and conformance reach the report."""


@dataclass
class ItemOptions:
    """Per-session settings the fixtures honour (set by plugin.py at configure time)."""

    request_timeout_s: float = 10.0
    strict_contract: bool = False


ITEM_OPTIONS_KEY = pytest.StashKey[ItemOptions]()


def _task_run(request: pytest.FixtureRequest) -> TaskRun:
    run = registry_of(request.config).for_item(request.node)  # type: ignore[arg-type]
    if run is None:
        raise HarnessError(f"the {request.fixturename!r} fixture is only for oracle items of a benchmark task")
    return run


@dataclass
class ServiceHandle:
    """What an oracle item may do with the running candidate."""

    _run: TaskRun
    _service: RunningService

    @property
    def base_url(self) -> str:
        """Where the service answers, as seen from the harness."""
        return self._service.base_url

    def logs(self, tail: int | None = None) -> str:
        """The service's output so far."""
        return self._service.logs(tail)

    def alive(self) -> bool:
        """Whether the service still runs."""
        return self._service.alive()

    def restart(self) -> None:
        """Restart the service (same image and sidecars) for items that test persistence."""
        self._service.restart()


@pytest.fixture
def service(request: pytest.FixtureRequest) -> ServiceHandle:
    """The candidate's running service (booted once per task)."""
    run = _task_run(request)
    return ServiceHandle(run, run.ensure_started())


@pytest.fixture
def http(request: pytest.FixtureRequest, service: ServiceHandle) -> Iterator[ContractSession]:
    """A requests session bound to the service that checks every response against openapi.yaml."""
    options = request.config.stash.get(ITEM_OPTIONS_KEY, ItemOptions())
    session = ContractSession(service.base_url, service._run.contract(), options.request_timeout_s, options.strict_contract)
    request.node.stash.setdefault(HTTP_STATS_KEY, []).append(session)
    with session:
        yield session


@dataclass
class MockHandle:
    """One deterministic mock: what the service sent to it, and a reset."""

    name: str
    base_url: str
    _session: requests.Session = field(default_factory=requests.Session, repr=False)

    def requests(self) -> list[dict[str, Any]]:
        """Every request the mock received since the last reset, oldest first."""
        response = self._session.get(f"{self.base_url}/__mock__/requests", timeout=10)
        response.raise_for_status()
        data = response.json()
        return list(data["requests"] if isinstance(data, dict) else data)

    def reset(self) -> None:
        """Forget recorded requests and any state, so the next item starts clean."""
        self._session.post(f"{self.base_url}/__mock__/reset", timeout=10).raise_for_status()

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """Call the mock's own API (e.g. add an outside event to a calendar) by path."""
        kwargs.setdefault("timeout", 10)
        return self._session.request(method, self.base_url + path, **kwargs)

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        """GET on the mock's own API."""
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> requests.Response:
        """POST on the mock's own API."""
        return self.request("POST", path, **kwargs)


@pytest.fixture
def mocks(request: pytest.FixtureRequest, service: ServiceHandle) -> dict[str, MockHandle]:
    """The task's mocks by name, as the harness reaches them."""
    return {name: MockHandle(name, url) for name, url in service._service.mock_urls.items()}


@pytest.fixture(autouse=True)
def backendbench_sample() -> str:
    """The candidate sample an oracle item runs against ("" for a single candidate)."""
    return ""
