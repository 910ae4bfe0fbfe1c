"""The docker runtime: build each candidate's image, run it beside its mocks, probe it by IP.

Isolation. Each started service gets its own user-defined network ``bb-<session>-<task>-<rand>``
created with ``internal=True``: the candidate reaches its mocks by name (``http://payments:9000``)
and nothing else, so a candidate cannot phone home or fetch code at run time. Builds run on
the default bridge (pip needs the registry). Containers run with memory/cpu/pids limits,
``cap_drop=ALL``, ``no-new-privileges``, no mounts, and carry ``io.backendbench.session`` and
``io.backendbench.worker`` labels so ``close``, the watchdog of reaper.py (when this process
dies without closing) and ``backendbench clean`` find them. The
running service, its network, relay and sidecars are ``docker_service.DockerService``.

Two candidate formats. A candidate folder with its own Dockerfile is built as it is (context:
the folder only). A task whose task.yaml names a ``dockerfile`` supplies the image itself (as
BaxBench does): the build context is the candidate's code files plus the task's Dockerfile
and ``build_files``; a candidate's own Dockerfile is then ignored, and the build log says so.

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
``flock``-ed slot files (slots.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from docker.errors import DockerException, NotFound
from docker.utils import kwargs_from_env, parse_repository_tag

from ..candidates import IGNORED_NAMES, Candidate, hash_tree
from ..errors import BuildFailure, HarnessError
from ..tasks import Task
from .base import SESSION_LABEL, CandidateImage, MockSpec, RuntimeOptions
from .cleanup import CACHE_LABEL, TASK_LABEL, WORKER_LABEL, CleanupCounts, remove_session_objects
from .code_layer import code_archive, environment_tag, split_code_copy
from .docker_service import CONTENT_HASH_LABEL, MOCK_LABEL, DockerService
from .engine import NO_ENGINE_HINT, EngineAPIClient, EngineClient, docker_available, docker_name, engine_call, one_line
from .image_build import BuildOutcome, run_build
from .reaper import Reaper
from .relay import relay_wanted
from .slots import SlotLock

__all__ = ["UNENFORCED_LIMITS_ENV", "DockerRuntime", "DockerService", "EngineClient", "SlotLock", "docker_available"]


IMAGE_REPOSITORY = "backendbench"
SLOT_WAIT_S = 3600.0
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
        self.service_slots = SlotLock(locks, "service", options.max_running_services)
        self._reaper = Reaper(options.session_id, None if options.worker_id == "master" else options.worker_id)

    @property
    def publish(self) -> bool:
        """Whether services are reached through a relay container instead of by container IP."""
        if self._publish is None and self.options.relay is not None:
            self._publish = self.options.relay  # forced by the settings: no need to ask the engine
        if self._publish is None:
            try:
                components = self.engine(self.client.version, "reading the engine's version").get("Components") or [{}]
            except HarnessError:
                components = [{}]
            self._publish = relay_wanted(str(components[0].get("Name", "")), self.options.relay)
        return self._publish

    @property
    def client(self) -> Any:
        """The docker client, connected on first use; ``HarnessError`` when no engine answers."""
        if self._client is None:
            try:
                self._client_kwargs = kwargs_from_env()
                self._client = EngineClient(**self._client_kwargs, version="auto", timeout=120)
            except DockerException as err:
                raise HarnessError(f"the docker engine does not answer ({one_line(err)}); {NO_ENGINE_HINT}") from err
        return self._client

    def api_client(self, timeout_s: float) -> EngineAPIClient:
        """A low-level client of the same engine with its own socket timeout (builds, exec)."""
        kwargs = {**(self._client_kwargs or kwargs_from_env()), "version": self.client.api.api_version}
        return EngineAPIClient(**kwargs, timeout=timeout_s)

    # -- build -------------------------------------------------------------------------------

    def build(self, candidate: Candidate, task: Task) -> CandidateImage:
        """Build the candidate's image (its Dockerfile, or the task's) or reuse the cached one."""
        __tracebackhide__ = True
        if task.dockerfile is None and not candidate.has_dockerfile:
            raise BuildFailure(
                "candidate has no Dockerfile",
                f"{candidate.path} has no Dockerfile; the docker runtime builds every candidate from "
                f"its Dockerfile, and the service must listen on port {task.port}",
            )
        content_hash = candidate.content_hash() if task.dockerfile is None else _task_image_hash(candidate, task)
        if task.dockerfile is not None:
            shared = self._environment_build(candidate, task, content_hash)
            if shared is not None:
                return shared
        tag = f"{IMAGE_REPOSITORY}/{docker_name(task.id)}:{content_hash[:16]}"
        existing = self.image_id(tag)
        if existing is not None:
            return CandidateImage(candidate, tag, content_hash, cached=True, build_seconds=0.0, digest=existing)
        self._ensure_aliases()
        with self._build_slots.hold(SLOT_WAIT_S, f"a build slot for {candidate.key}"):
            existing = self.image_id(tag)  # another worker may have built it while we waited
            if existing is not None:
                return CandidateImage(candidate, tag, content_hash, cached=True, build_seconds=0.0, digest=existing)
            labels = {CACHE_LABEL: "1", TASK_LABEL: task.id, CONTENT_HASH_LABEL: content_hash}
            with _build_context(candidate, task) as (context, notes):
                outcome = self._run_build(context, tag, labels)
            outcome.lines[:0] = notes
        if outcome.error is not None:
            raise BuildFailure(f"docker build of {candidate.key} failed: {outcome.error}", self._build_hint(outcome) + outcome.tail())
        return CandidateImage(
            candidate, tag, content_hash, cached=False, build_seconds=outcome.seconds, build_log=outcome.log, digest=outcome.image_id
        )

    def _environment_build(self, candidate: Candidate, task: Task, content_hash: str) -> CandidateImage | None:
        """A task Dockerfile that ends in copying the code: its environment image, built once for
        every candidate and task that share it, and the code as an archive each container gets
        before it starts (code_layer.py); None for any other Dockerfile."""
        split = split_code_copy((task.benchmark_dir / str(task.dockerfile)).read_text(encoding="utf-8"), task.build_files)
        if split is None:
            return None
        files = {name: (task.benchmark_dir / name).read_bytes() for name in task.build_files}
        tag = environment_tag(IMAGE_REPOSITORY, split, files, self.options.base_image)
        started = time.monotonic()
        cached = self.image_id(tag) is not None
        if not cached:
            with tempfile.TemporaryDirectory(prefix="backendbench-environment-") as folder:
                context = Path(folder)
                for name, data in files.items():
                    (context / name).parent.mkdir(parents=True, exist_ok=True)
                    (context / name).write_bytes(data)
                (context / "Dockerfile").write_text(split.environment_dockerfile, encoding="utf-8")
                self._cached_build(tag, context, {"io.backendbench.environment": "1"}, f"the environment image of task {task.id} ({task.dockerfile} without its code COPY)")
        with _build_context(candidate, task) as (context, notes):
            archive = code_archive(context, split.destination)
        notes.append(f"backendbench: image {tag} ({task.dockerfile} without its last COPY) is shared; the candidate's code goes to {split.destination} in each container\n")
        return CandidateImage(
            candidate, tag, content_hash, cached=cached, build_seconds=time.monotonic() - started, build_log="".join(notes),
            digest=self.image_id(tag), code_archive=archive,
        )

    def _run_build(self, context: Path, tag: str, labels: dict[str, str]) -> BuildOutcome:
        """One watched ``docker build`` (image_build.py); engine trouble is a ``HarnessError``."""
        timeout = self.options.build_timeout_s
        api = self.api_client(timeout + 60)
        try:
            outcome = run_build(
                api,
                context,
                tag,
                labels,
                timeout_s=timeout,
                buildargs={"BASE_IMAGE": self.options.base_image} if self.options.base_image else None,
            )
        finally:
            api.close()
        if outcome.error is not None:
            if "no space left on device" in outcome.error.lower():
                raise HarnessError(f"the docker engine is out of disk space while building {tag}: {outcome.error}")
            return outcome
        outcome.image_id = outcome.image_id or self.image_id(tag)
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
                if self.image_id(alias) is not None:
                    continue
                if self.image_id(target) is None:
                    self._missing_aliases[alias] = target
                    continue
                repository, version = parse_repository_tag(alias)
                self._tag(target, repository, version or "latest")
            self._aliases_ready = True

    def _tag(self, image: str, repository: str, version: str) -> None:
        self.engine(lambda: self.client.images.get(image).tag(repository, version), f"tagging {image} as {repository}:{version}")

    def _cached_build(self, tag: str, context: Path, labels: dict[str, str], what: str) -> str:
        """Build a harness image (mock, sidecar) once; its failure is ours, never the candidate's."""
        if self.image_id(tag) is not None:
            return tag
        self._ensure_aliases()
        with self._build_slots.hold(SLOT_WAIT_S, f"a build slot for {what}"):
            if self.image_id(tag) is None:
                outcome = self._run_build(context, tag, {CACHE_LABEL: "1", **labels})
                if outcome.error is not None:
                    raise HarnessError(f"{what} failed to build: {outcome.error}\n{self._build_hint(outcome)}{outcome.tail()}")
        return tag

    def mock_image(self, mock: MockSpec) -> str:
        """The mock's image, built from ``mocks/<name>/Dockerfile`` on first use and cached."""
        if not (mock.path / "Dockerfile").is_file():
            raise HarnessError(f"mock {mock.name!r} has no Dockerfile at {mock.path / 'Dockerfile'}; the docker runtime builds mocks from it")
        tag = f"{IMAGE_REPOSITORY}/mock-{docker_name(mock.name)}:{hash_tree(mock.path)[:16]}"
        return self._cached_build(tag, mock.path, {MOCK_LABEL: mock.name}, f"mock {mock.name!r}")

    def postgres_image(self) -> str:
        """The PostgreSQL sidecar image: ``postgres_image`` if given, else built from
        ``runtime/postgres/Dockerfile`` on the base image and cached like mock images."""
        if self.options.postgres_image:
            return self.options.postgres_image
        from ..db.providers.sidecar import POSTGRES_DOCKERFILE_DIR

        content_hash = hash_tree(POSTGRES_DOCKERFILE_DIR) + (self.options.base_image or "")
        tag = f"{IMAGE_REPOSITORY}/postgres:{hashlib.sha256(content_hash.encode()).hexdigest()[:16]}"
        return self._cached_build(tag, POSTGRES_DOCKERFILE_DIR, {"io.backendbench.postgres": "1"}, "the PostgreSQL sidecar image")

    _postgres_image = postgres_image  # the name tests/database used

    # -- start -------------------------------------------------------------------------------

    def start(self, image: CandidateImage, task: Task, mocks: list[MockSpec]) -> DockerService:
        """Create the task network, start the mocks and the candidate, and wait for health.

        Whatever fails, everything created so far is removed before the error propagates.
        """
        __tracebackhide__ = True
        self._reaper.start()  # from now on labelled objects exist: removed even if this process dies
        slot = self.service_slots.acquire(SLOT_WAIT_S, f"a service slot for {image.candidate.key}")
        service = DockerService(self, image, task, slot)
        try:
            service.launch(mocks)
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
            self._reaper.done()
        finally:
            self._client.close()
            self._client = None

    # -- used by the services ----------------------------------------------------------------

    def check_limits(self, container: Any, memory: str, pids: int) -> None:
        """Refuse an engine that accepted the limits but will not enforce them (once per runtime)."""
        if self.limits_unenforced:
            return
        config = (container.attrs or {}).get("HostConfig") or {}
        if not config:
            self.engine(container.reload, f"inspecting {container.name}")
            config = container.attrs.get("HostConfig") or {}
        if (memory and not config.get("Memory")) or (pids and not config.get("PidsLimit")):
            if not self.options.allow_unenforced_limits:
                with contextlib.suppress(NotFound, HarnessError):
                    self.engine(partial(container.remove, force=True), f"removing container {container.name}")
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

    def release(self, service: DockerService, slot: int | None) -> None:
        """A stopped service gives its slot back and leaves the list ``close`` stops."""
        self.service_slots.release(slot)
        with self._lock:
            if service in self._services:
                self._services.remove(service)

    def image_id(self, ref: str) -> str | None:
        """The id of a local image, None when the engine has none by that name."""
        try:
            return str(self.engine(lambda: self.client.api.inspect_image(ref), f"inspecting image {ref}")["Id"])
        except NotFound:
            return None

    def engine(self, call: Callable[[], Any], what: str) -> Any:
        """Run one engine call; engine trouble becomes ``HarnessError`` (never the candidate's fault)."""
        return engine_call(call, what)

    def labels_for(self, task: Task, role: str) -> dict[str, str]:
        """The labels that tie an object to this session, worker and task (the reaper finds them)."""
        return {
            SESSION_LABEL: self.options.session_id,
            WORKER_LABEL: self.options.worker_id,
            TASK_LABEL: task.id,
            "io.backendbench.role": role,
        }


