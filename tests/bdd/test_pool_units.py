"""The pool's sizing, the interrupt handler and the shared process state, without a browser."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest

from pytest_backendbench.bdd.pool import MAX_AUTO_SESSIONS, pool_size
from pytest_backendbench.bdd.step_loading import PROCESS_STATE
from pytest_backendbench.interrupt import Interrupt


def test_a_given_pool_size_is_used_and_auto_stays_within_memory_and_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    assert pool_size("3") == 3 and pool_size(1) == 1
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    idle = pool_size("auto", workers=1)
    assert 1 <= idle <= MAX_AUTO_SESSIONS
    monkeypatch.setattr(os, "getloadavg", lambda: (100.0 * (os.cpu_count() or 1), 0.0, 0.0))
    assert pool_size("auto", workers=1) == 1  # a machine loaded far past its cores gets one session
    assert pool_size("auto", workers=64) == 1


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
