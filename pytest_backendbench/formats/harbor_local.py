"""The ``container`` fixture inside an exported Harbor task: the candidate's container is this one.

An imported BaxBench task supplies its own Dockerfile, and its tests reach into the candidate's
container through the docker SDK (``docker.from_env().containers.get(id)``: ``exec_run``,
``get_archive``, ``put_archive``, ``stats``). Exported to Harbor, that Dockerfile is the
environment: the agent writes the candidate into ``/app`` of Harbor's container, and the verifier
runs the candidate there as a local process (the process runtime). "Inside the candidate's
container" is then this container's own files and processes; this module answers the docker
SDK's calls the tests make with them. The exported oracle's ``conftest.py`` puts :func:`container`
in place of the harness's fixture (which needs a container engine).
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from docker.errors import NotFound
from docker.models.containers import ExecResult

from ..errors import HarnessError
from ..runtime.container_access import ExecTimeout

LOCAL_ID = "harbor-environment"
"""The container id the tests see (there is one container: this one)."""
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


class LocalContainer:
    """The docker SDK ``Container`` calls BaxBench's tests make, on this container's own files and processes."""

    id = LOCAL_ID

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir

    def exec_run(self, cmd: str | list[str], *, user: str = "", workdir: str | None = None, timeout: float = 600.0, **_: Any) -> ExecResult:
        """Run ``cmd`` here (a string through ``sh -c``, as the engine does); exit code and combined output."""
        argv = ["sh", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        if user and user not in ("root", "0"):
            argv = ["runuser", "-u", user, "--", *argv]
        proc = subprocess.run(argv, cwd=workdir or self.workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False, timeout=timeout)
        return ExecResult(proc.returncode, proc.stdout)

    def get_archive(self, path: str, **_: Any) -> tuple[Iterator[bytes], dict[str, Any]]:
        """A tar of ``path`` (its base name at the archive's root), as the engine answers."""
        target = Path(path)
        if not target.exists():
            raise NotFound(f"Could not find the file {path} in container {LOCAL_ID}")
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            tar.add(target, arcname=target.name)
        stat = target.stat()
        return iter([buffer.getvalue()]), {"name": target.name, "size": stat.st_size, "mode": stat.st_mode}

    def put_archive(self, path: str, data: bytes | io.IOBase) -> bool:
        """Unpack a tar into the folder ``path``."""
        raw = data if isinstance(data, bytes) else data.read()
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r") as tar:
            tar.extractall(path, filter="tar")
        return True

    def stats(self, stream: bool = False, **_: Any) -> dict[str, Any]:
        """Memory in use by the candidate's processes (those whose folder is ``/app``); CPU figures stay zero."""
        pids = _pids_in(self.workdir)  # one scan of /proc: BaxBench's tests poll stats
        usage = sum(_resident_bytes(pid) for pid in pids)
        limit = os.sysconf("SC_PHYS_PAGES") * PAGE_SIZE
        return {
            "memory_stats": {"usage": usage, "limit": limit},
            "cpu_stats": {"cpu_usage": {"total_usage": 0}, "system_cpu_usage": 0, "online_cpus": os.cpu_count() or 1},
            "precpu_stats": {"cpu_usage": {"total_usage": 0}, "system_cpu_usage": 0},
            "pids_stats": {"current": len(pids)},
        }


class LocalContainers:
    """``engine.containers``: every id is this container."""

    def __init__(self, container: LocalContainer) -> None:
        self._container = container

    def get(self, container_id: str) -> LocalContainer:
        if container_id != LOCAL_ID:
            raise NotFound(f"No such container: {container_id} (inside Harbor's environment there is only {LOCAL_ID})")
        return self._container


class LocalEngine:
    """What ``docker.from_env()`` answers in the copied BaxBench modules."""

    def __init__(self, workdir: Path) -> None:
        self.containers = LocalContainers(LocalContainer(workdir))


class LocalCandidate:
    """The ``container`` fixture's value: this container, the candidate's port the harness reaches."""

    id = LOCAL_ID

    def __init__(self, workdir: Path, base_url: str) -> None:
        self.engine = LocalEngine(workdir)
        port = urlsplit(base_url).port
        if port is None:
            raise HarnessError(f"the candidate's address {base_url} names no port")
        self.localhost_port = port
        self.localhost_url = base_url

    def exec(self, argv: list[str] | str, *, user: str | None = None, timeout: float = 30.0, workdir: str | None = None) -> ExecResult:
        """Run a command here, as ``CandidateContainer.exec`` runs one in the candidate's container."""
        try:
            return self.engine.containers.get(LOCAL_ID).exec_run(argv, user=user or "", workdir=workdir, timeout=timeout)
        except subprocess.TimeoutExpired as err:
            raise ExecTimeout(f"{argv!r} did not finish within {timeout:g} s (it was killed)") from err


def _pids_in(workdir: Path) -> list[int]:
    pids = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if Path(os.readlink(entry / "cwd")) == workdir:
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def _resident_bytes(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_SIZE
    except (OSError, IndexError, ValueError):
        return 0


@pytest.fixture
def container(service: Any) -> LocalCandidate:
    """The candidate's container, which inside Harbor's environment is this one (the candidate runs in ``/app``)."""
    return LocalCandidate(Path(service.task_run.candidate.path), service.base_url)