def _task_files(task: Task) -> list[str]:
    return [name for name in (task.dockerfile, *task.build_files) if name]


def _task_image_hash(candidate: Candidate, task: Task) -> str:
    """The image of a task-supplied Dockerfile depends on the candidate's code and the task's files."""
    digest = hashlib.sha256(candidate.content_hash().encode())
    for name in _task_files(task):
        digest.update(b"\0" + name.encode() + b"\0")
        digest.update(hashlib.sha256((task.benchmark_dir / name).read_bytes()).digest())
    return digest.hexdigest()


@contextlib.contextmanager
def _build_context(candidate: Candidate, task: Task) -> Iterator[tuple[Path, list[str]]]:
    """The folder to build and notes for the build log: the candidate folder itself, or (for a
    task that supplies the Dockerfile) a temporary folder of the candidate's code plus the task's files."""
    if task.dockerfile is None:
        yield candidate.path, []
        return
    notes = [f"backendbench: task {task.id} supplies the Dockerfile ({task.dockerfile}); the candidate provides only its code\n"]
    if candidate.has_dockerfile:
        notes.append("backendbench: the candidate's own Dockerfile is ignored\n")
    with tempfile.TemporaryDirectory(prefix="backendbench-context-") as folder:
        context = Path(folder)
        shutil.copytree(candidate.path, context, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*IGNORED_NAMES, "*.pyc", "Dockerfile"))
        for name in task.build_files:
            target = context / name
            if target.exists():
                notes.append(f"backendbench: the task's {name} replaces the candidate's\n")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(task.benchmark_dir / name, target)
        shutil.copy2(task.benchmark_dir / str(task.dockerfile), context / "Dockerfile")
        yield context, notes
