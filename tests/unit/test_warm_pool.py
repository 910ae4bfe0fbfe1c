"""The warm pool's bounds and fault rules (runtime/warm_pool.py), on fake instances: no engine.

Launches block on an event the test releases, so "booting" and "ready" are states the test
holds still while it checks the count and memory bounds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from pytest_backendbench.errors import BootFailure
from pytest_backendbench.runtime.warm_pool import WarmPool, memory_bytes

GIB = 1024**3


@dataclass
class FakeEngine:
    """Boots numbered fake containers; each waits for ``release`` and may be set to fail."""

    release: threading.Event = field(default_factory=threading.Event)
    fail: bool = False
    booted: list[int] = field(default_factory=list)
    removed: list[int] = field(default_factory=list)
    dead: set[int] = field(default_factory=set)
    free: int | None = 64 * GIB
    _next: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def launch(self) -> int:
        with self._lock:
            self._next += 1
            number = self._next
        self.release.wait(10)
        if self.fail:
            raise BootFailure(f"container {number} never listened")
        self.booted.append(number)
        return number

    def pool(self, size: int = 2, memory: str = "1g") -> WarmPool[int]:
        return WarmPool(self.launch, self.removed.append, lambda n: n not in self.dead, size=size, memory_limit=memory_bytes(memory), free_memory=lambda: self.free)


def settle(condition: Callable[[], bool], timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert condition()


def test_memory_sizes_in_docker_syntax() -> None:
    assert [memory_bytes(s) for s in ("512m", "1g", "1G", "96m", "2048", "", None, "lots")] == [512 * 1024**2, GIB, GIB, 96 * 1024**2, 2048, 0, 0, 0]


def test_the_count_bounds_what_boots_and_waits() -> None:
    engine = FakeEngine()
    pool = engine.pool(size=2)
    assert pool.fill() == 2 and pool.booting == 2
    assert pool.fill() == 0, "two booting already: the count is reached"
    engine.release.set()
    settle(lambda: pool.ready == 2)
    assert pool.fill() == 0
    assert pool.take() in {1, 2} and pool.fill() == 1, "one handed out (whichever boot ended first): one more may boot"
    pool.close()


def test_free_memory_bounds_the_pool_below_its_count() -> None:
    engine = FakeEngine(free=int(2.5 * GIB))
    pool = engine.pool(size=4, memory="1g")
    assert pool.room() == 1, "2.5 GiB free holds one 1g container besides the one running the item"
    engine.free = GIB
    assert pool.room() == 0 and pool.fill() == 0
    engine.free = None  # a remote engine: only the count bounds it
    assert pool.room() == 4
    pool.close()


def test_take_waits_for_a_boot_under_way_and_returns_none_when_empty() -> None:
    engine = FakeEngine()
    pool = engine.pool(size=1)
    assert pool.take() is None, "nothing pooled, nothing booting: the caller boots in the foreground"
    pool.fill()
    threading.Timer(0.2, engine.release.set).start()
    assert pool.take() == 1, "a boot under way is awaited, not duplicated"
    pool.close()


def test_a_container_that_died_before_use_is_replaced_not_handed_out() -> None:
    engine = FakeEngine()
    engine.release.set()
    pool = engine.pool(size=2)
    pool.fill()
    settle(lambda: pool.ready == 2)
    engine.dead.add(1)
    assert pool.take() == 2
    assert engine.removed == [1] and pool.discarded == 1 and pool.handed_out == 1


def test_background_boot_failures_are_never_the_verdict_and_pause_the_pool() -> None:
    engine = FakeEngine(fail=True)
    engine.release.set()
    pool = engine.pool(size=2)
    pool.fill()
    settle(lambda: pool.booting == 0)
    assert isinstance(pool.last_failure, BootFailure)
    assert pool.take() is None, "the failure is kept, not raised: the foreground boot decides"
    assert pool.fill() == 0, "after two failed boots in a row the pool stops trying"
    engine.fail = False
    pool.foreground_booted()
    assert pool.fill() == 2
    pool.close()


def test_close_removes_ready_ones_and_those_still_booting() -> None:
    engine = FakeEngine()
    engine.release.set()
    pool = engine.pool(size=1)
    pool.fill()
    settle(lambda: pool.ready == 1)
    engine.release.clear()
    pool.take()
    pool.fill()  # one booting, held
    threading.Timer(0.2, engine.release.set).start()
    pool.close()
    assert sorted(engine.removed) == [2], "the boot that ended after close was removed, the handed-out one left to its item"
    assert pool.fill() == 0 and pool.take() is None


@pytest.mark.parametrize("size", [0])
def test_a_pool_of_size_zero_boots_nothing(size: int) -> None:
    engine = FakeEngine()
    pool = engine.pool(size=size)
    assert pool.fill() == 0 and pool.take() is None
