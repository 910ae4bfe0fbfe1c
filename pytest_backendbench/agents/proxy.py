"""The metering model proxy: the only way a ``cmd:`` agent's sandbox reaches the model.

One proxy per sample, on the host, bound to the address the sandbox sees the host at (its
bridge network's gateway; 127.0.0.1 for the process engine). It forwards every request under
``/v1/`` to the upstream API root (``--openai-base-url``) from the host, so a model server
bound to 127.0.0.1 works as well as one bound to 0.0.0.0, and it answers any API the CLI
speaks over that root: OpenAI chat completions, the Anthropic Messages API and the Responses
API, streamed (server-sent events) or not. On the way it counts model calls, tokens in and
out (from each answer's ``usage``, whatever the protocol's field names) and the cost at
``--openai-price``; ``model_calls == 0`` after a CLI failed says it never reached the model.

The sandbox gets a per-sample token instead of the real key; the proxy replaces it with the
real key (``BACKENDBENCH_OPENAI_API_KEY``) in the header the client used (``Authorization:
Bearer`` or ``x-api-key``), so the real key never enters a sandbox. A CLI that brings its own
key (passed with ``env=``) has it forwarded unchanged.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import requests

if TYPE_CHECKING:
    from typing_extensions import Self

MODEL_PATHS = ("/chat/completions", "/completions", "/messages", "/responses")
"""Requests to these paths are model calls (``/messages/count_tokens`` and ``/models`` are not)."""
HOP_HEADERS = frozenset({"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-authorization", "host", "content-length"})
AUTH_HEADERS = ("authorization", "x-api-key")
MAX_METERED_BYTES = 32 << 20  # a non-streamed answer larger than this is forwarded but not metered
CONNECT_TIMEOUT_S = 10.0


@dataclass
class CallRecord:
    """One forwarded model call, for the transcript."""

    path: str
    status: int
    seconds: float
    tokens_in: int | None = None
    tokens_out: int | None = None
    error: str = ""


@dataclass
class Meter:
    """What went through the proxy: thread-safe totals and one record per model call."""

    calls: list[CallRecord] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, record: CallRecord) -> None:
        with self._lock:
            self.calls.append(record)

    @property
    def model_calls(self) -> int:
        """Model calls the CLI made (answered or not): 0 means it never reached the model."""
        return len(self.calls)

    def tokens(self) -> tuple[int | None, int | None]:
        """(tokens in, tokens out) summed over calls that reported usage; None when none did."""
        with self._lock:
            ins = [c.tokens_in for c in self.calls if c.tokens_in is not None]
            outs = [c.tokens_out for c in self.calls if c.tokens_out is not None]
        return (sum(ins) if ins else None, sum(outs) if outs else None)

    def cost(self, prices: tuple[float, float] | None) -> float | None:
        """USD at (per million in, per million out), when prices are known and usage was reported."""
        tokens_in, tokens_out = self.tokens()
        if prices is None or tokens_in is None:
            return None
        return round((tokens_in * prices[0] + (tokens_out or 0) * prices[1]) / 1e6, 6)

    def figures(self, prices: tuple[float, float] | None) -> dict[str, Any]:
        """The generation record's ``proxy_*`` fields."""
        tokens_in, tokens_out = self.tokens()
        data: dict[str, Any] = {"proxy_model_calls": self.model_calls}
        if tokens_in is not None:
            data["proxy_tokens_in"] = tokens_in
        if tokens_out is not None:
            data["proxy_tokens_out"] = tokens_out
        cost = self.cost(prices)
        if cost is not None:
            data["proxy_cost_usd"] = cost
        return data


