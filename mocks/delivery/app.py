"""A deterministic message delivery provider mock (email and SMS), standard library only.

Candidates reach it at $DELIVERY_URL; oracles inspect what it received. Same requests in the
same order always give the same answers: message ids are sequential, ``created`` is a counter,
and the sandbox's failures depend only on the recipient and on how often it was tried.

API (JSON bodies):
  POST /messages  {channel: "email"|"sms", to, subject, body: non-empty string, reference?: string}
                  email: ``to`` is an address (local@domain), ``subject`` a non-empty string;
                  sms: ``to`` is E.164 (+ then 8-15 digits), ``subject`` absent or null.
                  -> 202 {id: "msg_000001", object: "message", status: "accepted", channel, to,
                          subject, body, reference, created}
                  400 invalid_request_error for a malformed request (nothing is delivered).
  Sandbox recipients (checked after the request is found well-formed):
    *@bounce.example, +999...  -> 422 recipient_rejected (permanent: retrying cannot help)
    *@flaky.example, +998...   -> 503 temporarily_unavailable on the first two attempts for that
                                  recipient (counted since the last reset), accepted afterwards
    *@down.example,  +997...   -> 503 temporarily_unavailable, always
    *@silent.example, +996...  -> no answer: the connection is closed without a response
    anyone else                -> accepted
  GET  /messages        -> 200 {object: "list", data: [...]} the accepted messages, oldest first
  GET  /messages/{id}   -> 200 the message, 404 not_found
  Errors: {"error": {"type": ..., "code": ..., "message": ..., "param": ...}}.

Inspection (never recorded):
  GET  /__mock__/health    -> 200 {"status": "ok"}
  GET  /__mock__/requests  -> 200 {"requests": [{seq, method, path, query, json, body, headers,
                              status}]} every API request received, in order, with the status it
                              was answered; headers lower-cased, minus transport headers
  POST /__mock__/reset     -> 200 {"status": "reset"}: forget messages, attempts, requests, counters
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
EMAIL = re.compile(r"^[^@\s]+@([A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+)$")
PHONE = re.compile(r"^\+[1-9][0-9]{7,14}$")
FLAKY_FAILURES = 2


class ApiError(Exception):
    """An error answer: HTTP status plus the error object."""

    def __init__(self, status: int, type_: str, message: str, code: str | None = None, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"error": {"type": type_, "code": code, "message": message, "param": param}}


def invalid(message: str, param: str | None, code: str = "parameter_invalid") -> ApiError:
    return ApiError(400, "invalid_request_error", message, code, param)


def sandbox_rule(channel: str, to: str) -> str | None:
    """Which failure the sandbox simulates for a recipient: rejected, flaky, down or None."""
    if channel == "email":
        domain = to.rsplit("@", 1)[1].lower()
        return {"bounce.example": "rejected", "flaky.example": "flaky", "down.example": "down", "silent.example": "silent"}.get(domain)
    return {"+999": "rejected", "+998": "flaky", "+997": "down", "+996": "silent"}.get(to[:4])


class NoAnswer(Exception):
    """The sandbox's silent recipients: the request gets no answer at all."""


