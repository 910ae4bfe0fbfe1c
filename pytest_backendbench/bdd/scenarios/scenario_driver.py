"""What one scenario's step code sees of the browser and of the servers it starts.

:class:`ScenarioDriver` is the worker's browser session as the step code sees it (``file://``
URLs open the candidate, ``quit()`` leaves the session running); :class:`StepServers` gives an
HTTP server the step code starts on a fixed port (E2EDev's ``TCPServer(("", 8000), ...)``) a
free port instead, which ``driver.get`` maps back, so scenarios running at the same time (xdist
workers, a worker's browser pool) never clash.
"""

from __future__ import annotations

import socketserver
import threading
import time
from typing import Any, cast
from urllib.parse import urljoin, urlsplit, urlunsplit

STEP_SERVER_BIND_WAIT_S = 5.0
"""How long ``driver.get`` waits for a step server still binding (started in a thread at import)."""


class StepServers:
    """HTTP servers a scenario's step code started: the ports it asked for and those it got."""

    LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "0.0.0.0", "::1"})

    def __init__(self, expect_servers: bool = False, keep_ports: frozenset[int] = frozenset()) -> None:
        self.ports: dict[int, int] = {}
        self.servers: list[socketserver.BaseServer] = []
        self.expect_servers = expect_servers
        self.keep_ports = keep_ports  # local ports that are not the step code's (the candidate's own)
        self._bound = threading.Condition()

    def server_class(self, real: type[socketserver.TCPServer]) -> type[socketserver.TCPServer]:
        """A subclass of real that binds a free port when the step code asks for a fixed one."""
        servers = self

        class StepServer(real):  # type: ignore[valid-type,misc]
            allow_reuse_address = True

            def server_bind(self) -> None:
                address: Any = cast(Any, self).server_address
                host, port = address[:2]
                if port:
                    self.server_address = (host, 0)
                super().server_bind()
                with servers._bound:
                    if port:
                        servers.ports[int(port)] = int(self.server_address[1])
                    servers.servers.append(self)
                    servers._bound.notify_all()

        StepServer.__name__ = StepServer.__qualname__ = real.__name__
        return StepServer

    def map_url(self, url: str) -> str:
        """``http://localhost:8000/x`` -> the port the step's server really got.

        When the step code starts servers (``expect_servers``) and the port is not mapped yet,
        this waits a little for it: E2EDev's modules start their ``TCPServer`` in a thread at
        import time, and the first ``driver.get`` can come before that server has bound.
        """
        parts = urlsplit(url)
        try:
            port = parts.port
        except ValueError:
            return url
        if port is None or parts.hostname not in self.LOCAL_HOSTS or port in self.keep_ports:
            return url
        if port not in self.ports and self.expect_servers:
            deadline = time.monotonic() + STEP_SERVER_BIND_WAIT_S
            with self._bound:
                while port not in self.ports and time.monotonic() < deadline:
                    self._bound.wait(max(0.0, deadline - time.monotonic()))
        if port not in self.ports:
            return url
        netloc = parts.netloc.rsplit(":", 1)[0] + f":{self.ports[port]}"
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))

    def close(self) -> None:
        """Stop the servers (in the background: shutdown() waits for serve_forever's next poll)."""
        for server in self.servers:
            threading.Thread(target=_stop_server, args=(server,), daemon=True).start()
        self.servers.clear()
        self.ports.clear()


def _stop_server(server: socketserver.BaseServer) -> None:
    server.shutdown()
    server.server_close()


class ScenarioDriver:
    """The shared WebDriver as one scenario sees it.

    Everything is the real driver except: ``get`` opens ``file://`` URLs at the candidate's
    entry page, resolves relative URLs against the base URL and sends URLs of a server the
    step code started on a fixed port to the port it really got; ``quit`` does nothing;
    ``close`` closes the current window only while another one remains.
    """

    def __init__(self, driver: Any, base_url: str, entry_url: str, step_servers: StepServers | None = None) -> None:
        self._driver = driver
        self.base_url = base_url
        self.entry_url = entry_url
        self.step_servers = step_servers or StepServers(keep_ports=ports_of(base_url, entry_url))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._driver, name)

    def __repr__(self) -> str:
        return f"<ScenarioDriver {self.base_url} over {self._driver!r}>"

    @property
    def wrapped_driver(self) -> Any:
        """The real selenium driver (shared by every scenario of the worker)."""
        return self._driver

    def resolve(self, url: str) -> str:
        """Where ``get(url)`` goes."""
        parts = urlsplit(str(url))
        if parts.scheme == "file":
            entry = urlsplit(self.entry_url)
            return urlunsplit((entry.scheme, entry.netloc, entry.path, parts.query or entry.query, parts.fragment))
        if parts.scheme:
            return self.step_servers.map_url(str(url))
        return urljoin(self.base_url.rstrip("/") + "/", str(url))

    def get(self, url: str) -> None:
        """Navigate, mapping E2EDev's file:// URLs to the running candidate."""
        self._driver.get(self.resolve(url))

    def quit(self) -> None:
        """The browser is shared by the worker's scenarios: it outlives this one."""

    def close(self) -> None:
        """Close the current window unless it is the last one (which would end the session)."""
        if len(self._driver.window_handles) > 1:
            self._driver.close()



def ports_of(*urls: str) -> frozenset[int]:
    ports = set()
    for url in urls:
        try:
            port = urlsplit(url).port
        except ValueError:
            continue
        if port is not None:
            ports.add(port)
    return frozenset(ports)
