"""ATIF, the Agent Trajectory Interchange Format (v1.8): every agent sample's ``trajectory.json``.

ATIF is Harbor's trajectory format (its RFC 0001; Pydantic models in PyPI ``atif``), which
Terminal-Bench requires for leaderboard submissions. The document is a ``Trajectory``: the agent
(name, version, model, tool definitions), ``steps`` numbered from 1 (``system`` / ``user`` /
``agent``; an agent step carries its message, ``tool_calls``, the ``observation`` results that
answer them by ``source_call_id``, and per-step ``metrics``: prompt/completion/cached tokens and
cost), and ``final_metrics`` with the totals.

The harness writes plain JSON so that it runs without ``atif`` (which needs Python >= 3.11);
``validate`` checks a document against the ``atif`` models when that package is installed (the
tests always do).
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

SCHEMA_VERSION = "ATIF-v1.8"
TRAJECTORY_FILE = "trajectory.json"


class AtifError(ValueError):
    """A trajectory the ATIF models reject (a harness bug: the converters write what the models accept)."""


def parse_arguments(arguments: Any) -> dict[str, Any]:
    """A tool call's arguments as the JSON object ATIF wants (a JSON string is parsed; anything else is kept under ``input``)."""
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            return {"input": arguments}
        return value if isinstance(value, dict) else {"input": value}
    return {} if arguments is None else {"input": arguments}


def metrics(
    prompt_tokens: int | None = None, completion_tokens: int | None = None, cached_tokens: int | None = None,
    cost_usd: float | None = None, **extra: Any,
) -> dict[str, Any] | None:
    """One step's ``metrics`` (None when nothing is known)."""
    data: dict[str, Any] = {
        k: v for k, v in (("prompt_tokens", prompt_tokens), ("completion_tokens", completion_tokens),
                          ("cached_tokens", cached_tokens), ("cost_usd", cost_usd)) if v is not None
    }
    if extra:
        data["extra"] = extra
    return data or None


def text_of(content: Any) -> str:
    """A message's text: strings as they are, content-part lists joined (text parts; others as JSON)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
            else:
                parts.append(json.dumps(part, ensure_ascii=False, default=str))
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False, default=str)


class TrajectoryBuilder:
    """Collects steps in turn order and produces the ATIF document (plain JSON)."""

    def __init__(self, agent: str, version: str, model_name: str | None = None, *,
                 tool_definitions: list[dict[str, Any]] | None = None, extra: dict[str, Any] | None = None) -> None:
        self.agent: dict[str, Any] = {"name": agent, "version": version or "unknown"}
        if model_name:
            self.agent["model_name"] = model_name
        if tool_definitions:
            self.agent["tool_definitions"] = tool_definitions
        if extra:
            self.agent["extra"] = extra
        self.steps: list[dict[str, Any]] = []

    def add(self, source: str, message: str, *, timestamp: str | None = None, **fields: Any) -> dict[str, Any]:
        """Append one step (``fields`` that are None are left out); return it for later observations."""
        step: dict[str, Any] = {"step_id": len(self.steps) + 1, "source": source, "message": message}
        if timestamp:
            step["timestamp"] = timestamp
        step.update({k: v for k, v in fields.items() if v is not None})
        self.steps.append(step)
        return step

    def agent_step(self, message: str, *, tool_calls: list[dict[str, Any]] | None = None, step_metrics: dict[str, Any] | None = None,
                   reasoning: str | None = None, model_name: str | None = None, timestamp: str | None = None,
                   extra: dict[str, Any] | None = None, llm_call_count: int | None = 1) -> dict[str, Any]:
        """One model answer: its text, the tool calls it made (``tool_call`` dicts), its metrics; ``llm_call_count``
        None where several steps come from one model call (the turn counts the calls)."""
        return self.add("agent", message, timestamp=timestamp, model_name=model_name, reasoning_content=reasoning or None,
                        tool_calls=tool_calls or None, metrics=step_metrics, llm_call_count=llm_call_count, extra=extra)

    def observe(self, content: str, call_id: str | None = None, *, extra: dict[str, Any] | None = None) -> None:
        """What an action returned, added to the last agent (or system) step; after a user step, to a new system step."""
        target = self.steps[-1] if self.steps and self.steps[-1]["source"] != "user" else self.add("system", "")
        result: dict[str, Any] = {"content": content}
        if call_id is not None and any(c["tool_call_id"] == call_id for c in target.get("tool_calls") or []):
            result["source_call_id"] = call_id
        if extra:
            result["extra"] = extra
        target.setdefault("observation", {"results": []})["results"].append(result)

    def document(self, *, session_id: str | None = None, notes: str | None = None, total_cost_usd: float | None = None,
                 extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """The ``Trajectory``: ``final_metrics`` summed over the steps (cost given when only the total is known)."""
        totals: dict[str, Any] = {"total_steps": len(self.steps)}
        for key in ("prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd"):
            values = [s["metrics"][key] for s in self.steps if key in (s.get("metrics") or {})]
            if values:
                totals[f"total_{key}"] = round(sum(values), 6) if key == "cost_usd" else sum(values)
        if total_cost_usd is not None:
            totals["total_cost_usd"] = round(total_cost_usd, 6)
        doc: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
        if session_id:
            doc["session_id"] = session_id
        doc.update({"agent": self.agent, "steps": self.steps, "final_metrics": totals})
        if notes:
            doc["notes"] = notes
        if extra:
            doc["extra"] = extra
        return doc


def tool_call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    """One ATIF ``ToolCall``."""
    return {"tool_call_id": call_id, "function_name": name, "arguments": parse_arguments(arguments)}


def iso_time(epoch_s: float) -> str:
    """An ISO 8601 UTC timestamp (``...Z``)."""
    moment = datetime.datetime.fromtimestamp(epoch_s, tz=datetime.timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def validate(document: dict[str, Any]) -> bool:
    """Check ``document`` against the ``atif`` package's models; False when that package is not installed.

    Raises ``AtifError`` naming the first problem when the models reject it.
    """
    try:
        from atif import Trajectory  # optional: Python >= 3.11 and the test extra
    except ImportError:
        return False
    from pydantic import ValidationError

    try:
        Trajectory.model_validate(document)
    except ValidationError as err:
        raise AtifError(f"not a valid ATIF trajectory: {err}") from err
    return True


def write_trajectory(folder: Path, document: dict[str, Any]) -> Path:
    """Write ``<folder>/trajectory.json`` (validated first when ``atif`` is installed)."""
    validate(document)
    path = folder / TRAJECTORY_FILE
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    return path
