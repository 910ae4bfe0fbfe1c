"""What every sandbox shares: the spec and limits of a sample's sandbox, the ``Sandbox``
protocol, the workspace's files, the copy-out filter and the sample's wall clock.

The engines live in ``sandbox.py`` (docker) and ``process_sandbox.py`` (the unsandboxed
fallback); ``sandbox.open_sandbox`` picks one.
"""

from __future__ import annotations

import re
import tarfile
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from types import TracebackType
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..errors import HarnessError
from ..tasks import VisibleTask
from .shell import CommandResult
from .workspace import SCRATCH_DIR, prepare_workspace

if TYPE_CHECKING:
    from typing_extensions import Self

WORKSPACE = "/workspace"
NETWORKS = ("bridge", "none")
ENGINES = ("docker", "process")
SIZE_PATTERN = re.compile(r"^[1-9][0-9]*[bkmg]?$", re.IGNORECASE)


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

    def host_address(self) -> str | None:
        """Where the sandbox reaches this host (None: it cannot)."""

    def copy_folder_out(self, relative: str, dest: Path) -> bool:
        """Copy a workspace folder (scratch included) into ``dest``; False when absent."""

    def close(self) -> None:
        """Remove the container or temp dir; idempotent."""



def check_spec(spec: SandboxSpec) -> None:
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


def workspace_files(spec: SandboxSpec, dest: Path) -> None:
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
    return _safe_member(member, dest)


def _safe_member(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    """The data filter: regular files, folders and links that stay inside ``dest``."""
    try:
        return tarfile.data_filter(member, dest)
    except tarfile.FilterError:
        return None  # a link out of the workspace or a device file: not part of a candidate


def extract_tar(tar: tarfile.TarFile, dest: Path, *, keep_scratch: bool = False) -> None:
    """Extract with ``_skip_scratch``; Pythons without extraction filters (< 3.10.12) get the
    same rules by hand: regular files, folders and links that stay inside ``dest``."""
    if hasattr(tarfile, "data_filter"):
        tar.extractall(dest, filter=_safe_member if keep_scratch else _skip_scratch)
        return
    root = dest.resolve()
    for member in tar.getmembers():
        name = member.name.removeprefix("./")
        if name in ("", ".") or (not keep_scratch and (name == SCRATCH_DIR or name.startswith(SCRATCH_DIR + "/"))):
            continue
        target = (dest / name).resolve()
        if not target.is_relative_to(root) or not (member.isfile() or member.isdir() or member.issym()):
            continue
        if member.issym() and not (target.parent / member.linkname).resolve().is_relative_to(root):
            continue
        member.uid = member.gid = 0
        member.uname = member.gname = ""
        tar.extract(member, dest, set_attrs=False)


class WallClock:
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

