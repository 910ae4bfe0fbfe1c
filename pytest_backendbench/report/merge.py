"""Joining shard reports into one, and comparing runs across models (the leaderboard)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import HarnessError
from ..metrics import MetricOptions
from ..results import TaskResult
from ..scores.publication import publication
from .cells import fmt
from .json_report import build_report, load_report


def merge_reports(paths: list[Path]) -> dict[str, Any]:
    """One report from shard reports: the same tasks and summary an unsharded run gives."""
    if not paths:
        raise HarnessError("report merge needs at least one report")
    documents = [load_report(p) for p in paths]
    check_same_versions(paths, documents)
    results: dict[str, TaskResult] = {}
    for path, document in zip(paths, documents):
        for task in document["tasks"]:
            result = TaskResult.from_dict(task)
            if result.candidate in results:
                raise HarnessError(f"{path}: candidate {result.candidate!r} is in two shard reports; shards must be disjoint")
            results[result.candidate] = result
    first = documents[0]
    summary = first["summary"]
    manifest = {k: v for k, v in first["manifest"].items() if k != "candidates"}
    manifest["shard"] = None
    manifest["started_at"] = min(d["manifest"]["started_at"] for d in documents)
    manifest["finished_at"] = max(d["manifest"]["finished_at"] for d in documents)
    manifest["interrupted"] = any(d["manifest"]["interrupted"] for d in documents)
    manifest["collection_errors"] = [e for d in documents for e in d["manifest"].get("collection_errors", [])]
    versions = {t: v for d in documents for t, v in (d["manifest"].get("task_versions") or {}).items()}
    if versions:
        manifest["task_versions"] = dict(sorted(versions.items()))
    packages = {(e["package"], e["requested"], e["version"]): e for d in reversed(documents) for e in d["manifest"].get("cdn_packages", [])}
    manifest.pop("cdn_packages", None)
    if packages:
        manifest["cdn_packages"] = [packages[key] for key in sorted(packages)]
    options = MetricOptions(summary.get("alpha", 0.6), summary.get("beta", 0.4))
    return build_report(list(results.values()), manifest, options)


def check_same_versions(paths: list[Path], documents: list[dict[str, Any]]) -> None:
    """Refuse shards that judged a task on different task versions or ran different harnesses:
    their union would mix two benchmarks under one figure."""
    seen: dict[str, tuple[str, Path]] = {}
    harness: tuple[str, Path] | None = None
    for path, document in zip(paths, documents):
        version = document["manifest"].get("harness_version")
        if harness is not None and version != harness[0]:
            raise HarnessError(f"{path}: harness {version}, but {harness[1]} ran harness {harness[0]}; re-run the shards with one harness version")
        harness = harness or (version, path)
        for task, digest in (document["manifest"].get("task_versions") or {}).items():
            if task in seen and seen[task][0] != digest:
                raise HarnessError(
                    f"task {task}: {path} judged version {digest[:12]}, {seen[task][1]} judged {seen[task][0][:12]}; "
                    "the task's files changed between shards: re-run its shard on one version"
                )
            seen.setdefault(task, (digest, path))


def report_label(path: Path, document: dict[str, Any]) -> str:
    """What a leaderboard row is called: the generating model, else the report folder's name."""
    models = document["summary"].get("generation", {}).get("models")
    if models:
        return "+".join(models)
    return path.name if path.is_dir() else path.parent.name


def compare_reports(paths: list[Path]) -> dict[str, Any]:
    """The leaderboard: one row per run, best Final SR first."""
    rows = []
    for path in paths:
        document = load_report(path)
        s = document["summary"]
        tiers = list(s["sr_by_tier"].items())
        generation = s.get("generation", {})
        rows.append(
            {
                "run": report_label(path, document),
                "publishable": (s.get("publication") or publication(s, document["manifest"]))["publishable"],
                "harness_errors": s["errors"],
                "tasks": s["tasks"],
                "base_sr": s["sr_by_tier"].get("base"),
                "tier_sr": {tier: value for tier, value in tiers[1:]},
                "final_sr": s["final_sr"],
                "delta": s["delta"],
                "test_acc": s["test_acc"],
                "req_acc": s["req_acc"],
                "balanced": s["balanced"],
                "cost_per_task": generation.get("cost_usd_per_task"),
                "output_tokens_per_task": generation.get("tokens_out_per_task"),
                "input_tokens_per_task": generation.get("tokens_in_per_task"),
                "seconds_per_task": generation.get("seconds_per_task"),
                "steps_per_task": generation.get("steps_per_task"),
                "verify_calls_per_task": generation.get("verify_calls_per_task"),
                "submitted_rate": generation.get("submitted_rate"),
                "submitted_with_pass_rate": generation.get("submitted_with_pass_rate"),
                "pass_at_k": s.get("pass_at_k", {}),
                "failures_by_category": s["failures_by_category"],
                "security_failures_by_cwe": s.get("security_failures_by_cwe", {}),
            }
        )
    rows.sort(key=lambda r: (-(r["final_sr"] or 0.0), -(r["test_acc"] or 0.0), r["run"]))
    return {"rows": rows}


LeaderboardCell = tuple[str, "float | str | None"]
"""A leaderboard cell: its text, and the value it sorts by (a number, a name, or None: unknown)."""


def leaderboard_table(board: dict[str, Any]) -> tuple[list[str], list[list[LeaderboardCell]]]:
    """The leaderboard's header and rows, each cell with the value it sorts by."""
    tiers = sorted({t for r in board["rows"] for t in r["tier_sr"]})
    ks = sorted({k for r in board["rows"] for k in r["pass_at_k"]}, key=int)
    agentic = any(r.get("steps_per_task") is not None for r in board["rows"])
    agent_header = ["steps/task", "verify/task", "submitted", "submitted w/ PASS", "seconds/task"] if agentic else []
    header = ["run", "tasks", "Base SR", *[f"+{t.upper()} SR" for t in tiers], "Final SR", "Delta", "Test.Acc", "Req.Acc", "cost/task", "out tokens/task", *agent_header, *[f"pass@{k}" for k in ks]]

    def cell(value: Any, percent: bool = True) -> LeaderboardCell:
        return fmt(value, percent=percent), value if isinstance(value, int | float) else None

    rows = []
    for r in board["rows"]:
        rows.append([
            (r["run"] + ("" if r.get("publishable", True) else f" (NOT PUBLISHABLE: {r.get('harness_errors', 0)} harness errors)"), r["run"]),
            cell(r["tasks"]),
            cell(r["base_sr"]),
            *[cell(r["tier_sr"].get(t)) for t in tiers],
            cell(r["final_sr"]),
            cell(r["delta"], percent=False),
            cell(r["test_acc"]),
            cell(r["req_acc"]),
            cell(r["cost_per_task"], percent=False),
            cell(r["output_tokens_per_task"], percent=False),
            *(
                [
                    cell(r.get("steps_per_task"), percent=False),
                    cell(r.get("verify_calls_per_task"), percent=False),
                    cell(r.get("submitted_rate")),
                    cell(r.get("submitted_with_pass_rate")),
                    cell(r.get("seconds_per_task"), percent=False),
                ]
                if agentic
                else []
            ),
            *[cell(r["pass_at_k"].get(k)) for k in ks],
        ])
    return header, rows


def leaderboard_markdown(board: dict[str, Any]) -> str:
    """The leaderboard as a Markdown table."""
    header, rows = leaderboard_table(board)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(text for text, _ in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"
