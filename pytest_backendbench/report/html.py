"""The HTML report for people: one self-contained file with tables and inline SVG charts.

No scripts, fonts, stylesheets or images are fetched: the CSS is inline and every chart is SVG
drawn by charts.py, so the file can be attached to a CI run, mailed, or opened offline. It
shows one or more runs (one per model, say): the headline figures side by side, the charts,
then each run's tables. The page is the Jinja2 template ``page.html``, autoescaped: report text
(labels, node ids, messages) can never become markup.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

from ..judges.report_view import judge_cases
from ..scores.infiniteweb import goal_rows
from ..scores.publication import publication_line
from .app_checks import app_build_context
from .charts import attrition_chart, attrition_note, failure_note, failures_chart, heat_colour, heatmap_chart, nice_ticks
from .charts import colour as run_colour
from .generation import HEADER as GENERATION_HEADER
from .generation import generation_rows
from .tables import cwe_table, sr_line, summary_rows, task_rows

__all__ = ["HTML_NAME", "heat_colour", "nice_ticks", "render_html", "write_html"]

HTML_NAME = "report.html"
MAX_FAILURE_ROWS = 100
FOLD_AT = 90
"""A figure's text longer than this folds into a details element (the table stays within the page)."""


@lru_cache(maxsize=1)
def _template() -> jinja2.Template:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("pytest_backendbench", "report"), autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True
    )
    return environment.get_template("page.html")


def failure_anchor(run_index: int, candidate: str) -> str:
    """The id of a candidate's first failing item in a run's section of the page (1-based run index)."""
    return f"run-{run_index}-task-{candidate}"


def render_html(documents: list[tuple[str, dict[str, Any]]], leaderboard: dict[str, Any] | None = None) -> str:
    """The whole page for ``(run label, report document)`` pairs, e.g. one per model; with
    ``leaderboard`` (leaderboard.leaderboard_context), ``report compare``'s page: the sortable
    leaderboard, the tasks per run and the paired differences first."""
    runs = list(documents)
    task_ids = sorted({t["task"] for _, d in runs for t in d["tasks"]})
    versions = sorted({d["manifest"]["harness_version"] for _, d in runs})
    subtitle = f"{len(runs)} run{'s' if len(runs) != 1 else ''} · {len(task_ids)} task{'s' if len(task_ids) != 1 else ''} · harness {', '.join(versions) or '-'}"
    warnings = [f"{label}: {line}" if len(runs) > 1 else line for label, d in runs if (line := publication_line(d))]
    figures = []
    if runs:
        figures = [
            {"name": "failures", "caption": "Failed oracle items by category", "svg": failures_chart(runs), "note": failure_note(runs), "wide": False},
            {"name": "attrition", "caption": "Success rate from the base tier to the final tier", "svg": attrition_chart(runs), "note": attrition_note(runs), "wide": False},
            {
                "name": "heatmap", "caption": "Test.Acc per task and run (✓ success, ✗ failure, ? undetermined)",
                "svg": heatmap_chart(runs, task_ids), "note": "", "wide": True,
            },
        ]
    cwe_header, cwe_rows = cwe_table(runs)
    return _template().render(
        subtitle=subtitle,
        fold_at=FOLD_AT,
        leaderboard=leaderboard,
        cwe_header=cwe_header,
        cwe_rows=cwe_rows,
        not_publishable=warnings,
        labels=[label for label, _ in runs],
        comparison=_comparison_rows(runs),
        figures=figures,
        runs=[_run_context(index, label, document) for index, (label, document) in enumerate(runs)],
    )


def write_html(path: Path, documents: list[tuple[str, dict[str, Any]]], leaderboard: dict[str, Any] | None = None) -> Path:
    """Write the page to ``path`` (a file; its folder is created); return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(documents, leaderboard), encoding="utf-8")
    return path


def _comparison_rows(runs: list[tuple[str, dict[str, Any]]]) -> list[list[str]]:
    """Every headline figure (tables.summary_rows) of every run, one column per run."""
    names: dict[str, None] = {}
    values: list[dict[str, str]] = []
    for _, document in runs:
        pairs = summary_rows(document)
        values.append(dict(pairs))
        for name, _ in pairs:
            names.setdefault(name, None)
    return [[name, *[v.get(name, "-") for v in values]] for name in names]


def _first_line(text: str | None, limit: int = 300) -> str:
    return text.splitlines()[0][:limit] if text else ""


def _shown_failures(run_index: int, failures: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any], str | None]]:
    """At most MAX_FAILURE_ROWS failures, every candidate's first among them (the leaderboard links
    to it: ``failure_anchor``), in report order; the first of each candidate carries the anchor."""
    first_of: dict[str, int] = {}
    for position, (candidate, _) in enumerate(failures):
        first_of.setdefault(candidate, position)
    firsts = set(first_of.values())
    shown = sorted(sorted(range(len(failures)), key=lambda p: (p not in firsts, p))[:MAX_FAILURE_ROWS])
    return [(failures[p][0], failures[p][1], failure_anchor(run_index, failures[p][0]) if p in firsts else None) for p in shown]


def _run_context(index: int, label: str, document: dict[str, Any]) -> dict[str, Any]:
    """What the template shows of one run."""
    manifest = document["manifest"]
    facts = [f"runtime {manifest['runtime']}", f"session {manifest['session_id']}", f"{manifest['started_at']} – {manifest['finished_at'] or '?'}"]
    if manifest.get("shard"):
        facts.append(f"shard {manifest['shard']}")
    header, rows = task_rows(document)
    failures = [(t["candidate"], i) for t in document["tasks"] for i in t["items"] if i["outcome"] in ("failed", "error")]
    packages = manifest.get("cdn_packages") or []
    return {
        "label": label,
        "colour": run_colour(index),
        "facts": " · ".join(facts),
        "interrupted": bool(manifest.get("interrupted")),
        "not_publishable": publication_line(document),
        "sr_line": sr_line(document["summary"]),
        "task_header": header,
        "task_rows": rows,
        "generation_header": GENERATION_HEADER,
        "generation": [
            {"cells": cells, "html": (task.get("generation") or {}).get("transcript_html"), "jsonl": (task.get("generation") or {}).get("transcript", ""),
             "trajectory": (task.get("generation") or {}).get("trajectory"), "atif": (task.get("generation") or {}).get("atif_trajectory")}
            for task, cells in generation_rows(document)
        ],
        "generation_errors": [
            [t["candidate"], _first_line(str(t["generation"]["error"]))] for t in document["tasks"] if (t.get("generation") or {}).get("error")
        ],
        "goals": goal_rows(document),
        "judges": judge_cases(document),
        "failure_count": len(failures),
        "failures_more": f" (first {MAX_FAILURE_ROWS})" if len(failures) > MAX_FAILURE_ROWS else "",
        "failures": [
            (
                candidate,
                item["nodeid"],
                (item.get("category") or "-") + (f" (CWE-{item['cwe']})" if item.get("cwe") else ""),
                item["phase"],
                item["outcome"],
                _first_line(item.get("message")),
                anchor,
            )
            for candidate, item, anchor in _shown_failures(index + 1, failures)
        ],
        "packages": [
            (e.get("package", ""), e.get("version", ""), (e.get("requested") or "(no version)") + (" (pinned)" if e.get("pinned") else ""), e.get("url", ""))
            for e in packages
        ],
        "pinned": sum(1 for e in packages if e.get("pinned")),
        "collection_errors": [(e["nodeid"], e["message"].splitlines()[-1] if e["message"] else "") for e in manifest.get("collection_errors") or []],
        "app_build": app_build_context(document),
    }
