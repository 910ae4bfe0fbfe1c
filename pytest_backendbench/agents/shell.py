"""Running an agent's commands: capped output capture and a long-lived shell in a container.

Why a long-lived shell. ``docker exec`` (SDK ``exec_run`` or the CLI) costs three engine round
trips plus a ``runc exec`` per command, about 60 ms here; an agent takes hundreds of steps. The
sandbox instead starts one ``bash`` per container through a single exec whose stdin stays
attached, and writes each command to it: a step then costs one socket write, one ``bash -lc``
fork and the read of its output (a few ms; ``bench/agent_overhead.py`` measures both).

The protocol. Each command travels in a here-document with a random delimiter, runs as a
background job of the driver shell (``set -m`` gives every job its own process group, so a
timeout kills the command and everything it started), with stdin from /dev/null and
stderr merged into stdout. After it ends the driver prints ``\\n__BB_DONE_<token>_<rc>__\\n`` on
stdout: that line is ordered after every byte the command wrote, so output and exit code are
separated exactly, including output without a trailing newline and binary output (the one
newline before the marker is ours). The job's pid travels on the exec's stderr stream, which
nothing else writes to. A reader thread drains the socket all the time, so a background
server logging between two steps never blocks on a full pipe; output that arrives while no
command runs is dropped (counted), because it belongs to no command.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shlex
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

from docker.errors import APIError, DockerException, NotFound

from ..errors import HarnessError

DONE_PREFIX = b"\n__BB_DONE_"
KILL_GRACE_S = 5.0
READ_CHUNK = 1 << 16
SHELL_START_TIMEOUT_S = 20.0
_CONTROL_PID = re.compile(rb"__BB_PID_([0-9a-f]+)_(\d+)")
_CONTROL_SHELL = re.compile(rb"__BB_SHELL_(\d+)")


def connection_of(attached: Any) -> Any:
    """A socket object (``recv``, ``sendall``, ``settimeout``, ``shutdown``) for what
    ``APIClient.exec_start(socket=True)`` returned, through public API only.

    docker-py returns a ``socket.SocketIO`` for unix-socket and plain-tcp engines, which offers
    none of those; a socket for TLS engines, a paramiko channel for ssh:// and an NpipeSocket on
    Windows, which do. A SocketIO gets a socket object of our own over a duplicate of its file
    descriptor (closed by ``ExecShell.close``), in blocking mode like a new socket (the duplicate
    shares the non-blocking flag the client's timeout set); the others are used as they are.
    """
    if isinstance(attached, socket.SocketIO):
        duplicate = socket.socket(fileno=os.dup(attached.fileno()))
        duplicate.settimeout(None)
        return duplicate
    return attached


@dataclass(frozen=True)
class CommandResult:
    """One command's outcome, as the agent loop shows it to the model."""

    exit_code: int | None  # None when it timed out or was killed
    output: str  # stdout+stderr in order (head and tail kept when it exceeded the output cap)
    seconds: float
    timed_out: bool
    dropped_bytes: int = 0  # output bytes left out between the kept head and tail


class CappedOutput:
    """Keeps the first and last ``limit / 2`` bytes of a stream and counts what lies between.

    An agent that runs ``cat`` on a log of gigabytes must not take the harness's memory with it.
    """

    def __init__(self, limit: int) -> None:
        self.head_limit = max(limit // 2, 0)
        self.tail_limit = max(limit - self.head_limit, 0)
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        """Append a chunk."""
        self.total += len(data)
        room = self.head_limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data and self.tail_limit > 0:
            self._tail += data
            if len(self._tail) > self.tail_limit:
                del self._tail[: len(self._tail) - self.tail_limit]

    @property
    def dropped(self) -> int:
        """Bytes neither in the head nor in the tail."""
        return self.total - len(self._head) - len(self._tail)

    def text(self) -> str:
        """Head, a line saying how much was left out, tail; decoded leniently (binary output is fine)."""
        head = bytes(self._head).decode("utf-8", errors="replace")
        tail = bytes(self._tail).decode("utf-8", errors="replace")
        if self.dropped:
            return f"{head}\n[... {self.dropped} bytes of output left out by the sandbox ...]\n{tail}"
        return head + tail


class CommandCapture:
    """The output of one command up to its end marker, and the exit code the marker carries."""

    def __init__(self, token: str, limit: int) -> None:
        self.token = token
        self.output = CappedOutput(limit)
        self.exit_code: int | None = None
        self.done = False
        self.pid: int | None = None
        self._marker = re.compile(re.escape(DONE_PREFIX + token.encode() + b"_") + rb"(-?\d+)__\n")
        self._lookahead = len(DONE_PREFIX) + len(token) + 16
        self._window = b""

    def feed(self, data: bytes) -> None:
        """Consume stdout bytes; sets ``done`` once the end marker went past (the rest is not ours)."""
        if self.done:
            return
        self._window += data
        found = self._marker.search(self._window)
        if found is not None:
            self.output.feed(self._window[: found.start()])
            self.exit_code = int(found.group(1))
            self.done = True
            self._window = b""
            return
        if len(self._window) > self._lookahead:
            self.output.feed(self._window[: -self._lookahead])
            self._window = self._window[-self._lookahead :]

    def flush(self) -> None:
        """Keep what is still held back for marker detection (the command ended without a marker)."""
        self.output.feed(self._window)
        self._window = b""


def command_block(command: str, token: str, workdir: str, path_prefix: str | None) -> bytes:
    """What the driver shell reads for one command (see the module docstring)."""
    text = command.replace("\x00", "")
    if path_prefix:
        # `bash -l` runs /etc/profile, which on Debian resets PATH and drops the image's own
        # entries (/opt/venv/bin); put them back in front, on the command's first line.
        text = f"PATH={shlex.quote(path_prefix)}:\"$PATH\"; {text}"
    delimiter = f"__BB_EOF_{token}"
    return (
        f"IFS= read -r -d '' __bb_cmd <<'{delimiter}'\n{text}\n{delimiter}\n"
        f"cd {shlex.quote(workdir)} 2>/dev/null\n"
        'bash -lc "$__bb_cmd" </dev/null 2>&1 &\n'
        f"printf '__BB_PID_{token}_%d\\n' \"$!\" >&2\n"
        'wait "$!"\n'
        f"printf '\\n__BB_DONE_{token}_%d__\\n' \"$?\"\n"
    ).encode("utf-8", errors="surrogateescape")


class ExecShell:
    """One ``bash`` inside a running container, fed commands over an attached exec socket."""

    def __init__(self, client: Any, container: Any, workdir: str, output_limit: int, path_prefix: str | None) -> None:
        self.client = client
        self.container = container
        self.workdir = workdir
        self.output_limit = output_limit
        self.path_prefix = path_prefix
        self.shell_pid: int | None = None
        self.dropped_between_commands = 0
        self._sock: Any = None
        self._raw: Any = None
        self._reader: threading.Thread | None = None
        self._cond = threading.Condition()
        self._capture: CommandCapture | None = None
        self._control = b""
        self._dead = False

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start the driver shell and wait until it answers; ``HarnessError`` when it cannot."""
        api = self.client.api
        try:
            exec_id = api.exec_create(
                self.container.id,
                ["bash", "--noprofile", "--norc"],
                stdin=True,
                stdout=True,
                stderr=True,
                tty=False,
                workdir=self.workdir,
            )["Id"]
            self._sock = api.exec_start(exec_id, socket=True, tty=False)
        except (DockerException, OSError) as err:
            raise HarnessError(f"cannot start the sandbox shell in {self.container.name}: {err}") from err
        try:
            self._raw = connection_of(self._sock)
        except OSError as err:
            raise HarnessError(f"cannot attach to the sandbox shell in {self.container.name}: {err}") from err
        # The client's socket timeout (120 s) would read a silent command (an agent CLI waiting on its
        # model, a quiet build) as a dead shell; run() bounds every command itself.
        with contextlib.suppress(OSError, AttributeError):
            self._raw.settimeout(None)
        self._dead = False
        self._control = b""
        self.shell_pid = None
        self._reader = threading.Thread(target=self._read_forever, name=f"sandbox-shell-{self.container.name}", daemon=True)
        self._reader.start()
        # Monitor mode: one process group per command, so a timeout can kill all it started.
        self._send(b"set -m\nprintf '__BB_SHELL_%d\\n' \"$$\" >&2\n")
        deadline = time.monotonic() + SHELL_START_TIMEOUT_S
        with self._cond:
            while self.shell_pid is None and not self._dead and time.monotonic() < deadline:
                self._cond.wait(0.1)
            if self.shell_pid is None:
                raise HarnessError(
                    f"the sandbox shell in {self.container.name} did not answer within {SHELL_START_TIMEOUT_S:g}s "
                    "(does the image have bash on its PATH?)"
                )

    def close(self) -> None:
        """Hang up: the shell reads end-of-file and exits; the reader thread ends."""
        sock, self._sock = self._sock, None
        raw, self._raw = self._raw, None
        if raw is not None:
            with contextlib.suppress(OSError):
                raw.shutdown(socket.SHUT_RDWR)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()
        reader = self._reader
        if reader is not None and reader is not threading.current_thread():
            reader.join(timeout=2)
        self._reader = None
        if raw is not None and raw is not sock:  # our duplicate of a SocketIO's descriptor (connection_of)
            with contextlib.suppress(OSError):
                raw.close()

    @property
    def alive(self) -> bool:
        """Whether the driver shell's connection is still open."""
        return self._raw is not None and not self._dead

    # -- commands --------------------------------------------------------------------------

    def run(self, command: str, timeout_s: float) -> CommandResult:
        """Run ``bash -lc command``; on timeout kill its process group (the shell survives)."""
        if not self.alive:
            self.close()
            self.start()
        token = secrets.token_hex(8)
        capture = CommandCapture(token, self.output_limit)
        started = time.monotonic()
        with self._cond:
            self._capture = capture
        block = command_block(command, token, self.workdir, self.path_prefix)
        try:
            try:
                self._send(block)
            except HarnessError:
                # The shell died since the last command (a background job killed it): once more, on a new one.
                self._restart("it was gone when the command was sent")
                self._send(block)
            finished = self._wait(capture, started + timeout_s)
            timed_out = not finished and not self._dead
            if timed_out:
                self._kill(capture)
                finished = self._wait(capture, time.monotonic() + KILL_GRACE_S)
                if not finished:
                    self._restart("it did not end after its process group was killed")
        finally:
            with self._cond:
                self._capture = None
        seconds = time.monotonic() - started
        if not capture.done:
            capture.flush()
        output = capture.output.text()
        if not timed_out and not capture.done:
            # The driver died under the command (`kill -9 -1`, the OOM killer): start a new one.
            output += "\n[the sandbox shell was killed while this command ran; a new shell was started]\n"
            self._restart("the shell died")
        return CommandResult(
            exit_code=None if timed_out or not capture.done else capture.exit_code,
            output=output,
            seconds=seconds,
            timed_out=timed_out,
            dropped_bytes=capture.output.dropped,
        )

    def _wait(self, capture: CommandCapture, deadline: float) -> bool:
        with self._cond:
            while not capture.done and not self._dead:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(min(remaining, 1.0))
            return capture.done

    def _kill(self, capture: CommandCapture) -> None:
        """SIGKILL the command's process group through a separate exec (only on timeouts)."""
        if capture.pid is None:
            self._restart("its pid never arrived")
            return
        with contextlib.suppress(NotFound, APIError):
            self.container.exec_run(["bash", "-c", f"kill -KILL -- -{capture.pid} 2>/dev/null || kill -KILL {capture.pid}"])

    def _restart(self, why: str) -> None:
        """Replace a stuck or dead driver shell (the container and /workspace are unaffected)."""
        pid = self.shell_pid
        self.close()
        if pid is not None:
            with contextlib.suppress(NotFound, APIError):
                self.container.exec_run(["bash", "-c", f"kill -KILL {pid} 2>/dev/null"])
        try:
            self.start()
        except HarnessError as err:
            raise HarnessError(f"the sandbox shell had to be replaced ({why}) and the new one failed: {err}") from err

    def _send(self, data: bytes) -> None:
        raw = self._raw
        if raw is None:
            raise HarnessError(f"the sandbox shell of {self.container.name} is closed")
        try:
            raw.sendall(data)
        except OSError as err:
            with self._cond:
                self._dead = True
                self._cond.notify_all()
            raise HarnessError(f"cannot write to the sandbox shell of {self.container.name}: {err}") from err

    # -- the reader thread -----------------------------------------------------------------

    def _read_forever(self) -> None:
        """Demultiplex the engine's stream (8-byte frame headers: stream id, length) until EOF."""
        raw = self._raw
        buffer = bytearray()
        try:
            while True:
                chunk = raw.recv(READ_CHUNK)
                if not chunk:
                    break
                buffer += chunk
                while len(buffer) >= 8:
                    size = int.from_bytes(buffer[4:8], "big")
                    if len(buffer) < 8 + size:
                        break
                    payload = bytes(buffer[8 : 8 + size])
                    stream = buffer[0]
                    del buffer[: 8 + size]
                    if stream == 2:
                        self._on_control(payload)
                    else:
                        self._on_output(payload)
        except (OSError, ValueError, AttributeError):
            pass  # the engine hung up, or close() shut the socket down under us
        with self._cond:
            self._dead = True
            self._cond.notify_all()

    def _on_output(self, payload: bytes) -> None:
        with self._cond:
            capture = self._capture
            if capture is None or capture.done:
                self.dropped_between_commands += len(payload)
                return
            capture.feed(payload)
            if capture.done:
                self._cond.notify_all()

    def _on_control(self, payload: bytes) -> None:
        with self._cond:
            self._control += payload
            *lines, self._control = self._control.split(b"\n")
            for line in lines:
                shell = _CONTROL_SHELL.search(line)
                if shell is not None:
                    self.shell_pid = int(shell.group(1))
                    self._cond.notify_all()
                    continue
                job = _CONTROL_PID.search(line)
                if job is not None and self._capture is not None and job.group(1).decode() == self._capture.token:
                    self._capture.pid = int(job.group(2))
            # Anything else on stderr is the shell's own job-control chatter ("Killed"): not ours.
            self._control = self._control[-4096:]
