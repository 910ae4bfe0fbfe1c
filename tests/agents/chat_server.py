"""A stdlib OpenAI-compatible chat server that plays a scripted agent (tests only).

Each POST /v1/chat/completions answers with the next ``Turn`` of the script: a tool call
(``bash`` with a command, ``submit``, ``self_verify``, or anything malformed), a text reply
(for ``--agent-actions=text``), or an HTTP error. The last turn repeats once the script runs
out (so ``Turn(status=500)`` last means "500 forever"). Every request body is recorded, which
is what the model saw: tests assert over it (e.g. that nothing of the oracle reached it).

Run standalone for the issue's "Done when" command::

    python tests/agents/chat_server.py --script url-shortener --port 8765
    BACKENDBENCH_OPENAI_BASE_URL=http://127.0.0.1:8765/v1 pytest --bench-generate --bench-model=agent:scripted ...
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Turn:
    """One scripted reply."""

    bash: str | None = None  # a bash tool call with this command
    tool: str | None = None  # a tool call by name (submit, self_verify, or a wrong one)
    arguments: str | None = None  # raw JSON arguments (malformed on purpose, say)
    content: str = ""  # text content (text-action mode, or a reply without tool calls)
    status: int = 200
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 1000, "completion_tokens": 100})
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)

    def body(self, index: int) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.bash is not None or self.tool is not None:
            name = "bash" if self.bash is not None else self.tool
            arguments = self.arguments if self.arguments is not None else json.dumps({"command": self.bash} if self.bash is not None else {})
            message["tool_calls"] = [{"id": f"call_{index}", "type": "function", "function": {"name": name, "arguments": arguments}}]
        return {
            "id": f"chatcmpl-{index}",
            "object": "chat.completion",
            "model": "scripted-1",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if "tool_calls" in message else "stop"}],
            "usage": {**self.usage, "total_tokens": sum(self.usage.values())},
        }


def text_bash(command: str) -> Turn:
    """A text-mode reply running ``command``."""
    return Turn(content=f"Let me run this.\n\n```bash\n{command}\n```\n")


class ScriptedChatServer:
    """Serves the script on 127.0.0.1 in a background thread; a context manager."""

    def __init__(self, turns: list[Turn], port: int = 0) -> None:
        if not turns:
            raise ValueError("a script needs at least one turn")
        self.turns = list(turns)
        self.requests: list[dict[str, Any]] = []
        self.served = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with server._lock:
                    server.requests.append(body)
                    index = server.served
                    server.served += 1
                    turn = server.turns[min(index, len(server.turns) - 1)]
                if turn.delay_s:
                    time.sleep(turn.delay_s)
                payload = turn.body(index) if turn.status == 200 else {"error": {"message": f"scripted HTTP {turn.status}"}}
                data = json.dumps(payload).encode()
                self.send_response(turn.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in turn.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def seen_by_model(self) -> str:
        """Every message the model was sent, as one text (for leak assertions)."""
        return "\n".join(json.dumps(m, ensure_ascii=False) for r in self.requests for m in r.get("messages", []))


# --- the url-shortener agent -------------------------------------------------------------

PLANTED = ("return reply(link_view(link), 201)", "return reply(link_view(link), 200)")
"""The planted bug: creating a link answers 200 instead of the documented 201."""


def heredoc(path: str, text: str) -> str:
    """A shell command writing ``text`` to ``path`` with a quoted heredoc (no expansion)."""
    return f"cat > {path} <<'BACKENDBENCH_EOF'\n{text.rstrip(chr(10))}\nBACKENDBENCH_EOF"


def url_shortener_script(verify: bool = True, text: bool = False) -> list[Turn]:
    """An agent that writes the url-shortener with heredocs (with a planted bug), starts it in
    the sandbox and curls it, self-verifies (FAIL), fixes the bug, self-verifies (PASS), submits.

    The *test* reads the reference service from oracles/; the sandbox and the loop never do.
    """
    reference = REPO / "oracles" / "url-shortener" / "reference"
    app = (reference / "app.py").read_text()
    if PLANTED[0] not in app:
        raise AssertionError(f"the reference changed: {PLANTED[0]!r} is no longer in app.py; update the planted bug")
    app = app.replace(PLANTED[0], PLANTED[1])
    commands = [
        "ls -la && head -20 spec.md",
        heredoc("app.py", app),
        heredoc("requirements.txt", (reference / "requirements.txt").read_text()),
        heredoc("Dockerfile", (reference / "Dockerfile").read_text()),
        heredoc("candidate.yaml", "run: python app.py\n"),
        "python -c 'import flask' 2>/dev/null || pip install -q -r requirements.txt 2>&1 | tail -2",
        "(PORT=8011 nohup python app.py > /tmp/server.log 2>&1 &) ; for i in $(seq 50); do curl -sf localhost:8011/health && break; sleep 0.2; done",
        "curl -s -o /dev/null -w '%{http_code}\\n' localhost:8011/health",
    ]
    fix = [f"sed -i 's/{PLANTED[1]}/{PLANTED[0]}/' app.py && grep -c '{PLANTED[0]}' app.py", "pkill -f 'python app.py' ; rm -f nohup.out; echo stopped"]
    turns: list[Turn] = [text_bash(c) if text else Turn(bash=c) for c in commands]
    if verify:
        turns.append(Turn(content="self_verify") if text else Turn(tool="self_verify"))
    turns += [text_bash(c) if text else Turn(bash=c) for c in fix]
    if verify:
        turns.append(Turn(content="self_verify") if text else Turn(tool="self_verify"))
    turns.append(Turn(content="Done.\nsubmit") if text else Turn(tool="submit"))
    return turns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", choices=["url-shortener"], default="url-shortener")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--text", action="store_true", help="text actions instead of tool calls")
    args = parser.parse_args()
    with ScriptedChatServer(url_shortener_script(text=args.text), port=args.port) as server:
        print(server.base_url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
