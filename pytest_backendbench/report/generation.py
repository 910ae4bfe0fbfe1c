"""Generation figures: per sample (steps, verify calls, exit reason, tokens, cost, seconds) and aggregated.

Generators record these in candidate.yaml's ``generation``; the report carries them per task
result, and every format (terminal, Markdown, HTML, leaderboard) shows them through here.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

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
        pass_seen = "yes" if g.get("submitted_with_pass") else ("no" if _verify_offered(g) else "-")
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


def _verify_offered(g: dict[str, Any]) -> bool:
    """Whether the sample's agent could call self_verify (a budget recorded, or calls made)."""
    budget = g.get("verify_budget")
    return bool(g.get("verify_calls")) or (isinstance(budget, int) and budget > 0)


def _int(value: Any) -> str:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else "-"


def summarize_generation(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The summary's ``generation`` block: means per sample, rates, exit reasons, models."""
    summary: dict[str, Any] = {}
    if not records:
        return summary
    for key in ("tokens_in", "tokens_out", "cost_usd", "seconds", "steps", "verify_calls"):
        figures = [float(g[key]) for g in records if isinstance(g.get(key), (int, float)) and not isinstance(g.get(key), bool)]
        if figures:
            summary[f"{key}_per_task"] = sum(figures) / len(figures)
    cost = [float(g["cost_usd"]) for g in records if isinstance(g.get("cost_usd"), (int, float))]
    if cost:
        summary["cost_usd_total"] = sum(cost)
    agentic = [g for g in records if g.get("exit_reason")]
    if agentic:
        summary["submitted_rate"] = sum(1 for g in agentic if g.get("exit_reason") == "submitted") / len(agentic)
        offered = [g for g in agentic if _verify_offered(g)]  # "with a PASS seen" means nothing without self_verify
        if offered:
            summary["submitted_with_pass_rate"] = sum(1 for g in offered if g.get("submitted_with_pass")) / len(offered)
        summary["exit_reasons"] = dict(sorted(Counter(str(g["exit_reason"]) for g in agentic).items()))
    harness = sum(1 for g in records if g.get("error_kind") == "harness")
    if harness:
        summary["harness_errors"] = harness
    models = sorted({str(g["model"]) for g in records if g.get("model")})
    if models:
        summary["models"] = models
    return summary
