"""Reading the built-in agent CLIs' own trajectories: steps, tokens, cost, their submit signal.

Each reader takes the trajectory folder copied out of the sandbox and returns what the file
says; a figure the CLI did not record stays None (the proxy's count stands beside it in the
generation record). Formats, from the CLIs' sources of the pinned versions:

- mini-swe-agent 2.4: ``mini.traj.json`` — ``info.model_stats.api_calls`` and
  ``instance_cost``, ``info.exit_status`` (``Submitted`` when it echoed its submit command),
  each assistant message's ``extra.response.usage`` (chat-completions usage).
- aider 0.86: ``--analytics-log`` JSON lines — one ``message_send`` event per model answer
  with ``prompt_tokens``, ``completion_tokens``, ``cost``, ``total_cost``; ``exit`` with its
  reason (``Completed --message-file``).
- Claude Code 2.1: ``--output-format stream-json`` lines — the last ``{"type": "result"}``
  carries ``num_turns``, ``usage`` (input, cache and output tokens), ``total_cost_usd``,
  ``subtype`` (``success``) and ``is_error``.
- Codex CLI 0.171: ``exec --json`` lines — ``turn.completed`` events with ``usage``
  (``input_tokens``, ``output_tokens``), ``item.completed`` per command run or message (an
  ``error`` item is a warning, such as a model without metadata); ``turn.failed`` or
  ``error`` when it gave up.
- OpenHands: its log only (no usage the harness reads); the proxy's figures apply.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .proxy import usage_of


@dataclass
class AgentFigures:
    """What a CLI's trajectory says about its run."""

    steps: int | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    submitted: bool | None = None  # its own submit signal; None when the CLI has none or left no trace
    exit_status: str = ""  # the CLI's own word for how it ended

    def metadata(self) -> dict[str, Any]:
        """Generation-record fields (None figures left out)."""
        data: dict[str, Any] = {}
        for key in ("steps", "tokens_in", "tokens_out", "cost_usd"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        if self.submitted is not None:
            data["agent_submitted"] = self.submitted
        if self.exit_status:
            data["agent_exit_status"] = self.exit_status[:200]
        return data


def _json_lines(path: Path) -> Iterator[dict[str, Any]]:
    if not path.is_file():
        return
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            yield value


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _add(total: int | None, value: int | None) -> int | None:
    return value if total is None else total + (value or 0)


def read_mini(folder: Path) -> AgentFigures:
    """mini-swe-agent's ``mini.traj.json``."""
    path = folder / "mini.traj.json"
    figures = AgentFigures()
    if not path.is_file():
        return figures
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return figures
    if not isinstance(data, dict):
        return figures
    raw_info = data.get("info")
    info: dict[str, Any] = raw_info if isinstance(raw_info, dict) else {}
    raw_stats = info.get("model_stats")
    stats: dict[str, Any] = raw_stats if isinstance(raw_stats, dict) else {}
    calls = stats.get("api_calls")
    figures.steps = calls if isinstance(calls, int) else None
    cost = _number(stats.get("instance_cost"))
    figures.cost_usd = round(cost, 6) if cost is not None else None
    figures.exit_status = str(info.get("exit_status") or "")
    figures.submitted = figures.exit_status == "Submitted"
    for message in data.get("messages") or []:
        extra = message.get("extra") if isinstance(message, dict) else None
        response = extra.get("response") if isinstance(extra, dict) else None
        tokens_in, tokens_out = usage_of(response)
        figures.tokens_in = _add(figures.tokens_in, tokens_in)
        figures.tokens_out = _add(figures.tokens_out, tokens_out)
    return figures


def read_aider(folder: Path) -> AgentFigures:
    """aider's analytics log."""
    figures = AgentFigures()
    for event in _json_lines(folder / "aider.analytics.jsonl"):
        raw = event.get("properties")
        properties: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if event.get("event") == "message_send":
            figures.steps = (figures.steps or 0) + 1
            for key, name in (("tokens_in", "prompt_tokens"), ("tokens_out", "completion_tokens")):
                value = properties.get(name)
                if isinstance(value, int):
                    setattr(figures, key, (getattr(figures, key) or 0) + value)
            total = _number(properties.get("total_cost"))
            figures.cost_usd = round(total, 6) if total is not None else figures.cost_usd
        elif event.get("event") == "exit":
            figures.exit_status = str(properties.get("reason") or "")
    if figures.exit_status:
        figures.submitted = figures.exit_status.startswith("Completed")
    return figures


def read_claude(folder: Path) -> AgentFigures:
    """Claude Code's stream-json output (its ``result`` event)."""
    figures = AgentFigures()
    result: dict[str, Any] | None = None
    for event in _json_lines(folder / "claude.stream.jsonl"):
        if event.get("type") == "result":
            result = event
    if result is None:
        return figures
    turns = result.get("num_turns")
    figures.steps = turns if isinstance(turns, int) else None
    figures.tokens_in, figures.tokens_out = usage_of(result)
    cost = _number(result.get("total_cost_usd"))
    figures.cost_usd = round(cost, 6) if cost is not None else None
    figures.exit_status = str(result.get("subtype") or "")
    figures.submitted = result.get("subtype") == "success" and not result.get("is_error")
    return figures


def read_codex(folder: Path) -> AgentFigures:
    """Codex CLI's ``exec --json`` events."""
    figures = AgentFigures()
    for event in _json_lines(folder / "codex.jsonl"):
        kind = str(event.get("type") or "")
        if kind == "turn.completed":
            tokens_in, tokens_out = usage_of(event)
            figures.tokens_in = _add(figures.tokens_in, tokens_in)
            figures.tokens_out = _add(figures.tokens_out, tokens_out)
            figures.exit_status, figures.submitted = "turn.completed", True
        elif kind == "item.completed" and (event.get("item") or {}).get("type") != "error":  # an error item is a warning
            figures.steps = (figures.steps or 0) + 1
        elif kind in ("turn.failed", "error"):
            figures.exit_status, figures.submitted = kind, False
    return figures


def read_openhands(folder: Path) -> AgentFigures:
    """OpenHands leaves no usage the harness reads; the proxy's figures stand."""
    return AgentFigures()
