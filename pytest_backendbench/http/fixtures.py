"""Fixtures oracle items use to reach the candidate: ``service``, ``http``, ``mocks``.

They only exist for items of a benchmark task; used elsewhere they say so.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import requests
from requests import Response

from ..errors import HarnessError
from ..runtime.base import RunningService
from ..taskrun import TaskRun, registry_of
from .contract import ContractSession

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
    def task_run(self) -> TaskRun:
        """The candidate run this service belongs to (its contract, its task)."""
        return self._run

    @property
    def mock_urls(self) -> dict[str, str]:
        """The task's mocks by name, as the harness reaches them."""
        return dict(self._service.mock_urls)

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
    session = ContractSession(service.base_url, service.task_run.contract(), options.request_timeout_s, options.strict_contract)
    request.node.stash.setdefault(HTTP_STATS_KEY, []).append(session)
    with session:
        yield session


@dataclass
class MockHandle:
    """One deterministic mock: what the service sent to it, and a reset.

    Mocks are the harness's: a mock that cannot be reached or answers its own API with an
    error is a ``HarnessError`` (the item errors), never the candidate's failure.
    """

    name: str
    base_url: str
    _session: requests.Session = field(default_factory=requests.Session, repr=False)

    def requests(self) -> list[dict[str, Any]]:
        """Every request the mock received since the last reset, oldest first."""
        __tracebackhide__ = True
        data = self._call("GET", "/__mock__/requests", check=True).json()
        return list(data["requests"] if isinstance(data, dict) else data)

    def reset(self) -> None:
        """Forget recorded requests and any state, so the next item starts clean."""
        __tracebackhide__ = True
        self._call("POST", "/__mock__/reset", check=True)

    def request(self, method: str, path: str, **kwargs: Any) -> Response:
        """Call the mock's own API (e.g. add an outside event to a calendar) by path; the
        oracle judges the answer's status itself."""
        __tracebackhide__ = True
        return self._call(method, path, **kwargs)

    def get(self, path: str, **kwargs: Any) -> Response:
        """GET on the mock's own API."""
        __tracebackhide__ = True
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> Response:
        """POST on the mock's own API."""
        __tracebackhide__ = True
        return self.request("POST", path, **kwargs)

    def _call(self, method: str, path: str, check: bool = False, **kwargs: Any) -> Response:
        __tracebackhide__ = True
        kwargs.setdefault("timeout", 10)
        try:
            response = self._session.request(method, self.base_url + path, **kwargs)
            if check:
                response.raise_for_status()
        except requests.RequestException as err:
            raise HarnessError(f"mock {self.name!r}: {method} {path} failed: {err}") from err
        return response


@pytest.fixture
def mocks(request: pytest.FixtureRequest, service: ServiceHandle) -> dict[str, MockHandle]:
    """The task's mocks by name, as the harness reaches them."""
    return {name: MockHandle(name, url) for name, url in service.mock_urls.items()}


@pytest.fixture(autouse=True)
def backendbench_sample() -> str:
    """The candidate sample an oracle item runs against ("" for a single candidate)."""
    return ""
