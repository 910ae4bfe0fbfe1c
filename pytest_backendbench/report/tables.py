"""The summary tables shared by the terminal, Markdown and HTML writers."""

from __future__ import annotations

from typing import Any


def fmt(value: Any, percent: bool = True) -> str:
    """A figure for a table cell: 87.5% / 0.875, '-' for unknown."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value * 100:.1f}%" if percent else f"{value:.3f}"
    return str(value)


def task_rows(document: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """One row per candidate: phase, items, accuracies, success per tier."""
    tiers = list(document["summary"]["sr_by_tier"])
    header = ["task", "phase", "items", "passed", "Test.Acc", "Req.Acc", "Balanced", "dense", *[f"SR {t}" for t in tiers], "ready s"]
    rows = []
    for task in document["tasks"]:
        m = task["metrics"]
        rows.append(
            [
                task["candidate"],
                task["phase_failed"] or "ok",
                str(m["items"]),
                str(m["passed"]) + (f" (+{m['errors']} err)" if m["errors"] else ""),
                fmt(m["test_acc"]),
                fmt(m["req_acc"]),
                fmt(m["balanced"]),
                fmt(m["dense"]),
                *[fmt(m["success_by_tier"].get(t)) for t in tiers],
                fmt(task.get("ready_seconds"), percent=False),
            ]
        )
    return header, rows


def sr_line(summary: dict[str, Any]) -> str:
    """The headline, honest about what it leaves out: ``SR 100.0% of 8 determined tasks
    (1 undetermined: event-registration, no PostgreSQL)``; the same words in every format."""
    undetermined = summary.get("undetermined") or []
    if not undetermined:
        return f"SR {fmt(summary['sr'])} of {summary['tasks']} task{'s' if summary['tasks'] != 1 else ''}"
    determined = summary.get("determined_tasks", summary["tasks"] - len(undetermined))
    named = "; ".join(f"{u['task']}, {u['reason']}" for u in undetermined)
    return f"SR {fmt(summary['sr'])} of {determined} determined task{'s' if determined != 1 else ''} ({len(undetermined)} undetermined: {named})"


def summary_rows(document: dict[str, Any]) -> list[tuple[str, str]]:
    """The run's headline figures as (name, value) pairs."""
    s = document["summary"]
    rows = [
        ("tasks", str(s["tasks"])),
        ("SR", fmt(s["sr"])),
        *[(f"SR {tier}" if i == 0 else f"+{tier.upper()} SR", fmt(v)) for i, (tier, v) in enumerate(s["sr_by_tier"].items())],
        ("Final SR", fmt(s["final_sr"])),
        ("Delta (Final-Base)/Base", fmt(s["delta"], percent=False)),
        ("Test.Acc", fmt(s["test_acc"])),
        ("Req.Acc", fmt(s["req_acc"])),
        ("Soft Req.Acc", fmt(s["soft_req_acc"])),
        (f"Balanced ({s['alpha']}/{s['beta']})", fmt(s["balanced"])),
        ("Dense score", fmt(s["dense"])),
        ("Viability", fmt(s["viability"])),
        ("Contract conformance", fmt(s["contract_conformance"])),
        ("items passed/failed/errors", f"{s['passed']}/{s['failed']}/{s['errors']}"),
        ("requests", str(s["requests"])),
    ]
    if s.get("fe_acc") is not None or s.get("db_acc") is not None:
        for key, label in (
            ("fe_acc", "FE Acc"),
            ("fe_acc_valid_db", "FE Acc w/ valid DB"),
            ("be_acc", "BE Acc"),
            ("be_acc_valid_db", "BE Acc w/ valid DB"),
            ("db_acc", "DB Acc"),
        ):
            rows.append((label, fmt(s.get(key))))
    if s["failures_by_category"]:
        rows.append(("failures by category", ", ".join(f"{k}: {v}" for k, v in s["failures_by_category"].items())))
    if s.get("security_failures_by_cwe"):
        rows.append(("security failures by CWE", ", ".join(f"{k}: {v}" for k, v in s["security_failures_by_cwe"].items())))
    if s.get("pass_at_k"):
        rows.append(("pass@k", ", ".join(f"@{k}: {fmt(v)}" for k, v in s["pass_at_k"].items())))
    variance = s.get("variance")
    if variance:
        interval = variance["sr_ci95"]
        rows.append(("repeats (flip rate)", f"{variance['repeats']} ({fmt(variance['flip_rate'])})"))
        rows.append(("pass^k", ", ".join(f"^{k}: {fmt(v)}" for k, v in variance["pass_hat_k"].items())))
        if interval:
            rows.append(("SR 95% interval", f"{fmt(interval[0])} - {fmt(interval[1])}"))
        for nodeid in variance["flaky_items"][:10]:
            rows.append(("flaky", nodeid))
    for key, value in s.get("generation", {}).items():
        if isinstance(value, dict):  # exit reasons: counts per reason
            shown = ", ".join(f"{k}: {v}" for k, v in value.items())
        elif isinstance(value, list):
            shown = ", ".join(value)
        else:
            shown = fmt(value, percent=key.endswith("_rate"))
        rows.append((key.replace("_", " "), shown))
    if s.get("tasks_with_errors"):
        rows.append(("tasks with harness errors", ", ".join(s["tasks_with_errors"])))
    return rows


def render_grid(header: list[str], rows: list[list[str]]) -> list[str]:
    """A plain monospace table."""
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)] if rows else [len(h) for h in header]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in rows]
    return out
