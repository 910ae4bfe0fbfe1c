"""A running candidate container with its mocks, database sidecar and relay on a private network.

How the harness reaches the service. On Linux with a local rootful Docker the host routes to
every bridge network, the internal ones included, so ``base_url`` is
``http://<container-ip>:<task.port>``. Rootless Podman, Docker Desktop and remote engines
(``DOCKER_HOST`` tcp:// or ssh://) give the host no route to container IPs, and an internal
network cannot publish ports; there a relay container (runtime/relay.py) joins the internal
network and publishes one port per service, mock and database, so the candidate keeps no
egress either way. ``BACKENDBENCH_DOCKER_RELAY=1``/``0`` forces the choice.

Oracles that look inside the container get a ``container_access.CandidateContainer`` from
``container_access()``; its localhost forwarder stops with the service.

Per-item isolation (``renew``). A service without mocks, database or relay keeps a
``warm_pool.WarmPool`` of fresh containers of its image, each on an internal network of its own
(no item's container can reach the next one), booted in background threads while the current
item runs; ``renew`` swaps the next one in and removes the old one in the background.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

import requests
from docker.errors import APIError
from docker.types import LogConfig

from ..db.providers.sidecar import CONTAINER_HOST_ALIAS, CONTAINER_PORT, ContainerPostgres, start_sidecar
from ..errors import BootFailure, HarnessError, ServiceCrashed
from ..host.wait import HttpReady, PortOpen, WaitStrategy, wait_until_ready
from ..tasks import Task
from .base import DEFAULT_BASE_IMAGE, CandidateImage, MockSpec, RuntimeOptions, candidate_environment
from .container_access import CandidateContainer
from .containers import (
    LOG_CONFIG,
    container_logs,
    create_limited,
    exit_reason_of,
    internal_network,
    remove_container,
    remove_network,
    tail_lines,
)
from .engine import EngineAPIClient, docker_name, engine_call, one_line, url_host
from .relay import RELAY_MEMORY_LIMIT, RELAY_SCRIPT, relay_bind, relay_host, relay_targets
from .warm_pool import WarmPool, memory_bytes

MOCK_LABEL = "io.backendbench.mock"
CONTENT_HASH_LABEL = "io.backendbench.content-hash"
"""On candidate images and containers: which candidate (its content hash) they run."""
MOCK_BOOT_TIMEOUT_S = 30.0
MOCK_MEMORY_LIMIT = "128m"
STOP_GRACE_S = 2


@dataclass(frozen=True)
class WarmContainer:
    """A fresh candidate container booted ahead, alone on its own internal network."""

    network: Any
    network_name: str
    container: Any
    base_url: str
    ready_seconds: float


class ServiceEngine(Protocol):
    """What a service asks of the runtime that started it (``docker.DockerRuntime`` is one): the
    engine client, the run's options, images and labels, and its slot back when it stops."""

    @property
    def options(self) -> RuntimeOptions: ...

    @property
    def publish(self) -> bool: ...

    @property
    def client(self) -> Any: ...

    def api_client(self, timeout_s: float) -> EngineAPIClient: ...

    def labels_for(self, task: Task, role: str) -> dict[str, str]: ...

    def check_limits(self, container: Any, memory: str, pids: int) -> None: ...

    def image_id(self, ref: str) -> str | None: ...

    def mock_image(self, mock: MockSpec) -> str: ...

    def postgres_image(self) -> str: ...

    def release(self, service: DockerService, slot: int | None) -> None: ...


