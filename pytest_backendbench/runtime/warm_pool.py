"""Fresh instances started ahead (``isolation: item``): the next item's container boots while the current item runs.

Under per-item isolation every item meets a container no earlier item met. Booting one (create,
start, wait for health: a second or more for a Python web app) used to sit between every two
items; a ``WarmPool`` boots the next ones in background threads while an item runs, so an item
waits for a boot only when the pool is empty. Each instance is handed out once; the caller
removes it after its item.

Bounds: at most ``size`` instances are pooled (ready or booting), and one more is started only
while the host's available memory still holds the instance's memory limit twice (the one being
started, and headroom for the item running now); ``available_memory`` is this host's (psutil),
so on an engine that is not this machine's only the count bounds it.

Faults stay the harness's: an instance that failed to boot in the background, or died before
use, is discarded and never blamed on the candidate. ``take`` then returns None and the caller
boots one in the foreground, whose failure is the verdict; after two failed background boots in
a row the pool stops trying until a foreground boot succeeds (``fill`` after it resets that).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

import psutil
from docker.errors import DockerException
from docker.utils import parse_bytes

T = TypeVar("T")

DEFAULT_WARM_SIZE = 2
FAILURES_BEFORE_PAUSE = 2
CLOSE_WAIT_S = 5.0


def memory_bytes(limit: str | None) -> int:
    """A docker memory size (``512m``, ``1g``, ``1048576``) in bytes, read as the engine reads it; 0 when unset or unreadable."""
    if not (limit or "").strip():
        return 0
    try:
        return int(parse_bytes(str(limit).strip()))
    except DockerException:
        return 0


def available_memory() -> int | None:
    """This host's available memory in bytes (psutil, as the browser pool's sizing reads it)."""
    return int(psutil.virtual_memory().available)


class WarmPool(Generic[T]):
    """Instances of one image booted ahead, each handed out once (see the module docstring)."""

    def __init__(
        self,
        launch: Callable[[], T],
        discard: Callable[[T], None],
        usable: Callable[[T], bool],
        *,
        size: int = DEFAULT_WARM_SIZE,
        memory_limit: int = 0,
        free_memory: Callable[[], int | None] = available_memory,
    ) -> None:
        self._launch = launch
        self._discard = discard
        self._usable = usable
        self.size = size
        self.memory_limit = memory_limit
        self._free_memory = free_memory
        self._ready: deque[T] = deque()
        self._booting = 0
        self._failures_in_row = 0
        self._threads: list[threading.Thread] = []
        self._cond = threading.Condition()
        self.closed = False
        self.launched = 0
        self.handed_out = 0
        self.discarded = 0
        self.last_failure: BaseException | None = None

    # -- bounds ---------------------------------------------------------------------------

    def room(self) -> int:
        """How many more instances may start booting now (the count and the memory bound)."""
        with self._cond:
            if self.closed or self._failures_in_row >= FAILURES_BEFORE_PAUSE:
                return 0
            room = self.size - len(self._ready) - self._booting
        if room <= 0:
            return 0
        if self.memory_limit > 0:
            free = self._free_memory()
            if free is not None:
                room = min(room, free // self.memory_limit - 1)
        return max(room, 0)

    # -- filling and taking -----------------------------------------------------------------

    def fill(self, wanted: int | None = None) -> int:
        """Start as many background boots as the bounds allow, and no more than make ``wanted``
        pooled (the items known to come; None: as many as the bounds allow); returns how many started."""
        room = self.room()
        if wanted is not None:
            with self._cond:
                room = min(room, wanted - len(self._ready) - self._booting)
        started = 0
        for _ in range(max(room, 0)):
            with self._cond:
                if self.closed:
                    break
                self._booting += 1
                self.launched += 1
            thread = threading.Thread(target=self._boot, name="backendbench-warm-pool", daemon=True)
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
            thread.start()
            started += 1
        return started

    def foreground_booted(self) -> None:
        """The caller booted one itself and it came up: background boots may be tried again."""
        with self._cond:
            self._failures_in_row = 0

    def _boot(self) -> None:
        instance: T | None = None
        failure: BaseException | None = None
        try:
            instance = self._launch()
        except BaseException as err:  # noqa: BLE001 - a background boot's fault is never the candidate's verdict
            failure = err
        with self._cond:
            self._booting -= 1
            keep = instance is not None and not self.closed
            if keep and instance is not None:
                self._ready.append(instance)
                self._failures_in_row = 0
            elif failure is not None:
                self.last_failure = failure
                self._failures_in_row += 1
            self._cond.notify_all()
        if instance is not None and not keep:
            self._drop(instance)

    def take(self) -> T | None:
        """A ready instance that is still alive (waiting for one already booting); None when the
        pool has none, and the caller boots one in the foreground."""
        while True:
            with self._cond:
                while not self._ready and self._booting and not self.closed:
                    self._cond.wait()
                if not self._ready or self.closed:
                    return None
                instance = self._ready.popleft()
            if self._usable(instance):
                self.handed_out += 1
                return instance
            self._drop(instance)  # died before use: replaced, not blamed

    def _drop(self, instance: T) -> None:
        self.discarded += 1
        with contextlib.suppress(Exception):
            self._discard(instance)

    @property
    def ready(self) -> int:
        """Instances booted and waiting for an item."""
        with self._cond:
            return len(self._ready)

    @property
    def booting(self) -> int:
        """Instances being booted now."""
        with self._cond:
            return self._booting

    def close(self) -> None:
        """Stop filling, let the boots under way end (``launch`` sees ``closed`` and gives up),
        and remove every instance; safe to call twice."""
        with self._cond:
            self.closed = True
            self._cond.notify_all()
        deadline = time.monotonic() + CLOSE_WAIT_S
        for thread in list(self._threads):
            thread.join(max(0.0, deadline - time.monotonic()))
        with self._cond:
            leftovers = list(self._ready)
            self._ready.clear()
        for instance in leftovers:
            self._drop(instance)
