"""A watchdog process that removes a run's labelled docker objects once the run's process is gone.

The normal path removes everything at the end of each task and session (DockerRuntime.close).
That cannot run when the process is killed (SIGKILL, OOM, a Slurm preemption), and it may not
finish when a Ctrl-C's shutdown outlives its grace period and the process exits at once
(interrupt.py). Like testcontainers' Ryuk, a small detached process started with the runtime
waits on a pipe only the harness holds: a clean ``close`` says "done" and it leaves; EOF
without it means the harness died, and it removes the session's (or the xdist worker's)
labelled containers, networks and volumes.

Run as ``python -m pytest_backendbench.runtime.reaper SESSION_ID [WORKER_ID]``.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from typing import IO

DONE = b"done\n"


class Reaper:
    """The harness's end of the watchdog: start it, and tell it the run ended cleanly."""

    def __init__(self, session_id: str, worker_id: str | None) -> None:
        self.session_id = session_id
        self.worker_id = worker_id
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the watchdog (once); failing to start it only loses the safety net."""
        if self._process is not None:
            return
        argv = [sys.executable, "-m", "pytest_backendbench.runtime.reaper", self.session_id, *([self.worker_id] if self.worker_id else [])]
        with contextlib.suppress(OSError):
            self._process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # a Ctrl-C to the harness's process group must not reach it
            )

    def done(self) -> int | None:
        """The run removed its objects itself: let the watchdog go without touching the engine.

        Returns the watchdog's exit status (None when none ran or it did not end in time).
        """
        process, self._process = self._process, None
        if process is None or process.stdin is None:
            return None
        with contextlib.suppress(OSError, ValueError):
            process.stdin.write(DONE)
            process.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            return process.wait(timeout=5)
        return None


def watch(stream: IO[bytes], session_id: str, worker_id: str | None) -> int:
    """Block until the harness closes the pipe; reap unless it said "done" first."""
    received = b""
    while True:
        chunk = stream.read(64)
        if not chunk:
            break
        received += chunk
    if received.startswith(DONE):
        return 0
    from .cleanup import remove_session_objects

    try:
        remove_session_objects(None, session_id, worker_id=worker_id)
    except Exception:  # noqa: BLE001 - nobody is left to tell; `backendbench clean` is the fallback
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(watch(sys.stdin.buffer, sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None))
