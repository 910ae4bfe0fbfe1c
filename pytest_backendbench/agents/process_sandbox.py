"""The no-Docker fallback sandbox: a temp dir on this machine, which isolates nothing.

Commands run with ``bash -lc`` in the temp workspace with the same timeouts and output caps
as the docker sandbox; each command gets its own session (process group), which a timeout
and ``close`` kill. ``close`` also kills stray daemons whose working directory lies in the
workspace (found with psutil). Every sandbox opened warns that it is not sandboxed.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import warnings
from pathlib import Path

import psutil

from ..errors import HarnessError
from .sandbox_base import SandboxSpec, UnsandboxedAgentWarning, WallClock, workspace_files
from .shell import CommandCapture, CommandResult
from .workspace import SCRATCH_DIR

KILL_GRACE_S = 5.0


class ProcessSandbox(WallClock):
    """The no-Docker fallback: a temp dir on this machine. NOT a sandbox: it isolates nothing."""

    sandboxed = False

    def __init__(self, spec: SandboxSpec) -> None:
        self.spec = spec
        self.limits = spec.limits
        self._closed = False
        self._lock = threading.Lock()
        self._groups: list[tuple[int, float | None]] = []  # (process group id, its leader's start time)
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
            workspace_files(spec, Path(self.workspace))
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

    def host_address(self) -> str:
        """The agent runs on this host: loopback."""
        return "127.0.0.1"

    def copy_folder_out(self, relative: str, dest: Path) -> bool:
        """Copy the workspace folder ``relative`` (scratch included) into ``dest``; False when it is absent."""
        source = Path(self.workspace) / relative
        if not source.is_dir():
            return False
        shutil.copytree(source, dest, symlinks=False, dirs_exist_ok=True)
        return True

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


def _start_time(pid: int) -> float | None:
    """The process's start time (psutil's create_time), None when it is gone."""
    try:
        return psutil.Process(pid).create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None


def _kill_processes_in(folder: Path) -> None:
    """SIGKILL processes whose working directory lies in ``folder`` (daemons that left their group)."""
    root = str(folder.resolve())
    for process in psutil.process_iter():
        try:
            cwd = process.cwd()
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, OSError):
            continue
        if cwd == root or cwd.startswith(root + "/"):
            with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                process.kill()
