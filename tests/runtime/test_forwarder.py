"""The localhost forwarder against real sockets (no engine): what a test that hard-codes
``http://localhost:<port>`` goes through to reach the candidate."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from pytest_backendbench.runtime.forwarder import LocalForwarder


class Echo(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Length", str(len(body) + 1))
        self.end_headers()
        self.wfile.write(self.server.tag + body)  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: object) -> None:
        pass


def serve(tag: bytes) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    server.tag = tag  # type: ignore[attr-defined]
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def servers() -> Iterator[list[ThreadingHTTPServer]]:
    started = [serve(b"a"), serve(b"b")]
    yield started
    for server in started:
        server.shutdown()
        server.server_close()


def test_forwards_requests_and_follows_the_target(servers: list[ThreadingHTTPServer]) -> None:
    target = {"now": servers[0].server_address[:2]}
    forwarder = LocalForwarder(lambda: target["now"])
    port = forwarder.start()
    try:
        big = b"x" * 300_000
        with requests.Session() as session:  # one kept-alive connection, several requests
            answers = [session.post(f"http://localhost:{port}/", data=big, timeout=10).content for _ in range(3)]
        assert answers == [b"a" + big] * 3
        target["now"] = servers[1].server_address[:2]  # a restarted service on another address
        assert requests.post(f"http://127.0.0.1:{port}/", data=b"hi", timeout=10).content == b"bhi"
    finally:
        forwarder.stop()
    with pytest.raises(requests.ConnectionError):
        requests.post(f"http://127.0.0.1:{port}/", data=b"hi", timeout=5)


def test_a_refused_upstream_closes_the_callers_connection() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        address = unused.getsockname()[:2]  # bound but not listening: connections are refused
        forwarder = LocalForwarder(lambda: address)
        port = forwarder.start()
        try:
            with pytest.raises(requests.ConnectionError):
                requests.get(f"http://127.0.0.1:{port}/", timeout=5)
        finally:
            forwarder.stop()


def test_stop_cuts_open_connections(servers: list[ThreadingHTTPServer]) -> None:
    forwarder = LocalForwarder(lambda: servers[0].server_address[:2])
    port = forwarder.start()
    client = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        client.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi")
        assert client.recv(1024).startswith(b"HTTP/1.")
        forwarder.stop()
        forwarder.stop()  # idempotent
        client.settimeout(5)
        assert client.recv(1024) == b"", "the forwarder closed the connection"
    finally:
        client.close()
