"""A deterministic payments provider mock (a small Stripe-like subset), standard library only.

Candidates reach it at $PAYMENTS_URL; oracles inspect what it received. Same requests in the
same order always give the same answers: ids are sequential, timestamps are counters.

API (JSON bodies; ``application/x-www-form-urlencoded`` is accepted too):
  POST /charges   {amount: int > 0 (minor units), currency: "usd", source: "tok_...",
                   description?, metadata?, idempotency_key?}
                  -> 201 {id: "ch_000001", object: "charge", status: "succeeded"|"declined",
                          failure_code, amount, amount_refunded, refunded, currency, source, ...}
                  source "tok_decline" -> declined (card_declined),
                  source "tok_insufficient_funds" -> declined (insufficient_funds),
                  source "tok_error" -> 500 api_error and no charge is created,
                  any other non-empty source -> succeeded.
  GET  /charges, GET /charges/{id}
  POST /refunds   {charge: "ch_...", amount?: int (default: what remains), idempotency_key?}
                  -> 201 {id: "re_000001", object: "refund", status: "succeeded", ...};
                  400 when the charge was declined or the amount exceeds what remains.
  GET  /refunds/{id}
  Idempotency: the ``Idempotency-Key`` header (or body ``idempotency_key``) replays the first
  answer for the same body (header ``Idempotent-Replayed: true``); a different body -> 409.
  Errors: {"error": {"type": ..., "code": ..., "message": ..., "param": ...}}.
  If $PAYMENTS_API_KEY is set, every API call needs ``Authorization: Bearer <key>`` (else 401).

Inspection (never recorded):
  GET  /__mock__/health    -> 200 {"status": "ok"}
  GET  /__mock__/requests  -> 200 {"requests": [{seq, method, path, query, json, body, headers}]}
                              every API request received, in order; headers lower-cased, minus
                              transport headers (host, content-length, connection, ...)
  POST /__mock__/fail-refunds {charge} -> 200: every later refund of that charge answers 500
                              (and creates nothing), for items on refund failures
  POST /__mock__/reset     -> 200 {"status": "reset"}: forget charges, refunds, requests, counters
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
MAX_AMOUNT = 99_999_999
TRANSPORT_HEADERS = frozenset({"host", "content-length", "connection", "accept-encoding", "keep-alive", "transfer-encoding"})
DECLINES = {"tok_decline": "card_declined", "tok_insufficient_funds": "insufficient_funds"}


class ApiError(Exception):
    """An error answer: HTTP status plus the error object."""

    def __init__(self, status: int, type_: str, message: str, code: str | None = None, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"error": {"type": type_, "code": code, "message": message, "param": param}}


class Ledger:
    """All mock state; one lock, because ThreadingHTTPServer serves requests concurrently."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.charges: dict[str, dict[str, Any]] = {}
        self.refunds: dict[str, dict[str, Any]] = {}
        self.requests: list[dict[str, Any]] = []
        self.idempotent: dict[tuple[str, str], tuple[str, int, dict[str, Any]]] = {}
        self.clock = 0
        self.sequences: dict[str, int] = {}
        self.failing_refunds: set[str] = set()

    def next_id(self, prefix: str) -> tuple[str, int]:
        """A sequential id per kind (ch_000001, re_000001) and a deterministic timestamp."""
        self.clock += 1
        self.sequences[prefix] = self.sequences.get(prefix, 0) + 1
        return f"{prefix}_{self.sequences[prefix]:06d}", CREATED_EPOCH + self.clock

    def create_charge(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        amount = _amount(body.get("amount"), "amount", required=True)
        currency = body.get("currency")
        if not isinstance(currency, str) or not re.fullmatch(r"[A-Za-z]{3}", currency):
            raise ApiError(400, "invalid_request_error", "currency must be a three-letter ISO code", "parameter_invalid", "currency")
        source = body.get("source")
        if not isinstance(source, str) or not source:
            raise ApiError(400, "invalid_request_error", "source is required (e.g. tok_visa)", "parameter_missing", "source")
        if source == "tok_error":
            raise ApiError(500, "api_error", "the payment network failed; retry later", "processing_error")
        metadata = body.get("metadata", {})
        if not isinstance(metadata, dict):
            raise ApiError(400, "invalid_request_error", "metadata must be an object", "parameter_invalid", "metadata")
        charge_id, created = self.next_id("ch")
        failure = DECLINES.get(source)
        charge = {
            "id": charge_id,
            "object": "charge",
            "amount": amount,
            "amount_refunded": 0,
            "currency": currency.lower(),
            "source": source,
            "description": body.get("description"),
            "metadata": metadata,
            "status": "declined" if failure else "succeeded",
            "paid": failure is None,
            "failure_code": failure,
            "refunded": False,
            "created": created,
        }
        self.charges[charge_id] = charge
        return 201, charge

    def create_refund(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        charge_id = body.get("charge")
        if not isinstance(charge_id, str) or not charge_id:
            raise ApiError(400, "invalid_request_error", "charge is required", "parameter_missing", "charge")
        if charge_id in self.failing_refunds:
            raise ApiError(500, "api_error", "the payment network failed; retry later", "processing_error")
        charge = self.charges.get(charge_id)
        if charge is None:
            raise ApiError(404, "invalid_request_error", f"no such charge: {charge_id}", "resource_missing", "charge")
        if charge["status"] != "succeeded":
            raise ApiError(400, "invalid_request_error", f"charge {charge_id} was declined and cannot be refunded", "charge_not_refundable", "charge")
        remaining = charge["amount"] - charge["amount_refunded"]
        amount = _amount(body.get("amount"), "amount", required=False)
        amount = remaining if amount is None else amount
        if remaining == 0:
            raise ApiError(400, "invalid_request_error", f"charge {charge_id} is already fully refunded", "charge_already_refunded", "charge")
        if amount > remaining:
            raise ApiError(400, "invalid_request_error", f"amount {amount} exceeds what remains to refund ({remaining})", "amount_too_large", "amount")
        refund_id, created = self.next_id("re")
        refund = {"id": refund_id, "object": "refund", "charge": charge_id, "amount": amount, "currency": charge["currency"], "status": "succeeded", "created": created}
        self.refunds[refund_id] = refund
        charge["amount_refunded"] += amount
        charge["refunded"] = charge["amount_refunded"] == charge["amount"]
        return 201, refund


def _amount(value: Any, param: str, *, required: bool) -> Any:
    if value is None and not required:
        return None
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= MAX_AMOUNT:
        raise ApiError(400, "invalid_request_error", f"{param} must be a positive integer in minor units (at most {MAX_AMOUNT})", "parameter_invalid", param)
    return value


LEDGER = Ledger()


class PaymentsHandler(BaseHTTPRequestHandler):
    """Routes one request; every answer is JSON with a Content-Length (keep-alive friendly)."""

    protocol_version = "HTTP/1.1"
    # headers and body go out in two writes: without TCP_NODELAY every answer waits ~40 ms
    disable_nagle_algorithm = True
    server_version = "payments-mock/1"

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
        extra: dict[str, str] = {}
        try:
            if path.startswith("/__mock__/"):
                status, payload = self._inspect(method, path, raw)
            else:
                body = self._parse(raw)
                with LEDGER.lock:
                    LEDGER.requests.append(
                        {
                            "seq": len(LEDGER.requests) + 1,
                            "method": method,
                            "path": path,
                            "query": dict(parse_qsl(url.query)),
                            "json": body,
                            "body": raw.decode("utf-8", errors="replace"),
                            "headers": {k.lower(): v for k, v in self.headers.items() if k.lower() not in TRANSPORT_HEADERS},
                        }
                    )
                    self._authorize()
                    status, payload, extra = self._api(method, path, body)
        except ApiError as err:
            status, payload = err.status, err.body
        self._send(status, payload, extra)

    def _parse(self, raw: bytes) -> Any:
        if not raw:
            return None
        if "application/x-www-form-urlencoded" in (self.headers.get("Content-Type") or ""):
            return dict(parse_qsl(raw.decode("utf-8", errors="replace")))
        try:
            return json.loads(raw)
        except ValueError as err:
            raise ApiError(400, "invalid_request_error", f"body is not valid JSON: {err}", "body_invalid") from err

    def _authorize(self) -> None:
        key = os.environ.get("PAYMENTS_API_KEY")
        if key and self.headers.get("Authorization") != f"Bearer {key}":
            raise ApiError(401, "authentication_error", "missing or wrong API key (Authorization: Bearer <key>)", "unauthorized")

    def _inspect(self, method: str, path: str, raw: bytes = b"") -> tuple[int, Any]:
        if path == "/__mock__/health" and method == "GET":
            return 200, {"status": "ok"}
        if path == "/__mock__/requests" and method == "GET":
            with LEDGER.lock:
                return 200, {"requests": list(LEDGER.requests)}
        if path == "/__mock__/fail-refunds" and method == "POST":
            body = self._parse(raw)
            charge = body.get("charge") if isinstance(body, dict) else None
            if not isinstance(charge, str) or not charge:
                raise ApiError(400, "invalid_request_error", "expected {\"charge\": \"ch_...\"}", "parameter_missing", "charge")
            with LEDGER.lock:
                LEDGER.failing_refunds.add(charge)
            return 200, {"failing_refunds": charge}
        if path == "/__mock__/reset" and method == "POST":
            with LEDGER.lock:
                LEDGER.reset()
            return 200, {"status": "reset"}
        raise ApiError(404, "invalid_request_error", f"no inspection endpoint {method} {path}", "not_found")

    def _api(self, method: str, path: str, body: Any) -> tuple[int, Any, dict[str, str]]:
        parts = path.strip("/").split("/")
        collection = parts[0]
        if collection not in ("charges", "refunds") or len(parts) > 2:
            raise ApiError(404, "invalid_request_error", f"unknown endpoint {path}", "not_found")
        store = LEDGER.charges if collection == "charges" else LEDGER.refunds
        if len(parts) == 2:
            if method != "GET":
                raise ApiError(405, "invalid_request_error", f"{method} is not allowed on {path}", "method_not_allowed")
            item = store.get(parts[1])
            if item is None:
                raise ApiError(404, "invalid_request_error", f"no such {collection[:-1]}: {parts[1]}", "resource_missing", "id")
            return 200, item, {}
        if method == "GET":
            return 200, {"object": "list", "data": list(store.values())}, {}
        if method != "POST":
            raise ApiError(405, "invalid_request_error", f"{method} is not allowed on {path}", "method_not_allowed")
        if not isinstance(body, dict):
            raise ApiError(400, "invalid_request_error", "expected a JSON object body", "body_invalid")
        key = self.headers.get("Idempotency-Key") or body.get("idempotency_key")
        fingerprint = json.dumps({k: v for k, v in body.items() if k != "idempotency_key"}, sort_keys=True)
        if key:
            seen = LEDGER.idempotent.get((collection, str(key)))
            if seen is not None:
                if seen[0] != fingerprint:
                    raise ApiError(409, "idempotency_error", f"idempotency key {key!r} was used with a different body", "idempotency_key_reused")
                return seen[1], seen[2], {"Idempotent-Replayed": "true"}
        create = LEDGER.create_charge if collection == "charges" else LEDGER.create_refund
        status, payload = create(body)
        if key:
            LEDGER.idempotent[(collection, str(key))] = (fingerprint, status, json.loads(json.dumps(payload)))
        return status, payload, {}

    def _send(self, status: int, payload: Any, extra: dict[str, str]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in extra.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        sys.stdout.write("payments-mock: " + (format % args) + "\n")


def main() -> None:
    port = int(os.environ.get("PORT", "9000"))
    server = ThreadingHTTPServer((os.environ.get("HOST", "0.0.0.0"), port), PaymentsHandler)
    server.daemon_threads = True
    # As PID 1 in a container, SIGTERM is ignored unless handled.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"payments-mock listening on port {port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