class DockerService:
    """A running candidate container with its mocks on a private network (a ``RunningService``)."""

    def __init__(self, runtime: ServiceEngine, image: CandidateImage, task: Task, slot: int | None) -> None:
        self.image = image
        self.task = task
        self.base_url = ""
        self.mock_urls: dict[str, str] = {}
        self.mock_urls_for_candidate: dict[str, str] = {}
        self.database_url: str | None = None
        self.database: ContainerPostgres | None = None
        self.ready_seconds = 0.0
        self._runtime = runtime
        self._slot = slot
        self._network: Any = None
        self._container: Any = None
        self._mocks: dict[str, Any] = {}
        self._relay: Any = None
        self._relay_network: Any = None
        self._relay_ports: dict[tuple[str, int], tuple[str, int]] = {}
        self._stopped = False
        self._final_logs: str | None = None
        self._stop_lock = threading.Lock()
        self._access: CandidateContainer | None = None
        self._env: dict[str, str] = {}
        self._renewals = 0
        self.memory_limit = task.memory or runtime.options.memory_limit
        suffix = secrets.token_hex(3)
        self.network_name = f"bb-{docker_name(runtime.options.session_id)[:24]}-{docker_name(task.id)[:32]}-{suffix}"
        self._name_base = self.network_name
        self.pool: WarmPool[WarmContainer] | None = None
        self._warm_count = 0
        self._removals: list[threading.Thread] = []

    # -- RunningService ----------------------------------------------------------------------

    def logs(self, tail: int | None = None) -> str:
        """The candidate container's stdout and stderr (the last ``tail`` lines when given)."""
        if self._container is None:
            return ""
        if self._final_logs is not None:
            return tail_lines(self._final_logs, tail)
        return self.container_logs(self._container, tail)

    def alive(self) -> bool:
        """Whether the candidate container is running."""
        return self.exit_reason() is None

    def exit_reason(self) -> str | None:
        """Why the candidate container stopped, or None while it runs."""
        return self.exit_reason_of(self._container, self.memory_limit)

    def container_access(self) -> CandidateContainer:
        """The candidate's container for oracles that look inside it (the ``container`` fixture)."""
        if self._container is None or self._stopped:
            raise HarnessError(f"{self.image.candidate.key}: the service's container is not running")
        if self._access is None:
            self._access = CandidateContainer(self._container, self._runtime.client, self._runtime.api_client, self._service_address)
        return self._access

    def _service_address(self) -> tuple[str, int]:
        """Where the harness reaches the service now (the forwarder asks on every connection)."""
        url = urlsplit(self.base_url)
        if not url.hostname or not url.port:
            raise HarnessError(f"{self.image.candidate.key}: the service has no address yet")
        return url.hostname, url.port

    def restart(self) -> None:
        """``docker restart`` the candidate (same container, same mocks) and wait for health again."""
        __tracebackhide__ = True
        if self._stopped:
            raise HarnessError(f"cannot restart {self.image.candidate.key}: the service was stopped")
        engine_call(lambda: self._container.restart(timeout=STOP_GRACE_S), f"restarting {self._container.name}")
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
            if self.pool is not None:
                self.pool.close()  # before the network goes: no boot under way is left behind
            for thread in self._removals:
                thread.join(STOP_GRACE_S * 2)
            if self._access is not None:
                self._access.close()
            if self._container is not None and self._final_logs is None:
                with contextlib.suppress(HarnessError):
                    self._final_logs = self.container_logs(self._container, 2000)
            if self.database is not None:
                self.database.stop()  # closes the harness's marker connection first
            sidecar = self.database.container if self.database is not None else None
            for container in [self._container, *self._mocks.values(), sidecar, self._relay]:
                if container is not None:
                    remove_container(container)
            for network in (self._network, self._relay_network):
                if network is not None:
                    remove_network(network)
        finally:
            slot, self._slot = self._slot, None
            self._runtime.release(self, slot)

    # -- launching ---------------------------------------------------------------------------

    def launch(self, mocks: list[MockSpec]) -> None:
        runtime = self._runtime
        self._network = internal_network(runtime.client, self.network_name, runtime.labels_for(self.task, "network"))
        if runtime.publish:
            pairs = [("service", self.task.port), *((m.name, m.port) for m in mocks)]
            if self.task.database == "postgres":
                pairs.append((CONTAINER_HOST_ALIAS, CONTAINER_PORT))
            self._start_relay(pairs)
        if self.task.database == "postgres":
            self._start_database()
        for mock in mocks:
            self._start_mock(mock)
        inside_urls = self.mock_urls_for_candidate = {m.name: f"http://{m.name}:{m.port}" for m in mocks}
        database_env = self.database.candidate_environment() if self.database is not None else {}
        self._env = candidate_environment(self.task, self.task.port, inside_urls, mocks, database_env)
        self._start_candidate()
        if self.task.isolation == "item" and self._renewable():
            size = runtime.options.warm_containers
            if size > 0:
                self.pool = WarmPool(
                    self._launch_warm, self._remove_warm, lambda warm: self.exit_reason_of(warm.container, self.memory_limit) is None,
                    size=size, memory_limit=memory_bytes(self.memory_limit),
                )

    def warm(self, ahead: int | None) -> None:
        """Boot fresh containers in the background for the ``ahead`` items known to come (None:
        as many as the pool's bounds allow); nothing when the service has no pool."""
        if self.pool is not None and not self._stopped:
            self.pool.fill(ahead)

    def _renewable(self) -> bool:
        """Whether a fresh container alone makes a fresh service (no mocks, database or relay carry state)."""
        return not (self._stopped or self._mocks or self.database is not None or self._container is None or self._relay is not None)

    def renew(self) -> bool:
        """``isolation: item``: replace the candidate's container by a fresh one of the same image
        on the same network (cheaper than a new network and relay), and wait for health.

        False, with nothing done, when the service has mocks or a database (their state would
        carry over) or is reached through a relay: the relay's stale name lookup or neighbour
        entry for the old container can swallow connections for tens of seconds (seen under
        rootless Podman on a loaded machine), so the caller stops it and starts another on a
        fresh network instead.
        """
        __tracebackhide__ = True
        if not self._renewable():
            return False
        if self._access is not None:
            self._access.close()
            self._access = None
        warm = self.pool.take() if self.pool is not None else None
        if warm is not None:
            old = WarmContainer(self._network, self.network_name, self._container, self.base_url, self.ready_seconds)
            self._network, self.network_name, self._container = warm.network, warm.network_name, warm.container
            self.base_url, self.ready_seconds = warm.base_url, warm.ready_seconds
            self._remove_later(old)
        else:  # the pool is empty (or off): boot one here, on the same network; its failure is the verdict
            old_container, self._container = self._container, None
            remove_container(old_container)
            self._renewals += 1
            self._start_candidate()
            if self.pool is not None:
                self.pool.foreground_booted()
        return True

    def _launch_warm(self) -> WarmContainer:
        """Boot one container for the pool on a fresh internal network (runs in a pool thread)."""
        runtime = self._runtime
        pool = self.pool
        with self._stop_lock:
            self._warm_count += 1
            network_name = f"{self._name_base}-w{self._warm_count}"
        network = internal_network(runtime.client, network_name, runtime.labels_for(self.task, "network"))
        container = None
        try:
            container = self.create_candidate_container(f"{network_name}-svc", network_name)
            engine_call(container.start, f"starting {container.name}")
            host, port = self.address(container, self.task.port, network=network_name)
            base_url = f"http://{url_host(host)}:{port}"
            started = container

            def alive() -> str | None:
                return "the warm pool was closed" if pool is None or pool.closed else self.exit_reason_of(started, self.memory_limit)

            ready = wait_until_ready(
                self._readiness(base_url, host, port), self._boot_timeout(), alive=alive,
                logs=lambda: self.container_logs(started, 200), what=f"{self.image.candidate.key} ({self.image.ref}, warm)",
            )
            return WarmContainer(network, network_name, container, base_url, ready)
        except BaseException:
            self._remove_warm(WarmContainer(network, network_name, container, "", 0.0))
            raise

    def _remove_warm(self, warm: WarmContainer) -> None:
        """Remove a container of the pool and its network (engine trouble is left to the session's cleanup)."""
        with contextlib.suppress(HarnessError):
            if warm.container is not None:
                remove_container(warm.container)
        with contextlib.suppress(HarnessError):
            if warm.network is not None:
                remove_network(warm.network)

    def _remove_later(self, old: WarmContainer) -> None:
        """Remove the previous item's container in the background: the next item need not wait for it."""
        thread = threading.Thread(target=self._remove_warm, args=(old,), name="backendbench-remove", daemon=True)
        self._removals = [t for t in self._removals if t.is_alive()] + [thread]
        thread.start()

    def _start_candidate(self) -> None:
        suffix = f"-{self._renewals}" if self._renewals else ""
        self._container = self.create_candidate_container(f"{self.network_name}-svc{suffix}")
        try:
            self._container.start()
        except APIError as err:
            # Typically a CMD/ENTRYPOINT that does not exist in the image: the candidate's doing.
            raise BootFailure(f"{self.image.candidate.key}: the container did not start", one_line(err)) from err
        except requests.RequestException as err:
            raise HarnessError(f"the docker engine failed starting {self._container.name}: {one_line(err)}") from err
        self._wait_candidate()

    def _start_database(self) -> None:
        """The task's PostgreSQL sidecar (db/providers/sidecar.py launches it on this service's network)."""
        database = self.database = ContainerPostgres()
        start_sidecar(self, database, self._runtime.postgres_image(), f"{self.network_name}-postgres", self._runtime.labels_for(self.task, "database"))
        self.database_url = database.url_for_harness

    def _start_mock(self, mock: MockSpec) -> None:
        runtime = self._runtime
        tag = runtime.mock_image(mock)
        container = self.create_container(
            tag,
            name=f"{self.network_name}-{docker_name(mock.name)}",
            env={"PORT": str(mock.port), "PYTHONUNBUFFERED": "1"},
            aliases=[mock.name],
            labels={**runtime.labels_for(self.task, "mock"), MOCK_LABEL: mock.name},
            memory=MOCK_MEMORY_LIMIT,
            cpus=0.5,
            pids=64,
            port=mock.port,
        )
        self._mocks[mock.name] = container
        engine_call(container.start, f"starting mock {mock.name}")
        host, port = self.address(container, mock.port, mock.name)
        self.mock_urls[mock.name] = f"http://{url_host(host)}:{port}"
        try:
            wait_until_ready(
                [HttpReady(self.mock_urls[mock.name] + mock.health_path)],
                MOCK_BOOT_TIMEOUT_S,
                alive=lambda: self.exit_reason_of(container, MOCK_MEMORY_LIMIT),
                logs=lambda: self.container_logs(container, 200),
                what=f"mock {mock.name}",
            )
        except BootFailure as err:
            raise HarnessError(f"{err.title}\n{err.detail}") from err

    # -- containers on the task network (the sidecar launch uses them too) -----------------------

    def create_container(
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
        network: str | None = None,
    ) -> Any:
        """A container on the task's network (or ``network``) with the harness's limits, checked against the engine."""
        container = create_limited(
            self._runtime.client, image, name=name, network=network or self.network_name, env=env, aliases=aliases, labels=labels,
            memory=memory, cpus=cpus, pids=pids, extra=extra,
        )
        self._runtime.check_limits(container, memory, pids)
        return container

    def create_candidate_container(self, name: str, network: str | None = None) -> Any:
        """The candidate's container, created with its code in place (an image shared by
        candidates gets the code before it starts: code_layer.py), not started."""
        runtime = self._runtime
        container = self.create_container(
            self.image.ref,
            name=name,
            env=self._env,
            aliases=["service", docker_name(self.task.id)],
            labels={**runtime.labels_for(self.task, "service"), CONTENT_HASH_LABEL: self.image.content_hash},
            memory=self.memory_limit,
            cpus=runtime.options.cpu_limit,
            pids=runtime.options.pids_limit,
            port=self.task.port,
            network=network,
        )
        if self.image.code_archive is not None:
            archive = self.image.code_archive
            try:
                engine_call(lambda: container.put_archive("/", archive), f"copying the candidate's code into {name}")
            except BaseException:
                with contextlib.suppress(HarnessError):
                    remove_container(container)
                raise
        return container

    def _start_relay(self, pairs: list[tuple[str, int]]) -> None:
        """The relay container: on a network of its own with published ports, and on the task's."""
        runtime = self._runtime
        client = runtime.client
        targets = relay_targets(pairs)
        self._relay_network = engine_call(
            lambda: client.networks.create(f"{self.network_name}-relay", driver="bridge", labels=runtime.labels_for(self.task, "relay-network")),
            f"creating network {self.network_name}-relay",
        )
        image = runtime.options.base_image or DEFAULT_BASE_IMAGE
        if runtime.image_id(image) is None:
            raise HarnessError(f"the relay container needs the base image {image}; build it with `backendbench base-image` (or load it into this engine)")
        bind = relay_bind(runtime.options.relay_bind)
        container = self._relay = engine_call(
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
        engine_call(lambda: self._network.connect(container), "connecting the relay to the task network")
        engine_call(container.start, "starting the relay container")
        engine_call(container.reload, "inspecting the relay container")
        published = (container.attrs.get("NetworkSettings") or {}).get("Ports") or {}
        host = relay_host()
        for target in targets:
            bindings = published.get(f"{target.listen}/tcp") or []
            if not bindings:
                raise HarnessError(f"the engine published no host port for the relay of {target.alias}:{target.port}")
            self._relay_ports[(target.alias, target.port)] = (host, int(bindings[0]["HostPort"]))

    def start_container(self, container: Any, what: str) -> None:
        """Start a created container; engine trouble is the harness's."""
        engine_call(container.start, what)

    def address(self, container: Any, port: int, alias: str = "service", network: str | None = None) -> tuple[str, int]:
        """Where the harness reaches ``port`` of ``container``: its IP, or the relay's port."""
        if self._runtime.publish:
            return self._relay_ports[(alias, port)]
        engine_call(container.reload, f"inspecting {container.name}")
        settings = container.attrs.get("NetworkSettings") or {}
        endpoint = (settings.get("Networks") or {}).get(network or self.network_name) or {}
        address = endpoint.get("IPAddress")
        if not address:
            reason = self.exit_reason_of(container, "") or "no IP address on its network"
            raise BootFailure(f"{container.name} has no address: {reason}", self.container_logs(container, 30))
        return str(address), port

    def _readiness(self, base_url: str, host: str, port: int) -> list[WaitStrategy]:
        return [HttpReady(base_url + self.task.health.path)] if self.task.health.path else [PortOpen(host, port)]

    def _boot_timeout(self) -> float:
        return self._runtime.options.boot_timeout_s or self.task.health.timeout_s

    def _wait_candidate(self) -> None:
        host, port = self.address(self._container, self.task.port)
        self.base_url = f"http://{url_host(host)}:{port}"
        self.ready_seconds = wait_until_ready(
            self._readiness(self.base_url, host, port),
            self._boot_timeout(),
            alive=self.exit_reason,
            logs=lambda: self.logs(200),
            what=f"{self.image.candidate.key} ({self.image.ref})",
        )

    # the sidecar reads its container through the service (db/providers/sidecar.SidecarNetwork)
    container_logs = staticmethod(container_logs)
    exit_reason_of = staticmethod(exit_reason_of)
