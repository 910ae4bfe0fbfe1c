"""Readiness as composable wait strategies with one deadline (testcontainers-style).

A timeout message states what was awaited, the limit, a hint and the service's last log lines.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import requests

from ..errors import BootFailure


class WaitStrategy(Protocol):
    """One readiness condition; ``check`` returns None when met, else what is still missing."""

    @property
    def description(self) -> str:
        """What is awaited, as the timeout message states it."""

    def check(self) -> str | None:
        """Poll once; never block longer than a second."""


@dataclass
class PortOpen:
    """Ready when the TCP port accepts a connection."""

    host: str
    port: int

    @property
    def description(self) -> str:
        return f"TCP port {self.host}:{self.port} to accept connections"

    def check(self) -> str | None:
        try:
            with socket.create_connection((self.host, self.port), timeout=1.0):
                return None
        except OSError as err:
            return f"connect failed: {err.strerror or err}"


@dataclass
class HttpReady:
    """Ready when GET url answers with a status below 500."""

    url: str

    @property
    def description(self) -> str:
        return f"GET {self.url} to answer with a status below 500"

    def check(self) -> str | None:
        try:
            response = requests.get(self.url, timeout=1.0, allow_redirects=False)
        except requests.RequestException as err:
            return f"no answer: {type(err).__name__}"
        if response.status_code >= 500:
            return f"answered {response.status_code}"
        return None


def wait_until_ready(
    strategies: list[WaitStrategy],
    timeout_s: float,
    *,
    alive: Callable[[], str | None],
    logs: Callable[[], str],
    what: str,
    interval_s: float = 0.1,
) -> float:
    """Poll every strategy until all are met; return the seconds it took.

    ``alive`` returns None while the process runs, else why it stopped: a dead service fails
    at once instead of waiting out the deadline.
    """
    started = time.monotonic()
    deadline = started + timeout_s
    pending = list(strategies)
    last_problem = "not checked yet"
    while True:
        stopped = alive()
        if stopped is not None:
            raise BootFailure(
                f"{what} stopped before it became ready: {stopped}",
                _log_tail(logs()),
            )
        while pending:
            problem = pending[0].check()
            if problem is not None:
                last_problem = problem
                break
            pending.pop(0)
        if not pending:
            return time.monotonic() - started
        if time.monotonic() >= deadline:
            raise BootFailure(
                f"{what} was not ready after {timeout_s:g}s: waited for {pending[0].description} ({last_problem})",
                "hint: the service must listen on 0.0.0.0 at the port given in $PORT (the task's port) "
                "and answer its health path.\n" + _log_tail(logs()),
            )
        time.sleep(interval_s)


def _log_tail(text: str, lines: int = 30) -> str:
    tail = text.strip().splitlines()[-lines:]
    if not tail:
        return "service log: (empty)"
    return "service log (last lines):\n" + "\n".join("  " + line for line in tail)
