"""Servers that step code starts on a fixed port (E2EDev's SimpleHTTPRequestHandler on 8000)."""

from __future__ import annotations

import http.server
import socketserver
import threading
import urllib.request
from pathlib import Path

from pytest_backendbench.bdd.scenarios.behave_runner import ScenarioDriver, StepServers


def test_two_servers_asking_for_port_8000_both_start_and_urls_follow_them(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("the app")
    handler = lambda *args: http.server.SimpleHTTPRequestHandler(*args, directory=str(tmp_path))
    first, second = StepServers(), StepServers()  # e.g. two xdist workers' scenarios
    try:
        server_a = first.server_class(socketserver.TCPServer)(("", 8000), handler)
        second.server_class(http.server.ThreadingHTTPServer)(("127.0.0.1", 8000), handler)
        threading.Thread(target=server_a.serve_forever, daemon=True).start()
        port_a, port_b = first.ports[8000], second.ports[8000]
        assert port_a != port_b and 8000 not in (port_a, port_b)
        assert type(server_a).__name__ == "TCPServer" and isinstance(server_a, socketserver.TCPServer)
        driver = ScenarioDriver(object(), "http://127.0.0.1:1234", "http://127.0.0.1:1234/", first)
        assert driver.resolve("http://localhost:8000/index.html?x=1#top") == f"http://localhost:{port_a}/index.html?x=1#top"
        assert driver.resolve("http://example.com:8000/") == "http://example.com:8000/"  # not a local server
        assert driver.resolve("http://localhost:9000/") == "http://localhost:9000/"  # not a port the steps asked for
        with urllib.request.urlopen(driver.resolve("http://localhost:8000/index.html"), timeout=5) as response:
            assert response.read() == b"the app"
    finally:
        first.close()
        second.close()
    assert first.ports == {} and first.servers == []


def test_a_server_started_in_a_thread_at_import_is_waited_for_before_its_url_is_mapped(tmp_path: Path) -> None:
    import time

    servers = StepServers(expect_servers=True, keep_ports=frozenset({1234}))
    handler = lambda *args: http.server.SimpleHTTPRequestHandler(*args, directory=str(tmp_path))

    def start_late() -> None:  # E2EDev: threading.Thread(target=run_server).start() at import
        time.sleep(0.5)
        servers.server_class(socketserver.TCPServer)(("", 8000), handler)

    threading.Thread(target=start_late, daemon=True).start()
    try:
        driver = ScenarioDriver(object(), "http://127.0.0.1:1234", "http://127.0.0.1:1234/", servers)
        assert driver.resolve("http://localhost:8000/") == f"http://localhost:{servers.ports[8000]}/"
        started = time.monotonic()
        assert driver.resolve("http://127.0.0.1:1234/x") == "http://127.0.0.1:1234/x"  # the candidate's own port never waits
        assert time.monotonic() - started < 0.5
    finally:
        servers.close()
