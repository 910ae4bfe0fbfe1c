"""Per-sample transcripts: everything the model saw and did, as JSON lines, plus a readable page.

One event per line, flushed as it happens, so a run that is killed still leaves the steps up
to that point. Events carry ``type`` and ``t`` (seconds since the sample started): ``start``
(model, budgets, sandbox), ``message`` (what went to the model: system, task, observations),
``model`` (what came back: text, tool calls, tokens, cost so far), ``action`` (a command, its
exit code, seconds, and the observation exactly as shown), ``verify`` (a self_verify call and
its verdict), ``end`` (exit reason and totals).
"""

from __future__ import annotations

import html
import json
import threading
import time
from pathlib import Path
from typing import Any, Self

TRANSCRIPT_FILE = "transcript.jsonl"
TRANSCRIPT_PAGE = "transcript.html"


class TranscriptWriter:
    """Appends events to ``<folder>/transcript.jsonl``; thread-safe; ``close`` writes the page."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / TRANSCRIPT_FILE
        self.page = folder / TRANSCRIPT_PAGE
        self._started = time.monotonic()
        self._lock = threading.Lock()
        self._file = self.path.open("w", encoding="utf-8")

    def write(self, kind: str, **data: Any) -> None:
        """Record one event now."""
        event = {"type": kind, "t": round(time.monotonic() - self._started, 3), **data}
        line = json.dumps(event, ensure_ascii=False, default=str)
        with self._lock:
            if self._file.closed:
                return
            self._file.write(line + "\n")
            self._file.flush()

    def close(self, title: str = "") -> None:
        """Close the file and write the readable view next to it; idempotent."""
        with self._lock:
            if self._file.closed:
                return
            self._file.close()
        self.page.write_text(render_transcript(read_transcript(self.path), title or self.path.parent.name), encoding="utf-8")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_transcript(path: Path) -> list[dict[str, Any]]:
    """The events of a transcript (a torn last line, from a killed run, is skipped)."""
    events = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


PAGE_STYLE = """
body{font-family:system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;color:#222}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;padding:.6rem;border-radius:4px;margin:.3rem 0}
.ev{border-left:4px solid #ccc;padding:.2rem .8rem;margin:.8rem 0}
.model{border-color:#6f42c1}.action{border-color:#0366d6}.verify{border-color:#e36209}
.message{border-color:#999}.end,.start{border-color:#28a745}
.meta{color:#666;font-size:.85rem}
"""


def render_transcript(events: list[dict[str, Any]], title: str) -> str:
    """A self-contained HTML page that reads like the conversation, step by step."""
    out = [f"<!doctype html><meta charset=utf-8><title>{html.escape(title)} transcript</title><style>{PAGE_STYLE}</style>"]
    out.append(f"<h1>Transcript: {html.escape(title)}</h1>")
    for event in events:
        kind = str(event.get("type", "?"))
        meta = f"<div class=meta>t={event.get('t', '?')}s · {html.escape(kind)}"
        if "step" in event:
            meta += f" · step {event['step']}"
        meta += "</div>"
        body: list[str] = []
        if kind == "message":
            body.append(f"<b>{html.escape(str(event.get('role', '')))}</b><pre>{html.escape(str(event.get('content', '')))}</pre>")
        elif kind == "model":
            if event.get("content"):
                body.append(f"<pre>{html.escape(str(event['content']))}</pre>")
            for call in event.get("tool_calls") or []:
                body.append(f"<div>tool call <code>{html.escape(str(call.get('name')))}</code><pre>{html.escape(str(call.get('arguments')))}</pre></div>")
            body.append(f"<div class=meta>tokens so far {event.get('tokens_in')}+{event.get('tokens_out')}, cost {event.get('cost_usd')}</div>")
        elif kind == "action":
            if event.get("command") is not None:
                body.append(f"<div><code>$ {html.escape(str(event['command']))}</code></div>")
            body.append(f"<div class=meta>{html.escape(str(event.get('action')))} · exit {event.get('exit_code')} · {event.get('seconds')}s</div>")
            body.append(f"<pre>{html.escape(str(event.get('observation', '')))}</pre>")
        elif kind == "trajectory":  # a cmd: agent's own files, copied next to this page
            links = "".join(f'<li><a href="{html.escape(str(f))}">{html.escape(str(f))}</a></li>' for f in event.get("files") or [])
            body.append(f"<div>the agent's own trajectory</div><ul>{links}</ul>")
        elif kind == "verify":
            body.append(f"<pre>{html.escape(str(event.get('observation', '')))}</pre>")
        else:
            shown = {k: v for k, v in event.items() if k not in ("type", "t")}
            body.append(f"<pre>{html.escape(json.dumps(shown, indent=2, ensure_ascii=False, default=str))}</pre>")
        out.append(f"<div class='ev {html.escape(kind)}'>{meta}{''.join(body)}</div>")
    return "\n".join(out) + "\n"
