"""Small process utilities shared by every local child the harness spawns.

The process runtime's candidates and mocks and the local PostgreSQL cluster (db/) all need a
free port and a child that dies with the harness; they live here, below both, so neither
imports the other (this module imports nothing of the package).
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import time

PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Runs in the child before exec (``preexec_fn``): SIGKILL it when the harness dies,
    even by SIGKILL, so no child outlives a crashed run."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        pass


def free_port() -> int:
    """A port the kernel considers free right now on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def kill_group_and_wait(pgid: int, timeout_s: float = 5.0) -> bool:
    """SIGKILL every process of group ``pgid`` and wait until the group is empty.

    A killed postmaster's backends linger for a moment; callers that promise "stopped" (the
    end of a session) must not return while any is alive. True when the group is gone.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


def kill_descendants_and_wait(timeout_s: float = 1.0) -> list[int]:
    """SIGKILL every process below this one (children's own process groups included) and reap them.

    The last resort of a shutdown that outlived its grace period: what the orderly teardown did
    not reach — a worker's PostgreSQL backends, a candidate's server, a browser — must not be
    running when the process exits. Returns the pids still alive after ``timeout_s``.
    """
    import psutil

    try:
        descendants = psutil.Process().children(recursive=True)
    except psutil.Error:
        return []
    own_group = os.getpgid(0)
    for process in descendants:
        try:
            group = os.getpgid(process.pid)
            if group != own_group and group == process.pid:
                os.killpg(group, signal.SIGKILL)  # a leader: its whole group, grandchildren that escaped included
            process.kill()
        except (OSError, psutil.Error):
            continue
    _, alive = psutil.wait_procs(descendants, timeout=timeout_s)
    return [process.pid for process in alive]
