"""A deterministic email relay over HTTP (SMTP's role, JSON's shape), standard library only.

Candidates reach it at $MAILER_URL; oracles inspect what it received. Same requests in the same
order always give the same answers: message ids are sequential, ``created`` is a counter, and
the sandbox's failures depend only on the recipient's domain.

API (JSON bodies):
  POST /messages  {to: "local@domain.tld", subject: non-empty string, text: non-empty string}
                  -> 202 {id: "mail_000001", object: "message", status: "queued", to, subject,
                          text, created}
                  400 invalid_request for a malformed message (nothing is queued), also when the
                  subject or the address holds a line break or another control character: a
                  header can never be injected through the relay.
  Sandbox recipients (checked after the message is found well-formed):
    *@fail.example    -> 503 temporarily_unavailable, always
    *@reject.example  -> 550 mailbox_unavailable, always (permanent)
    anyone else       -> accepted
  GET  /messages        -> 200 {object: "list", data: [...]} the accepted messages, oldest first
  GET  /messages/{id}   -> 200 the message, 404 not_found
  Errors: {"error": {"code": ..., "message": ..., "param": ...}}.

Inspection (never recorded):
  GET  /__mock__/health    -> 200 {"status": "ok"}
  GET  /__mock__/requests  -> 200 {"requests": [{seq, method, path, query, json, body, headers,
                              status}]} every API request received, in order, with the status it
                              was answered; headers lower-cased, minus transport headers
  GET  /__mock__/messages  -> 200 {"messages": [...]} the accepted messages, oldest first
  POST /__mock__/reset     -> 200 {"status": "reset"}: forget messages, requests, counters
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

CREATED_EPOCH = 1_700_000_000
TRANSPORT_HEADERS = frozenset({"host", "content-length", "connection", "accept-encoding", "keep-alive", "transfer-encoding"})
ADDRESS = re.compile(r"^[^@\s]+@([A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+)$")
CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class ApiError(Exception):
    """An error answer: HTTP status plus the error object."""

    def __init__(self, status: int, code: str, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"error": {"code": code, "message": message, "param": param}}


def invalid(message: str, param: str | None) -> ApiError:
    return ApiError(400, "invalid_request", message, param)


class Relay:
    """All mock state; one lock, because ThreadingHTTPServer serves requests concurrently."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.messages: dict[str, dict[str, Any]] = {}
        self.requests: list[dict[str, Any]] = []
        self.sequence = 0

    def send(self, body: Any) -> tuple[int, dict[str, Any]]:
        if not isinstance(body, dict):
            raise invalid("expected a JSON object body", None)
        to = body.get("to")
        if not isinstance(to, str) or not ADDRESS.match(to) or CONTROL.search(to):
            raise invalid("to must be one email address (local@domain.tld)", "to")
        subject = body.get("subject")
        if not isinstance(subject, str) or not subject.strip():
            raise invalid("subject is required (a non-empty string)", "subject")
        if CONTROL.search(subject):
            raise invalid("subject must not contain line breaks or other control characters", "subject")
        text = body.get("text")
        if not isinstance(text, str) or not text.strip():
            raise invalid("text is required (a non-empty string)", "text")
        domain = to.rsplit("@", 1)[1].lower()
        if domain == "fail.example":
            raise ApiError(503, "temporarily_unavailable", "the relay is temporarily unavailable; try later")
        if domain == "reject.example":
            raise ApiError(550, "mailbox_unavailable", f"the mailbox {to} does not exist", "to")
        self.sequence += 1
        message: dict[str, Any] = {
            "id": f"mail_{self.sequence:06d}",
            "object": "message",
            "status": "queued",
            "to": to,
            "subject": subject,
            "text": text,
            "created": CREATED_EPOCH + self.sequence,
        }
        self.messages[message["id"]] = message
        return 202, message


RELAY = Relay()


class MailerHandler(BaseHTTPRequestHandler):
    """Routes one request; every answer is JSON with a Content-Length (keep-alive friendly)."""

    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; without TCP_NODELAY, Nagle plus delayed ACKs add ~40 ms.
    disable_nagle_algorithm = True
    server_version = "mailer-mock/1"

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
        path = url.path.rstrip("/") or "/"
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if path.startswith("/__mock__/"):
            try:
                status, payload = self._inspect(method, path)
            except ApiError as err:
                status, payload = err.status, err.body
            self._send(status, payload)
            return
        with RELAY.lock:
            record = {
                "seq": len(RELAY.requests) + 1,
                "method": method,
                "path": path,
                "query": dict(parse_qsl(url.query)),
                "json": None,
                "body": raw.decode("utf-8", errors="replace"),
                "headers": {k.lower(): v for k, v in self.headers.items() if k.lower() not in TRANSPORT_HEADERS},
                "status": None,
            }
            RELAY.requests.append(record)
            try:
                body = self._parse(raw)
                record["json"] = body
                status, payload = self._api(method, path, body)
            except ApiError as err:
                status, payload = err.status, err.body
            record["status"] = status
        self._send(status, payload)

    @staticmethod
    def _parse(raw: bytes) -> Any:
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError as err:
            raise invalid(f"body is not valid JSON: {err}", None) from err

    @staticmethod
    def _inspect(method: str, path: str) -> tuple[int, Any]:
        if path == "/__mock__/health" and method == "GET":
            return 200, {"status": "ok"}
        if path == "/__mock__/requests" and method == "GET":
            with RELAY.lock:
                return 200, {"requests": [dict(r) for r in RELAY.requests]}
        if path == "/__mock__/messages" and method == "GET":
            with RELAY.lock:
                return 200, {"messages": list(RELAY.messages.values())}
        if path == "/__mock__/reset" and method == "POST":
            with RELAY.lock:
                RELAY.reset()
            return 200, {"status": "reset"}
        raise ApiError(404, "not_found", f"no inspection endpoint {method} {path}")

    @staticmethod
    def _api(method: str, path: str, body: Any) -> tuple[int, Any]:
        parts = path.strip("/").split("/")
        if parts[0] != "messages" or len(parts) > 2:
            raise ApiError(404, "not_found", f"unknown endpoint {path}")
        if len(parts) == 2:
            if method != "GET":
                raise ApiError(405, "method_not_allowed", f"{method} is not allowed on {path}")
            message = RELAY.messages.get(parts[1])
            if message is None:
                raise ApiError(404, "not_found", f"no such message: {parts[1]}", "id")
            return 200, message
        if method == "GET":
            return 200, {"object": "list", "data": list(RELAY.messages.values())}
        if method != "POST":
            raise ApiError(405, "method_not_allowed", f"{method} is not allowed on {path}")
        return RELAY.send(body)

    def _send(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        sys.stdout.write("mailer-mock: " + (format % args) + "\n")


def main() -> None:
    port = int(os.environ.get("PORT", "9300"))
    server = ThreadingHTTPServer((os.environ.get("HOST", "0.0.0.0"), port), MailerHandler)
    server.daemon_threads = True
    # As PID 1 in a container, SIGTERM is ignored unless handled.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"mailer-mock listening on port {port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
