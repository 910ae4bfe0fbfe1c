"""A service that stopped answering fails the next requests at once, and is judged normally once it answers."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
import requests

from pytest_backendbench.http.contract import ContractSession
from pytest_backendbench.http.hang_guard import STRIKES, HangGuard, ServiceHung


class SilentServer:
    """Accepts connections and never answers while ``silent``; answers 200 otherwise."""

    def __init__(self) -> None:
        self.silent = True
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.held: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if self.silent:
                self.held.append(conn)
                continue
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
            conn.close()

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


@pytest.fixture
def server() -> Iterator[SilentServer]:
    server = SilentServer()
    yield server
    server.close()


def test_after_three_timeouts_in_a_row_the_next_request_fails_at_once_until_the_service_answers(server: SilentServer) -> None:
    guard = HangGuard(server.url, 0.3)
    session = ContractSession(server.url, None, 0.3, guard=guard)
    for _ in range(STRIKES):
        with pytest.raises(requests.exceptions.ReadTimeout):
            session.get("/items")
    started = time.monotonic()
    with pytest.raises(ServiceHung, match=r"GET .*/items was not sent: the service's last 3 requests in a row got no answer within 0.3 s") as hung:
        session.get("/items")
    assert time.monotonic() - started < 2.5  # one short probe, not another request timeout
    assert hung.value.request is not None and hung.value.request.url.startswith(server.url)  # the candidate's failure
    server.silent = False
    assert session.get("/items").status_code == 200  # the probe answered: judged normally again
    assert guard.strikes == 0
