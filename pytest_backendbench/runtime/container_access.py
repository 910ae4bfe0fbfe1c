"""What an oracle may do inside the candidate's running container (the ``container`` fixture).

Security oracles need more than HTTP: put a file where the candidate serves from, read its
SQLite database to see how passwords are stored, see whether the server process died, sample
its memory while a request runs. Everything goes through the docker SDK's public API
(``exec_create``/``exec_start``, ``put_archive``/``get_archive``, ``stats``, ``top``), so it
works alike on Docker, rootless Podman's compatible API and remote engines.

Engine trouble is a ``HarnessError``; what a command prints or returns is the oracle's to judge.
"""

from __future__ import annotations

import contextlib
import io
import posixpath
import secrets
import tarfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import docker
import requests
from docker.errors import DockerException, NotFound

from ..errors import HarnessError, ServiceCrashed
from .engine import engine_call, one_line
from .forwarder import LocalForwarder


@dataclass(frozen=True)
class ExecResult:
    """How one command run inside the container ended."""

    exit_code: int
    output: bytes

    @property
    def text(self) -> str:
        """The combined stdout and stderr, decoded (undecodable bytes replaced)."""
        return self.output.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class ContainerStats:
    """One sample of the container's resource use (zeros where the engine reports nothing)."""

    memory_bytes: int
    memory_limit_bytes: int
    cpu_percent: float
    pids: int


@dataclass(frozen=True)
class ContainerProcess:
    """One process running in the container, as the engine's ``top`` lists it."""

    pid: int
    user: str
    command: str


EXEC_MARKER = "BACKENDBENCH_EXEC"
"""Set in an exec's environment so a timed-out command and its children can be found and killed."""
ENGINE_TIMEOUT_S = 60.0
MAX_SYMLINKS = 40  # as the kernel's ELOOP limit


class ExecTimeout(HarnessError):
    """A command inside the container did not finish within its timeout."""


