"""How many browser sessions a worker runs at once: a base it always may, and more while the CPU idles.

Scenarios mostly wait, so a fixed count either leaves cores idle (a suite of sleeps) or, past
saturation, slows every scenario and makes each cost more CPU (pages animate for longer, waits
poll longer): measured on E2EDev's 217 scenarios of 8 projects with ``-n 2`` on 2 cores, 4
sessions a worker took 168 s at 70 % CPU, 6 took 147 s at 78 %, 10 took 206 s at 95 % and used
1.7x the CPU. ``auto`` therefore starts a scenario beyond the base only while the machine has
CPU to spare (:class:`CpuHeadroom`), up to a limit set by memory.
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
"""A scenario beyond the base starts only while at least this share of the CPU idles."""
HEADROOM_WINDOW_S = 1.0
"""CPU idleness is measured over this window; one extra scenario starts per window at most."""


@dataclass(frozen=True)
class PoolSize:
    """Sessions a worker always may run (``base``) and at most runs (``limit``); above the base only with headroom."""

    base: int
    limit: int

    @property
    def adaptive(self) -> bool:
        """Whether scenarios beyond the base wait for idle CPU."""
        return self.limit > self.base


def pool_size(setting: str | int, workers: int = 1) -> int:
    """Sessions a worker always runs: the number given, or for ``auto`` what free memory and load allow."""
    return pool_sizing(setting, workers).base


def pool_sizing(setting: str | int, workers: int = 1) -> PoolSize:
    """A given N is N sessions, fixed; ``auto`` is a base from load and memory, twice as many with idle CPU."""
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


class CpuHeadroom:
    """Whether the machine's CPU idles enough now for one more scenario (``/proc/stat``, all processes).

    Machine-wide on purpose: the other xdist workers, the candidates' servers and anything else
    running count against the headroom. Each window grants one extra scenario at most, so a
    burst of waiting scenarios cannot all start on one idle sample.
    """

    def __init__(self, min_idle: float = MIN_IDLE_FRACTION, window_s: float = HEADROOM_WINDOW_S, stat: Path = Path("/proc/stat")) -> None:
        self.min_idle = min_idle
        self.window_s = window_s
        self._stat = stat
        self._lock = threading.Lock()
        self._last: tuple[float, int, int] | None = None  # (monotonic time, busy ticks, all ticks)

    def _ticks(self) -> tuple[int, int] | None:
        try:
            fields = [int(value) for value in self._stat.read_text().split("\n", 1)[0].split()[1:]]
        except (OSError, ValueError):
            return None
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
        return sum(fields) - idle, sum(fields)

    def allows(self) -> bool:
        """True at most once per window, when the CPU idled at least ``min_idle`` over the last window."""
        with self._lock:
            now = time.monotonic()
            if self._last is not None and now - self._last[0] < self.window_s:
                return False  # asked again within the window: no need to read /proc/stat
            ticks = self._ticks()
            if ticks is None:
                return False  # no /proc/stat: stay at the base
            if self._last is None:
                self._last = (now, *ticks)
                return False
            _, busy_then, all_then = self._last
            self._last = (now, *ticks)
            elapsed = ticks[1] - all_then
            if elapsed <= 0:
                return False
            return 1.0 - (ticks[0] - busy_then) / elapsed >= self.min_idle
