"""Where an agent works: one labelled container per (task, sample), or a temp dir as a fallback.

The docker sandbox runs on the same engine as the evaluation runtime. ``/workspace`` holds only
the task's visible material (``prepare_workspace``) and, when a disk limit is set, is a
size-limited tmpfs *volume*: a plain ``--tmpfs`` mount would be invisible to ``get_archive``
(the engine reads archives from the host's view of the container), while a local volume of
type tmpfs is mounted by the engine and copies out like any folder; no root quotas needed.
Its pages count against the container's memory limit. Memory, CPUs and pids are cgroup
limits; the per-command timeout kills the command's process group and leaves the sandbox
running; the wall time bounds the whole sample. Network ``bridge`` gives the sandbox its own
labelled bridge network (the agent can ``pip install`` but cannot see other samples'
sandboxes); ``none`` leaves it only a loopback interface.

PID 1 is a ``bash`` loop: it reaps orphans (servers an agent started in the background) and,
being PID 1, survives ``kill -9 -1``. Commands go through one long-lived shell (``shell.py``).
The container, its volume and its network carry the session, worker, task and role labels, so
``close``, the plugin's exit-time reaper and ``backendbench clean`` all find them; ``close``
also runs at interpreter exit if nobody called it.

``engine="process"`` runs commands with ``bash -lc`` in a temporary directory on the host,
with timeouts and output caps but no isolation whatsoever, and warns that it is not sandboxed.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import tarfile
import tempfile
import threading
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..errors import HarnessError
from ..runtime.base import DEFAULT_BASE_IMAGE, SESSION_LABEL, default_cache_dir
from ..runtime.cleanup import TASK_LABEL, WORKER_LABEL
from ..tasks import VisibleTask
from .agent_image import ROLE_LABEL, ensure_agent_image
from .shell import CommandCapture, CommandResult, ExecShell
from .workspace import SCRATCH_DIR, prepare_workspace

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "CommandResult",
    "DockerSandbox",
    "ProcessSandbox",
    "Sandbox",
    "SandboxLimits",
    "SandboxSpec",
    "UnsandboxedAgentWarning",
    "open_sandbox",
]

WORKSPACE = "/workspace"
SAMPLE_LABEL = "io.backendbench.sample"
SANDBOX_ROLE = "agent-sandbox"
NETWORKS = ("bridge", "none")
ENGINES = ("docker", "process")
KILL_GRACE_S = 5.0
SIZE_PATTERN = re.compile(r"^[1-9][0-9]*[bkmg]?$", re.IGNORECASE)
# PID 1: reaps orphans (bash waits for any child) and, as PID 1, is spared by `kill -9 -1`.
KEEPER = "trap 'exit 0' TERM INT; while :; do sleep 86400 & wait $!; done"
# Root inside the sandbox keeps what package managers need (apt drops to _apt, dpkg chowns)
# and loses the rest of Docker's default set (raw sockets, mknod, chroot, audit, setfcap).
CAPABILITIES = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "NET_BIND_SERVICE"]
LOG_CONFIG = {"type": "json-file", "config": {"max-size": "1m", "max-file": "1"}}


class UnsandboxedAgentWarning(UserWarning):
    """An agent is about to run commands directly on this machine (``engine="process"``)."""


@dataclass(frozen=True)
class SandboxLimits:
    """What one sample's sandbox may use."""

    memory: str = "2g"
    cpus: float = 1.0
    pids: int = 512
    disk: str | None = "2g"  # size of /workspace (a tmpfs volume; None: the container's own filesystem, unbounded)
    command_timeout_s: float = 120.0
    wall_s: float = 1800.0
    output_bytes: int = 1_000_000  # per command, head and tail kept; the loop truncates further for the model


@dataclass(frozen=True)
class SandboxSpec:
    """One (task, sample) sandbox: what it holds, how it is labelled, what it may use."""

    task: VisibleTask  # visible material only
    key: str  # "task" or "task@sample-k", used in names and labels
    session_id: str
    image: str | None = None  # None: the default agent image (built on demand)
    network: str = "bridge"  # "bridge" | "none"
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    env: Mapping[str, str] = field(default_factory=dict)  # passed into the sandbox (e.g. cmd: agents' API keys)
    worker_id: str = "master"  # xdist worker, for the worker label
    base_image: str | None = None  # what the default agent image builds on (None: $BACKENDBENCH_BASE_IMAGE, else backendbench/python:3.11)
    cache_dir: Path | None = None  # where build locks live (None: BACKENDBENCH_CACHE or ~/.cache)
    files: Mapping[str, str] = field(default_factory=dict)  # extra workspace files, e.g. {".backendbench/prompt.md": ...}


