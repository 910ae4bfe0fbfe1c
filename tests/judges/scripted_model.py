"""A scripted OpenAI-compatible vision server for the judge tests and the parity bench.

No model is reachable from the test machines, so the judges talk to this: an HTTP server in a
thread that answers ``POST /v1/chat/completions`` (text and ``image_url`` parts) from a recorded
script and keeps every request it got. A script is

- a list of answers, served in the order the requests arrive;
- a dict ``key -> list of answers``: a request belongs to the first key that equals its
  ``X-Backendbench-Purpose`` header or occurs in the text of its first user message (a GUI
  case's task text, e.g.; of several, the one that occurs first), and gets the answer of its *step*: the number of assistant messages
  already in its conversation (WebGen-Bench's run.py and our GUI judge both resend the whole
  conversation, so the step is the same for both, whatever else runs in between);
  with ``keyed_by="order"`` the key's answers are served in arrival order instead;
- or a callable ``request -> answer``.

An answer is the message's text, or a dict with the message's fields (``content``,
``tool_calls``) for tool-calling agents. A request the script has no answer for gets HTTP 500
with the reason (the client then fails loudly) and is recorded in ``unanswered``.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, Self

PURPOSE_HEADER = "X-Backendbench-Purpose"

Answer = str | dict[str, Any]
Script = Sequence[Answer] | Mapping[str, Sequence[Answer]] | Callable[["ChatRequest"], Answer]


@dataclass
class ChatRequest:
    """One chat-completions request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation sent."""
        return list(self.body.get("messages") or [])

    @property
    def purpose(self) -> str:
        """The harness's purpose header ('' from other clients)."""
        return next((v for k, v in self.headers.items() if k.lower() == PURPOSE_HEADER.lower()), "")

    @property
    def step(self) -> int:
        """Assistant messages already in the conversation: 0 for the first question."""
        return sum(1 for m in self.messages if m.get("role") == "assistant")

    def texts(self) -> list[str]:
        """Every text of the conversation, in order (string contents and text parts)."""
        found: list[str] = []
        for message in self.messages:
            content = message.get("content")
            if isinstance(content, str):
                found.append(content)
            elif isinstance(content, list):
                found += [str(part.get("text", "")) for part in content if isinstance(part, dict) and part.get("type") == "text"]
        return found

    def first_user_text(self) -> str:
        """The text of the first user message (where a judge states its case)."""
        for message in self.messages:
            if message.get("role") == "user":
                content = message.get("content")
                if isinstance(content, str):
                    return content
                if isinstance(content, list):
                    return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
        return ""

    def images(self) -> list[bytes]:
        """The decoded bytes of every image part sent (data URLs)."""
        found: list[bytes] = []
        for message in self.messages:
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for part in content:
                if isinstance(part, dict) and part.get("type") == "image_url":
                    url = str((part.get("image_url") or {}).get("url", ""))
                    if url.startswith("data:") and "," in url:
                        found.append(base64.b64decode(url.split(",", 1)[1]))
        return found


@dataclass
class ScriptedModelServer:
    """The server; a context manager (``with ScriptedModelServer(script) as server: server.base_url``)."""

    script: Script
    keyed_by: Literal["step", "order"] = "step"
    model: str = "scripted-vl"
    max_image_bytes: int | None = None
    """Images larger than this are refused with HTTP 400, as a vision server refuses an oversized one."""
    status: int = 200
    """Answer every request with this status instead (401: a refused key, 503: a failing server)."""
    requests: list[ChatRequest] = field(default_factory=list)
    unanswered: list[str] = field(default_factory=list)
    _served: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _httpd: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, what OpenAI clients take as their base URL."""
        if self._httpd is None:
            raise RuntimeError("the scripted server is not started")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> None:
        """Listen on a free port of 127.0.0.1, in a daemon thread."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if server.status != 200:
                    self._send(server.status, {"error": {"message": "scripted failure"}})
                elif self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": server.model, "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                request = ChatRequest(self.path, dict(self.headers.items()), body)
                with server._lock:
                    server.requests.append(request)
                status, payload = server._respond(request)
                self._send(status, payload)

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, name="scripted-model", daemon=True).start()

    def stop(self) -> None:
        """Stop listening."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def _respond(self, request: ChatRequest) -> tuple[int, dict[str, Any]]:
        if self.status != 200:
            return self.status, {"error": {"message": f"scripted failure (HTTP {self.status})"}}
        if not request.path.rstrip("/").endswith("/chat/completions"):
            return 404, {"error": {"message": f"no route {request.path}"}}
        if self.max_image_bytes is not None:
            sizes = [len(image) for image in request.images()]
            if any(size > self.max_image_bytes for size in sizes):
                return 400, {"error": {"message": f"image too large: {max(sizes)} bytes, the limit is {self.max_image_bytes}", "type": "BadRequestError"}}
        try:
            answer = self._answer_for(request)
        except LookupError as err:
            with self._lock:
                self.unanswered.append(str(err))
            return 500, {"error": {"message": f"scripted model: {err}"}}
        message: dict[str, Any] = {"role": "assistant", "content": answer} if isinstance(answer, str) else {"role": "assistant", "content": None, **answer}
        prompt_chars = sum(len(text) for text in request.texts())
        return 200, {
            "id": f"scripted-{len(self.requests)}",
            "object": "chat.completion",
            "model": str(request.body.get("model", self.model)),
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
            "usage": {
                "prompt_tokens": prompt_chars // 4 + 85 * len(request.images()),
                "completion_tokens": len(str(message.get("content") or "")) // 4 + 1,
                "total_tokens": 0,
            },
        }

    def _answer_for(self, request: ChatRequest) -> Answer:
        script = self.script
        if callable(script):
            return script(request)
        if isinstance(script, Mapping):
            key = self._key_of(request, script)
            answers = script[key]
            with self._lock:
                index = request.step if self.keyed_by == "step" else self._served.get(key, 0)
                self._served[key] = self._served.get(key, 0) + 1
            if index >= len(answers):
                raise LookupError(f"the script for {key!r} has {len(answers)} answer(s), step {index} was asked")
            return answers[index]
        with self._lock:
            index = self._served.get("", 0)
            self._served[""] = index + 1
        if index >= len(script):
            raise LookupError(f"the script has {len(script)} answer(s), request {index + 1} came")
        return script[index]

    @staticmethod
    def _key_of(request: ChatRequest, script: Mapping[str, Sequence[Answer]]) -> str:
        if request.purpose in script:
            return request.purpose
        first = request.first_user_text()
        found = [(first.find(key), key) for key in script if key and key in first]
        if found:
            return min(found)[1]  # the earliest: a judge states its case before it shows the page (whose text may hold another key)
        raise LookupError(f"no script key matches this request (purpose {request.purpose!r}, first user text {first[:200]!r})")
