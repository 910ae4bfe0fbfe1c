"""Per-sample transcripts: everything the model saw and did, as JSON lines, plus a readable page.

One event per line, flushed as it happens, so a run that is killed still leaves the steps up
to that point. Events carry ``type`` and ``t`` (seconds since the sample started): ``start``
(model, budgets, sandbox), ``message`` (what went to the model: system, task, observations),
``model`` (what came back: text, tool calls, tokens, cost so far), ``action`` (a command, its
exit code, seconds, and the observation exactly as shown), ``verify`` (a self_verify call and
its verdict), ``end`` (exit reason and totals).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, Self

import jinja2

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


PAGE = jinja2.Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True).from_string(
    """<!doctype html><meta charset=utf-8><title>{{ title }} transcript</title><style>{{ style }}</style>
<h1>Transcript: {{ title }}</h1>
{% for e in events %}
<div class="ev {{ e.type }}"><div class=meta>t={{ e.t if e.t is not none else "?" }}s · {{ e.type }}{% if e.step is not none %} · step {{ e.step }}{% endif %}</div>
{% if e.type == "message" %}<b>{{ e.role }}</b><pre>{{ e.content }}</pre>
{% elif e.type == "model" %}{% if e.content %}<pre>{{ e.content }}</pre>{% endif %}
{% for call in e.tool_calls %}<div>tool call <code>{{ call.name }}</code><pre>{{ call.arguments }}</pre></div>{% endfor %}
<div class=meta>tokens so far {{ e.tokens_in }}+{{ e.tokens_out }}, cost {{ e.cost_usd }}</div>
{% elif e.type == "action" %}{% if e.command is not none %}<div><code>$ {{ e.command }}</code></div>{% endif %}
<div class=meta>{{ e.action }} · exit {{ e.exit_code }} · {{ e.seconds }}s</div><pre>{{ e.observation }}</pre>
{% elif e.type == "trajectory" %}<div>the agent's own trajectory</div><ul>{% for f in e.files %}<li><a href="{{ f }}">{{ f }}</a></li>{% endfor %}</ul>
{% elif e.type == "verify" %}<pre>{{ e.observation }}</pre>
{% else %}<pre>{{ e.shown }}</pre>
{% endif %}</div>
{% endfor %}
"""
)


def render_transcript(events: list[dict[str, Any]], title: str) -> str:
    """A self-contained HTML page that reads like the conversation, step by step (Jinja2, autoescaped)."""
    shaped = []
    for event in events:
        kind = str(event.get("type", "?"))
        shown = json.dumps({k: v for k, v in event.items() if k not in ("type", "t")}, indent=2, ensure_ascii=False, default=str)
        calls = [c if isinstance(c, dict) else {"name": str(c), "arguments": ""} for c in event.get("tool_calls") or []]
        shaped.append({
            **{k: "" for k in ("role", "content", "observation", "action")},
            **event,
            "type": kind, "t": event.get("t"), "step": event.get("step"), "command": event.get("command"),
            "tool_calls": calls, "files": [str(f) for f in event.get("files") or []], "shown": shown,
        })
    return PAGE.render(title=title, style=PAGE_STYLE, events=shaped)