@runtime_checkable
class Sandbox(Protocol):
    """A place where an agent's commands run; ``close`` removes it."""

    workspace: str  # the path commands run in ("/workspace" in Docker)
    sandboxed: bool  # False for the local fallback
    description: str  # for the report's manifest

    def run(self, command: str, timeout_s: float | None = None) -> CommandResult:
        """``bash -lc command`` in the workspace; never raises for the command's own failure."""

    def copy_out(self, dest: Path) -> None:
        """Copy the workspace's files (not the harness's scratch folder) into ``dest``."""

    def remaining_s(self) -> float:
        """Seconds left of the sample's wall time."""

    def close(self) -> None:
        """Remove the container or temp dir; idempotent."""


def open_sandbox(spec: SandboxSpec, engine: str) -> DockerSandbox | ProcessSandbox:
    """Start a sandbox for ``spec`` on ``engine`` ("docker" or "process"); also a context manager.

    Raises ``HarnessError`` (with what to do) when the engine does not answer or the image is
    missing, ``ValueError`` for a bad engine, network or limit. Whatever fails during start,
    everything created so far is removed.
    """
    _check_spec(spec)
    if engine == "docker":
        return DockerSandbox(spec)
    if engine == "process":
        return ProcessSandbox(spec)
    raise ValueError(f"sandbox engine {engine!r}: expected one of {', '.join(ENGINES)}")


def _check_spec(spec: SandboxSpec) -> None:
    limits = spec.limits
    if spec.network not in NETWORKS:
        raise ValueError(f"--agent-network {spec.network!r}: expected one of {', '.join(NETWORKS)}")
    if not SIZE_PATTERN.match(limits.memory):
        raise ValueError(f"--agent-memory {limits.memory!r}: expected a size such as 2g or 512m")
    if limits.disk is not None and not SIZE_PATTERN.match(limits.disk):
        raise ValueError(f"--agent-disk {limits.disk!r}: expected a size such as 2g or 512m")
    if limits.cpus <= 0 or limits.pids < 16:
        raise ValueError(f"--agent-cpus {limits.cpus:g} / --agent-pids {limits.pids}: expected cpus > 0 and at least 16 pids")
    if limits.command_timeout_s <= 0 or limits.wall_s <= 0 or limits.output_bytes < 1024:
        raise ValueError("sandbox limits: the command timeout and wall time must be positive and the output cap at least 1024 bytes")