class CandidateContainer:
    """The candidate's container as an oracle item sees it (INTERFACES.md §4)."""

    def __init__(
        self,
        container: Any,
        engine: docker.DockerClient,
        exec_client: Callable[[float], docker.APIClient],
        target: Callable[[], tuple[str, int]],
    ) -> None:
        self._container = container
        self.engine = engine
        """A docker SDK client bound to the engine that runs the container."""
        self._exec_client = exec_client
        self._target = target
        self._forwarder: LocalForwarder | None = None
        self._closed = False
        self._lock = threading.Lock()

    @property
    def id(self) -> str:
        """The engine's container id."""
        return str(self._container.id)

    # -- commands ----------------------------------------------------------------------------

    def exec(self, argv: list[str] | str, *, user: str | None = None, timeout: float = 30.0, workdir: str | None = None) -> ExecResult:
        """Run a command in the container (a string goes through ``sh -c``); stdout and stderr combined.

        ``ExecTimeout`` when it has not finished after ``timeout`` seconds; the command and its
        children are then killed (found by a marker in their environment).
        """
        __tracebackhide__ = True
        command = ["sh", "-c", argv] if isinstance(argv, str) else list(argv)
        what = f"running {command!r} in {self.name}"
        marker = secrets.token_hex(8)
        api = self._exec_client(ENGINE_TIMEOUT_S)
        outcome: dict[str, Any] = {}
        try:
            exec_id = api.exec_create(
                self.id, command, stdout=True, stderr=True, user=user or "", workdir=workdir, environment={EXEC_MARKER: marker}
            )["Id"]
        except (DockerException, requests.RequestException) as err:
            api.close()
            if not self.alive():
                # the engine refuses an exec into a stopped container: the candidate's server died
                raise ServiceCrashed(f"cannot run {command!r}: the candidate's container has stopped", one_line(err)) from err
            raise HarnessError(f"the container engine failed {what}: {one_line(err)}") from err

        def run() -> None:
            # the SDK reads an exec's output with no socket timeout: the deadline is kept here
            try:
                outcome["output"] = api.exec_start(exec_id, stream=False, demux=False)
                outcome["code"] = api.exec_inspect(exec_id).get("ExitCode")
            except (DockerException, requests.RequestException, OSError) as err:
                outcome["error"] = err
            finally:
                api.close()

        worker = threading.Thread(target=run, name=f"bb-exec-{marker}", daemon=True)
        worker.start()
        worker.join(timeout)
        if worker.is_alive():
            self._kill_marked(marker, user)
            raise ExecTimeout(f"{what} did not finish within {timeout:g}s; it was killed")
        error = outcome.get("error")
        if error is not None:
            raise HarnessError(f"the container engine failed {what}: {one_line(error)}") from error
        code = outcome.get("code")
        return ExecResult(exit_code=int(code) if code is not None else -1, output=bytes(outcome.get("output") or b""))

    def _kill_marked(self, marker: str, user: str | None) -> None:
        """Kill every process whose environment carries ``marker`` (as the same user: no capability needed)."""
        script = (
            f"for p in /proc/[0-9]*; do grep -qz '^{EXEC_MARKER}={marker}$' $p/environ 2>/dev/null "
            "&& kill -KILL ${p#/proc/} 2>/dev/null; done; true"
        )
        with contextlib.suppress(DockerException, requests.RequestException):
            self._container.exec_run(["sh", "-c", script], user=user or "")

    # -- files -------------------------------------------------------------------------------

    def put_file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        """Write ``data`` to the absolute ``path`` in the container, creating missing folders."""
        __tracebackhide__ = True
        if not path.startswith("/"):
            raise ValueError(f"put_file needs an absolute path in the container, got {path!r}")
        archive = io.BytesIO()
        with tarfile.open(fileobj=archive, mode="w") as tar:
            info = tarfile.TarInfo(path.lstrip("/"))
            info.size = len(data)
            info.mode = mode
            tar.addfile(info, io.BytesIO(data))
        done = engine_call(lambda: self._container.put_archive("/", archive.getvalue()), f"writing {path} into {self.name}")
        if done is False:
            raise HarnessError(f"the engine refused to write {path} into {self.name}")

    def get_file(self, path: str) -> bytes:
        """The content of the file at ``path`` in the container; ``FileNotFoundError`` when absent."""
        __tracebackhide__ = True
        return self._read(path, MAX_SYMLINKS)

    def _read(self, path: str, links_left: int) -> bytes:
        __tracebackhide__ = True
        try:
            stream, _ = engine_call(lambda: self._container.get_archive(path), f"reading {path} from {self.name}")
            archive = b"".join(stream)
        except NotFound as err:
            raise FileNotFoundError(f"{path} does not exist in the candidate's container") from err
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            for member in tar.getmembers():
                if member.isdir():
                    raise IsADirectoryError(f"{path} is a folder in the candidate's container")
                if member.issym() and links_left > 0:
                    # get_archive does not follow a final symlink: read what it points at
                    return self._read(posixpath.normpath(posixpath.join(posixpath.dirname(path), member.linkname)), links_left - 1)
                handle = tar.extractfile(member)
                if handle is not None:
                    return handle.read()
        raise FileNotFoundError(f"{path} is not a regular file in the candidate's container")

    # -- observation -------------------------------------------------------------------------

    def stats(self) -> ContainerStats:
        """One sample of memory (without page cache), CPU and process count."""
        __tracebackhide__ = True
        data = engine_call(lambda: self._container.stats(stream=False), f"sampling the resources of {self.name}") or {}
        memory = data.get("memory_stats") or {}
        detail = memory.get("stats") or {}
        usage = int(memory.get("usage") or 0)
        # what `docker stats` shows: the page cache is reclaimable, not the candidate's use
        cache = int(detail.get("inactive_file") or detail.get("total_inactive_file") or detail.get("cache") or 0)
        return ContainerStats(
            memory_bytes=max(usage - cache, 0),
            memory_limit_bytes=int(memory.get("limit") or 0),
            cpu_percent=_cpu_percent(data),
            pids=int((data.get("pids_stats") or {}).get("current") or 0),
        )

    def processes(self) -> list[ContainerProcess]:
        """The processes running in the container; empty once the container has stopped."""
        __tracebackhide__ = True
        if not self.alive():
            return []
        try:
            top = engine_call(self._top, f"listing the processes of {self.name}") or {}
        except NotFound:
            return []
        except HarnessError:
            if not self.alive():  # it stopped between the two calls
                return []
            raise
        titles = [str(t).upper() for t in top.get("Titles") or []]
        pid_at = _column(titles, "PID")
        user_at = _column(titles, "USER", "UID")
        command_at = _column(titles, "CMD", "COMMAND", "ARGS")
        result = []
        for row in top.get("Processes") or []:
            pid = str(row[pid_at]) if pid_at is not None and pid_at < len(row) else ""
            result.append(
                ContainerProcess(
                    pid=int(pid) if pid.isdigit() else -1,
                    user=str(row[user_at]) if user_at is not None and user_at < len(row) else "",
                    command=str(row[command_at]) if command_at is not None and command_at < len(row) else " ".join(map(str, row)),
                )
            )
        return result

    def _top(self) -> Any:
        try:
            return self._container.top()
        except requests.exceptions.JSONDecodeError:
            # Podman 4's compatible API answers a plain top with an empty body; given its own
            # ps descriptors (which Docker's ps would refuse) it answers
            return self._container.top(ps_args="pid,user,args")

    def alive(self) -> bool:
        """Whether the container is running."""
        __tracebackhide__ = True
        try:
            engine_call(self._container.reload, f"inspecting {self.name}")
        except NotFound:
            return False
        state = self._container.attrs.get("State") or {}
        return bool(state.get("Running"))

    # -- localhost ---------------------------------------------------------------------------

    @property
    def localhost_port(self) -> int:
        """A port on 127.0.0.1 forwarded to the service (the forwarder starts on first use)."""
        with self._lock:
            if self._closed:
                raise HarnessError(f"{self.name}: the service was stopped; its localhost forwarder is gone")
            if self._forwarder is None:
                forwarder = LocalForwarder(self._target, name=self.name)
                forwarder.start()
                self._forwarder = forwarder
            return self._forwarder.port

    @property
    def localhost_url(self) -> str:
        """``http://localhost:<localhost_port>``, for tests that hard-code localhost."""
        return f"http://localhost:{self.localhost_port}"

    def close(self) -> None:
        """Stop the forwarder (the service's stop calls this); idempotent."""
        with self._lock:
            self._closed = True
            forwarder, self._forwarder = self._forwarder, None
        if forwarder is not None:
            forwarder.stop()

    # -- helpers -----------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The container's name, for messages."""
        return str(getattr(self._container, "name", None) or self.id[:12])


def _column(titles: list[str], *names: str) -> int | None:
    for name in names:
        if name in titles:
            return titles.index(name)
    return None


def _cpu_percent(data: dict[str, Any]) -> float:
    """CPU use since the previous sample, as ``docker stats`` computes it (100 = one core)."""
    cpu = data.get("cpu_stats") or {}
    pre = data.get("precpu_stats") or {}
    total = int((cpu.get("cpu_usage") or {}).get("total_usage") or 0)
    pre_total = int((pre.get("cpu_usage") or {}).get("total_usage") or 0)
    system = int(cpu.get("system_cpu_usage") or 0)
    pre_system = int(pre.get("system_cpu_usage") or 0)
    cpus = int(cpu.get("online_cpus") or len((cpu.get("cpu_usage") or {}).get("percpu_usage") or []) or 1)
    if system <= pre_system or total < pre_total:
        return 0.0
    return round((total - pre_total) / (system - pre_system) * cpus * 100.0, 2)
