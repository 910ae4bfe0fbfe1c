"""A deterministic webhook receiver mock, standard library only.

Candidates reach it at $WEBHOOKS_URL and deliver webhooks to URLs under it; oracles inspect
what arrived. Nothing depends on time or randomness: the same requests always get the same
answers, and each request is recorded with the exact bytes of its body, so an oracle can
recompute a signature over them.

Receiving (any method, any path outside /__mock__/):
  -> the status set for that exact path with POST /__mock__/respond, else
     200 {"received": true, "seq": N}. A status of 0 means no answer: the connection is closed
     without a response (as a receiver that went away). A 204 or 304 is answered without a body.

Inspection (never recorded):
  GET  /__mock__/health             -> 200 {"status": "ok"}
  GET  /__mock__/requests[?path=P]  -> 200 {"requests": [{seq, method, path, query, headers, body,
                                       body_base64, json, status}]} every request received (only
                                       those to path P when given), oldest first; headers
                                       lower-cased, minus transport headers; ``json`` is the
                                       parsed body or null; ``status`` what was answered (null: none)
  POST /__mock__/respond {path, status}  -> 200 {path, status}: answer ``status`` (0 or 100-599)
                                       to every later request to ``path`` (a string starting with /)
  POST /__mock__/reset              -> 200 {"status": "reset"}: forget requests and answers
"""

from __future__ import annotations

import base64
import json
import os
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

TRANSPORT_HEADERS = frozenset({"host", "content-length", "connection", "accept-encoding", "keep-alive", "transfer-encoding"})
NO_ANSWER = 0
BODYLESS = frozenset({204, 304})


class Inbox:
    """All mock state; one lock, because ThreadingHTTPServer serves requests concurrently."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.answers: dict[str, int] = {}


INBOX = Inbox()


class MockError(Exception):
    """A refused inspection request: status and message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"error": message}


class ReceiverHandler(BaseHTTPRequestHandler):
    """Routes one request; every answer but a 204 or 304 is JSON with a Content-Length (keep-alive friendly)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server_version = "webhooks-mock/1"

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def _handle(self, method: str) -> None:
        url = urlsplit(self.path)
        path = url.path or "/"
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if path.startswith("/__mock__/"):
            try:
                status, payload = self._inspect(method, path.rstrip("/"), dict(parse_qsl(url.query)), raw)
            except MockError as err:
                status, payload = err.status, err.body
            self._send(status, payload)
            return
        try:
            parsed: Any = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        with INBOX.lock:
            status = INBOX.answers.get(path, 200)
            seq = len(INBOX.requests) + 1
            INBOX.requests.append({
                "seq": seq,
                "method": method,
                "path": path,
                "query": dict(parse_qsl(url.query)),
                "headers": {k.lower(): v for k, v in self.headers.items() if k.lower() not in TRANSPORT_HEADERS},
                "body": raw.decode("utf-8", errors="replace"),
                "body_base64": base64.b64encode(raw).decode("ascii"),
                "json": parsed,
                "status": None if status == NO_ANSWER else status,
            })
        if status == NO_ANSWER:
            self.close_connection = True
            return
        self._send(status, {"received": status < 400, "seq": seq})

    @staticmethod
    def _inspect(method: str, path: str, query: dict[str, str], raw: bytes) -> tuple[int, Any]:
        if path == "/__mock__/health" and method == "GET":
            return 200, {"status": "ok"}
        if path == "/__mock__/requests" and method == "GET":
            with INBOX.lock:
                found = [dict(r) for r in INBOX.requests if "path" not in query or r["path"] == query["path"]]
            return 200, {"requests": found}
        if path == "/__mock__/respond" and method == "POST":
            try:
                body = json.loads(raw)
            except ValueError as err:
                raise MockError(400, f"body is not JSON: {err}") from err
            if not isinstance(body, dict) or not isinstance(body.get("path"), str) or not body["path"].startswith("/"):
                raise MockError(400, "expected {path: '/...', status: 0 or 100-599}")
            status = body.get("status")
            if not isinstance(status, int) or isinstance(status, bool) or not (status == NO_ANSWER or 100 <= status <= 599):
                raise MockError(400, "status must be 0 (no answer) or an HTTP status 100-599")
            with INBOX.lock:
                INBOX.answers[body["path"]] = status
            return 200, {"path": body["path"], "status": status}
        if path == "/__mock__/reset" and method == "POST":
            with INBOX.lock:
                INBOX.reset()
            return 200, {"status": "reset"}
        raise MockError(404, f"no inspection endpoint {method} {path}")

    def _send(self, status: int, payload: Any) -> None:
        if status in BODYLESS:
            # HTTP/1.1 forbids content in a 204 or 304 (RFC 9112 section 6.3): strict clients
            # (Node's llhttp) take the stray bytes for a broken next response and fail the request.
            self.send_response(status)
            self.end_headers()
            return
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        sys.stdout.write("webhooks-mock: " + (format % args) + "\n")


def main() -> None:
    port = int(os.environ.get("PORT", "9300"))
    server = ThreadingHTTPServer((os.environ.get("HOST", "0.0.0.0"), port), ReceiverHandler)
    server.daemon_threads = True
    # As PID 1 in a container, SIGTERM is ignored unless handled.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"webhooks-mock listening on port {port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