class Outbox:
    """All mock state; one lock, because ThreadingHTTPServer serves requests concurrently."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.messages: dict[str, dict[str, Any]] = {}
        self.attempts: dict[tuple[str, str], int] = {}
        self.requests: list[dict[str, Any]] = []
        self.clock = 0
        self.sequence = 0

    def send(self, body: Any) -> tuple[int, dict[str, Any]]:
        if not isinstance(body, dict):
            raise invalid("expected a JSON object body", None, "body_invalid")
        channel = body.get("channel")
        if channel not in ("email", "sms"):
            raise invalid("channel must be email or sms", "channel")
        to = body.get("to")
        if not isinstance(to, str) or not (EMAIL if channel == "email" else PHONE).match(to):
            kind = "an email address" if channel == "email" else "an E.164 phone number (+ then 8-15 digits)"
            raise invalid(f"to must be {kind}", "to")
        subject = body.get("subject")
        if channel == "email" and (not isinstance(subject, str) or not subject.strip()):
            raise invalid("an email needs a non-empty subject", "subject", "parameter_missing")
        if channel == "sms" and subject is not None:
            raise invalid("an sms has no subject", "subject")
        text = body.get("body")
        if not isinstance(text, str) or not text.strip():
            raise invalid("body is required (a non-empty string)", "body", "parameter_missing")
        reference = body.get("reference")
        if reference is not None and not isinstance(reference, str):
            raise invalid("reference must be a string", "reference")
        rule = sandbox_rule(channel, to)
        key = (channel, to.lower())
        self.attempts[key] = self.attempts.get(key, 0) + 1
        if rule == "rejected":
            raise ApiError(422, "recipient_error", f"the recipient {to} does not accept messages", "recipient_rejected", "to")
        if rule == "silent":
            raise NoAnswer(to)
        if rule == "down" or (rule == "flaky" and self.attempts[key] <= FLAKY_FAILURES):
            raise ApiError(503, "api_error", "the delivery network is temporarily unavailable; retry", "temporarily_unavailable")
        self.sequence += 1
        self.clock += 1
        message = {
            "id": f"msg_{self.sequence:06d}",
            "object": "message",
            "status": "accepted",
            "channel": channel,
            "to": to,
            "subject": subject,
            "body": text,
            "reference": reference,
            "created": CREATED_EPOCH + self.clock,
        }
        self.messages[message["id"]] = message
        return 202, message


OUTBOX = Outbox()


class DeliveryHandler(BaseHTTPRequestHandler):
    """Routes one request; every answer is JSON with a Content-Length (keep-alive friendly)."""

    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; without TCP_NODELAY, Nagle plus delayed ACKs add ~40 ms.
    disable_nagle_algorithm = True
    server_version = "delivery-mock/1"

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
        with OUTBOX.lock:
            record = {
                "seq": len(OUTBOX.requests) + 1,
                "method": method,
                "path": path,
                "query": dict(parse_qsl(url.query)),
                "json": None,
                "body": raw.decode("utf-8", errors="replace"),
                "headers": {k.lower(): v for k, v in self.headers.items() if k.lower() not in TRANSPORT_HEADERS},
                "status": None,
            }
            OUTBOX.requests.append(record)
            try:
                body = self._parse(raw)
                record["json"] = body
                status, payload = self._api(method, path, body)
            except ApiError as err:
                status, payload = err.status, err.body
            except NoAnswer:
                record["status"] = None
                self.close_connection = True
                return
            record["status"] = status
        self._send(status, payload)

    @staticmethod
    def _parse(raw: bytes) -> Any:
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError as err:
            raise invalid(f"body is not valid JSON: {err}", None, "body_invalid") from err

    @staticmethod
    def _inspect(method: str, path: str) -> tuple[int, Any]:
        if path == "/__mock__/health" and method == "GET":
            return 200, {"status": "ok"}
        if path == "/__mock__/requests" and method == "GET":
            with OUTBOX.lock:
                return 200, {"requests": [dict(r) for r in OUTBOX.requests]}
        if path == "/__mock__/reset" and method == "POST":
            with OUTBOX.lock:
                OUTBOX.reset()
            return 200, {"status": "reset"}
        raise ApiError(404, "invalid_request_error", f"no inspection endpoint {method} {path}", "not_found")

    @staticmethod
    def _api(method: str, path: str, body: Any) -> tuple[int, Any]:
        parts = path.strip("/").split("/")
        if parts[0] != "messages" or len(parts) > 2:
            raise ApiError(404, "invalid_request_error", f"unknown endpoint {path}", "not_found")
        if len(parts) == 2:
            if method != "GET":
                raise ApiError(405, "invalid_request_error", f"{method} is not allowed on {path}", "method_not_allowed")
            message = OUTBOX.messages.get(parts[1])
            if message is None:
                raise ApiError(404, "invalid_request_error", f"no such message: {parts[1]}", "not_found", "id")
            return 200, message
        if method == "GET":
            return 200, {"object": "list", "data": list(OUTBOX.messages.values())}
        if method != "POST":
            raise ApiError(405, "invalid_request_error", f"{method} is not allowed on {path}", "method_not_allowed")
        return OUTBOX.send(body)

    def _send(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        sys.stdout.write("delivery-mock: " + (format % args) + "\n")


def main() -> None:
    port = int(os.environ.get("PORT", "9200"))
    server = ThreadingHTTPServer((os.environ.get("HOST", "0.0.0.0"), port), DeliveryHandler)
    server.daemon_threads = True
    # As PID 1 in a container, SIGTERM is ignored unless handled.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"delivery-mock listening on port {port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
