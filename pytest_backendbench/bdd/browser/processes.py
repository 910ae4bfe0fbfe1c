"""The processes of one browser: found, ended politely, or killed at once.

Every browser the harness starts runs chromedriver in its own session (``start_new_session``),
so chromedriver, Chromium and its helpers share one session and process group; they also carry
the browser's private temporary folder on their command line. Those two marks find exactly this
browser's processes and nothing else (psutil reads the process table).
"""

from __future__ import annotations

import os
import signal
import tempfile
import time
from pathlib import Path

import psutil

KILLED_WAIT_S = 3.0
"""How long a SIGKILL'd browser may take to disappear from the process table."""


class BrowserProcesses:
    """The live processes of one browser, by chromedriver's session id and the browser's folder."""

    def __init__(self, session_pid: int | None, home: Path | None) -> None:
        self.session_pid = session_pid
        self.home = home

    def live(self, quick: bool = False) -> set[int]:
        """Live (non-zombie) processes in chromedriver's session or naming the browser's folder.

        ``quick`` looks at the session only (a system call per process, no command lines read):
        for polling while the killed processes disappear; the full look finds stragglers too.
        """
        if self.session_pid is None and self.home is None:
            return set()
        if quick and self.session_pid is not None:
            return self._in_session()
        marker = str(self.home) if self.home is not None else None
        found: set[int] = set()
        for process in psutil.process_iter(["status", "cmdline"]):
            try:
                if process.info["status"] == psutil.STATUS_ZOMBIE:
                    continue
                in_session = self.session_pid is not None and os.getsid(process.pid) == self.session_pid
                if in_session or (marker is not None and any(marker in part for part in process.info["cmdline"] or ())):
                    found.add(process.pid)
            except (psutil.Error, OSError):
                continue  # the process ended while we looked
        return found

    def _in_session(self) -> set[int]:
        found: set[int] = set()
        for pid in psutil.pids():
            try:
                if os.getsid(pid) == self.session_pid and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                    found.add(pid)
            except (psutil.Error, OSError):
                continue
        return found

    def kill(self) -> None:
        """SIGKILL the whole process group and every straggler, without waiting on anything.

        A renderer stuck in a script loop never answers a polite quit; killing the group is
        the only way that costs no time.
        """
        if self.session_pid is not None:
            try:
                os.killpg(self.session_pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for pid in self.live():
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def wait_gone(self, timeout_s: float) -> bool:
        """Wait until none is left; True when none is."""
        deadline = time.monotonic() + timeout_s
        while self.live(quick=True):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
        return not self.live()

    def end(self, grace_s: float) -> None:
        """Give the processes grace_s to end on their own (after a quit), then kill them."""
        if not self.wait_gone(grace_s):
            self.kill()
            self.wait_gone(KILLED_WAIT_S)


def short_temp_root() -> str:
    """The temp folder for the browser's home: TMPDIR unless that is too long for Chromium's sockets."""
    root = tempfile.gettempdir()
    if len(root) > 40 and os.path.isdir("/tmp") and os.access("/tmp", os.W_OK):
        return "/tmp"
    return root


def log_tail(path: Path, lines: int = 15) -> str:
    """The last lines of chromedriver's log, for a launch failure's message."""
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    if not text:
        return ""
    return "chromedriver log (last lines):\n" + "\n".join("  " + line for line in text[-lines:])
