"""Browsers never outlive the harness process that started them, even when it is SIGKILLed.

Chromedriver runs in a session of its own (Ctrl-C in the terminal must not kill a browser
mid-scenario) and is launched from a short-lived thread, so neither the process group nor
``PR_SET_PDEATHSIG`` (which follows the creating *thread*) ties it to the harness: an OOM kill
or a ``kill -9`` of a worker used to leave chromedriver and Chromium running under PID 1.

One watchdog process per harness process closes that gap. Each browser registers its
chromedriver session (a file named by the session id in the watchdog's folder) and removes it
when it ends; the watchdog polls its parent twice a second and, once the parent is gone, kills
every process of every registered session and exits. Normal runs never need it: their browsers
are already gone and unregistered when the harness exits.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

POLL_S = 0.5

# Runs as `python -c WATCHDOG parent_pid folder`; stdlib only, so it starts in ~20 ms.
WATCHDOG = r"""
import os, signal, sys, time
parent, folder = int(sys.argv[1]), sys.argv[2]
while os.getppid() == parent:
    time.sleep(float(sys.argv[3]))
sessions = set()
try:
    sessions = {int(name) for name in os.listdir(folder) if name.isdigit()}
except OSError:
    pass
for _ in range(3):  # a browser may still be forking helpers: sweep until none is left
    found = False
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
            if int(fields[3]) in sessions and fields[0] != b"Z":
                os.kill(int(entry), signal.SIGKILL)
                found = True
        except (OSError, ValueError, IndexError):
            continue
    if not found:
        break
    time.sleep(0.2)
import shutil
shutil.rmtree(folder, ignore_errors=True)
"""


class BrowserWatchdog:
    """The registry of this process's browser sessions, and the watchdog that guards them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._folder: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._owner = os.getpid()

    def register(self, session_id: int) -> None:
        """Guard chromedriver's session ``session_id`` (its pid: it leads its own session)."""
        folder = self._ensure_started()
        if folder is not None:
            (folder / str(session_id)).touch()

    def unregister(self, session_id: int | None) -> None:
        """The session ended normally: forget it (a later process may reuse the id)."""
        folder = self._folder
        if session_id is not None and folder is not None:
            (folder / str(session_id)).unlink(missing_ok=True)

    def _ensure_started(self) -> Path | None:
        with self._lock:
            if self._owner != os.getpid():  # a forked child starts a watchdog of its own
                self._folder, self._process, self._owner = None, None, os.getpid()
            if self._process is not None and self._process.poll() is None:
                return self._folder
            folder = Path(tempfile.mkdtemp(prefix="backendbench-browsers-"))
            try:
                self._process = subprocess.Popen(
                    [sys.executable, "-c", WATCHDOG, str(os.getpid()), str(folder), str(POLL_S)],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    start_new_session=True,  # Ctrl-C in the terminal reaches the harness, not its guard
                    close_fds=True,
                )
            except OSError:
                shutil.rmtree(folder, ignore_errors=True)
                return None  # no guard: the harness's own shutdown still ends its browsers
            self._folder = folder
            atexit.register(self.stop)
            return folder

    def stop(self) -> None:
        """A normal exit: the browsers are already ended, so the guard goes without sweeping."""
        with self._lock:
            process, folder = self._process, self._folder
            if process is None or self._owner != os.getpid():
                return
            self._process = self._folder = None
        process.terminate()
        try:
            process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            process.kill()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


WATCHDOG_OF_THIS_PROCESS = BrowserWatchdog()
