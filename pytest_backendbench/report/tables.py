"""The summary tables shared by the terminal, Markdown and HTML writers."""

from __future__ import annotations

from typing import Any

from .cells import fmt
from .papers import carbon_rows, paper_rows, spread_rows, webgen_bench_rows

DETERMINED = (("SR", "sr_determined"), ("Test.Acc", "test_acc_determined"), ("Req.Acc", "req_acc_determined"), ("Balanced", "balanced_determined"))


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


def _tasks(n: int, word: str = "task") -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def sr_line(summary: dict[str, Any]) -> str:
    """The headline, every task in its denominator and honest about errors: ``SR 88.9% of 9
    tasks (harness errors count as not passed; determined only: SR 100.0% of 8 determined tasks,
    1 undetermined: event-registration, no PostgreSQL)``; the same words in every format."""
    headline = f"SR {fmt(summary['sr'])} of {_tasks(summary['tasks'])}"
    undetermined = summary.get("undetermined") or []
    if not undetermined and not summary.get("errors"):
        return headline
    determined = summary.get("determined_tasks", summary["tasks"] - len(undetermined))
    sr_determined = summary.get("sr_determined", summary["sr"])
    beside = f"determined only: SR {fmt(sr_determined)} of {_tasks(determined, 'determined task')}"
    if undetermined:
        named = "; ".join(f"{u['task']}, {u['reason']}" for u in undetermined)
        beside += f", {len(undetermined)} undetermined: {named}"
    return f"{headline} (harness errors count as not passed; {beside})"


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
        *[(f"{name} (determined only)", fmt(s[key])) for name, key in DETERMINED if s.get("errors") and key in s],
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
    rows += paper_rows(s.get("papers") or {})
    rows += webgen_bench_rows(s.get("webgen_bench"))
    rows += spread_rows(s.get("spread") or {})
    rows += carbon_rows(s.get("carbon"))
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


def cwe_table(documents: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], list[list[str]]]:
    """One row per CWE any run found, one column per run: BaxBench's share of samples exhibiting
    it, then (in brackets) the failed security items naming it. Empty when no run found one."""
    shares = [((d["summary"].get("papers") or {}).get("baxbench") or {}).get("cwe_share") or {} for _, d in documents]
    items = [d["summary"].get("security_failures_by_cwe") or {} for _, d in documents]
    cwes = sorted({c for table in (*shares, *items) for c in table}, key=lambda c: int(c.removeprefix("CWE-")) if c.removeprefix("CWE-").isdigit() else 0)
    if not cwes:
        return [], []
    header = ["CWE", *[label or "samples exhibiting (failed security items)" for label, _ in documents]]
    rows = [[cwe, *[f"{fmt(share.get(cwe, 0.0))} ({count.get(cwe, 0)})" for share, count in zip(shares, items)]] for cwe in cwes]
    return header, rows
