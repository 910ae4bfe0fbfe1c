"""Fixtures oracle items use to reach the candidate: ``service``, ``http``, ``mocks``, ``container``,
and the shared ``checks`` (oracle support; http/api.py holds the ``Api`` helpers).

They only exist for items of a benchmark task; used elsewhere they say so.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import pytest
import requests
from requests import Response

from ..errors import CandidateFailure, HarnessError
from ..runtime.base import ContainerService, RunningService
from ..taskrun import TaskRun, registry_of
from .contract import ContractSession
from .hang_guard import guard_for

if TYPE_CHECKING:
    from ..runtime.container_access import CandidateContainer

HTTP_STATS_KEY = pytest.StashKey[list[ContractSession]]()
"""Every ContractSession an item used, so its requests and conformance reach the report."""


@dataclass
class ItemOptions:
    """Per-session settings the fixtures honour (set by session.py when the session starts)."""

    request_timeout_s: float = 10.0
    strict_contract: bool = False
    check_contract: bool = True


ITEM_OPTIONS_KEY = pytest.StashKey[ItemOptions]()


class Stashed(Protocol):
    """An item, or a judge's case run: anything with a stash."""

    stash: pytest.Stash


def http_sessions_of(item: Stashed) -> list[ContractSession]:
    """The ContractSessions an item used (``HTTP_STATS_KEY``), created empty on first use: append a new one."""
    return item.stash.setdefault(HTTP_STATS_KEY, [])


def item_options(config: pytest.Config) -> ItemOptions:
    """The session's ItemOptions (``ITEM_OPTIONS_KEY``); the defaults before a session set them."""
    return config.stash.get(ITEM_OPTIONS_KEY, ItemOptions())


def set_item_options(config: pytest.Config, options: ItemOptions) -> None:
    """Record the session's ItemOptions (session.py, once the settings are resolved)."""
    config.stash[ITEM_OPTIONS_KEY] = options


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
    def mock_urls_for_candidate(self) -> dict[str, str]:
        """The task's mocks by name, as the candidate reaches them (its environment's values).

        An optional attribute of a running service (not part of the RunningService protocol,
        so runtimes from plugins need not have it): without it the harness's URLs are used."""
        return dict(getattr(self._service, "mock_urls_for_candidate", None) or self._service.mock_urls)

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


ResponseCheck = Callable[[Response], list[str]]
"""A rule every answer of a task follows (http/secrets.py's ``secret_check``): its findings, never
raising; an integer ``cwe`` attribute on the check is recorded as the CWE found when it finds any."""


def findings_hook(checks: list[ResponseCheck], findings: list[str]) -> Callable[..., Response]:
    """A requests response hook that adds what ``checks`` find in every answer to ``findings``."""

    def inspect(response: Response, *args: Any, **kwargs: Any) -> Response:
        for check in checks:
            findings.extend(check(response))
        return response

    return inspect


@pytest.fixture
def http_response_checks() -> list[ResponseCheck]:
    """Checks applied to every answer the ``http`` fixture receives; none by default.

    An oracle whose spec states a rule for every answer (no password hash in any response)
    overrides this fixture in its conftest.py or a test module; the item then fails at teardown
    with every finding, whatever it asserted itself.
    """
    return []


@pytest.fixture
def http(request: pytest.FixtureRequest, service: ServiceHandle, http_response_checks: list[ResponseCheck]) -> Iterator[ContractSession]:
    """A requests session bound to the service that checks every response against openapi.yaml."""
    options = item_options(request.config)
    guard = guard_for(request.config, service.base_url, options.request_timeout_s)
    contract = service.task_run.contract() if options.check_contract else None
    session = ContractSession(service.base_url, contract, options.request_timeout_s, options.strict_contract, guard)
    http_sessions_of(request.node).append(session)
    findings: list[str] = []
    if http_response_checks:
        session.hooks["response"].append(findings_hook(http_response_checks, findings))
    with session:
        yield session
    if findings:
        cwes = sorted({cwe for check in http_response_checks if isinstance(cwe := getattr(check, "cwe", None), int)})
        if cwes:  # what the item found, beside the CWE its marker declares (INTERFACES §3)
            request.node.user_properties.append(("bench_found_cwes", cwes))
        raise CandidateFailure("answers break a rule the spec states for every response", "\n".join(dict.fromkeys(findings)))


@dataclass
class MockHandle:
    """One deterministic mock: what the service sent to it, and a reset.

    Mocks are the harness's: a mock that cannot be reached or answers its own API with an
    error is a ``HarnessError`` (the item errors), never the candidate's failure.
    """

    name: str
    base_url: str
    candidate_url: str = ""
    """The mock as the candidate reaches it: pass this where the API takes a URL (a webhook)."""
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
    inside = service.mock_urls_for_candidate
    return {name: MockHandle(name, url, inside.get(name, url)) for name, url in service.mock_urls.items()}


@pytest.fixture
def container(service: ServiceHandle) -> CandidateContainer:
    """The candidate's running container: exec, put_file/get_file, stats, processes, localhost_url.

    Container runtimes only (Docker, rootless Podman, remote engines); under the process
    runtime an item asking for it is a harness error naming the runtime it needs.
    """
    run = service.task_run
    running = run.service
    if not isinstance(running, ContainerService):
        runtime = getattr(run.runtime_factory(), "name", type(running).__name__)
        raise HarnessError(
            f"the 'container' fixture needs a container runtime, and this run uses the {runtime} runtime: "
            "run with --bench-runtime=docker (Docker, or rootless Podman through DOCKER_HOST)"
        )
    return running.container_access()


@pytest.fixture
def checks() -> types.SimpleNamespace:
    """The checks the bundled oracles share (http/checks.py), each returning its findings; a
    task's conftest.py extends it by overriding ``checks`` and requesting this one."""
    from .checks import oracle_checks

    return oracle_checks()


@pytest.fixture(autouse=True)
def backendbench_sample() -> str:
    """The candidate sample an oracle item runs against ("" for a single candidate)."""
    return ""
