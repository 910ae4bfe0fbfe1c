"""A scripted model server speaking the protocols real agent CLIs use (tests only).

``ScriptedModelServer`` answers OpenAI chat completions (``/v1/chat/completions``, tool calls
or plain text, streamed or not), the Anthropic Messages API (``/v1/messages``, streamed as
server-sent events or not; ``/v1/messages/count_tokens``) and ``/v1/models``. A script is a
list of ``Step``: run a shell command (a ``bash`` tool call for chat clients, a ``Bash``
tool_use for Claude Code) or say a text (the CLI's last answer, or aider's whole-file edit).
Only the agent's main conversation advances the script: for Claude Code, a request whose
tools include ``Bash``; its side requests (titles, summaries) get a short text. Every request
is recorded with its path, so tests can count what each CLI sent.

The url-shortener scripts carry the reference service read from oracles/ by the *test*; the
sandbox never sees oracles/.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "oracles" / "url-shortener" / "reference"
USAGE_IN, USAGE_OUT = 1000, 100
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


@dataclass(frozen=True)
class Step:
    """One scripted answer: a shell command to run, or a text."""

    bash: str | None = None
    text: str = ""


def heredoc(path: str, text: str) -> str:
    """A shell command writing ``text`` to ``path`` (quoted heredoc: no expansion)."""
    return f"cat > {path} <<'BACKENDBENCH_EOF'\n{text.rstrip(chr(10))}\nBACKENDBENCH_EOF"


def reference_files() -> dict[str, str]:
    """The url-shortener reference's files (read by the test, handed to the CLI as the model's answer)."""
    files = {name: (REFERENCE / name).read_text() for name in ("app.py", "requirements.txt", "Dockerfile")}
    files["candidate.yaml"] = "run: python app.py\n"
    return files


def shell_script(final: Step) -> list[Step]:
    """Write the reference with heredocs, check the files, then ``final`` (a submit command or a text)."""
    steps = [Step(bash=heredoc(name, text)) for name, text in reference_files().items()]
    steps.append(Step(bash="ls && python -c 'import ast,sys; ast.parse(open(\"app.py\").read())' && echo syntax-ok"))
    return [*steps, final]


def aider_whole_answer() -> list[Step]:
    """aider's whole-file edit format: each file's path alone on a line, then its complete text
    fenced with four backticks (the fence aider asks for when a file it was given, here spec.md,
    contains three)."""
    blocks = [f"{name}\n````\n{text.rstrip(chr(10))}\n````\n" for name, text in reference_files().items()]
    return [Step(text="Here is the complete service.\n\n" + "\n".join(blocks))]


class ScriptedModelServer:
    """Serves a script on ``host`` in a background thread; a context manager."""

    def __init__(self, steps: list[Step], host: str = "127.0.0.1", model: str = "scripted-1") -> None:
        self.steps = list(steps)
        self.model = model
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.main_calls = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                server._json(self, 200, {"object": "list", "data": [{"id": server.model, "object": "model", "owned_by": "tests"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                path = self.path.partition("?")[0]
                with server._lock:
                    server.requests.append((path, body))
                if path.endswith("/messages/count_tokens"):
                    server._json(self, 200, {"input_tokens": USAGE_IN})
                elif path.endswith("/messages"):
                    server._anthropic(self, body)
                elif path.endswith("/chat/completions"):
                    server._chat(self, body)
                elif path.endswith("/responses"):
                    server._responses(self, body)
                else:
                    server._json(self, 404, {"error": {"message": f"scripted server: no {path}"}})

        self.httpd = ThreadingHTTPServer((host, 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://{host}:{self.httpd.server_port}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def paths(self) -> list[str]:
        return [p for p, _ in self.requests]

    def _next(self) -> tuple[int, Step]:
        with self._lock:
            index = self.main_calls
            self.main_calls += 1
        return index, self.steps[min(index, len(self.steps) - 1)]

    # -- OpenAI chat completions -----------------------------------------------------------

    def _chat(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        index, step = self._next()
        message: dict[str, Any] = {"role": "assistant", "content": step.text or None}
        if step.bash is not None:
            message["content"] = "Running the next command."
            message["tool_calls"] = [{"id": f"call_{index}", "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": step.bash})}}]
        usage = {"prompt_tokens": USAGE_IN, "completion_tokens": USAGE_OUT, "total_tokens": USAGE_IN + USAGE_OUT}
        finish = "tool_calls" if step.bash is not None else "stop"
        if not body.get("stream"):
            self._json(handler, 200, {
                "id": f"chatcmpl-{index}", "object": "chat.completion", "created": 0, "model": self.model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage,
            })
            return
        chunk = {"id": f"chatcmpl-{index}", "object": "chat.completion.chunk", "created": 0, "model": self.model}
        events = [
            {**chunk, "choices": [{"index": 0, "delta": {**message, "tool_calls": [{"index": 0, **c} for c in message.get("tool_calls", [])] or None}, "finish_reason": None}]},
            {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
            {**chunk, "choices": [], "usage": usage},
        ]
        self._sse(handler, [(None, e) for e in events], done=True)

    # -- Anthropic Messages ----------------------------------------------------------------

    def _anthropic(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        tools = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
        if "Bash" in tools:
            index, step = self._next()
        else:
            index, step = -1, Step(text="Scripted side answer.")
        content: list[dict[str, Any]] = [{"type": "text", "text": step.text or "Running the next command."}]
        if step.bash is not None:
            content.append({"type": "tool_use", "id": f"toolu_{index:04d}", "name": "Bash", "input": {"command": step.bash, "description": "scripted step"}})
        stop = "tool_use" if step.bash is not None else "end_turn"
        message = {"id": f"msg_{index + 1:04d}", "type": "message", "role": "assistant", "model": body.get("model") or self.model}
        if not body.get("stream"):
            self._json(handler, 200, {**message, "content": content, "stop_reason": stop, "stop_sequence": None,
                                      "usage": {"input_tokens": USAGE_IN, "output_tokens": USAGE_OUT}})
            return
        events: list[tuple[str | None, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": {
            **message, "content": [], "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": USAGE_IN, "output_tokens": 1}}})]
        for number, block in enumerate(content):
            if block["type"] == "text":
                events += [
                    ("content_block_start", {"type": "content_block_start", "index": number, "content_block": {"type": "text", "text": ""}}),
                    ("content_block_delta", {"type": "content_block_delta", "index": number, "delta": {"type": "text_delta", "text": block["text"]}}),
                ]
            else:
                events += [
                    ("content_block_start", {"type": "content_block_start", "index": number, "content_block": {**block, "input": {}}}),
                    ("content_block_delta", {"type": "content_block_delta", "index": number, "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}}),
                ]
            events.append(("content_block_stop", {"type": "content_block_stop", "index": number}))
        events += [
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": USAGE_OUT}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        self._sse(handler, events, done=False)

    # -- OpenAI Responses (Codex CLI) -------------------------------------------------------

    def _responses(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        index, step = self._next()
        tools = {str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)}
        if step.bash is not None:
            # the shell tool this Codex version offers, with the arguments it expects
            if "shell_command" in tools:
                name, arguments = "shell_command", {"command": step.bash}
            elif "exec_command" in tools:
                name, arguments = "exec_command", {"cmd": step.bash}
            else:
                name, arguments = "shell", {"command": ["bash", "-lc", step.bash]}
            item: dict[str, Any] = {"type": "function_call", "id": f"fc_{index}", "call_id": f"call_{index}", "name": name, "arguments": json.dumps(arguments)}
        else:
            item = {"type": "message", "id": f"msg_{index}", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": step.text, "annotations": []}]}
        usage = {"input_tokens": USAGE_IN, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": USAGE_OUT,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": USAGE_IN + USAGE_OUT}
        response = {"id": f"resp_{index}", "object": "response", "model": body.get("model") or self.model, "status": "completed", "output": [item], "usage": usage}
        events: list[tuple[str | None, dict[str, Any]]] = [
            ("response.created", {"type": "response.created", "response": {**response, "status": "in_progress", "output": [], "usage": None}}),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "response": response}),
        ]
        self._sse(handler, events, done=False)

    # -- plumbing --------------------------------------------------------------------------

    @staticmethod
    def _json(handler: BaseHTTPRequestHandler, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    @staticmethod
    def _sse(handler: BaseHTTPRequestHandler, events: list[tuple[str | None, dict[str, Any]]], *, done: bool) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Connection", "close")
        handler.end_headers()
        for name, payload in events:
            prefix = f"event: {name}\n" if name else ""
            handler.wfile.write(f"{prefix}data: {json.dumps(payload)}\n\n".encode())
            handler.wfile.flush()
        if done:
            handler.wfile.write(b"data: [DONE]\n\n")
        handler.wfile.flush()
        handler.close_connection = True
