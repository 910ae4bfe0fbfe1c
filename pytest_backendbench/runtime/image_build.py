"""One ``docker build`` with a watchdog, and the build log it produced.

Used for candidates, mocks, the PostgreSQL sidecar image (runtime/docker.py) and the agent
image (agents/agent_image.py). The engine's stream is read line by line through the SDK's
public ``APIClient.build(decode=True)``; the response is caught with a requests response hook
(a public requests API) so the watchdog can cut its connection. Closing the connection is how
a client cancels a classic ``docker build``: the engine stops the running step and, with
``forcerm``, removes the intermediate container.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker
import requests
import urllib3
from docker.errors import DockerException

from ..errors import HarnessError
from .engine import one_line

BUILD_LOG_TAIL = 40
ENGINE_ERRORS = (DockerException, requests.RequestException, urllib3.exceptions.HTTPError, OSError, ValueError)


@dataclass
class BuildOutcome:
    """What one build produced: log, image id or error, duration."""

    tag: str
    lines: list[str] = field(default_factory=list)
    error: str | None = None
    image_id: str | None = None
    seconds: float = 0.0
    timed_out: bool = False

    def feed(self, chunk: dict[str, Any]) -> None:
        """Consume one decoded line of the engine's build stream."""
        if "stream" in chunk:
            self.lines.append(str(chunk["stream"]))
        elif "status" in chunk:
            self.lines.append(f"{chunk['status']} {chunk.get('progress') or ''}".rstrip() + "\n")
        if "error" in chunk:
            self.error = str(chunk["error"]).strip()
            self.lines.append(f"ERROR: {self.error}\n")
        aux = chunk.get("aux")
        if isinstance(aux, dict) and aux.get("ID"):
            self.image_id = str(aux["ID"])

    @property
    def log(self) -> str:
        """The whole build log."""
        return "".join(self.lines)

    def tail(self, lines: int = BUILD_LOG_TAIL) -> str:
        """The last lines of the build log, indented, for failure messages."""
        text = [line for line in self.log.splitlines() if line.strip()][-lines:]
        return "build log (last lines):\n" + "\n".join("  " + line for line in text) if text else "build log: (empty)"


class _Watchdog:
    """Cuts the build's connection when the timeout passes."""

    def __init__(self, timeout_s: float) -> None:
        self.fired = False
        self._response: requests.Response | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(timeout_s, self.fire)
        self._timer.daemon = True

    def remember(self, response: requests.Response, *args: Any, **kwargs: Any) -> requests.Response:
        """requests response hook: keep the build's streaming response."""
        with self._lock:
            if self._response is None:
                self._response = response
        return response

    def start(self) -> None:
        self._timer.start()

    def cancel(self) -> None:
        self._timer.cancel()

    def fire(self) -> None:
        """Shut the socket down: that wakes the reader blocked in recv, where close() alone may not."""
        with self._lock:
            self.fired = True
            response = self._response
        if response is None:
            return
        connection = getattr(response.raw, "connection", None)
        sock = getattr(connection, "sock", None)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
                return
        # no socket to shut down: closing the response is the next best thing (the reader
        # then fails in whatever way http.client does; run_build expects that)
        with contextlib.suppress(Exception):
            response.close()


def run_build(
    api: docker.APIClient,
    context: Path,
    tag: str,
    labels: dict[str, str],
    *,
    timeout_s: float,
    buildargs: dict[str, str] | None = None,
) -> BuildOutcome:
    """Build ``context`` into ``tag``, streamed line by line and cut at ``timeout_s``.

    A build that fails or times out comes back with ``error`` set (the caller decides whose
    fault that is); the engine failing to talk is a ``HarnessError``. ``api`` should have a
    socket timeout above ``timeout_s``; it is left open for the caller to close.
    """
    outcome = BuildOutcome(tag=tag)
    watchdog = _Watchdog(timeout_s)
    api.hooks.setdefault("response", []).append(watchdog.remember)
    started = time.monotonic()
    try:
        stream = api.build(
            path=str(context),
            tag=tag,
            rm=True,
            forcerm=True,
            pull=False,
            decode=True,
            labels=labels,
            buildargs=buildargs,
        )
        watchdog.start()
        for chunk in stream:
            outcome.feed(chunk)
    except Exception as err:
        if watchdog.fired:
            pass  # the reader fails however a cut connection makes it fail: that is the timeout
        elif isinstance(err, ENGINE_ERRORS):
            raise HarnessError(f"the docker engine failed while building {tag}: {one_line(err)}") from err
        else:
            raise
    finally:
        watchdog.cancel()
        with contextlib.suppress(ValueError):
            api.hooks["response"].remove(watchdog.remember)
    outcome.seconds = time.monotonic() - started
    if watchdog.fired:
        outcome.timed_out = True
        outcome.error = f"the build did not finish within {timeout_s:g}s (build timeout)"
    return outcome
