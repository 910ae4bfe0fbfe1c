"""Generation figures per sample (steps, verify calls, exit reason, tokens, cost, seconds) as table rows.

Generators record these in candidate.yaml's ``generation``; the report carries them per task
result (aggregated by metrics.summarize_generation), and every format (terminal, Markdown, HTML,
leaderboard) shows them through here.
"""

from __future__ import annotations

from typing import Any

from ..metrics import verify_offered
from .cells import fmt

HEADER = ["candidate", "model", "exit", "steps", "verify calls", "PASS seen", "tokens in", "tokens out", "cost USD", "seconds"]


def generation_rows(document: dict[str, Any]) -> list[tuple[dict[str, Any], list[str]]]:
    """(task result, cells) for every result with a generation record, in report order."""
    rows = []
    for task in document["tasks"]:
        g = task.get("generation") or {}
        if not g:
            continue
        exit_reason = str(g.get("exit_reason") or ("error" if g.get("error") else "done"))
        if g.get("error_kind") == "harness":
            exit_reason += " (harness)"
        pass_seen = "yes" if g.get("submitted_with_pass") else ("no" if verify_offered(g) else "-")
        cells = [
            str(task["candidate"]),
            str(g.get("model") or "-"),
            exit_reason,
            _int(g.get("steps")),
            _int(g.get("verify_calls")),
            pass_seen,
            _int(g.get("tokens_in")),
            _int(g.get("tokens_out")),
            fmt(g.get("cost_usd"), percent=False),
            fmt(g.get("seconds"), percent=False),
        ]
        rows.append((task, cells))
    return rows


def _int(value: Any) -> str:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else "-"
