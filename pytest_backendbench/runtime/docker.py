"""The docker runtime: build each candidate's Dockerfile, run it beside its mocks, probe it by IP.

Isolation. Each started service gets its own user-defined network ``bb-<session>-<task>-<rand>``
created with ``internal=True``: the candidate reaches its mocks by name (``http://payments:9000``)
and nothing else, so a candidate cannot phone home or fetch code at run time. Builds run on
the default bridge (pip needs the registry). Containers run with memory/cpu/pids limits,
``cap_drop=ALL``, ``no-new-privileges``, no mounts, and carry ``io.backendbench.session`` and
``io.backendbench.worker`` labels so ``close`` and ``backendbench clean`` find them.

How the harness reaches the service. On Linux with a local rootful Docker the host routes to
every bridge network, the internal ones included, so ``base_url`` is
``http://<container-ip>:<task.port>``. Rootless Podman, Docker Desktop and remote engines
(``DOCKER_HOST`` tcp:// or ssh://) give the host no route to container IPs, and an internal
network cannot publish ports; there a relay container (runtime/relay.py) joins the internal
network and publishes one port per service, mock and database, so the candidate keeps no
egress either way. ``BACKENDBENCH_DOCKER_RELAY=1``/``0`` forces the choice.

Limits an engine silently drops (rootless Podman on cgroups v1 accepts memory, CPU and pids
limits and enforces none) are detected on the first container and refused with a message;
``BACKENDBENCH_ALLOW_UNENFORCED_LIMITS=1`` runs anyway, with a warning on stderr.

Caching. Candidate images are tagged ``backendbench/<task>:<content-hash[:16]>`` and mock
images ``backendbench/mock-<name>:<hash[:16]>``; an existing tag is reused without building.
Images carry ``io.backendbench.cache=1`` instead of the session label so they outlive the
session and go only with ``backendbench clean --images``. ``image_aliases`` tag a local image
(e.g. the debootstrapped ``backendbench/python:3.11``) under the name candidates ask for
(``python:3.12-slim``) so ``FROM python:3.12-slim`` builds without a registry.

Bounds. ``max_parallel_builds`` and ``max_running_services`` hold across xdist workers through
``flock``-ed slot files under ``<cache_dir>/locks``; the kernel releases a dead worker's slots.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import re
import secrets
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import docker
import requests
import urllib3
from docker.errors import APIError, DockerException, NotFound
from docker.types import LogConfig
from docker.utils import kwargs_from_env, parse_repository_tag

from ..candidates import Candidate, hash_tree
from ..errors import BootFailure, BuildFailure, HarnessError, ServiceCrashed
from ..tasks import Task
from .base import DEFAULT_BASE_IMAGE, SESSION_LABEL, CandidateImage, MockSpec, RuntimeOptions, candidate_environment
from .cleanup import CACHE_LABEL, TASK_LABEL, WORKER_LABEL, CleanupCounts, remove_session_objects
from .relay import RELAY_MEMORY_LIMIT, RELAY_SCRIPT, relay_bind, relay_host, relay_targets, relay_wanted
from .wait import HttpReady, PortOpen, WaitStrategy, wait_until_ready

if TYPE_CHECKING:
    from ..db.sidecar import ContainerPostgres

IMAGE_REPOSITORY = "backendbench"
MOCK_LABEL = "io.backendbench.mock"
BUILD_LOG_TAIL = 40
MOCK_BOOT_TIMEOUT_S = 30.0
MOCK_MEMORY_LIMIT = "128m"
POSTGRES_MEMORY_LIMIT = "256m"
POSTGRES_BOOT_TIMEOUT_S = 60.0
SLOT_WAIT_S = 3600.0
STOP_GRACE_S = 2
LOG_CONFIG = {"type": "json-file", "config": {"max-size": "10m", "max-file": "1"}}


def docker_available() -> str | None:
    """None when a docker engine answers, else why not (for ``--bench-runtime=auto`` and skips)."""
    try:
        client = docker.from_env(timeout=5)
        try:
            client.ping()
        finally:
            client.close()
    except (DockerException, requests.RequestException) as err:
        return f"no docker engine answers ({_one_line(err)}); start dockerd or use --bench-runtime=process"
    return None


UNENFORCED_LIMITS_ENV = "BACKENDBENCH_ALLOW_UNENFORCED_LIMITS"


class DockerRuntime:
    """Builds candidates into images and runs them isolated, one internal network per service."""

    name = "docker"
    trusted_only = False

    def __init__(self, options: RuntimeOptions, *, publish: bool | None = None, client: Any = None) -> None:
        self.options = options
        self._publish = publish
        self.limits_unenforced = False
        self._client = client
        self._client_kwargs: dict[str, Any] = {}
        self._services: list[DockerService] = []
        self._lock = threading.Lock()
        self._aliases_ready = False
        self._missing_aliases: dict[str, str] = {}
        self.last_cleanup = CleanupCounts()  # what close() found left over (tests, diagnostics)
        locks = Path(options.cache_dir) / "locks"
        self._build_slots = SlotLock(locks, "build", options.max_parallel_builds)
        self._service_slots = SlotLock(locks, "service", options.max_running_services)

    @property
    def publish(self) -> bool:
        """Whether services are reached through a relay container instead of by container IP."""
        if self._publish is None:
            try:
                components = self._docker(self.client.version, "reading the engine's version").get("Components") or [{}]
            except HarnessError:
                components = [{}]
            self._publish = relay_wanted(str(components[0].get("Name", "")))
        return self._publish

    @property
    def client(self) -> Any:
        """The docker client, connected on first use; ``HarnessError`` when no engine answers."""
        if self._client is None:
            try:
                self._client_kwargs = kwargs_from_env()
                self._client = EngineClient(**self._client_kwargs, version="auto", timeout=120)
            except DockerException as err:
                raise HarnessError(f"the docker engine does not answer ({_one_line(err)}); start dockerd or use --bench-runtime=process") from err
        return self._client

    # -- build -------------------------------------------------------------------------------

    def build(self, candidate: Candidate, task: Task) -> CandidateImage:
        """Build the candidate's Dockerfile (context: its folder only) or reuse the cached image."""
        __tracebackhide__ = True
        if not candidate.has_dockerfile:
            raise BuildFailure(
                "candidate has no Dockerfile",
                f"{candidate.path} has no Dockerfile; the docker runtime builds every candidate from "
                f"its Dockerfile, and the service must listen on port {task.port}",
            )
        content_hash = candidate.content_hash()
        tag = f"{IMAGE_REPOSITORY}/{_docker_name(task.id)}:{content_hash[:16]}"
        existing = self._image_id(tag)
        if existing is not None:
            return CandidateImage(candidate, tag, content_hash, cached=True, build_seconds=0.0, digest=existing)
        self._ensure_aliases()
        with self._build_slots.hold(SLOT_WAIT_S, f"a build slot for {candidate.key}"):
            existing = self._image_id(tag)  # another worker may have built it while we waited
            if existing is not None:
                return CandidateImage(candidate, tag, content_hash, cached=True, build_seconds=0.0, digest=existing)
            labels = {CACHE_LABEL: "1", TASK_LABEL: task.id, "io.backendbench.content-hash": content_hash}
            outcome = self._run_build(candidate.path, tag, labels)
        if outcome.error is not None:
            raise BuildFailure(f"docker build of {candidate.key} failed: {outcome.error}", self._build_hint(outcome) + outcome.tail())
        return CandidateImage(
            candidate, tag, content_hash, cached=False, build_seconds=outcome.seconds, build_log=outcome.log, digest=outcome.image_id
        )

    def _run_build(self, context: Path, tag: str, labels: dict[str, str]) -> BuildOutcome:
        """One ``docker build`` streamed line by line, killed at ``build_timeout_s``."""
        timeout = self.options.build_timeout_s
        api = StreamCapturingAPIClient(**self._api_kwargs(), timeout=timeout + 60)
        outcome = BuildOutcome(tag=tag)
        watchdog = threading.Timer(timeout, api.abort)
        watchdog.daemon = True
        started = time.monotonic()
        try:
            stream = api.build(
                path=str(context),
                tag=tag,
                rm=True,
                forcerm=True,
                pull=False,
                decode=True,
                labels=labels,
                buildargs={"BASE_IMAGE": self.options.base_image} if self.options.base_image else None,
            )
            watchdog.start()
            for chunk in stream:
                outcome.feed(chunk)
        except (DockerException, requests.RequestException, urllib3.exceptions.HTTPError, OSError, ValueError) as err:
            if not api.aborted:
                raise HarnessError(f"the docker engine failed while building {tag}: {_one_line(err)}") from err
        finally:
            watchdog.cancel()
            api.close()
        outcome.seconds = time.monotonic() - started
        if api.aborted:
            outcome.error = f"the build did not finish within {timeout:g}s (build timeout)"
            return outcome
        if outcome.error is not None:
            if "no space left on device" in outcome.error.lower():
                raise HarnessError(f"the docker engine is out of disk space while building {tag}: {outcome.error}")
            return outcome
        outcome.image_id = outcome.image_id or self._image_id(tag)
        if outcome.image_id is None:
            raise HarnessError(f"docker build of {tag} reported success but no image exists; build log:\n{outcome.tail()}")
        return outcome

    def _build_hint(self, outcome: BuildOutcome) -> str:
        text = (outcome.error or "").lower()
        if any(s in text for s in ("pull access denied", "manifest unknown", "no such host", "dial tcp", "not found: manifest")):
            known = ", ".join(f"{a} -> {t}" for a, t in self.options.image_aliases.items()) or "none"
            missing = ", ".join(f"{t}" for t in self._missing_aliases.values())
            return (
                "hint: a base image is neither present locally nor pullable; on an offline machine build the base "
                f"image (backendbench base-image) and alias it (image aliases: {known})"
                + (f"; alias targets missing here: {missing}" if missing else "")
                + "\n"
            )
        return ""

    def _ensure_aliases(self) -> None:
        """Tag each alias target under the alias name unless that name already exists locally."""
        with self._lock:
            if self._aliases_ready:
                return
            for alias, target in self.options.image_aliases.items():
                if self._image_id(alias) is not None:
                    continue
                if self._image_id(target) is None:
                    self._missing_aliases[alias] = target
                    continue
                repository, version = parse_repository_tag(alias)
                self._tag(target, repository, version or "latest")
            self._aliases_ready = True

    def _tag(self, image: str, repository: str, version: str) -> None:
        self._docker(lambda: self.client.images.get(image).tag(repository, version), f"tagging {image} as {repository}:{version}")

    def _mock_image(self, mock: MockSpec) -> str:
        """The mock's image, built from ``mocks/<name>/Dockerfile`` on first use and cached."""
        if not (mock.path / "Dockerfile").is_file():
            raise HarnessError(f"mock {mock.name!r} has no Dockerfile at {mock.path / 'Dockerfile'}; the docker runtime builds mocks from it")
        content_hash = hash_tree(mock.path)
        tag = f"{IMAGE_REPOSITORY}/mock-{_docker_name(mock.name)}:{content_hash[:16]}"
        if self._image_id(tag) is not None:
            return tag
        self._ensure_aliases()
        with self._build_slots.hold(SLOT_WAIT_S, f"a build slot for mock {mock.name}"):
            if self._image_id(tag) is None:
                outcome = self._run_build(mock.path, tag, {CACHE_LABEL: "1", MOCK_LABEL: mock.name})
                if outcome.error is not None:
                    raise HarnessError(f"mock {mock.name!r} failed to build: {outcome.error}\n{self._build_hint(outcome)}{outcome.tail()}")
        return tag

    def _postgres_image(self) -> str:
        """The PostgreSQL sidecar image: ``postgres_image`` if given, else built from
        ``runtime/postgres/Dockerfile`` on the base image and cached like mock images."""
        if self.options.postgres_image:
            return self.options.postgres_image
        from ..db.sidecar import POSTGRES_DOCKERFILE_DIR

        content_hash = hash_tree(POSTGRES_DOCKERFILE_DIR) + (self.options.base_image or "")
        tag = f"{IMAGE_REPOSITORY}/postgres:{hashlib.sha256(content_hash.encode()).hexdigest()[:16]}"
        if self._image_id(tag) is not None:
            return tag
        self._ensure_aliases()
        with self._build_slots.hold(SLOT_WAIT_S, "a build slot for the PostgreSQL sidecar image"):
            if self._image_id(tag) is None:
                outcome = self._run_build(POSTGRES_DOCKERFILE_DIR, tag, {CACHE_LABEL: "1", "io.backendbench.postgres": "1"})
                if outcome.error is not None:
                    raise HarnessError(f"the PostgreSQL sidecar image failed to build: {outcome.error}\n{self._build_hint(outcome)}{outcome.tail()}")
        return tag

    # -- start -------------------------------------------------------------------------------

    def start(self, image: CandidateImage, task: Task, mocks: list[MockSpec]) -> DockerService:
        """Create the task network, start the mocks and the candidate, and wait for health.

        Whatever fails, everything created so far is removed before the error propagates.
        """
        __tracebackhide__ = True
        slot = self._service_slots.acquire(SLOT_WAIT_S, f"a service slot for {image.candidate.key}")
        service = DockerService(self, image, task, slot)
        try:
            service._launch(mocks)
        except BaseException:
            service.stop()
            raise
        with self._lock:
            self._services.append(service)
        return service

    def close(self) -> None:
        """Stop every service this runtime started, then remove the session's labelled leftovers.

        An xdist worker removes only its own objects (its siblings may still be running); the
        controller ("master") runs last and removes every object of the session.
        """
        with self._lock:
            services = list(self._services)
        for service in services:
            service.stop()
        if self._client is None:
            return
        worker = None if self.options.worker_id == "master" else self.options.worker_id
        try:
            self.last_cleanup = remove_session_objects(self._client, self.options.session_id, worker_id=worker)
        finally:
            self._client.close()
            self._client = None

    # -- helpers -----------------------------------------------------------------------------

    def _check_limits(self, container: Any, memory: str, pids: int) -> None:
        """Refuse an engine that accepted the limits but will not enforce them (once per runtime)."""
        if self.limits_unenforced:
            return
        config = (container.attrs or {}).get("HostConfig") or {}
        if not config:
            self._docker(container.reload, f"inspecting {container.name}")
            config = container.attrs.get("HostConfig") or {}
        if (memory and not config.get("Memory")) or (pids and not config.get("PidsLimit")):
            if os.environ.get(UNENFORCED_LIMITS_ENV, "").strip().lower() not in {"1", "true", "yes", "on"}:
                with contextlib.suppress(NotFound, HarnessError):
                    self._docker(partial(container.remove, force=True), f"removing container {container.name}")
                raise HarnessError(
                    "the container engine accepted the memory/pids limits but does not enforce them (rootless Podman on "
                    "cgroups v1 does this); boot the host with cgroups v2 (systemd.unified_cgroup_hierarchy=1), use a "
                    f"rootful engine, or set {UNENFORCED_LIMITS_ENV}=1 to run candidates without limits"
                )
            self.limits_unenforced = True
            print(
                "backendbench: WARNING: the container engine does not enforce memory/CPU/pids limits; candidates run unlimited "
                f"({UNENFORCED_LIMITS_ENV}=1)",
                file=sys.stderr,
            )

    def _forget(self, service: DockerService) -> None:
        with self._lock:
            if service in self._services:
                self._services.remove(service)

    def _api_kwargs(self) -> dict[str, Any]:
        client = self.client
        return {**(self._client_kwargs or kwargs_from_env()), "version": client.api.api_version}

    def _image_id(self, ref: str) -> str | None:
        try:
            return str(self._docker(lambda: self.client.api.inspect_image(ref), f"inspecting image {ref}")["Id"])
        except NotFound:
            return None

    def _docker(self, call: Callable[[], Any], what: str) -> Any:
        """Run one engine call; engine trouble becomes ``HarnessError`` (never the candidate's fault)."""
        try:
            return call()
        except NotFound:
            raise
        except (DockerException, requests.RequestException) as err:
            raise HarnessError(f"the docker engine failed {what}: {_one_line(err)}") from err

    def labels_for(self, task: Task, role: str) -> dict[str, str]:
        return {
            SESSION_LABEL: self.options.session_id,
            WORKER_LABEL: self.options.worker_id,
            TASK_LABEL: task.id,
            "io.backendbench.role": role,
        }


