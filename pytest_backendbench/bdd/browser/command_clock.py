"""How long the WebDriver call in flight on a browser has waited, against the longest it may legitimately take.

A page whose script never yields (``for (;;) {}`` after a click) blocks every WebDriver call
until the renderer is killed: the call's only end is the scenario deadline (120 s by default),
while the spinning renderer holds a core the other sessions need. No call may legitimately wait
longer than the session's own timeouts (page load, script, implicit wait — the values the step
code set, which the clock reads from the ``SET_TIMEOUTS`` commands it sees) plus a margin for a
loaded machine; a call past that is a hung page, the candidate's failure, found in seconds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

HANG_MARGIN_S = 15.0
"""Beyond the longest timeout of the session, how long a call may still take (a loaded machine)."""
MS_LIMITS = ("pageLoad", "script", "implicit")


class CommandClock:
    """The WebDriver calls in flight on one browser (per thread) and the session's timeouts."""

    def __init__(self, page_load_s: float, script_s: float, margin_s: float = HANG_MARGIN_S) -> None:
        self.margin_s = margin_s
        self._limits_s = {"pageLoad": page_load_s, "script": script_s, "implicit": 0.0}
        self._in_flight: dict[int, tuple[float, str]] = {}
        self._lock = threading.Lock()

    def wrap(self, execute: Callable[[str, dict[str, Any]], Any]) -> Callable[[str, dict[str, Any]], Any]:
        """A command executor's ``execute`` that keeps this clock (selenium calls it for every command)."""
        from selenium.webdriver.remote.command import Command

        def timed_execute(command: str, params: dict[str, Any]) -> Any:
            if command == Command.SET_TIMEOUTS:
                self._note_timeouts(params)
            key = threading.get_ident()
            with self._lock:
                self._in_flight[key] = (time.monotonic(), command)
            try:
                return execute(command, params)
            finally:
                with self._lock:
                    self._in_flight.pop(key, None)

        return timed_execute

    def _note_timeouts(self, params: dict[str, Any]) -> None:
        with self._lock:
            for name in MS_LIMITS:
                value = params.get(name)
                if isinstance(value, (int, float)) and value >= 0:
                    self._limits_s[name] = value / 1000.0

    @property
    def limit_s(self) -> float:
        """The longest a call may wait now: the session's longest timeout plus the margin."""
        with self._lock:
            return max(self._limits_s.values()) + self.margin_s

    def overdue(self, now: float | None = None) -> tuple[str, float] | None:
        """(command, seconds waited) of a call waiting past :attr:`limit_s`, else None."""
        oldest = self.oldest_call(now)
        return oldest if oldest is not None and oldest[1] > self.limit_s else None

    def oldest_call(self, now: float | None = None) -> tuple[str, float] | None:
        """(command, seconds waited) of the call in flight longest, else None."""
        now = time.monotonic() if now is None else now
        with self._lock:
            if not self._in_flight:
                return None
            started, command = min(self._in_flight.values())
        return command, now - started

    def clear(self) -> None:
        """Forget the calls in flight (the browser they waited on was killed)."""
        with self._lock:
            self._in_flight.clear()
