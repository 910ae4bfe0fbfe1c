"""The pool's sizing, the interrupt handler and the shared process state, without a browser."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psutil
import pytest

from pytest_backendbench.bdd.scenarios.step_loading import PROCESS_STATE
from pytest_backendbench.bdd.scheduling.pool import MAX_AUTO_SESSIONS, BrowserPool, ScenarioWork, pool_size
from pytest_backendbench.bdd.scheduling.pool_sizing import MAX_BOOSTED_SESSIONS, CpuHeadroom, PoolSize, cpu_ticks, pool_sizing
from pytest_backendbench.interrupt import Interrupt


def test_a_given_pool_size_is_used_and_auto_stays_within_memory_and_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    assert pool_size("3") == 3 and pool_size(1) == 1
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    idle = pool_size("auto", workers=1)
    assert 1 <= idle <= MAX_AUTO_SESSIONS
    monkeypatch.setattr(os, "getloadavg", lambda: (100.0 * (os.cpu_count() or 1), 0.0, 0.0))
    assert pool_size("auto", workers=1) == 1  # a machine loaded far past its cores gets one session
    assert pool_size("auto", workers=64) == 1


def test_auto_has_a_base_and_a_limit_and_a_given_number_is_fixed(monkeypatch: pytest.MonkeyPatch) -> None:
    assert pool_sizing("3") == PoolSize(3, 3) and not pool_sizing("3").adaptive
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    idle = pool_sizing("auto", workers=1)
    assert 1 <= idle.base <= MAX_AUTO_SESSIONS and idle.base <= idle.limit <= MAX_BOOSTED_SESSIONS
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(psutil, "virtual_memory", lambda: SimpleNamespace(available=32 * 1024**3))
    assert pool_sizing("auto", workers=2) == PoolSize(4, 8)  # the README's -n 2 on 2 idle cores
    monkeypatch.setattr(psutil, "virtual_memory", lambda: SimpleNamespace(available=3 * 1024**3))
    assert pool_sizing("auto", workers=2) == PoolSize(2, 2)  # 2 GiB over the reserve hold two sessions a worker
    monkeypatch.setattr(os, "getloadavg", lambda: (8.0, 0.0, 0.0))
    assert pool_sizing("auto", workers=2).base == 1  # loaded 4x past its cores


def _stat_line(busy: int, idle: int) -> str:
    return f"cpu  {busy} 0 0 {idle} 0 0 0 0 0 0\ncpu0 0 0 0 0\n"


def test_the_level_moves_by_one_per_window_up_while_the_cpu_idles_and_down_while_it_is_saturated(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    stat.write_text(_stat_line(100, 100))
    headroom = CpuHeadroom(min_idle=0.2, saturated_idle=0.05, window_s=0.05, stat=stat)
    assert headroom.adjust(4, 8) == 4  # the first sample only starts the window
    time.sleep(0.06)
    stat.write_text(_stat_line(150, 150))  # 50% idle over the window
    assert headroom.adjust(4, 8) == 5
    assert headroom.adjust(5, 8) == 5  # once per window
    time.sleep(0.06)
    stat.write_text(_stat_line(240, 160))  # 10% idle: between the thresholds, the level holds
    assert headroom.adjust(5, 8) == 5
    time.sleep(0.06)
    stat.write_text(_stat_line(338, 162))  # 2% idle: saturated
    assert headroom.adjust(5, 8) == 4
    time.sleep(0.06)
    stat.write_text(_stat_line(438, 162))
    assert headroom.adjust(1, 8) == 1  # never below one session
    time.sleep(0.06)
    stat.write_text(_stat_line(438, 262))
    assert headroom.adjust(8, 8) == 8  # nor above the limit
    assert CpuHeadroom(stat=tmp_path / "missing").adjust(3, 8) == 3  # no /proc/stat: the level stays


def test_cpu_ticks_count_idle_and_iowait_as_idle_and_guest_time_once(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    stat.write_text("cpu  100 10 20 300 30 0 5 0 40 4\ncpu0 0 0 0 0\n")  # guest 40 and guest_nice 4 are inside user and nice
    assert cpu_ticks(stat) == (135, 465)
    stat.write_text("cpu  oops\n")
    assert cpu_ticks(stat) is None and cpu_ticks(tmp_path / "missing") is None


class _RecordingPool(BrowserPool):
    """A pool whose scenarios only record when they ran (no browser): for order and limits."""

    def __init__(self, size: int | PoolSize, headroom: CpuHeadroom | None = None) -> None:
        super().__init__(options=None, size=size, timeout_s=60, headroom=headroom)  # type: ignore[arg-type]
        self.started: list[int] = []
        self.concurrent = 0
        self.peak = 0
        self._lock = threading.Lock()

    def _free_session(self) -> Any:
        session = super()._free_session()
        if session is not None:  # under the pool's lock, for the job at the head of the queue
            self.started.append(self._waiting[0].work.line)
        return session

    def _new_session(self) -> Any:
        session = SimpleNamespace(park=lambda: None)  # parked after each job, as a browser is
        self._sessions.append(session)  # type: ignore[arg-type]
        return session

    def _run(self, work: ScenarioWork, session: Any, start_clock: Any) -> tuple[Any, None]:
        start_clock()
        with self._lock:
            self.concurrent += 1
            self.peak = max(self.peak, self.concurrent)
        time.sleep(0.05)
        with self._lock:
            self.concurrent -= 1
        return f"result {work.line}", None


def _work(line: int) -> ScenarioWork:
    return ScenarioWork(
        feature=Path("f.feature"), line=line, step_modules=(), base_url="", entry_url="", environment=None,
        sleep=None, locale=None, app_dir=None, entry_file=None,  # type: ignore[arg-type]
    )


def test_jobs_get_sessions_in_submission_order_and_never_more_than_the_size_at_once() -> None:
    pool = _RecordingPool(3)
    for line in range(12):
        pool.submit(str(line), _work(line))
    results = [pool.take(str(line)).result for line in range(12)]
    assert results == [f"result {line}" for line in range(12)]
    assert pool.started == list(range(12))  # pytest's order: the item it waits for is never overtaken
    assert pool.peak == 3 and pool.most_at_once == 3


class _FixedIdle(CpuHeadroom):
    """Reports the same idle share every time (no window)."""

    def __init__(self, idle: float) -> None:
        super().__init__()
        self.idle = idle

    def idle_fraction(self) -> float | None:
        return self.idle


def test_the_level_starts_at_the_base_and_follows_the_cpu_between_one_session_and_the_limit() -> None:
    steady = _RecordingPool(PoolSize(2, 6), headroom=_FixedIdle(0.1))
    idle = _RecordingPool(PoolSize(2, 6), headroom=_FixedIdle(0.5))
    saturated = _RecordingPool(PoolSize(2, 6), headroom=_FixedIdle(0.0))
    for pool in (steady, idle, saturated):
        for line in range(12):
            pool.submit(str(line), _work(line))
        for line in range(12):
            pool.take(str(line))
    assert steady.peak == 2 and steady.level == 2  # neither idle nor saturated: the base
    assert idle.peak == 6 and idle.level == 6  # an idle machine: up to the limit
    assert saturated.peak == 1 and saturated.level == 1  # a saturated one: down to one session
    assert saturated.started == list(range(12))  # in order all the same


def test_the_first_signal_runs_the_emergency_stops_and_interrupts_and_later_ones_are_ignored() -> None:
    interrupt = Interrupt(grace_s=60)
    stopped: list[str] = []
    remove = interrupt.add_stop(lambda: stopped.append("browsers"))
    interrupt.add_stop(lambda: 1 / 0)  # a failing stop spares none of the others
    assert interrupt.install()
    try:
        with pytest.raises(KeyboardInterrupt, match="SIGTERM"):
            os.kill(os.getpid(), signal.SIGTERM)
            threading.Event().wait(5)  # the handler runs here, in the main thread
        assert stopped == ["browsers"] and interrupt.requested
        os.kill(os.getpid(), signal.SIGINT)  # a second Ctrl-C is not needed, and not acted on
        threading.Event().wait(0.2)
        assert stopped == ["browsers"]
        remove()
    finally:
        interrupt.uninstall()
    assert signal.getsignal(signal.SIGTERM) is not interrupt._on_signal


def test_overlapping_scenarios_share_their_step_folders_and_working_directory(tmp_path: Path) -> None:
    import sys

    before_cwd, before_path = os.getcwd(), list(sys.path)
    with PROCESS_STATE.paths([tmp_path]), PROCESS_STATE.working_directory(tmp_path):
        with PROCESS_STATE.paths([tmp_path]), PROCESS_STATE.working_directory(tmp_path):
            assert os.getcwd() == str(tmp_path) and sys.path.count(str(tmp_path)) == 1
        assert os.getcwd() == str(tmp_path) and str(tmp_path) in sys.path  # the other scenario still runs
    assert os.getcwd() == before_cwd and sys.path == before_path