def usage_of(payload: Any) -> tuple[int | None, int | None]:
    """(tokens in, tokens out) of one answer or stream event in any of the three protocols.

    Chat completions: ``usage.prompt_tokens/completion_tokens``; Anthropic Messages:
    ``usage.input_tokens`` (+ cache tokens) / ``output_tokens``, also inside ``message_start``'s
    ``message``; Responses: ``usage.input_tokens/output_tokens``, inside ``response.*`` events'
    ``response``. Values of one answer are cumulative, so the last event's count wins.
    """
    if not isinstance(payload, dict):
        return None, None
    usage = payload.get("usage")
    for holder in ("message", "response"):
        inner = payload.get(holder)
        if not isinstance(usage, dict) and isinstance(inner, dict) and isinstance(inner.get("usage"), dict):
            usage = inner["usage"]
    if not isinstance(usage, dict):
        return None, None

    def number(*keys: str) -> int | None:
        values = [usage[k] for k in keys if isinstance(usage.get(k), int) and not isinstance(usage.get(k), bool)]
        return sum(values) if values else None

    tokens_in = number("prompt_tokens") if "prompt_tokens" in usage else number("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    tokens_out = number("completion_tokens") if "completion_tokens" in usage else number("output_tokens")
    return tokens_in, tokens_out


class _StreamMeter:
    """Reads usage out of a server-sent-event stream as it passes, line by line."""

    def __init__(self) -> None:
        self.pending = b""
        self.tokens_in: int | None = None
        self.tokens_out: int | None = None

    def feed(self, chunk: bytes) -> None:
        self.pending += chunk
        *lines, self.pending = self.pending.split(b"\n")
        for line in lines:
            self._line(line.strip())

    def close(self) -> None:
        self._line(self.pending.strip())
        self.pending = b""

    def _line(self, line: bytes) -> None:
        if not line.startswith(b"data:") or b"usage" not in line:
            return
        try:
            payload = json.loads(line[5:].strip())
        except ValueError:
            return
        tokens_in, tokens_out = usage_of(payload)
        self.tokens_in = tokens_in if tokens_in is not None else self.tokens_in
        self.tokens_out = tokens_out if tokens_out is not None else self.tokens_out


class MeteringProxy:
    """A forwarding proxy on ``host`` (a free port), metering model calls; a context manager.

    ``base_url`` is what the sandbox uses as its API root (``http://HOST:PORT/v1``), ``root_url``
    the same without ``/v1`` (what Anthropic clients append ``/v1/messages`` to), ``token`` the
    key the sandbox must present.
    """

    def __init__(self, upstream: str, host: str = "127.0.0.1", *, api_key: str | None = None, timeout_s: float = 600.0) -> None:
        self.upstream = upstream.rstrip("/")
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.token = "bb-" + secrets.token_urlsafe(24)
        self.meter = Meter()
        self._session = requests.Session()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                proxy._forward(self, "GET")

            def do_POST(self) -> None:
                proxy._forward(self, "POST")

            def do_HEAD(self) -> None:
                proxy._forward(self, "HEAD")

        self._server = ThreadingHTTPServer((host, 0), Handler)
        self._server.daemon_threads = True
        self.root_url = f"http://{host}:{self._server.server_port}"
        self.base_url = f"{self.root_url}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True, name="backendbench-model-proxy")

    def start(self) -> Self:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and release the port; safe to call twice."""
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()
        self._session.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- forwarding ------------------------------------------------------------------------

    def _forward(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        path, _, query = handler.path.partition("?")
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        if not path.startswith("/v1/") and path != "/v1":
            self._answer(handler, 404, {"error": {"message": f"the backendbench model proxy serves /v1/..., not {path}"}})
            return
        target = self.upstream + path[len("/v1") :] + (f"?{query}" if query else "")
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in HOP_HEADERS}
        self._swap_credentials(handler, headers)
        metered = method == "POST" and path.endswith(MODEL_PATHS) and not path.endswith("/count_tokens")
        started = time.monotonic()
        try:
            response = self._session.request(method, target, data=body, headers=headers, stream=True, timeout=(CONNECT_TIMEOUT_S, self.timeout_s))
        except requests.RequestException as err:
            if metered:
                self.meter.add(CallRecord(path, 502, time.monotonic() - started, error=str(err)[:300]))
            self._answer(handler, 502, {"error": {"message": f"the backendbench model proxy cannot reach {self.upstream}: {err}"}})
            return
        with response:
            self._relay(handler, response, path, started, metered)

    def _swap_credentials(self, handler: BaseHTTPRequestHandler, headers: dict[str, str]) -> None:
        """The sample's token becomes the real key, in the header it came in; a CLI's own key passes unchanged."""
        for name in list(headers):
            if name.lower() not in AUTH_HEADERS:
                continue
            value = headers[name]
            presented = value.removeprefix("Bearer ").strip() if name.lower() == "authorization" else value.strip()
            if presented != self.token:
                continue
            if self.api_key:
                headers[name] = f"Bearer {self.api_key}" if name.lower() == "authorization" else self.api_key
            else:
                del headers[name]

    def _relay(self, handler: BaseHTTPRequestHandler, response: requests.Response, path: str, started: float, metered: bool) -> None:
        stream = "text/event-stream" in response.headers.get("Content-Type", "")
        handler.send_response(response.status_code)
        for name, value in response.headers.items():
            if name.lower() not in HOP_HEADERS and name.lower() != "content-encoding":
                handler.send_header(name, value)
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        sse = _StreamMeter()
        kept = bytearray()
        try:
            for chunk in response.raw.stream(1 << 14, decode_content=True):
                if not chunk:
                    continue
                if stream:
                    sse.feed(chunk)
                elif len(kept) < MAX_METERED_BYTES:
                    kept += chunk
                handler.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                handler.wfile.flush()
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
        except (OSError, requests.RequestException):
            handler.close_connection = True  # the client went away, or the upstream broke off
        if not metered:
            return
        if stream:
            sse.close()
            tokens = (sse.tokens_in, sse.tokens_out)
        else:
            try:
                tokens = usage_of(json.loads(bytes(kept)))
            except ValueError:
                tokens = (None, None)
        self.meter.add(CallRecord(path, response.status_code, round(time.monotonic() - started, 3), *tokens))

    @staticmethod
    def _answer(handler: BaseHTTPRequestHandler, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
