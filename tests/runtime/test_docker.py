"""The docker runtime against the real engine: build, cache, boot, contain, isolate, clean up.

One small standard-library candidate (tests/runtime/candidates/stdlib) serves every scenario;
its MODE variable and endpoints make it misbehave on purpose. Images are cached, timeouts
short, so the module stays well under a minute on two cores once the base image exists.
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
import shutil
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests
from docker import DockerClient
from docker.models.containers import Container

from pytest_backendbench.candidates import Candidate
from pytest_backendbench.errors import BootFailure, BuildFailure, HarnessError
from pytest_backendbench.runtime.base import SESSION_LABEL, CandidateImage, RunningService, Runtime, RuntimeOptions, load_mock
from pytest_backendbench.runtime.base_image import DEFAULT_MIRROR, host_apt_mirror
from pytest_backendbench.runtime.cleanup import CACHE_LABEL, count_session_objects, remove_session_objects
from pytest_backendbench.runtime.docker import DockerRuntime, DockerService, SlotLock, docker_available
from pytest_backendbench.tasks import HealthCheck, Task

from .conftest import CANDIDATES, REPO

pytestmark = pytest.mark.docker

TASK_ID = "rt-stdlib"


def make_task(tmp_path: Path, *, env: dict[str, str] | None = None, mocks: tuple[str, ...] = (), timeout_s: float = 20, health: str | None = "/health") -> Task:
    return Task(
        id=TASK_ID,
        title="runtime test",
        kind="backend",
        domains=(),
        port=8000,
        health=HealthCheck(path=health, timeout_s=timeout_s),
        database="none",
        mocks=mocks,
        env=env or {},
        requirements={},
        benchmark_dir=tmp_path,
        oracle_dir=tmp_path,
    )


def make_candidate(tmp_path: Path, name: str = "stdlib", *, dockerfile: str | None = None, fresh: bool = False) -> Candidate:
    folder = tmp_path / f"candidate-{name}"
    shutil.copytree(CANDIDATES / "stdlib", folder)
    if dockerfile is not None:
        (folder / "Dockerfile").write_text(dockerfile)
    if fresh:
        # Changes the content hash (so the harness must build) but no layer docker caches.
        (folder / "nonce.txt").write_text(secrets.token_hex(8))
    return Candidate(task_id=TASK_ID, path=folder)


@pytest.fixture(scope="module")
def runtime(runtime_options: RuntimeOptions, docker_client: DockerClient) -> Iterator[DockerRuntime]:
    rt = DockerRuntime(runtime_options, publish=False)
    yield rt
    rt.close()
    assert count_session_objects(docker_client, runtime_options.session_id).total == 0


@pytest.fixture(scope="module")
def module_tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("docker")


@pytest.fixture(scope="module")
def image(runtime: DockerRuntime, module_tmp: Path, docker_client: DockerClient) -> Iterator[CandidateImage]:
    """The stdlib candidate, built once for the module (a cold build: its hash is new)."""
    built = runtime.build(make_candidate(module_tmp, fresh=True), make_task(module_tmp))
    yield built
    docker_client.images.remove(built.ref, force=True)  # a nonce image nobody will ask for again


StartService = Callable[..., DockerService]


@pytest.fixture
def start(runtime: DockerRuntime, image: CandidateImage, tmp_path: Path) -> Iterator[StartService]:
    """Start the stdlib image under a task variant; stops whatever it started afterwards."""
    started: list[DockerService] = []

    def _start(**task_fields: object) -> DockerService:
        task = make_task(tmp_path, **task_fields)  # type: ignore[arg-type]
        mocks = [load_mock(REPO / "mocks", name) for name in task.mocks]
        service = runtime.start(image, task, mocks)
        started.append(service)
        return service

    yield _start
    for service in started:
        service.stop()


def wait_dead(service: DockerService, timeout_s: float = 20) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        reason = service.exit_reason()
        if reason is not None:
            return reason
        time.sleep(0.2)
    pytest.fail(f"the container was still running after {timeout_s}s")


def test_engine_answers(docker_client: DockerClient) -> None:
    assert docker_available() is None


def test_runtime_satisfies_the_interface(runtime: DockerRuntime) -> None:
    assert isinstance(runtime, Runtime)
    assert runtime.name == "docker" and runtime.trusted_only is False


def test_builds_boots_and_answers(runtime: DockerRuntime, image: CandidateImage, start: StartService, docker_client: DockerClient) -> None:
    assert image.cached is False and image.build_seconds > 0
    assert image.ref == f"backendbench/{TASK_ID}:{image.content_hash[:16]}"
    labels = docker_client.images.get(image.ref).labels
    assert labels[CACHE_LABEL] == "1" and SESSION_LABEL not in labels, "cached images must outlive the session"

    service = start()
    assert isinstance(service, RunningService)
    host = urlsplit(service.base_url).hostname
    assert host is not None and not host.startswith("127."), "on Linux the harness reaches the container by its IP"
    answer = requests.get(service.base_url + "/", timeout=5).json()
    assert answer["hello"] == "backendbench" and answer["env"]["PORT"] == "8000"
    assert 0 < service.ready_seconds < 20
    assert service.alive() and service.exit_reason() is None
    assert "candidate starting in mode serve" in service.logs()


def test_second_build_is_cached(runtime: DockerRuntime, image: CandidateImage, module_tmp: Path) -> None:
    again = runtime.build(image.candidate, make_task(module_tmp))
    assert again.cached is True and again.ref == image.ref and again.digest == image.digest
    assert again.build_seconds == 0


def test_missing_dockerfile_is_a_build_failure(runtime: DockerRuntime, tmp_path: Path) -> None:
    candidate = make_candidate(tmp_path)
    (candidate.path / "Dockerfile").unlink()
    with pytest.raises(BuildFailure, match="candidate has no Dockerfile"):
        runtime.build(candidate, make_task(tmp_path))


def test_failing_build_reports_the_log_tail(runtime: DockerRuntime, tmp_path: Path, docker_client: DockerClient) -> None:
    candidate = make_candidate(tmp_path, dockerfile="FROM python:3.12-slim\nRUN echo resolving-deps-$((6*7)) && exit 3\n", fresh=True)
    exited = {"status": "exited", "ancestor": "python:3.12-slim"}
    before = {c.id for c in docker_client.containers.list(all=True, filters=exited)}  # other builds on this engine
    with pytest.raises(BuildFailure) as info:
        runtime.build(candidate, make_task(tmp_path))
    assert "returned a non-zero code: 3" in info.value.title
    assert "resolving-deps-42" in info.value.detail
    left = [c for c in docker_client.containers.list(all=True, filters=exited) if c.id not in before and "resolving-deps" in str(c.attrs["Config"]["Cmd"])]
    assert not left, "forcerm leaves no build container"


def test_build_timeout_kills_the_build(runtime_options: RuntimeOptions, tmp_path: Path, docker_client: DockerClient) -> None:
    marker = f"bb-timeout-{secrets.token_hex(4)}"
    candidate = make_candidate(tmp_path, dockerfile=f"FROM python:3.12-slim\nRUN echo slow-step && sleep 60 && echo {marker}\n")
    rt = DockerRuntime(dataclasses.replace(runtime_options, build_timeout_s=3), publish=False)
    started = time.monotonic()
    with pytest.raises(BuildFailure, match=r"did not finish within 3s \(build timeout\)") as info:
        rt.build(candidate, make_task(tmp_path))
    assert time.monotonic() - started < 15
    assert "slow-step" in info.value.detail

    def leftovers() -> list[Container]:
        # sparse: the list API's own fields, so a container of a parallel test that vanishes
        # between listing and inspecting cannot raise NotFound here
        return [c for c in docker_client.containers.list(all=True, sparse=True) if marker in (c.attrs.get("Command") or "")]

    deadline = time.monotonic() + 15
    while leftovers() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not leftovers(), "the engine must cancel the build and remove its container"
    rt.close()


def test_silent_candidate_is_a_boot_failure_and_leaves_nothing(runtime: DockerRuntime, start: StartService, docker_client: DockerClient) -> None:
    started = time.monotonic()
    with pytest.raises(BootFailure) as info:
        start(env={"MODE": "silent"}, timeout_s=3)
    assert time.monotonic() - started < 12
    assert "was not ready after 3s" in info.value.title
    assert "candidate starting in mode silent" in info.value.detail
    assert count_session_objects(docker_client, runtime.options.session_id).total == 0


def test_missing_entrypoint_is_a_boot_failure(runtime: DockerRuntime, tmp_path: Path, docker_client: DockerClient) -> None:
    candidate = make_candidate(tmp_path, dockerfile='FROM python:3.12-slim\nCMD ["/app/server-binary-that-was-never-built"]\n', fresh=True)
    built = runtime.build(candidate, make_task(tmp_path))
    try:
        with pytest.raises(BootFailure) as info:
            runtime.start(built, make_task(tmp_path), [])
        assert "did not start" in info.value.title and "server-binary-that-was-never-built" in info.value.detail
        assert count_session_objects(docker_client, runtime.options.session_id).total == 0
    finally:
        docker_client.images.remove(built.ref, force=True)


def test_port_only_health_check(start: StartService) -> None:
    service = start(health=None)
    assert requests.get(service.base_url + "/health", timeout=5).status_code == 200


def test_crash_at_boot_reports_the_exit_code(start: StartService) -> None:
    with pytest.raises(BootFailure) as info:
        start(env={"MODE": "crash"})
    assert "stopped before it became ready: exited with code 2" in info.value.title
    assert "cannot find my configuration" in info.value.detail


def test_crash_mid_run_sets_exit_reason(start: StartService) -> None:
    service = start()
    requests.get(service.base_url + "/crash", timeout=5)
    assert wait_dead(service) == "exited with code 3"
    assert not service.alive()


def test_memory_hog_is_killed_by_the_oom_killer(start: StartService, runtime: DockerRuntime) -> None:
    service = start()
    requests.get(service.base_url + "/hog", timeout=5)
    assert wait_dead(service) == f"killed by the OOM killer (memory limit {runtime.options.memory_limit})"


def test_fork_bomb_is_contained_by_the_pids_limit(start: StartService, runtime: DockerRuntime, docker_client: DockerClient) -> None:
    service = start()
    limit = runtime.options.pids_limit
    try:
        result = requests.get(service.base_url + "/forks?n=500", timeout=30).json()
    except requests.ConnectionError:
        result = None  # the bomb may take the request's own thread down with it; containment is what counts
    if result is not None:
        assert result["started"] < limit
        assert "Resource temporarily unavailable" in (result["error"] or "")
    containers = docker_client.containers.list(filters={"label": f"{SESSION_LABEL}={runtime.options.session_id}"})
    assert containers, "the candidate container is gone"
    for container in containers:
        assert container.attrs["HostConfig"]["PidsLimit"] == limit
        assert container.stats(stream=False)["pids_stats"]["current"] <= limit


def test_reaches_the_payments_mock_by_name(start: StartService) -> None:
    service = start(mocks=("payments",))
    env = requests.get(service.base_url + "/", timeout=5).json()["env"]
    assert env["PAYMENTS_URL"] == "http://payments:9000"
    paid = requests.get(service.base_url + "/pay", timeout=10).json()
    assert paid["status"] == 201 and paid["body"]["id"] == "ch_000001" and paid["body"]["status"] == "succeeded"
    seen = requests.get(service.mock_urls["payments"] + "/__mock__/requests", timeout=5).json()["requests"]
    assert [(r["method"], r["path"], r["json"]["amount"], r["headers"]["idempotency-key"]) for r in seen] == [("POST", "/charges", 1250, "order-1")]
    assert requests.post(service.mock_urls["payments"] + "/__mock__/reset", timeout=5).status_code == 200


def test_candidate_cannot_connect_out(start: StartService) -> None:
    # The single connection attempt goes to the host's apt mirror, an address this machine
    # is meant to reach; on an internal network it never leaves the container.
    mirror_host = urlsplit(host_apt_mirror() or DEFAULT_MIRROR).hostname or ""
    try:
        address = socket.gethostbyname(mirror_host)
    except OSError:
        pytest.skip(f"cannot resolve the apt mirror {mirror_host} on the host, so there is nothing to compare with")
    service = start()
    result = requests.get(service.base_url + "/egress", params={"host": address, "port": "80"}, timeout=10).json()
    assert result["connected"] is False, f"the candidate reached {address}:80 from its internal network"


def test_restart_comes_back_healthy(start: StartService) -> None:
    service = start()
    service.restart()
    assert service.alive()
    assert requests.get(service.base_url + "/health", timeout=5).status_code == 200
    assert service.logs().count("candidate starting in mode serve") == 2


def test_stop_is_idempotent_and_removes_everything(runtime: DockerRuntime, image: CandidateImage, tmp_path: Path, docker_client: DockerClient) -> None:
    task = make_task(tmp_path, mocks=("payments",))
    service = runtime.start(image, task, [load_mock(REPO / "mocks", "payments")])
    assert count_session_objects(docker_client, runtime.options.session_id).containers == 2
    service.stop()
    service.stop()
    assert count_session_objects(docker_client, runtime.options.session_id).total == 0
    assert "candidate starting" in service.logs(), "logs stay readable after stop"


def test_per_item_isolation_hands_out_containers_booted_ahead_once(
    runtime: DockerRuntime, image: CandidateImage, tmp_path: Path, docker_client: DockerClient
) -> None:
    task = dataclasses.replace(make_task(tmp_path), isolation="item")
    service = runtime.start(image, task, [])
    session = runtime.options.session_id

    def service_containers() -> dict[str, Container]:
        found = docker_client.containers.list(all=True, sparse=True, filters={"label": [f"{SESSION_LABEL}={session}", "io.backendbench.role=service"]})
        return {c.id: c for c in found}

    try:
        pool = service.pool
        assert pool is not None and pool.size == runtime.options.warm_containers == 2
        service.warm(None)
        deadline = time.monotonic() + 60
        while pool.ready < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pool.ready == 2, f"the pool never held two ready containers (last failure: {pool.last_failure!r})"
        assert len(service_containers()) == 3, "the item's container and two booted ahead, no more"
        used = [service.container_access().id]
        for _ in range(2):
            assert service.renew() and service.alive()
            assert requests.get(service.base_url + "/health", timeout=5).status_code == 200
            used.append(service.container_access().id)
        assert pool.booting == 0 and pool.ready == 0, "without warm() nothing is booted ahead"
        service.warm(1)
        assert pool.booting + pool.ready == 1, "one item known to come: one container booted ahead"
        service.warm(None)
        assert len(set(used)) == 3 and pool.handed_out == 2, "each container is handed out once"
        deadline = time.monotonic() + 30
        while set(used[:2]) & set(service_containers()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not set(used[:2]) & set(service_containers()), "a used container is removed after its item"
        # a pooled container that died before use is replaced, never blamed on the candidate
        deadline = time.monotonic() + 60
        while pool.ready < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        for container_id, container in service_containers().items():
            if container_id != used[-1]:
                container.kill()
        discarded = pool.discarded
        assert service.renew() and service.alive()
        assert pool.discarded >= discarded + 1 and service.container_access().id not in used
    finally:
        service.stop()
    assert count_session_objects(docker_client, session).total == 0, "stop removes the pool's containers and networks too"


def test_close_removes_what_is_still_running(runtime_options: RuntimeOptions, image: CandidateImage, tmp_path: Path, docker_client: DockerClient) -> None:
    options = dataclasses.replace(runtime_options, session_id=f"test-close-{secrets.token_hex(3)}")
    rt = DockerRuntime(options, publish=False)
    rt.start(image, make_task(tmp_path, mocks=("payments",)), [load_mock(REPO / "mocks", "payments")])
    assert count_session_objects(docker_client, options.session_id).total == 3
    rt.close()
    assert (rt.last_cleanup.containers, rt.last_cleanup.networks) == (0, 0), "close stops its own services first"
    assert count_session_objects(docker_client, options.session_id).total == 0


def test_remove_session_objects_finds_strays(runtime_options: RuntimeOptions, docker_client: DockerClient, base_image: str) -> None:
    session = f"test-stray-{secrets.token_hex(3)}"
    labels = {SESSION_LABEL: session, "io.backendbench.worker": "gw9"}
    network = docker_client.networks.create(f"bb-{session}", internal=True, labels=labels)
    docker_client.containers.create(base_image, ["true"], labels=labels, network=network.name)
    docker_client.volumes.create(labels=labels)
    assert remove_session_objects(docker_client, session, worker_id="gw0").total == 0, "another worker's objects stay"
    counts = remove_session_objects(docker_client, session)
    assert (counts.containers, counts.networks, counts.volumes) == (1, 1, 1)
    assert count_session_objects(docker_client, session).total == 0


def test_relay_reaches_services_and_keeps_the_candidate_without_egress(
    runtime_options: RuntimeOptions, image: CandidateImage, tmp_path: Path, docker_client: DockerClient
) -> None:
    # The path rootless Podman, Docker Desktop and remote engines take: a relay container
    # publishes the service's and the mock's ports; the candidate stays on its internal network.
    options = dataclasses.replace(runtime_options, session_id=f"test-relay-{secrets.token_hex(3)}")
    rt = DockerRuntime(options, publish=True)
    try:
        service = rt.start(image, make_task(tmp_path, mocks=("payments",)), [load_mock(REPO / "mocks", "payments")])
        assert urlsplit(service.base_url).hostname == "127.0.0.1"
        assert urlsplit(service.mock_urls["payments"]).hostname == "127.0.0.1"
        assert requests.get(service.base_url + "/pay", timeout=10).json()["status"] == 201
        networks = docker_client.networks.list(filters={"label": f"{SESSION_LABEL}={options.session_id}"})
        assert sorted(bool(n.attrs["Internal"]) for n in networks) == [False, True], "the task network stays internal"
        mirror_host = urlsplit(host_apt_mirror() or DEFAULT_MIRROR).hostname or ""
        with contextlib.suppress(OSError):
            address = socket.gethostbyname(mirror_host)
            result = requests.get(service.base_url + "/egress", params={"host": address, "port": "80"}, timeout=10).json()
            assert result["connected"] is False, f"the candidate reached {address}:80 through the relay setup"
        service.stop()
        assert count_session_objects(docker_client, options.session_id).total == 0, "the relay and its network go with the service"
    finally:
        rt.close()


def test_engine_trouble_is_a_harness_error(runtime_options: RuntimeOptions, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    rt = DockerRuntime(runtime_options, publish=False)
    with pytest.raises(HarnessError, match="does not answer"):
        rt.build(make_candidate(tmp_path, fresh=True), make_task(tmp_path))


def test_slot_lock_bounds_holders_across_descriptors(tmp_path: Path) -> None:
    slots = SlotLock(tmp_path, "build", 1)
    held = slots.acquire(1, "a first slot")
    with pytest.raises(HarnessError, match="all 1 build slots stayed busy"):
        slots.acquire(0.3, "a second slot")
    slots.release(held)
    slots.release(slots.acquire(1, "the freed slot"))