class DockerService:
    """A running candidate container with its mocks on a private network (a ``RunningService``)."""

    def __init__(self, runtime: DockerRuntime, image: CandidateImage, task: Task, slot: int | None) -> None:
        self.image = image
        self.task = task
        self.base_url = ""
        self.mock_urls: dict[str, str] = {}
        self.database_url: str | None = None
        self.database: ContainerPostgres | None = None
        self.ready_seconds = 0.0
        self._runtime = runtime
        self._slot = slot
        self._network: Any = None
        self._container: Any = None
        self._mocks: dict[str, Any] = {}
        self._database_container: Any = None
        self._relay: Any = None
        self._relay_network: Any = None
        self._relay_ports: dict[tuple[str, int], tuple[str, int]] = {}
        self._stopped = False
        self._final_logs: str | None = None
        self._stop_lock = threading.Lock()
        suffix = secrets.token_hex(3)
        self.network_name = f"bb-{_docker_name(runtime.options.session_id)[:24]}-{_docker_name(task.id)[:32]}-{suffix}"

    # -- RunningService ----------------------------------------------------------------------

    def logs(self, tail: int | None = None) -> str:
        """The candidate container's stdout and stderr (the last ``tail`` lines when given)."""
        if self._container is None:
            return ""
        if self._final_logs is not None:
            return _tail_lines(self._final_logs, tail)
        return self._container_logs(self._container, tail)

    def alive(self) -> bool:
        """Whether the candidate container is running."""
        return self.exit_reason() is None

    def exit_reason(self) -> str | None:
        """Why the candidate container stopped, or None while it runs."""
        return self._exit_reason(self._container, self._runtime.options.memory_limit)

    def restart(self) -> None:
        """``docker restart`` the candidate (same container, same mocks) and wait for health again."""
        __tracebackhide__ = True
        if self._stopped:
            raise HarnessError(f"cannot restart {self.image.candidate.key}: the service was stopped")
        self._runtime._docker(lambda: self._container.restart(timeout=STOP_GRACE_S), f"restarting {self._container.name}")
        try:
            self._wait_candidate()
        except BootFailure as err:
            raise ServiceCrashed(f"{self.image.candidate.key} did not become ready again after a restart: {err.title}", err.detail) from err

    def stop(self) -> None:
        """Remove the candidate, its mocks and the network; safe to call twice."""
        with self._stop_lock:
            if self._stopped:
                return
            self._stopped = True
        try:
            if self._container is not None and self._final_logs is None:
                with contextlib.suppress(HarnessError):
                    self._final_logs = self._container_logs(self._container, 2000)
            if self.database is not None:
                self.database.stop()  # closes the harness's marker connection first
            for container in [self._container, *self._mocks.values(), self._database_container, self._relay]:
                if container is None:
                    continue
                with contextlib.suppress(NotFound):
                    self._runtime._docker(partial(container.remove, force=True, v=True), f"removing container {container.name}")
            for network in (self._network, self._relay_network):
                if network is not None:
                    with contextlib.suppress(NotFound):
                        self._runtime._docker(network.remove, f"removing network {network.name}")
        finally:
            self._runtime._service_slots.release(self._slot)
            self._slot = None
            self._runtime._forget(self)

    # -- launching ---------------------------------------------------------------------------

    def _launch(self, mocks: list[MockSpec]) -> None:
        runtime = self._runtime
        client = runtime.client
        options = runtime.options
        self._network = runtime._docker(
            lambda: client.networks.create(
                self.network_name,
                driver="bridge",
                internal=True,
                labels=runtime.labels_for(self.task, "network"),
            ),
            f"creating network {self.network_name}",
        )
        if runtime.publish:
            from ..db.sidecar import CONTAINER_HOST_ALIAS, CONTAINER_PORT

            pairs = [("service", self.task.port), *((m.name, m.port) for m in mocks)]
            if self.task.database == "postgres":
                pairs.append((CONTAINER_HOST_ALIAS, CONTAINER_PORT))
            self._start_relay(pairs)
        if self.task.database == "postgres":
            self._start_database()
        for mock in mocks:
            self._start_mock(mock)
        inside_urls = {m.name: f"http://{m.name}:{m.port}" for m in mocks}
        database_env = self.database.candidate_environment() if self.database is not None else {}
        env = candidate_environment(self.task, self.task.port, inside_urls, mocks, database_env)
        self._container = self._create(
            self.image.ref,
            name=f"{self.network_name}-svc",
            env=env,
            aliases=["service", _docker_name(self.task.id)],
            labels=runtime.labels_for(self.task, "service"),
            memory=options.memory_limit,
            cpus=options.cpu_limit,
            pids=options.pids_limit,
            port=self.task.port,
        )
        try:
            self._container.start()
        except APIError as err:
            # Typically a CMD/ENTRYPOINT that does not exist in the image: the candidate's doing.
            raise BootFailure(f"{self.image.candidate.key}: the container did not start", _one_line(err)) from err
        except requests.RequestException as err:
            raise HarnessError(f"the docker engine failed starting {self._container.name}: {_one_line(err)}") from err
        self._wait_candidate()

    def _start_database(self) -> None:
        """The task's PostgreSQL sidecar, reachable by the candidate as ``postgres:5432``."""
        from ..db.database import PostgresReady
        from ..db.sidecar import CONTAINER_HOST_ALIAS, CONTAINER_PORT, ContainerPostgres, sidecar_script

        runtime = self._runtime
        database = self.database = ContainerPostgres()
        container = self._database_container = self._create(
            runtime._postgres_image(),
            name=f"{self.network_name}-postgres",
            env=database.container_environment(),
            aliases=[CONTAINER_HOST_ALIAS],
            labels=runtime.labels_for(self.task, "database"),
            memory=POSTGRES_MEMORY_LIMIT,
            cpus=1.0,
            pids=256,
            port=CONTAINER_PORT,
            extra={"entrypoint": ["sh", "-c"], "command": [sidecar_script()], "user": "postgres"},
        )
        database.container = container
        runtime._docker(container.start, "starting the PostgreSQL sidecar")
        database.harness_host, database.harness_port = self._address(container, CONTAINER_PORT, CONTAINER_HOST_ALIAS)
        try:
            wait_until_ready(
                [PostgresReady(database)],
                POSTGRES_BOOT_TIMEOUT_S,
                alive=lambda: self._exit_reason(container, POSTGRES_MEMORY_LIMIT),
                logs=lambda: self._container_logs(container, 200),
                what="the task's PostgreSQL sidecar",
            )
        except BootFailure as err:
            raise HarnessError(f"{err.title}\n{err.detail}") from err
        self.database_url = database.url_for_harness

    def _start_mock(self, mock: MockSpec) -> None:
        runtime = self._runtime
        tag = runtime._mock_image(mock)
        container = self._create(
            tag,
            name=f"{self.network_name}-{_docker_name(mock.name)}",
            env={"PORT": str(mock.port), "PYTHONUNBUFFERED": "1"},
            aliases=[mock.name],
            labels={**runtime.labels_for(self.task, "mock"), MOCK_LABEL: mock.name},
            memory=MOCK_MEMORY_LIMIT,
            cpus=0.5,
            pids=64,
            port=mock.port,
        )
        self._mocks[mock.name] = container
        runtime._docker(container.start, f"starting mock {mock.name}")
        host, port = self._address(container, mock.port, mock.name)
        self.mock_urls[mock.name] = f"http://{_url_host(host)}:{port}"
        try:
            wait_until_ready(
                [HttpReady(self.mock_urls[mock.name] + mock.health_path)],
                MOCK_BOOT_TIMEOUT_S,
                alive=lambda: self._exit_reason(container, MOCK_MEMORY_LIMIT),
                logs=lambda: self._container_logs(container, 200),
                what=f"mock {mock.name}",
            )
        except BootFailure as err:
            raise HarnessError(f"{err.title}\n{err.detail}") from err

    def _create(
        self,
        image: str,
        *,
        name: str,
        env: dict[str, str],
        aliases: list[str],
        labels: dict[str, str],
        memory: str,
        cpus: float,
        pids: int,
        port: int,
        extra: dict[str, Any] | None = None,
    ) -> Any:
        runtime = self._runtime
        client = runtime.client
        kwargs: dict[str, Any] = {
            "name": name,
            "detach": True,
            "environment": env,
            "labels": labels,
            "network": self.network_name,
            "networking_config": {self.network_name: client.api.create_endpoint_config(aliases=aliases)},
            "mem_limit": memory,
            # Equal to mem_limit: no swap, so a memory hog meets the OOM killer instead of thrashing.
            "memswap_limit": memory,
            "nano_cpus": int(cpus * 1e9),
            "pids_limit": pids,
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
            "privileged": False,
            "log_config": LogConfig(**LOG_CONFIG),
        }
        kwargs.update(extra or {})
        container = runtime._docker(lambda: client.containers.create(image, **kwargs), f"creating container {name}")
        runtime._check_limits(container, memory, pids)
        return container

    def _start_relay(self, pairs: list[tuple[str, int]]) -> None:
        """The relay container: on a network of its own with published ports, and on the task's."""
        runtime = self._runtime
        client = runtime.client
        targets = relay_targets(pairs)
        self._relay_network = runtime._docker(
            lambda: client.networks.create(f"{self.network_name}-relay", driver="bridge", labels=runtime.labels_for(self.task, "relay-network")),
            f"creating network {self.network_name}-relay",
        )
        image = runtime.options.base_image or DEFAULT_BASE_IMAGE
        if runtime._image_id(image) is None:
            raise HarnessError(f"the relay container needs the base image {image}; build it with `backendbench base-image` (or load it into this engine)")
        bind = relay_bind()
        container = self._relay = runtime._docker(
            lambda: client.containers.create(
                image,
                ["python", "-c", RELAY_SCRIPT],
                name=f"{self.network_name}-relay",
                detach=True,
                environment={"RELAY_TARGETS": ",".join(t.spec for t in targets), "PYTHONUNBUFFERED": "1"},
                labels=runtime.labels_for(self.task, "relay"),
                network=self._relay_network.name,
                ports={f"{t.listen}/tcp": (bind, None) for t in targets},
                mem_limit=RELAY_MEMORY_LIMIT,
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                log_config=LogConfig(**LOG_CONFIG),
            ),
            "creating the relay container",
        )
        runtime._docker(lambda: self._network.connect(container), "connecting the relay to the task network")
        runtime._docker(container.start, "starting the relay container")
        runtime._docker(container.reload, "inspecting the relay container")
        published = (container.attrs.get("NetworkSettings") or {}).get("Ports") or {}
        host = relay_host()
        for target in targets:
            bindings = published.get(f"{target.listen}/tcp") or []
            if not bindings:
                raise HarnessError(f"the engine published no host port for the relay of {target.alias}:{target.port}")
            self._relay_ports[(target.alias, target.port)] = (host, int(bindings[0]["HostPort"]))

    def _address(self, container: Any, port: int, alias: str = "service") -> tuple[str, int]:
        """Where the harness reaches ``port`` of ``container``: its IP, or the relay's port."""
        if self._runtime.publish:
            return self._relay_ports[(alias, port)]
        self._runtime._docker(container.reload, f"inspecting {container.name}")
        settings = container.attrs.get("NetworkSettings") or {}
        network = (settings.get("Networks") or {}).get(self.network_name) or {}
        address = network.get("IPAddress")
        if not address:
            reason = self._exit_reason(container, "") or "no IP address on its network"
            raise BootFailure(f"{container.name} has no address: {reason}", self._container_logs(container, 30))
        return str(address), port

    def _wait_candidate(self) -> None:
        host, port = self._address(self._container, self.task.port)
        self.base_url = f"http://{_url_host(host)}:{port}"
        strategies: list[WaitStrategy] = (
            [HttpReady(self.base_url + self.task.health.path)] if self.task.health.path else [PortOpen(host, port)]
        )
        timeout = self._runtime.options.boot_timeout_s or self.task.health.timeout_s
        self.ready_seconds = wait_until_ready(
            strategies,
            timeout,
            alive=self.exit_reason,
            logs=lambda: self.logs(200),
            what=f"{self.image.candidate.key} ({self.image.ref})",
        )

    def _container_logs(self, container: Any, tail: int | None) -> str:
        try:
            data = self._runtime._docker(
                lambda: container.logs(stdout=True, stderr=True, tail=tail if tail else "all"), f"reading logs of {container.name}"
            )
        except NotFound:
            return ""
        return bytes(data).decode("utf-8", errors="replace")

    def _exit_reason(self, container: Any, memory_limit: str) -> str | None:
        if container is None:
            return "not started"
        try:
            self._runtime._docker(container.reload, f"inspecting {container.name}")
        except NotFound:
            return "the container was removed"
        state = container.attrs.get("State") or {}
        if state.get("Running") or state.get("Restarting") or state.get("Status") == "created":
            return None
        if state.get("OOMKilled"):
            return f"killed by the OOM killer (memory limit {memory_limit})" if memory_limit else "killed by the OOM killer"
        code = state.get("ExitCode")
        detail = f": {state['Error']}" if state.get("Error") else ""
        if code == 137:
            return f"killed by SIGKILL (exit code 137){detail}"
        return f"exited with code {code}{detail}"


