"""A TCP forwarder on 127.0.0.1 to the candidate's service, for oracles that hard-code localhost.

The harness reaches a container by its IP or through the relay; tests written against
``http://localhost:<port>`` (BaxBench's) work unchanged through this forwarder. The target is
asked for on every connection, so a restarted service that came back on another address is
still reached. Threads, not asyncio: oracle items are synchronous and the traffic is small.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable

CONNECT_TIMEOUT_S = 10.0
BUFFER = 65536


class LocalForwarder:
    """Listens on ``127.0.0.1:<free port>`` and pipes each connection to ``target()``."""

    def __init__(self, target: Callable[[], tuple[str, int]], name: str = "service") -> None:
        self._target = target
        self._name = name
        self._listener: socket.socket | None = None
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False
        self.port = 0

    def start(self, port: int = 0) -> int:
        """Bind (``port``, or a free one) and start accepting; returns the local port."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(64)
        self._listener = listener
        self.port = int(listener.getsockname()[1])
        threading.Thread(target=self._accept_loop, name=f"bb-forward-{self._name}-{self.port}", daemon=True).start()
        return self.port

    def stop(self) -> None:
        """Close the listener and every open connection; idempotent."""
        with self._lock:
            self._closed = True
            sockets = list(self._sockets)
            self._sockets.clear()
            listener, self._listener = self._listener, None
        for sock in [s for s in (listener,) if s is not None] + sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()

    def _accept_loop(self) -> None:
        listener = self._listener
        while listener is not None:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # the listener was closed by stop()
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _track(self, sock: socket.socket) -> bool:
        with self._lock:
            if self._closed:
                return False
            self._sockets.add(sock)
            return True

    def _serve(self, client: socket.socket) -> None:
        upstream: socket.socket | None = None
        try:
            if not self._track(client):
                return
            host, port = self._target()
            # a refused upstream closes the client's connection: the caller sees the service as down
            upstream = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S)
            upstream.settimeout(None)
            if not self._track(upstream):
                return
            pump = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
            pump.start()
            _pipe(client, upstream)
            pump.join()
        except OSError:
            pass
        finally:
            for sock in (client, upstream):
                if sock is None:
                    continue
                with self._lock:
                    self._sockets.discard(sock)
                with contextlib.suppress(OSError):
                    sock.close()


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    """Copy until ``source`` ends, then half-close ``sink`` so the other side sees EOF."""
    try:
        while True:
            data = source.recv(BUFFER)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)
