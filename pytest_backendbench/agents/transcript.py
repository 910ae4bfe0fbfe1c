"""Per-sample transcripts: everything the model saw and did, as JSON lines, plus a readable page.

One event per line, flushed as it happens, so a run that is killed still leaves the steps up
to that point. Events carry ``type`` and ``t`` (seconds since the sample started): ``start``
(model, budgets, sandbox), ``message`` (what went to the model: system, task, observations),
``model`` (what came back: text, tool calls, tokens, cost so far), ``action`` (a command, its
exit code, seconds, and the observation exactly as shown), ``verify`` (a self_verify call and
its verdict), ``end`` (exit reason and totals).

Closing the transcript also writes ``trajectory.json`` in ATIF (``formats/atif.py``): for the
built-in loop from these events, for a ``cmd:`` agent from the CLI's own log when the harness
knows its format (``trajectories.py``), else from the events (the proxy's model calls and the
CLI's output).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, Self

import jinja2

from ..formats import atif
from .trajectories import cli_trajectory

TRANSCRIPT_FILE = "transcript.jsonl"
TRANSCRIPT_PAGE = "transcript.html"


class TranscriptWriter:
    """Appends events to ``<folder>/transcript.jsonl``; thread-safe; ``close`` writes the page."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / TRANSCRIPT_FILE
        self.page = folder / TRANSCRIPT_PAGE
        self._started = time.monotonic()
        self._started_wall = time.time()
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
        events = read_transcript(self.path)
        self.page.write_text(render_transcript(events, title or self.path.parent.name), encoding="utf-8")
        atif.write_trajectory(self.path.parent, trajectory_document(events, self.path.parent, self._started_wall, title))

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
code{white-space:pre-wrap;overflow-wrap:anywhere}
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


def trajectory_document(events: list[dict[str, Any]], folder: Path, started_at: float, session_id: str = "") -> dict[str, Any]:
    """The sample's ATIF trajectory: a ``cmd:`` agent's own log converted, else the transcript's events."""
    start = next((e for e in events if e.get("type") == "start"), {})
    label = str(start.get("model") or "")
    if "command" not in start:  # the built-in loop's transcript
        return loop_trajectory(events, started_at, session_id)
    name, _, model = label.removeprefix("cmd:").partition(":")
    version = str(start.get("agent_version") or "unknown")
    prompt = next((atif.text_of(e.get("content")) for e in events if e.get("type") == "message"), "")
    native = cli_trajectory(folder / "trajectory", name, version, model or None, prompt) if (folder / "trajectory").is_dir() else None
    if native is not None:
        native["session_id"] = session_id or None
        end = _last(events, "end")
        if not native["final_metrics"].get("total_cost_usd") and end.get("cost_usd"):
            # the CLI could not price a local model name (it says 0): the metering proxy's price stands, as in the report
            native["final_metrics"]["total_cost_usd"] = end["cost_usd"]
            native["notes"] = "total_cost_usd is the metering proxy's price: the CLI could not price the model"
            for step in native["steps"]:
                if (step.get("metrics") or {}).get("cost_usd") == 0:
                    del step["metrics"]["cost_usd"]
        return {k: v for k, v in native.items() if v is not None}
    return cli_fallback_trajectory(events, name or label, version, model or None, started_at, session_id)


def loop_trajectory(events: list[dict[str, Any]], started_at: float, session_id: str = "") -> dict[str, Any]:
    """The built-in ``agent:`` loop's events as ATIF: each model answer an agent step with its tool calls, the
    observations that answered them, and the tokens and cost it added (the events carry running totals)."""
    start = next((e for e in events if e.get("type") == "start"), {})
    builder = atif.TrajectoryBuilder("backendbench-agent", _package_version(), str(start.get("model") or "") or None,
                                     extra={k: start[k] for k in ("actions", "budgets", "verify_budget", "sandbox") if k in start})
    seen = {"tokens_in": 0, "tokens_out": 0, "cost_usd": 0.0}
    for event in events:
        kind, when = event.get("type"), _when(started_at, event)
        if kind == "message":
            source = "system" if event.get("role") == "system" else "user"
            builder.add(source, atif.text_of(event.get("content")), timestamp=when)
        elif kind == "model":
            delta: dict[str, float] = {}
            for key, before in seen.items():
                value = event.get(key)
                if isinstance(value, (int, float)):
                    delta[key] = value - before
                    seen[key] = value
            calls = [atif.tool_call(str(c.get("id") or f"call_{event.get('step')}_{i}"), str(c.get("name") or ""), c.get("arguments"))
                     for i, c in enumerate(event.get("tool_calls") or [], start=1) if isinstance(c, dict)]
            cost = delta.get("cost_usd")
            builder.agent_step(atif.text_of(event.get("content")), tool_calls=calls, timestamp=when, step_metrics=atif.metrics(
                _int(delta.get("tokens_in")), _int(delta.get("tokens_out")), cost_usd=round(cost, 6) if cost is not None else None),
                extra={"finish_reason": event["finish_reason"]} if event.get("finish_reason") else None)
        elif kind in ("action", "verify"):
            extra = {k: event[k] for k in ("action", "command", "exit_code", "seconds", "timed_out", "verdict", "phase") if event.get(k) is not None}
            builder.observe(atif.text_of(event.get("observation")), event.get("call_id"), extra=extra or None)
    end = _last(events, "end")
    return builder.document(session_id=session_id, extra={"exit_reason": end["exit_reason"]} if end.get("exit_reason") else None)


def cli_fallback_trajectory(events: list[dict[str, Any]], name: str, version: str, model: str | None, started_at: float,
                            session_id: str = "") -> dict[str, Any]:
    """A ``cmd:`` agent whose log the harness cannot read: the prompt, one agent step per model call the proxy
    metered (tokens only: the content is in the CLI's own log), and the CLI's output as the closing observation."""
    builder = atif.TrajectoryBuilder(name, version, model)
    for event in events:
        when = _when(started_at, event)
        if event.get("type") == "message":
            builder.add("user", atif.text_of(event.get("content")), timestamp=when)
        elif event.get("type") == "proxy":
            for call in event.get("model_calls") or []:
                builder.agent_step("", step_metrics=atif.metrics(call.get("tokens_in"), call.get("tokens_out")),
                                   extra={"path": call.get("path"), "status": call.get("status"), "seconds": call.get("seconds")})
    ran = _last(events, "action")  # written after the run, which the proxy's calls happened during
    if ran:
        builder.add("system", "the agent CLI's output")
        builder.observe(atif.text_of(ran.get("observation")), extra={"command": ran.get("command"), "exit_code": ran.get("exit_code")})
    end = _last(events, "end")
    return builder.document(session_id=session_id, total_cost_usd=end.get("cost_usd"),
                            notes="the CLI's own log is not in a format the harness reads: model calls as the metering proxy saw them")


def _last(events: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    return next((e for e in reversed(events) if e.get("type") == kind), {})


def _when(started_at: float, event: dict[str, Any]) -> str | None:
    t = event.get("t")
    return atif.iso_time(started_at + t) if isinstance(t, (int, float)) else None


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) else None


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pytest-backendbench")
    except PackageNotFoundError:
        return "unknown"
