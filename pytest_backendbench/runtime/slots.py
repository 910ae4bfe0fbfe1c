"""At most N holders of a resource across threads and xdist workers, via ``flock``-ed slot files.

``max_parallel_builds`` and ``max_running_services`` hold across workers through slot files
under ``<cache_dir>/locks``; the kernel releases a dead worker's slots with its descriptors.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from ..errors import HarnessError


class SlotLock:
    """At most ``count`` holders across threads and processes, via ``flock`` on slot files."""

    def __init__(self, directory: Path, kind: str, count: int) -> None:
        self.directory = directory
        self.kind = kind
        self.count = count

    def acquire(self, timeout_s: float, what: str) -> int | None:
        """Block until a slot is free; return its file descriptor (None when unbounded)."""
        if self.count <= 0:
            return None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise HarnessError(f"cannot create the lock folder {self.directory}: {err}; set BACKENDBENCH_CACHE to a writable folder") from err
        deadline = time.monotonic() + timeout_s
        while True:
            for index in range(self.count):
                fd = os.open(self.directory / f"{self.kind}-{index}.lock", os.O_RDWR | os.O_CREAT, 0o644)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError as err:
                    os.close(fd)
                    if err.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                        raise HarnessError(f"cannot lock {self.directory}: {err}") from err
                    continue
                return fd
            if time.monotonic() >= deadline:
                raise HarnessError(
                    f"waited {timeout_s:g}s for {what}: all {self.count} {self.kind} slots stayed busy; "
                    "raise the limit or stop other backendbench runs"
                )
            time.sleep(0.2)

    def release(self, fd: int | None) -> None:
        """Give a slot back (closing the descriptor drops the lock)."""
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    @contextlib.contextmanager
    def hold(self, timeout_s: float, what: str) -> Iterator[None]:
        """Hold one slot for the duration of a ``with`` block."""
        fd = self.acquire(timeout_s, what)
        try:
            yield
        finally:
            self.release(fd)
