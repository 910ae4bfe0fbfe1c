"""http/concurrency.py: bursts released together, answered in order, judged by one_winner.

A small threaded HTTP server on loopback claims a name once: with its lock it keeps the rule,
without it (check, pause, act) two claims that arrive together both win, which only a burst
released from one barrier shows.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from pytest_backendbench.http.concurrency import MAX_AT_ONCE, at_once, local_host, one_winner, parallel_posts


class NameServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, locked: bool) -> None:
        super().__init__(("127.0.0.1", 0), NameHandler)
        self.locked = locked
        self.lock = threading.Lock()
        self.names: list[str] = []


class NameHandler(BaseHTTPRequestHandler):
    server: NameServer

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        name = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["name"]
        if name == "slow":
            time.sleep(2)
        if self.server.locked:
            with self.server.lock:
                status = self.claim(name)
        else:
            status = self.claim(name)
        body = b"{}" if status == 201 else b'{"error": "conflict"}'
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except BrokenPipeError:  # the client that gave up on "slow"
            pass

    def claim(self, name: str) -> int:
        if name in self.server.names:
            return 409
        time.sleep(0.2)  # the check-then-act window
        self.server.names.append(name)
        return 201


def serve(locked: bool) -> Iterator[NameServer]:
    server = NameServer(locked)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def locked() -> Iterator[NameServer]:
    yield from serve(True)


@pytest.fixture
def racy() -> Iterator[NameServer]:
    yield from serve(False)


def url(server: NameServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


def claims(server: NameServer, count: int, timeout_s: float = 5) -> list[requests.Response]:
    return parallel_posts(url(server), "/names", [{"name": "taken"}] * count, timeout_s)


def test_a_locked_service_has_one_winner_and_the_answers_come_in_order(locked: NameServer) -> None:
    answers = at_once(url(locked), lambda name: requests.post(url(locked) + "/names", json={"name": name}, timeout=5), ["a", "b", "a", "a"], 5)
    assert [a.request.body for a in answers] == [b'{"name": "a"}', b'{"name": "b"}', b'{"name": "a"}', b'{"name": "a"}']
    winners = one_winner([answers[0], answers[2], answers[3]], "a name is unique", code="conflict")
    assert len(winners) == 1 and locked.names.count("a") == 1


def test_a_check_then_act_service_is_caught(racy: NameServer) -> None:
    with pytest.raises(AssertionError, match=r"expected exactly 1 to get 201, [2-8] did"):
        one_winner(claims(racy, 8), "a name is unique")


def test_a_wrong_refusal_is_named(locked: NameServer) -> None:
    with pytest.raises(AssertionError, match="every other request should get 409 gone"):
        one_winner(claims(locked, 3), "a name is unique", code="gone")


def test_a_request_without_answer_fails_the_item(locked: NameServer) -> None:
    with pytest.raises(pytest.fail.Exception, match="1 of 2 concurrent requests were lost"):
        parallel_posts(url(locked), "/names", [{"name": "slow"}, {"name": "quick"}], 0.5)


def test_bursts_are_bounded_and_local(locked: NameServer) -> None:
    with pytest.raises(ValueError, match=f"2 to {MAX_AT_ONCE}"):
        claims(locked, MAX_AT_ONCE + 1)
    assert local_host("http://127.0.0.1:1") and local_host("http://localhost:1") and local_host("http://172.18.0.3:8000")
    assert not local_host("http://8.8.8.8:80") and not local_host("http://name.invalid:80")
    with pytest.raises(ValueError, match="private network"):
        at_once("http://8.8.8.8:80", lambda _: requests.get("http://8.8.8.8", timeout=0.1), [1, 2], 1)
