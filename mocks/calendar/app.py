"""A deterministic calendar provider mock (a small Google-Calendar-like subset), standard library only.

Candidates reach it at $CALENDAR_URL; oracles inspect what it received. Same requests in the
same order always give the same answers: event ids are sequential, ``created`` is a counter.

Calendars are not created: every calendar id of the form ``<name>@<domain>`` exists and starts
empty (the provider's sandbox). Times are RFC 3339 in UTC, ``YYYY-MM-DDTHH:MM:SSZ``; an offset
such as ``+02:00`` is accepted on input and answered converted to UTC.

API (JSON bodies):
  POST   /calendars/{cal}/events   {summary: non-empty string, start, end (end after start),
                                    description?: string, reference?: string}
                                   -> 201 {id: "evt_000001", object: "event", calendar_id, summary,
                                           description, reference, start, end, status: "confirmed",
                                           created, updated}
  GET    /calendars/{cal}/events   -> 200 {object: "list", data: [...]} every event, by start
                                      (optional ?status=confirmed|cancelled)
  GET    /calendars/{cal}/events/{id}
  PATCH  /calendars/{cal}/events/{id}  {summary?, description?, start?, end?} -> 200 the event;
                                   409 event_cancelled when the event was cancelled
  DELETE /calendars/{cal}/events/{id}  -> 200 the event with status "cancelled";
                                   410 event_cancelled when it already was
  GET    /calendars/{cal}/busy?from=<time>&to=<time>
                                   -> 200 {calendar_id, from, to, busy: [{start, end, event_id}]}:
                                      the confirmed events overlapping [from, to), by start.
  Overlapping events are allowed (a calendar records, it does not arbitrate).
  Calendars in the domain ``outage.example`` answer every call with 503 backend_error.
  Errors: {"error": {"type": ..., "code": ..., "message": ..., "param": ...}} with 400
  (invalid_request_error), 404 (not_found), 405, 409/410 (event_cancelled), 503 (backend_error).

Inspection (never recorded):
  GET  /__mock__/health    -> 200 {"status": "ok"}
  GET  /__mock__/requests  -> 200 {"requests": [{seq, method, path, query, json, body, headers}]}
                              every API request received, in order; headers lower-cased, minus
                              transport headers (host, content-length, connection, ...)
  POST /__mock__/outage  {calendar, methods: [...]} -> 200: from now on those methods on that
                              calendar answer 503 backend_error (selective outages, e.g. only
                              DELETE, to fail a cancel after a booking succeeded)
  POST /__mock__/reset     -> 200 {"status": "reset"}: forget events, requests, counters
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import threading
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

CREATED_EPOCH = 1_700_000_000
TRANSPORT_HEADERS = frozenset({"host", "content-length", "connection", "accept-encoding", "keep-alive", "transfer-encoding"})
CALENDAR_ID = re.compile(r"^[A-Za-z0-9._+-]+@([A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*)$")
TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
OUTAGE_DOMAIN = "outage.example"


class ApiError(Exception):
    """An error answer: HTTP status plus the error object."""

    def __init__(self, status: int, type_: str, message: str, code: str | None = None, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"error": {"type": type_, "code": code, "message": message, "param": param}}


def invalid(message: str, param: str | None, code: str = "parameter_invalid") -> ApiError:
    return ApiError(400, "invalid_request_error", message, code, param)


def parse_time(value: Any, param: str) -> datetime:
    """An RFC 3339 time with Z or an offset, as an aware UTC datetime (400 otherwise)."""
    if not isinstance(value, str) or not TIME.match(value):
        raise invalid(f"{param} must be an RFC 3339 time such as 2030-01-07T09:00:00Z", param)
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as err:
        raise invalid(f"{param} is not a valid date and time: {value}", param) from err
    return parsed.astimezone(timezone.utc)


def format_time(value: datetime) -> str:
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Store:
    """All mock state; one lock, because ThreadingHTTPServer serves requests concurrently."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.events: dict[str, dict[str, Any]] = {}
        self.outages: set[tuple[str, str]] = set()
        self.requests: list[dict[str, Any]] = []
        self.clock = 0
        self.sequence = 0

    def tick(self) -> int:
        self.clock += 1
        return CREATED_EPOCH + self.clock

    def calendar_events(self, calendar_id: str) -> list[dict[str, Any]]:
        found = [e for e in self.events.values() if e["calendar_id"] == calendar_id]
        return sorted(found, key=lambda e: (e["start"], e["id"]))

    def event(self, calendar_id: str, event_id: str) -> dict[str, Any]:
        event = self.events.get(event_id)
        if event is None or event["calendar_id"] != calendar_id:
            raise ApiError(404, "invalid_request_error", f"no event {event_id} in calendar {calendar_id}", "not_found", "event_id")
        return event

    def create_event(self, calendar_id: str, body: dict[str, Any]) -> dict[str, Any]:
        summary = body.get("summary")
        if not isinstance(summary, str) or not summary.strip():
            raise invalid("summary is required (a non-empty string)", "summary", "parameter_missing")
        for name in ("description", "reference"):
            if body.get(name) is not None and not isinstance(body.get(name), str):
                raise invalid(f"{name} must be a string", name)
        start, end = parse_time(body.get("start"), "start"), parse_time(body.get("end"), "end")
        if end <= start:
            raise invalid("end must be after start", "end")
        self.sequence += 1
        created = self.tick()
        event = {
            "id": f"evt_{self.sequence:06d}",
            "object": "event",
            "calendar_id": calendar_id,
            "summary": summary,
            "description": body.get("description"),
            "reference": body.get("reference"),
            "start": format_time(start),
            "end": format_time(end),
            "status": "confirmed",
            "created": created,
            "updated": created,
        }
        self.events[event["id"]] = event
        return event

    def update_event(self, calendar_id: str, event_id: str, body: dict[str, Any]) -> dict[str, Any]:
        event = self.event(calendar_id, event_id)
        if event["status"] == "cancelled":
            raise ApiError(409, "invalid_request_error", f"event {event_id} is cancelled", "event_cancelled", "event_id")
        changes: dict[str, Any] = {}
        if "summary" in body:
            if not isinstance(body["summary"], str) or not body["summary"].strip():
                raise invalid("summary must be a non-empty string", "summary")
            changes["summary"] = body["summary"]
        if "description" in body:
            if body["description"] is not None and not isinstance(body["description"], str):
                raise invalid("description must be a string", "description")
            changes["description"] = body["description"]
        start = parse_time(body["start"], "start") if "start" in body else parse_time(event["start"], "start")
        end = parse_time(body["end"], "end") if "end" in body else parse_time(event["end"], "end")
        if end <= start:
            raise invalid("end must be after start", "end")
        event.update(changes, start=format_time(start), end=format_time(end), updated=self.tick())
        return event

    def cancel_event(self, calendar_id: str, event_id: str) -> dict[str, Any]:
        event = self.event(calendar_id, event_id)
        if event["status"] == "cancelled":
            raise ApiError(410, "invalid_request_error", f"event {event_id} is already cancelled", "event_cancelled", "event_id")
        event.update(status="cancelled", updated=self.tick())
        return event

    def busy(self, calendar_id: str, query: dict[str, str]) -> dict[str, Any]:
        low, high = parse_time(query.get("from"), "from"), parse_time(query.get("to"), "to")
        if high <= low:
            raise invalid("to must be after from", "to")
        busy = [
            {"start": e["start"], "end": e["end"], "event_id": e["id"]}
            for e in self.calendar_events(calendar_id)
            if e["status"] == "confirmed" and parse_time(e["start"], "start") < high and parse_time(e["end"], "end") > low
        ]
        return {"calendar_id": calendar_id, "from": format_time(low), "to": format_time(high), "busy": busy}