class BuildOutcome:
    """What one build produced: log, image id or error, duration."""

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.lines: list[str] = []
        self.error: str | None = None
        self.image_id: str | None = None
        self.seconds = 0.0

    def feed(self, chunk: dict[str, Any]) -> None:
        """Consume one decoded line of the engine's build stream."""
        if "stream" in chunk:
            self.lines.append(str(chunk["stream"]))
        elif "status" in chunk:
            self.lines.append(f"{chunk['status']} {chunk.get('progress') or ''}".rstrip() + "\n")
        if "error" in chunk:
            self.error = str(chunk["error"]).strip()
            self.lines.append(f"ERROR: {self.error}\n")
        aux = chunk.get("aux")
        if isinstance(aux, dict) and aux.get("ID"):
            self.image_id = str(aux["ID"])

    @property
    def log(self) -> str:
        """The whole build log."""
        return "".join(self.lines)

    def tail(self, lines: int = BUILD_LOG_TAIL) -> str:
        """The last lines of the build log, indented, for failure messages."""
        text = [line for line in self.log.splitlines() if line.strip()][-lines:]
        return "build log (last lines):\n" + "\n".join("  " + line for line in text) if text else "build log: (empty)"


class EngineAPIClient(docker.APIClient):  # type: ignore[misc]
    """An APIClient that talks to the engine with exactly the TLS settings DOCKER_* gave it.

    requests lets REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE and proxy variables override a session's
    own ``verify``, so a machine with a system CA bundle configured could not verify a TLS
    engine's private CA (DOCKER_CERT_PATH/ca.pem). The engine connection ignores them.
    """

    def merge_environment_settings(self, url: Any, proxies: Any, stream: Any, verify: Any, cert: Any) -> Any:
        self.trust_env = False
        return super().merge_environment_settings(url, proxies, stream, verify, cert)