def _workspace_files(spec: SandboxSpec, dest: Path) -> None:
    """The visible task plus ``spec.files`` in ``dest``; a file path must stay inside it."""
    prepare_workspace(spec.task, dest)
    for name, text in spec.files.items():
        relative = PurePosixPath(name)
        if relative.is_absolute() or ".." in relative.parts or not relative.parts:
            raise ValueError(f"sandbox file {name!r}: expected a relative path inside the workspace")
        target = dest.joinpath(*relative.parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def _skip_scratch(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    """Tar filter for copy_out: the data filter (no links out, no devices) minus our scratch folder."""
    name = member.name.removeprefix("./")
    if name in ("", ".") or name == SCRATCH_DIR or name.startswith(SCRATCH_DIR + "/"):
        return None
    try:
        return tarfile.data_filter(member, dest)
    except tarfile.FilterError:
        return None  # a link out of the workspace or a device file: not part of a candidate


def _extract(tar: tarfile.TarFile, dest: Path) -> None:
    """Extract with ``_skip_scratch``; Pythons without extraction filters (< 3.10.12) get the
    same rules by hand: regular files, folders and links that stay inside ``dest``."""
    if hasattr(tarfile, "data_filter"):
        tar.extractall(dest, filter=_skip_scratch)
        return
    root = dest.resolve()
    for member in tar.getmembers():
        name = member.name.removeprefix("./")
        if name in ("", ".") or name == SCRATCH_DIR or name.startswith(SCRATCH_DIR + "/"):
            continue
        target = (dest / name).resolve()
        if not target.is_relative_to(root) or not (member.isfile() or member.isdir() or member.issym()):
            continue
        if member.issym() and not (target.parent / member.linkname).resolve().is_relative_to(root):
            continue
        member.uid = member.gid = 0
        member.uname = member.gname = ""
        tar.extract(member, dest, set_attrs=False)


class _WallClock:
    """The sample's wall-time budget and the context-manager plumbing both engines share."""

    limits: SandboxLimits
    _deadline: float

    def remaining_s(self) -> float:
        """Seconds left of the sample's wall time (``limits.wall_s`` from the start)."""
        return max(0.0, self._deadline - time.monotonic())

    @property
    def wall_exhausted(self) -> bool:
        """Whether the sample's wall time is spent (every further ``run`` returns at once)."""
        return self.remaining_s() <= 0

    def _effective_timeout(self, timeout_s: float | None) -> float:
        limit = self.limits.command_timeout_s if timeout_s is None else timeout_s
        return min(limit, self.remaining_s())

    def _wall_spent(self) -> CommandResult:
        return CommandResult(
            exit_code=None,
            output=f"[not run: the sample's wall time of {self.limits.wall_s:g}s is spent]\n",
            seconds=0.0,
            timed_out=True,
        )

    def close(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if error is None:
            self.close()
            return
        try:
            self.close()
        except HarnessError as close_error:  # keep the original error; the reaper gets the rest
            warnings.warn(f"sandbox cleanup failed after an error: {close_error}", RuntimeWarning, stacklevel=2)


class DockerSandbox(_WallClock):
    """A labelled container with /workspace, driven through one long-lived shell."""

    workspace = WORKSPACE
    sandboxed = True

    def __init__(self, spec: SandboxSpec) -> None:
        from ..runtime.docker import _docker_name

        self.spec = spec
        self.limits = spec.limits
        self.image = ""
        self.description = ""
        self.container: Any = None
        self.volume: Any = None
        self.network: Any = None
        self._client: Any = None
        self._shell: ExecShell | None = None
        self._lock = threading.Lock()
        self._close_lock = threading.Lock()
        self._closed = False
        self._gone: str | None = None  # why the container is no longer usable
        self.name = f"bb-{_docker_name(spec.session_id)[:24]}-{_docker_name(spec.key)[:40]}-agent-{secrets.token_hex(3)}"
        self.labels = {
            SESSION_LABEL: spec.session_id,
            WORKER_LABEL: spec.worker_id,
            TASK_LABEL: spec.task.id,
            SAMPLE_LABEL: spec.key,
            ROLE_LABEL: SANDBOX_ROLE,
        }
        atexit.register(self.close)
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        self._deadline = time.monotonic() + self.limits.wall_s

    # -- start -----------------------------------------------------------------------------

    def _start(self) -> None:
        import docker
        from docker.utils import kwargs_from_env

        from ..runtime.docker import EngineClient

        try:
            # The evaluation runtime's client: same engine, same TLS handling of DOCKER_* settings.
            self._client = EngineClient(**kwargs_from_env(), version="auto", timeout=120)
        except docker.errors.DockerException as err:
            raise HarnessError(f"the docker engine does not answer ({err}); start dockerd or run the agent with the process engine") from err
        client = self._client
        self.image = self._image()
        limits = self.limits
        if self.spec.network == "bridge":
            self.network = self._docker(
                lambda: client.networks.create(f"{self.name}-net", driver="bridge", labels={**self.labels, ROLE_LABEL: "agent-network"}),
                "creating the sandbox network",
            )
        volumes: dict[str, dict[str, str]] = {}
        if limits.disk is not None:
            self.volume = self._docker(
                lambda: client.volumes.create(
                    name=f"{self.name}-ws",
                    driver="local",
                    driver_opts={"type": "tmpfs", "device": "tmpfs", "o": f"size={limits.disk},mode=1777"},
                    labels={**self.labels, ROLE_LABEL: "agent-workspace"},
                ),
                "creating the sandbox workspace volume",
            )
            volumes[self.volume.name] = {"bind": WORKSPACE, "mode": "rw"}
        kwargs: dict[str, Any] = {
            "name": self.name,
            "entrypoint": ["bash", "-c", KEEPER],
            "command": [],
            "detach": True,
            "hostname": "sandbox",
            "working_dir": WORKSPACE,
            "environment": dict(self.spec.env),
            "labels": self.labels,
            "mem_limit": limits.memory,
            "memswap_limit": limits.memory,  # no swap: a memory hog meets the OOM killer
            "nano_cpus": int(limits.cpus * 1e9),
            "pids_limit": limits.pids,
            "cap_drop": ["ALL"],
            "cap_add": CAPABILITIES,
            "security_opt": ["no-new-privileges"],
            "log_config": docker.types.LogConfig(**LOG_CONFIG),
            "volumes": volumes,
        }
        if self.network is not None:
            kwargs["network"] = self.network.name
        else:
            kwargs["network_mode"] = "none"
        self.container = self._docker(lambda: client.containers.create(self.image, **kwargs), f"creating the sandbox container {self.name}")
        try:
            self.container.start()
        except docker.errors.APIError as err:
            raise HarnessError(
                f"the sandbox container from {self.image} did not start: {err.explanation or err}; the sandbox needs "
                "`bash` on the image's PATH (pass another --agent-image)"
            ) from err
        self._put_workspace()
        self._docker(self.container.reload, "inspecting the sandbox container")
        env = (self.container.attrs.get("Config") or {}).get("Env") or []
        image_path = next((e.partition("=")[2] for e in env if e.startswith("PATH=")), None)
        self._shell = ExecShell(client, self.container, WORKSPACE, limits.output_bytes, image_path)
        self._shell.start()
        disk = f"/workspace {limits.disk} tmpfs" if limits.disk else "/workspace unbounded"
        self.description = (
            f"docker sandbox {self.image} (network {self.spec.network}, memory {limits.memory}, cpus {limits.cpus:g}, "
            f"pids {limits.pids}, {disk})"
        )

    def _image(self) -> str:
        import docker

        client = self._client
        if self.spec.image is None:
            base = self.spec.base_image or os.environ.get("BACKENDBENCH_BASE_IMAGE") or DEFAULT_BASE_IMAGE
            return ensure_agent_image(client, base, self.spec.cache_dir or default_cache_dir())
        image = self.spec.image
        try:
            client.api.inspect_image(image)
        except docker.errors.ImageNotFound:
            try:
                client.images.pull(image)
            except docker.errors.DockerException as err:
                raise HarnessError(
                    f"the agent image {image} is neither local nor pullable ({err}); build or pull it "
                    f"(docker pull {image}), or drop --agent-image to use the default agent image"
                ) from err
        except docker.errors.DockerException as err:
            raise HarnessError(f"the docker engine failed inspecting {image}: {err}") from err
        return image

    def _put_workspace(self) -> None:
        """The visible task, tarred on the host and unpacked into the (now mounted) volume."""
        buffer = io.BytesIO()
        with tempfile.TemporaryDirectory(prefix="backendbench-workspace-") as tmp:
            _workspace_files(self.spec, Path(tmp))
            with tarfile.open(fileobj=buffer, mode="w") as tar:
                for path in sorted(Path(tmp).rglob("*")):
                    info = tar.gettarinfo(str(path), arcname=path.relative_to(tmp).as_posix())
                    # Writable by whatever user the image runs as.
                    info.uid = info.gid = 0
                    info.uname = info.gname = "root"
                    info.mode = 0o777 if info.isdir() else 0o666
                    if info.isfile():
                        with path.open("rb") as handle:
                            tar.addfile(info, handle)
                    else:
                        tar.addfile(info)
        ok = self._docker(lambda: self.container.put_archive(WORKSPACE, buffer.getvalue()), "copying the task into the sandbox")
        if not ok:
            raise HarnessError(f"the engine refused to copy the task into {self.name}:{WORKSPACE}")

    def _docker(self, call: Any, what: str) -> Any:
        import docker
        import requests

        try:
            return call()
        except (docker.errors.DockerException, requests.RequestException) as err:
            raise HarnessError(f"the docker engine failed {what}: {getattr(err, 'explanation', None) or err}") from err

    # -- Sandbox ---------------------------------------------------------------------------

    def run(self, command: str, timeout_s: float | None = None) -> CommandResult:
        """``bash -lc command`` in /workspace; a timeout kills the command's process group only."""
        if self._closed:
            raise HarnessError(f"sandbox {self.name} is closed; open a new one")
        if self._gone is not None:
            return CommandResult(exit_code=None, output=f"[not run: {self._gone}]\n", seconds=0.0, timed_out=False)
        timeout = self._effective_timeout(timeout_s)
        if timeout <= 0:
            return self._wall_spent()
        shell = self._shell
        if shell is None:
            raise HarnessError(f"sandbox {self.name} has no shell; it failed to start")
        with self._lock:
            try:
                return shell.run(command, timeout)
            except HarnessError:
                reason = self._exit_reason()
                if reason is None:
                    raise
                self._gone = f"the sandbox container stopped ({reason}); its workspace is lost"
                return CommandResult(exit_code=None, output=f"[{self._gone}]\n", seconds=0.0, timed_out=False)

    def _exit_reason(self) -> str | None:
        import docker

        try:
            self.container.reload()
        except docker.errors.NotFound:
            return "the container was removed"
        except docker.errors.DockerException:
            return None
        state = self.container.attrs.get("State") or {}
        if state.get("Running"):
            return None
        if state.get("OOMKilled"):
            return f"killed by the OOM killer, memory limit {self.limits.memory}"
        return f"exited with code {state.get('ExitCode')}"

    def copy_out(self, dest: Path) -> None:
        """The workspace through the engine's archive API into ``dest`` (links out and devices skipped)."""
        if self._closed:
            raise HarnessError(f"sandbox {self.name} is closed; copy the workspace out before closing it")
        dest.mkdir(parents=True, exist_ok=True)
        with tempfile.SpooledTemporaryFile(max_size=64 << 20) as spool:
            def fetch() -> None:
                chunks, _ = self.container.get_archive(f"{WORKSPACE}/.")
                for chunk in chunks:
                    spool.write(chunk)

            self._docker(fetch, f"copying {WORKSPACE} out of {self.name}")
            spool.seek(0)
            with tarfile.open(fileobj=spool, mode="r:") as tar:
                _extract(tar, dest)

    def close(self) -> None:
        """Remove the container, its workspace volume and its network; safe to call twice."""
        # Its own lock: close may come from atexit or another thread while a command holds _lock.
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        atexit.unregister(self.close)
        import docker

        if self._shell is not None:
            self._shell.close()
        problems: list[str] = []
        for what, obj, remove in (
            ("container", self.container, lambda o: o.remove(force=True, v=True)),
            ("volume", self.volume, lambda o: o.remove(force=True)),
            ("network", self.network, lambda o: o.remove()),
        ):
            if obj is None:
                continue
            try:
                remove(obj)
            except docker.errors.NotFound:
                pass
            except docker.errors.DockerException as err:
                if "in progress" not in str(err):
                    problems.append(f"{what} {getattr(obj, 'name', obj)}: {err}")
        if self._client is not None:
            with contextlib.suppress(Exception):
                self._client.close()
        if problems:
            raise HarnessError(
                "could not remove the agent sandbox (" + "; ".join(problems) + f"); run `backendbench clean --session {self.spec.session_id}`"
            )


class ProcessSandbox(_WallClock):
    """The no-Docker fallback: a temp dir on this machine. NOT a sandbox: it isolates nothing."""

    sandboxed = False

    def __init__(self, spec: SandboxSpec) -> None:
        self.spec = spec
        self.limits = spec.limits
        self._closed = False
        self._lock = threading.Lock()
        self._groups: list[tuple[int, str | None]] = []  # (process group id, its leader's start time)
        self._readers: list[threading.Thread] = []
        self._root = Path(tempfile.mkdtemp(prefix="backendbench-agent-"))
        self.workspace = str(self._root / "workspace")
        self.description = f"process (NOT sandboxed: commands run on this machine in {self.workspace})"
        warnings.warn(
            f"agent sandbox for {spec.key}: the process engine runs the agent's commands directly on this machine, "
            "as your user, with your network and files; nothing is isolated. Use the docker engine for untrusted agents.",
            UnsandboxedAgentWarning,
            stacklevel=3,
        )
        atexit.register(self.close)
        try:
            _workspace_files(spec, Path(self.workspace))
        except BaseException:
            self.close()
            raise
        self._env = {**os.environ, **spec.env}
        self._deadline = time.monotonic() + self.limits.wall_s

    def run(self, command: str, timeout_s: float | None = None) -> CommandResult:
        """``bash -lc command`` in the temp workspace; a timeout kills the command's session."""
        if self._closed:
            raise HarnessError("this process sandbox is closed; open a new one")
        timeout = self._effective_timeout(timeout_s)
        if timeout <= 0:
            return self._wall_spent()
        token = secrets.token_hex(8)
        capture = CommandCapture(token, self.limits.output_bytes)
        cond = threading.Condition()
        path = self._env.get("PATH")
        text = command.replace("\x00", "")
        if path:
            text = f"PATH={shlex.quote(path)}:\"$PATH\"; {text}"
        wrapper = 'bash -lc "$1" </dev/null 2>&1; printf "\\n__BB_DONE_%s_%d__\\n" "$2" "$?"'
        started = time.monotonic()
        with self._lock:
            proc = subprocess.Popen(
                ["bash", "-c", wrapper, "backendbench-sandbox", text, token],
                cwd=self.workspace,
                env=self._env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: a timeout kills all it started
            )
            self._groups.append((proc.pid, _start_time(proc.pid)))
            reader = threading.Thread(target=_drain, args=(proc, capture, cond), daemon=True, name=f"sandbox-{self.spec.key}")
            reader.start()
            self._readers.append(reader)
            deadline = started + timeout
            timed_out = False
            exited_at: float | None = None
            with cond:
                while not capture.done:
                    now = time.monotonic()
                    if now >= deadline:
                        timed_out = True
                        break
                    if exited_at is None and proc.poll() is not None:
                        exited_at = now
                    if exited_at is not None and now - exited_at > 1.0:
                        break  # the wrapper died without its marker (killed from outside)
                    cond.wait(min(deadline - now, 0.2))
            if timed_out:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(KILL_GRACE_S)
            with cond:
                if not capture.done:
                    capture.flush()
                output = capture.output.text()
        return CommandResult(
            exit_code=capture.exit_code if capture.done and not timed_out else None,
            output=output,
            seconds=time.monotonic() - started,
            timed_out=timed_out,
            dropped_bytes=capture.output.dropped,
        )

    def copy_out(self, dest: Path) -> None:
        """Copy the temp workspace into ``dest`` (symlinks kept as links, scratch folder left out)."""
        if self._closed:
            raise HarnessError("this process sandbox is closed; copy the workspace out before closing it")
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copytree(self.workspace, dest, symlinks=True, dirs_exist_ok=True, ignore=shutil.ignore_patterns(SCRATCH_DIR))
        root = dest.resolve()
        for link in [p for p in dest.rglob("*") if p.is_symlink()]:
            if not link.resolve().is_relative_to(root):
                link.unlink()  # as in the docker copy: a link out of the workspace is not part of a candidate

    def close(self) -> None:
        """Kill every process group the agent started (and strays still inside the workspace), delete the temp dir."""
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        for group, started in self._groups:
            # The kernel keeps a group's id while it has members; once it is empty the id may go to a
            # stranger's new group, whose leader then has another start time: never kill that one.
            leader = _start_time(group)
            if leader is not None and leader != started:
                continue
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL)
        _kill_processes_in(self._root)
        shutil.rmtree(self._root, ignore_errors=True)


def _drain(proc: subprocess.Popen[bytes], capture: CommandCapture, cond: threading.Condition) -> None:
    """Read a command's pipe to EOF: up to the end marker into ``capture``, the rest (background
    processes still holding the pipe) is discarded so they never block on a full pipe."""
    stream = proc.stdout
    if stream is None:
        return
    fd = stream.fileno()
    try:
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            with cond:
                if not capture.done:
                    capture.feed(chunk)
                    if capture.done:
                        cond.notify_all()
    except OSError:
        pass
    finally:
        with cond:
            cond.notify_all()
        stream.close()


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (/proc/<pid>/stat field 22), None when gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else None


def _kill_processes_in(folder: Path) -> None:
    """SIGKILL processes whose working directory lies in ``folder`` (daemons that left their group)."""
    root = str(folder.resolve())
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if cwd == root or cwd.startswith(root + "/"):
            with contextlib.suppress(ProcessLookupError, PermissionError, ValueError):
                os.kill(int(entry.name), signal.SIGKILL)
