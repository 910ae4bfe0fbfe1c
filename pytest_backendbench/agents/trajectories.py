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

``cli_trajectory`` converts the same logs to ATIF (``formats/atif.py``; after Harbor's own
converters for mini-swe-agent, Claude Code and Codex): each model answer an agent step with its
tool calls (mini's and Claude Code's tool calls, Codex's commands and file changes) and the
observations answering them, tokens per answer (per turn for Codex), and the cost the CLI
counted. aider makes no tool calls: its answers are the steps and the edits it applied their
observations.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..formats import atif
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


def cli_trajectory(folder: Path, name: str, version: str, model: str | None, prompt: str = "") -> dict[str, Any] | None:
    """The CLI's own log in ``folder`` as an ATIF document (``prompt``: what the harness gave it, which Claude Code's
    and Codex's logs do not repeat); None when there is no log the harness reads."""
    converters = {"mini": atif_mini, "aider": atif_aider, "claude-code": atif_claude, "codex": atif_codex}
    convert = converters.get(name)
    return convert(folder, version, model, prompt) if convert is not None else None


def _json_file(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def atif_mini(folder: Path, version: str, model: str | None, prompt: str = "") -> dict[str, Any] | None:
    """mini-swe-agent: system and task messages, then assistant messages (tool calls) answered by tool messages."""
    data = _json_file(folder / "mini.traj.json")
    if data is None:
        return None
    info = _dict(data.get("info"))
    builder = atif.TrajectoryBuilder("mini-swe-agent", str(info.get("mini_version") or version),
                                     model or _dict(_dict(info.get("config")).get("model")).get("model_name"))
    messages = [m for m in data.get("messages") or [] if isinstance(m, dict)]
    outs = [usage_of(_dict(m.get("extra")).get("response"))[1] or 0 for m in messages]
    total_out = sum(outs)
    cost = _number(_dict(info.get("model_stats")).get("instance_cost")) or 0.0
    for index, message in enumerate(messages):
        role, text = message.get("role"), atif.text_of(message.get("content"))
        if role == "system":
            builder.add("system", text)
        elif role == "user" and not any(s["source"] == "agent" for s in builder.steps):
            builder.add("user", text)
        elif role in ("user", "tool"):
            builder.observe(text, message.get("tool_call_id"))
        elif role == "assistant":
            tokens_in, tokens_out = usage_of(_dict(message.get("extra")).get("response"))
            share = cost * tokens_out / total_out if cost and tokens_out and total_out else None  # Harbor's apportioning
            calls = [atif.tool_call(str(c.get("id") or f"call_{index}_{i}"), str(_dict(c.get("function")).get("name") or "bash"),
                                    _dict(c.get("function")).get("arguments")) for i, c in enumerate(message.get("tool_calls") or []) if isinstance(c, dict)]
            builder.agent_step("" if calls else text, reasoning=text if calls else None, tool_calls=calls,
                               step_metrics=atif.metrics(tokens_in, tokens_out, cost_usd=round(share, 6) if share else None))
    return builder.document(total_cost_usd=cost or None, extra={"exit_status": info.get("exit_status"), "native_log": "mini.traj.json"})


def _aider_segments(path: Path) -> list[tuple[str, str]]:
    """aider's LLM history: ``TO LLM <time>`` / ``LLM RESPONSE <time>`` headers, each line after prefixed by its role."""
    segments: list[tuple[str, list[str]]] = []
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    for line in lines:
        head = line.rsplit(" ", 1)[0]
        if head in ("TO LLM", "LLM RESPONSE") and line[len(head) + 1:][:2].isdigit():
            segments.append((head, []))
        elif segments:
            segments[-1][1].append(line)
    return [(head, "\n".join(body)) for head, body in segments]


def _role_blocks(text: str) -> list[tuple[str, str]]:
    """``ROLE line`` lines grouped into (role, text) blocks (``-------`` separates messages)."""
    blocks: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("-------"):
            blocks.append(("", []))
            continue
        role, _, rest = line.partition(" ")
        if not blocks or (blocks[-1][0] and blocks[-1][0] != role):
            blocks.append((role, []))
        elif not blocks[-1][0]:
            blocks[-1] = (role, blocks[-1][1])
        blocks[-1][1].append(rest)
    return [(role, "\n".join(body)) for role, body in blocks if role]


def atif_aider(folder: Path, version: str, model: str | None, prompt: str = "") -> dict[str, Any] | None:
    """aider: the system prompt and the task from its first request, each answer an agent step (tokens and cost from
    the analytics log's ``message_send`` events, in order), the edits it applied (chat history) as observations."""
    segments = _aider_segments(folder / "aider.llm.history")
    if not segments:
        return None
    sends = [_dict(e.get("properties")) for e in _json_lines(folder / "aider.analytics.jsonl") if e.get("event") == "message_send"]
    builder = atif.TrajectoryBuilder("aider", version, model)
    first = _role_blocks(segments[0][1])
    system = "\n\n".join(text for role, text in first if role == "SYSTEM")
    task = next((text for role, text in reversed(first) if role == "USER"), "")
    if system:
        builder.add("system", system)
    builder.add("user", task)
    responses = [text for head, text in segments if head == "LLM RESPONSE"]
    for index, text in enumerate(responses):
        answer = "\n".join(line.partition(" ")[2] if line.startswith("ASSISTANT") else line for line in text.splitlines())
        send = sends[index] if index < len(sends) else {}
        cost = _number(send.get("cost"))
        builder.agent_step(answer, step_metrics=atif.metrics(send.get("prompt_tokens"), send.get("completion_tokens"),
                                                             cost_usd=round(cost, 6) if cost is not None else None))
    try:
        history = (folder / "aider.chat.history.md").read_text(encoding="utf-8", errors="replace")
    except OSError:
        history = ""
    applied = [line[2:] for line in history.splitlines() if line.startswith(("> Applied edit to", "> Creating empty file"))]
    if applied and responses:
        builder.observe("\n".join(applied))
    total = _number(sends[-1].get("total_cost")) if sends else None
    return builder.document(total_cost_usd=total, extra={"native_log": "aider.llm.history"})


def atif_claude(folder: Path, version: str, model: str | None, prompt: str = "") -> dict[str, Any] | None:
    """Claude Code's stream-json: ``assistant`` events (one per content block, grouped by message id) are agent
    steps with their ``tool_use`` calls; ``user`` events' ``tool_result`` blocks their observations."""
    events = list(_json_lines(folder / "claude.stream.jsonl"))
    if not events:
        return None
    init = next((e for e in events if e.get("type") == "system" and e.get("subtype") == "init"), {})
    builder = atif.TrajectoryBuilder("claude-code", str(init.get("claude_code_version") or version), model or init.get("model"),
                                     extra={"tools": init["tools"]} if isinstance(init.get("tools"), list) else None)
    builder.add("user", prompt)
    current: dict[str, Any] | None = None
    current_id = None
    for event in events:
        message = _dict(event.get("message"))
        blocks = [b for b in message.get("content") or [] if isinstance(b, dict)] if isinstance(message.get("content"), list) else []
        if event.get("type") == "assistant":
            if current is None or message.get("id") != current_id:
                usage = _dict(message.get("usage"))
                tokens_in, tokens_out = usage_of(message)
                cached = usage.get("cache_read_input_tokens") if isinstance(usage.get("cache_read_input_tokens"), int) else None
                current = builder.agent_step("", model_name=message.get("model"), step_metrics=atif.metrics(tokens_in, tokens_out, cached))
                current_id = message.get("id")
            for block in blocks:
                if block.get("type") == "text":
                    current["message"] = (current["message"] + "\n" + str(block.get("text") or "")).strip("\n")
                elif block.get("type") == "thinking":
                    current["reasoning_content"] = str(block.get("thinking") or "")
                elif block.get("type") == "tool_use":
                    current.setdefault("tool_calls", []).append(
                        atif.tool_call(str(block.get("id")), str(block.get("name") or ""), block.get("input")))
        elif event.get("type") == "user":
            for block in blocks:
                if block.get("type") == "tool_result":
                    builder.observe(atif.text_of(block.get("content")), block.get("tool_use_id"),
                                    extra={"is_error": True} if block.get("is_error") else None)
            current = None
    result: dict[str, Any] = next((e for e in reversed(events) if e.get("type") == "result"), {})
    cost = _number(result.get("total_cost_usd"))
    return builder.document(total_cost_usd=cost, extra={"exit_status": result.get("subtype"), "native_log": "claude.stream.jsonl"})


def atif_codex(folder: Path, version: str, model: str | None, prompt: str = "") -> dict[str, Any] | None:
    """Codex CLI's ``exec --json``: each completed item an agent step (a message; a command run or a file change as
    a tool call with its output as the observation); a turn's usage on its last step."""
    events = list(_json_lines(folder / "codex.jsonl"))
    if not events:
        return None
    builder = atif.TrajectoryBuilder("codex", version, model)
    builder.add("user", prompt)
    reasoning: list[str] = []
    for event in events:
        kind, item = event.get("type"), _dict(event.get("item"))
        if kind == "item.completed":
            item_type, item_id = item.get("type"), str(item.get("id") or f"item_{len(builder.steps)}")
            if item_type == "reasoning":
                reasoning.append(str(item.get("text") or ""))
            elif item_type == "agent_message":
                builder.agent_step(str(item.get("text") or ""), reasoning="\n".join(reasoning) or None, llm_call_count=None)
                reasoning = []
            elif item_type in ("command_execution", "file_change", "mcp_tool_call", "web_search"):
                arguments = {k: item[k] for k in ("command", "changes", "server", "tool", "arguments", "query") if k in item}
                builder.agent_step("", reasoning="\n".join(reasoning) or None, tool_calls=[atif.tool_call(item_id, str(item_type), arguments)],
                                   llm_call_count=None)  # several items come from one model call: the turn counts the calls
                reasoning = []
                output = item.get("aggregated_output", item.get("result", item.get("status", "")))
                builder.observe(atif.text_of(output), item_id, extra={k: item[k] for k in ("exit_code", "status") if item.get(k) is not None} or None)
        elif kind == "turn.completed" and builder.steps and builder.steps[-1]["source"] == "agent":
            usage = _dict(event.get("usage"))
            tokens_in, tokens_out = usage_of(event)
            cached = usage.get("cached_input_tokens") if isinstance(usage.get("cached_input_tokens"), int) else None
            builder.steps[-1]["metrics"] = atif.metrics(tokens_in, tokens_out, cached, turn_total=True)
    ended = next((str(e.get("type")) for e in reversed(events) if e.get("type") in ("turn.completed", "turn.failed", "error")), None)
    return builder.document(extra={"exit_status": ended, "native_log": "codex.jsonl"})