STORE = Store()


class CalendarHandler(BaseHTTPRequestHandler):
    """Routes one request; every answer is JSON with a Content-Length (keep-alive friendly)."""

    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; without TCP_NODELAY, Nagle plus delayed ACKs add ~40 ms.
    disable_nagle_algorithm = True
    server_version = "calendar-mock/1"

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
        query = dict(parse_qsl(url.query))
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            if path.startswith("/__mock__/"):
                status, payload = self._inspect(method, path, raw)
            else:
                body = self._parse(raw)
                with STORE.lock:
                    STORE.requests.append(
                        {
                            "seq": len(STORE.requests) + 1,
                            "method": method,
                            "path": path,
                            "query": query,
                            "json": body,
                            "body": raw.decode("utf-8", errors="replace"),
                            "headers": {k.lower(): v for k, v in self.headers.items() if k.lower() not in TRANSPORT_HEADERS},
                        }
                    )
                    status, payload = self._api(method, path, query, body)
        except ApiError as err:
            status, payload = err.status, err.body
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
    def _inspect(method: str, path: str, raw: bytes = b"") -> tuple[int, Any]:
        if path == "/__mock__/health" and method == "GET":
            return 200, {"status": "ok"}
        if path == "/__mock__/requests" and method == "GET":
            with STORE.lock:
                return 200, {"requests": list(STORE.requests)}
        if path == "/__mock__/outage" and method == "POST":
            try:
                body = json.loads(raw) if raw else None
            except ValueError as err:
                raise invalid(f"body is not valid JSON: {err}", None, "body_invalid") from err
            calendar = body.get("calendar") if isinstance(body, dict) else None
            methods = body.get("methods") if isinstance(body, dict) else None
            if not isinstance(calendar, str) or not isinstance(methods, list) or not all(isinstance(m, str) for m in methods):
                raise invalid('expected {"calendar": "<id>", "methods": ["DELETE", ...]}', None, "body_invalid")
            with STORE.lock:
                STORE.outages |= {(calendar, m.upper()) for m in methods}
            return 200, {"calendar": calendar, "methods": sorted(m.upper() for m in methods)}
        if path == "/__mock__/reset" and method == "POST":
            with STORE.lock:
                STORE.reset()
            return 200, {"status": "reset"}
        raise ApiError(404, "invalid_request_error", f"no inspection endpoint {method} {path}", "not_found")

    @staticmethod
    def _api(method: str, path: str, query: dict[str, str], body: Any) -> tuple[int, Any]:
        parts = [unquote(p) for p in path.strip("/").split("/")]
        if len(parts) < 3 or parts[0] != "calendars" or parts[2] not in ("events", "busy") or len(parts) > 4:
            raise ApiError(404, "invalid_request_error", f"unknown endpoint {path}", "not_found")
        calendar_id = parts[1]
        match = CALENDAR_ID.match(calendar_id)
        if match is None:
            raise ApiError(404, "invalid_request_error", f"no calendar {calendar_id!r} (ids look like name@domain)", "not_found", "calendar_id")
        if (calendar_id, method) in STORE.outages:
            raise ApiError(503, "api_error", "the calendar backend is unavailable; retry later", "backend_error")
        if match.group(1).lower() == OUTAGE_DOMAIN:
            raise ApiError(503, "api_error", "the calendar backend is unavailable; retry later", "backend_error")
        if parts[2] == "busy":
            if len(parts) != 3 or method != "GET":
                raise ApiError(405, "invalid_request_error", f"{method} is not allowed on {path}", "method_not_allowed")
            return 200, STORE.busy(calendar_id, query)
        if method in ("POST", "PATCH") and not isinstance(body, dict):
            raise invalid("expected a JSON object body", None, "body_invalid")
        if len(parts) == 3:
            if method == "GET":
                events = STORE.calendar_events(calendar_id)
                if "status" in query:
                    events = [e for e in events if e["status"] == query["status"]]
                return 200, {"object": "list", "data": events}
            if method == "POST":
                return 201, STORE.create_event(calendar_id, body)
            raise ApiError(405, "invalid_request_error", f"{method} is not allowed on {path}", "method_not_allowed")
        event_id = parts[3]
        if method == "GET":
            return 200, STORE.event(calendar_id, event_id)
        if method == "PATCH":
            return 200, STORE.update_event(calendar_id, event_id, body)
        if method == "DELETE":
            return 200, STORE.cancel_event(calendar_id, event_id)
        raise ApiError(405, "invalid_request_error", f"{method} is not allowed on {path}", "method_not_allowed")

    def _send(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        sys.stdout.write("calendar-mock: " + (format % args) + "\n")


def main() -> None:
    port = int(os.environ.get("PORT", "9100"))
    server = ThreadingHTTPServer((os.environ.get("HOST", "0.0.0.0"), port), CalendarHandler)
    server.daemon_threads = True
    # As PID 1 in a container, SIGTERM is ignored unless handled.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"calendar-mock listening on port {port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
