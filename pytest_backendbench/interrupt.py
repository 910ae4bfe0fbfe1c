"""Stopping a run on SIGTERM or Ctrl-C within a grace period, leaving nothing running.

Slurm preemption and CI cancellation send SIGTERM and wait a short grace period before
SIGKILL. On the first SIGTERM or SIGINT the handler kills, at once, what can hang a teardown —
the browsers, whose quit() waits on a renderer stuck in a script loop — through the
*emergency stops* registered with :meth:`Interrupt.add_stop` (they must not wait on anything),
then raises ``KeyboardInterrupt`` the way pytest's own Ctrl-C does: no further item starts,
pytest marks the session interrupted, the recorder writes report.json (``interrupted: true``)
and the journal, and the session's cleanups stop the services and databases. Further signals
while that runs are ignored (a second Ctrl-C is never needed); should the shutdown still be
running when the grace period ends (xdist's teardown waits up to 10 s for its workers), the
emergency stops run again, the report is written with what was recorded, every process below
this one is killed and reaped, and the process exits.
On the controller the signal is passed on to xdist's workers, which stop the same way.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest

GRACE_S = 6.5
"""After the first signal, the controller writes its report and exits at the latest this much later
(10 s is the usual grace; writing the report and killing what is left take a second or two under load)."""
WORKER_GRACE_S = 4.0
"""An xdist worker has no report to write: it leaves sooner, so the controller's teardown ends in time.
Its orderly teardown under load (load average 12 on 2 cores) takes 5-8 s, much of it other plugins'
session-finish hooks (hypothesis imports itself there): past this, the last resort ends it."""
INTERRUPTED_EXIT = int(pytest.ExitCode.INTERRUPTED)
HANDLED = (signal.SIGTERM, signal.SIGINT)


class Interrupt:
    """The process's SIGTERM/SIGINT handler for a benchmark run, and its emergency stops."""

    def __init__(self, grace_s: float = GRACE_S) -> None:
        self.grace_s = grace_s
        self.signal_name: str | None = None
        self._stops: dict[int, Callable[[], None]] = {}
        self._finals: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        self._previous: dict[int, Any] = {}
        self._last_resort: threading.Timer | None = None

    @property
    def requested(self) -> bool:
        """Whether a stop was asked for (items starting now should not)."""
        return self.signal_name is not None

    def add_stop(self, stop: Callable[[], None]) -> Callable[[], None]:
        """Register a stop that kills without waiting; returns the function that unregisters it."""
        key = id(stop)
        with self._lock:
            self._stops[key] = stop

        def remove() -> None:
            with self._lock:
                self._stops.pop(key, None)

        return remove

    def add_final(self, final: Callable[[], None]) -> None:
        """Register what the last resort does before it exits (write the report)."""
        self._finals.append(final)

    def run_stops(self) -> None:
        """Run every emergency stop (each on its own: one failing must not spare the others)."""
        with self._lock:
            stops = list(self._stops.values())
        for stop in stops:
            with contextlib.suppress(Exception):
                stop()

    def install(self) -> bool:
        """Take over SIGTERM and SIGINT (main thread only); False when that is not possible."""
        if threading.current_thread() is not threading.main_thread():
            return False
        for signum in HANDLED:
            self._previous[signum] = signal.getsignal(signum)
            signal.signal(signum, self._on_signal)
        return True

    def uninstall(self) -> None:
        """Give the signals back to whoever had them, and cancel the last resort."""
        for signum, previous in self._previous.items():
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(signum, previous)
        self._previous.clear()
        if self._last_resort is not None:
            self._last_resort.cancel()
            self._last_resort = None

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.signal_name is not None:
            return  # already stopping; the first signal's shutdown is under way
        self.signal_name = signal.Signals(signum).name
        self.run_stops()
        self._last_resort = threading.Timer(self.grace_s, self._exit_now)
        self._last_resort.daemon = True
        self._last_resort.start()
        raise KeyboardInterrupt(self.signal_name)

    def _exit_now(self) -> None:
        """The shutdown outlived the grace period: kill what is left, write what must be written, and leave."""
        with contextlib.suppress(Exception):
            sys.stderr.write(f"backendbench: the shutdown after {self.signal_name} took more than {self.grace_s:g} s; exiting now\n")
            sys.stderr.flush()
        self.run_stops()
        for final in self._finals:
            with contextlib.suppress(Exception):
                final()
        with contextlib.suppress(Exception):
            from .host.processes import kill_descendants_and_wait

            kill_descendants_and_wait()  # a PostgreSQL cluster, a server, a browser the teardown did not reach
        os._exit(INTERRUPTED_EXIT)


INTERRUPT_KEY = pytest.StashKey[Interrupt]()


def install_interrupt_handler(config: pytest.Config) -> Interrupt:
    """The run's Interrupt, installed (once per process) and given back at config cleanup."""
    existing = config.stash.get(INTERRUPT_KEY, None)
    if existing is not None:
        return existing
    worker = getattr(config, "workerinput", None) is not None
    interrupt = Interrupt(WORKER_GRACE_S if worker else GRACE_S)
    config.stash[INTERRUPT_KEY] = interrupt
    if interrupt.install():
        config.add_cleanup(interrupt.uninstall)
    if not worker:
        interrupt.add_stop(signal_workers)
    config.pluginmanager.register(ShortInterruptTraceback(interrupt, config), "backendbench-short-interrupt-traceback")
    return interrupt


class ShortInterruptTraceback:
    """Keeps pytest from spending the grace period on a traceback nobody reads.

    On KeyboardInterrupt pytest's terminal reporter renders the whole stack (every frame's
    source parsed with ``ast``: pluggy, xdist, selenium...) and then prints only its last line
    unless ``--full-trace``. Under load that took more than 3 s in the controller and in each
    worker — a third of the grace period. For an interrupt raised by our handler the traceback
    is cut to its last entry first, which is the line printed.
    """

    def __init__(self, interrupt: Interrupt, config: pytest.Config) -> None:
        self.interrupt = interrupt
        self.config = config

    @pytest.hookimpl(tryfirst=True)
    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """Cut the traceback of our SIGTERM/Ctrl-C to the raising line (kept whole with --full-trace)."""
        if self.interrupt.requested and not getattr(self.config.option, "fulltrace", False) and len(excinfo.traceback) > 1:
            excinfo.traceback = excinfo.traceback[-1:]


def signal_workers() -> None:
    """Pass SIGTERM on to the children in our process group: xdist's workers, which stop the same way.

    A signal sent to the controller alone (``kill PID``, a CI runner) would otherwise leave the
    workers — and their browsers — running until xdist tears them down. Services, databases and
    browsers run in sessions of their own and are stopped by their owners, not signalled here.
    """
    import psutil

    group = os.getpgid(0)
    for child in psutil.Process().children():
        try:
            if os.getpgid(child.pid) == group:
                child.send_signal(signal.SIGTERM)
        except (psutil.Error, OSError):
            continue


def interrupt_of(config: pytest.Config) -> Interrupt | None:
    """The run's Interrupt (None when no bench is in use)."""
    return config.stash.get(INTERRUPT_KEY, None)