class EngineClient(docker.DockerClient):  # type: ignore[misc]
    """``docker.DockerClient`` over an ``EngineAPIClient``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.api = EngineAPIClient(*args, **kwargs)


class StreamCapturingAPIClient(EngineAPIClient):
    """An APIClient that remembers its streaming response so a watchdog can cut it.

    Closing the connection is how a client cancels a classic ``docker build``: the engine stops
    the running step and, with ``forcerm``, removes the intermediate container.
    """

    aborted = False
    _response: Any = None

    def _stream_helper(self, response: Any, decode: bool = False) -> Any:
        if self._response is None:
            self._response = response
        return super()._stream_helper(response, decode=decode)

    def abort(self) -> None:
        """Cut the build's connection (called by the build-timeout watchdog thread)."""
        self.aborted = True
        response = self._response
        if response is None:
            return
        try:
            # Shutting the socket down wakes the reader blocked in recv; close() alone may not.
            raw = response.raw._fp.fp.raw
            sock = getattr(raw, "_sock", raw)
            sock.shutdown(socket.SHUT_RDWR)
        except (AttributeError, OSError):
            with contextlib.suppress(Exception):
                response.close()


class SlotLock:
    """At most ``count`` holders across threads and processes, via ``flock`` on slot files."""

    def __init__(self, directory: Path, kind: str, count: int) -> None:
        self.directory = directory
        self.kind = kind
        self.count = count

    def acquire(self, timeout_s: float, what: str) -> int | None:
        """Block until a slot is free; return its file descriptor (None when unbounded)."""
        if self.count <= 0:
            return None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise HarnessError(f"cannot create the lock folder {self.directory}: {err}; set BACKENDBENCH_CACHE to a writable folder") from err
        deadline = time.monotonic() + timeout_s
        while True:
            for index in range(self.count):
                fd = os.open(self.directory / f"{self.kind}-{index}.lock", os.O_RDWR | os.O_CREAT, 0o644)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError as err:
                    os.close(fd)
                    if err.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                        raise HarnessError(f"cannot lock {self.directory}: {err}") from err
                    continue
                return fd
            if time.monotonic() >= deadline:
                raise HarnessError(
                    f"waited {timeout_s:g}s for {what}: all {self.count} {self.kind} slots stayed busy; "
                    "raise the limit or stop other backendbench runs"
                )
            time.sleep(0.2)

    def release(self, fd: int | None) -> None:
        """Give a slot back (closing the descriptor drops the lock)."""
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    @contextlib.contextmanager
    def hold(self, timeout_s: float, what: str) -> Iterator[None]:
        """Hold one slot for the duration of a ``with`` block."""
        fd = self.acquire(timeout_s, what)
        try:
            yield
        finally:
            self.release(fd)


def _docker_name(text: str) -> str:
    """Lower-case text made safe for image repositories, container and network names."""
    cleaned = re.sub(r"[^a-z0-9_.-]+", "-", text.lower()).strip("-._")
    return cleaned or "x"


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _tail_lines(text: str, tail: int | None) -> str:
    if not tail:
        return text
    lines = text.splitlines(keepends=True)
    return "".join(lines[-tail:])


def _one_line(err: BaseException) -> str:
    explanation = getattr(err, "explanation", None)
    text = str(explanation or err).strip()
    return " ".join(text.split())[:500]
