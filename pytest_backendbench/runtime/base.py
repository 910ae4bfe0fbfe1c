"""The runtime interface: build a candidate into something runnable, start it, stop it.

Two implementations live beside this module (``process`` and ``docker``); a plugin may
supply another through the ``pytest_backendbench_runtime`` hook.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..candidates import Candidate
from ..errors import TaskFormatError, load_yaml_file
from ..file_schemas import MOCK_SCHEMA, validate_file
from ..tasks import Task

if TYPE_CHECKING:
    from .container_access import CandidateContainer

SESSION_LABEL = "io.backendbench.session"
DEFAULT_BASE_IMAGE = "backendbench/python:3.11"
DEFAULT_IMAGE_ALIASES = {"python:3.12-slim": DEFAULT_BASE_IMAGE}
"""Used when no alias is configured: `FROM python:3.12-slim` builds from `backendbench base-image`
when that image exists locally and the official one does not (air-gapped machines)."""


@dataclass(frozen=True)
class RuntimeOptions:
    """Settings every runtime honours; filled from command-line options at configure time."""

    session_id: str
    worker_id: str = "master"
    cache_dir: Path = field(default_factory=lambda: default_cache_dir())
    mocks_dir: Path | None = None
    build_timeout_s: float = 600.0
    boot_timeout_s: float | None = None  # None: the task's health.timeout_s
    request_timeout_s: float = 10.0
    memory_limit: str = "512m"
    cpu_limit: float = 1.0
    pids_limit: int = 256
    image_aliases: dict[str, str] = field(default_factory=dict)
    base_image: str | None = None
    postgres_image: str | None = None  # docker: the PostgreSQL sidecar image (None: build runtime/postgres/Dockerfile)
    postgres_provider: str = "auto"  # process: the local PostgreSQL provider (db/providers/)
    max_parallel_builds: int = 1
    max_running_services: int = 2
    warm_containers: int = 2  # docker, ``isolation: item``: fresh containers booted ahead per service (runtime/warm_pool.py)
    allow_unenforced_limits: bool = False  # docker: run on an engine that accepts limits but enforces none
    relay: bool | None = None  # docker: reach services through a relay container (None: decided by the engine)
    relay_bind: str | None = None  # docker: where relay ports are published (None: loopback, or all for a remote engine)


@dataclass(frozen=True)
class MockSpec:
    """A deterministic mock service from ``mocks/<name>/`` that a task depends on."""

    name: str
    path: Path
    port: int
    run: str
    health_path: str

    @property
    def env_var(self) -> str:
        """The variable through which the candidate learns the mock's URL, e.g. PAYMENTS_URL."""
        return self.name.upper().replace("-", "_") + "_URL"


def load_mock(mocks_dir: Path, name: str) -> MockSpec:
    """Read ``mocks/<name>/mock.yaml``; a clear error when the mock or a field is missing."""
    folder = mocks_dir / name
    file = folder / "mock.yaml"
    if not file.is_file():
        raise TaskFormatError(file, f"mock {name!r} not found; a task's mocks must be folders under {mocks_dir} with a mock.yaml")
    data = validate_file(load_yaml_file(file, TaskFormatError), MOCK_SCHEMA, file, TaskFormatError)  # file_schemas.py
    health = data.get("health", "/__mock__/health")
    return MockSpec(name=name, path=folder, port=data["port"], run=data["run"], health_path=str(health))


@dataclass(frozen=True)
class CandidateImage:
    """A built candidate: a docker image or a prepared environment, plus how it was built."""

    candidate: Candidate
    ref: str
    content_hash: str
    cached: bool
    build_seconds: float
    build_log: str = ""
    digest: str | None = None
    code_archive: bytes | None = None  # docker: the code each container gets before it starts (runtime/code_layer.py)


@runtime_checkable
class RunningService(Protocol):
    """A started candidate with its sidecars, as the oracle items see it."""

    base_url: str
    mock_urls: dict[str, str]
    database_url: str | None
    ready_seconds: float

    def logs(self, tail: int | None = None) -> str:
        """The service's combined stdout/stderr (the last ``tail`` lines when given)."""

    def alive(self) -> bool:
        """Whether the service process/container is still running."""

    def exit_reason(self) -> str | None:
        """Why it stopped ("exited with code 1", "killed by the OOM killer"), or None if alive."""

    def restart(self) -> None:
        """Stop and start the service again (same image, same sidecars) and wait for health."""

    def stop(self) -> None:
        """Stop the service and its sidecars and remove what was created; idempotent."""


@runtime_checkable
class ContainerService(RunningService, Protocol):
    """A running service in a container an oracle may look inside (the ``container`` fixture)."""

    def container_access(self) -> CandidateContainer:
        """The candidate's container: exec, files, stats, processes, a localhost forwarder."""


@runtime_checkable
class RenewableService(RunningService, Protocol):
    """A service that can swap in a fresh instance cheaply (``isolation: item``)."""

    def renew(self) -> bool:
        """Replace the service by a fresh one of the same image and wait for health; False,
        with nothing done, when that would carry state over (the caller restarts it fully)."""


@runtime_checkable
class WarmableService(RenewableService, Protocol):
    """A renewable service that boots fresh instances ahead while an item runs (runtime/warm_pool.py)."""

    def warm(self, ahead: int | None) -> None:
        """Boot fresh instances in the background for the ``ahead`` items known to come (None: unknown)."""


@runtime_checkable
class Runtime(Protocol):
    """Builds and starts candidates; ``close`` removes everything it ever created."""

    name: str
    trusted_only: bool

    def build(self, candidate: Candidate, task: Task) -> CandidateImage:
        """Build the candidate; ``BuildFailure`` for its fault, ``HarnessError`` for ours."""

    def start(self, image: CandidateImage, task: Task, mocks: list[MockSpec]) -> RunningService:
        """Start sidecars and the service and wait for health; ``BootFailure`` if it never gets ready."""

    def close(self) -> None:
        """Session teardown: stop and remove every object this runtime created."""


def candidate_environment(task: Task, port: int, mock_urls: dict[str, str], mocks: list[MockSpec], database_env: dict[str, str]) -> dict[str, str]:
    """The environment the contract promises the candidate, identical across runtimes."""
    env = {"PORT": str(port), "HOST": "0.0.0.0", "PYTHONUNBUFFERED": "1"}
    env.update(task.env)
    for mock in mocks:
        env[mock.env_var] = mock_urls[mock.name]
    env.update(database_env)
    return env


def default_cache_dir() -> Path:
    """Where venvs and build metadata are cached across sessions: config.default_cache_dir's one
    rule (BACKENDBENCH_CACHE, else $XDG_CACHE_HOME, else ~/.cache; /pytest-backendbench)."""
    from ..config import default_cache_dir as cache_dir_rule

    return cache_dir_rule()
