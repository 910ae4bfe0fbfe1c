"""How many browser sessions a worker runs at once: a level that follows the machine's idle CPU.

Scenarios mostly wait, so a fixed count either leaves cores idle (a suite of sleeps) or, past
saturation, slows every scenario and makes each cost more CPU (pages animate for longer, waits
poll longer): measured on E2EDev's 217 scenarios of 8 projects with ``-n 2`` on 2 cores, 4
sessions a worker took 168 s at 70 % CPU, 6 took 147 s at 78 %, 10 took 206 s at 95 % and used
1.7x the CPU. ``auto`` therefore keeps a *level*: it starts at a base (cores, memory, load), and
once a second (:class:`CpuHeadroom`) it rises by one while the machine's CPU idled at least 20 %
and falls by one while it idled less than 5 %, between one session and a limit set by memory.
A level, not a grant per scenario: a pool that needed a fresh idle second for every scenario
above its base could not hold a level of short scenarios, and one that only grew could not
give back what a saturated machine no longer has.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

SESSION_MEMORY_BYTES = 400 * 1024 * 1024
"""What one more Chromium with a typical app page costs (measured ~300 MB, with a margin)."""
MEMORY_RESERVE_BYTES = 1024 * 1024 * 1024
SESSIONS_PER_CORE = 4
"""Scenarios mostly wait: about four sessions keep one idle core busy (the base of ``auto``)."""
MAX_AUTO_SESSIONS = 8
"""The base of ``auto`` never exceeds this."""
MAX_BOOSTED_SESSIONS = 12
"""Nor does ``auto`` with CPU to spare."""
MIN_IDLE_FRACTION = 0.2
"""The level rises by one when at least this share of the CPU idled over the last window."""
SATURATED_IDLE_FRACTION = 0.05
"""The level falls by one when less than this share of the CPU idled over the last window."""
HEADROOM_WINDOW_S = 1.0
"""CPU idleness is measured over this window; the level changes by one per window at most."""


@dataclass(frozen=True)
class PoolSize:
    """Sessions a worker starts with (``base``) and at most runs (``limit``); ``auto`` moves between one and the limit."""

    base: int
    limit: int

    @property
    def adaptive(self) -> bool:
        """Whether the level follows the CPU (``auto``); a given N is fixed."""
        return self.limit > self.base


def pool_size(setting: str | int, workers: int = 1) -> int:
    """Sessions a worker always runs: the number given, or for ``auto`` what free memory and load allow."""
    return pool_sizing(setting, workers).base


def pool_sizing(setting: str | int, workers: int = 1) -> PoolSize:
    """A given N is N sessions, fixed; ``auto`` starts at a base from load and memory, up to twice as many with idle CPU."""
    if str(setting).strip().lower() != "auto":
        fixed = max(1, int(setting))
        return PoolSize(fixed, fixed)
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = 0.0
    busy = min(1.0, cores / load) if load > 0 else 1.0  # a machine loaded past its cores gets fewer
    by_cpu = round(SESSIONS_PER_CORE * cores * busy / max(1, workers))
    available = psutil.virtual_memory().available
    by_memory = max(1, (available - MEMORY_RESERVE_BYTES) // (SESSION_MEMORY_BYTES * max(1, workers)))
    base = int(max(1, min(MAX_AUTO_SESSIONS, by_cpu, by_memory)))
    by_cpu_boosted = round(2 * SESSIONS_PER_CORE * cores / max(1, workers))
    limit = int(max(base, min(MAX_BOOSTED_SESSIONS, by_cpu_boosted, by_memory)))
    return PoolSize(base, limit)


def cpu_ticks(stat: Path = Path("/proc/stat")) -> tuple[int, int] | None:
    """(busy, all) CPU ticks of the whole machine since boot, from the first line of /proc/stat; None without it.

    Idle and iowait count as idle; guest time is already inside user and nice, so only the first
    eight fields are summed.
    """
    try:
        fields = [int(value) for value in stat.read_text().split("\n", 1)[0].split()[1:9]]
    except (OSError, ValueError):
        return None
    if len(fields) < 4:
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields) - idle, sum(fields)


class CpuHeadroom:
    """How idle the machine's CPU was over the last window (``/proc/stat``, all processes), and the level that follows.

    Machine-wide on purpose: the other xdist workers, the candidates' servers and anything else
    running count against the headroom. The level moves by one per window at most, so a burst
    of waiting scenarios cannot all start on one idle sample.
    """

    def __init__(
        self, min_idle: float = MIN_IDLE_FRACTION, window_s: float = HEADROOM_WINDOW_S, stat: Path = Path("/proc/stat"),
        saturated_idle: float = SATURATED_IDLE_FRACTION,
    ) -> None:
        self.min_idle = min_idle
        self.saturated_idle = saturated_idle
        self.window_s = window_s
        self._stat = stat
        self._lock = threading.Lock()
        self._last: tuple[float, int, int] | None = None  # (monotonic time, busy ticks, all ticks)

    def idle_fraction(self) -> float | None:
        """The share of the CPU that idled since the last reading, once per window (None within a window or without /proc/stat)."""
        with self._lock:
            now = time.monotonic()
            if self._last is not None and now - self._last[0] < self.window_s:
                return None  # asked again within the window: no need to read /proc/stat
            ticks = cpu_ticks(self._stat)
            if ticks is None:
                return None
            if self._last is None:
                self._last = (now, *ticks)
                return None
            _, busy_then, all_then = self._last
            self._last = (now, *ticks)
            elapsed = ticks[1] - all_then
            if elapsed <= 0:
                return None
            return 1.0 - (ticks[0] - busy_then) / elapsed

    def adjust(self, level: int, limit: int) -> int:
        """The level for the next window: one more with idle CPU, one less on a saturated CPU, within [1, limit]."""
        idle = self.idle_fraction()
        if idle is None:
            return level
        if idle >= self.min_idle:
            return min(limit, level + 1)
        if idle < self.saturated_idle:
            return max(1, level - 1)
        return level
