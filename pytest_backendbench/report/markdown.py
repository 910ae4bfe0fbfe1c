"""The Markdown summary written beside report.json (for PR comments and CI job summaries)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..scores.publication import publication_line
from .generation import HEADER as GENERATION_HEADER
from .generation import generation_rows
from .tables import cwe_table, sr_line, summary_rows, task_rows

SUMMARY_NAME = "summary.md"


def render_markdown(document: dict[str, Any]) -> str:
    """Headline figures, then one row per candidate, then failures with their reasons."""
    manifest = document["manifest"]
    not_publishable = publication_line(document)
    lines = [
        *([f"**{not_publishable}**", ""] if not_publishable else []),
        "# pytest-backendbench report",
        "",
        f"runtime `{manifest['runtime']}` · harness {manifest['harness_version']} · session `{manifest['session_id']}`"
        + (" · **interrupted**" if manifest["interrupted"] else ""),
        "",
        f"**{sr_line(document['summary'])}**",
        "",
        "| metric | value |",
        "|---|---|",
        *[f"| {name} | {value} |" for name, value in summary_rows(document)],
        "",
    ]
    cwe_header, cwe_rows = cwe_table([("", document)])
    if cwe_header:
        lines += ["| " + " | ".join(cwe_header) + " |", "|" + "---|" * len(cwe_header), *["| " + " | ".join(row) + " |" for row in cwe_rows], ""]
    header, rows = task_rows(document)
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    generation = generation_rows(document)
    if generation:
        lines += ["", "## Generation", "", "| " + " | ".join([*GENERATION_HEADER, "transcript"]) + " |", "|" + "---|" * (len(GENERATION_HEADER) + 1)]
        for task, cells in generation:
            link = (task.get("generation") or {}).get("transcript_html")
            lines.append("| " + " | ".join([*cells, f"[view]({link})" if link else "-"]) + " |")
    packages = manifest.get("cdn_packages") or []
    if packages:
        lines += ["", "## CDN packages served offline", "", "| package | version | URL asked for | first URL |", "|---|---|---|---|"]
        for entry in packages:
            asked = entry.get("requested") or "(no version)"
            asked += " (pinned)" if entry.get("pinned") else ""
            lines.append(f"| {entry.get('package')} | {entry.get('version')} | {asked} | `{entry.get('url', '')}` |")
    failures = [
        (t["candidate"], i) for t in document["tasks"] for i in t["items"] if i["outcome"] in ("failed", "error")
    ]
    if failures:
        lines += ["", "## Failures", "", "| candidate | item | category | outcome | reason |", "|---|---|---|---|---|"]
        for candidate, item in failures[:200]:
            reason = item["message"].splitlines()[0].replace("|", "\\|")[:160] if item["message"] else ""
            weakness = f" (CWE-{item['cwe']})" if item.get("cwe") else ""
            lines.append(f"| {candidate} | `{item['nodeid']}` | {item['category'] or '-'}{weakness} | {item['outcome']} | {reason} |")
        if len(failures) > 200:
            lines.append(f"| … | {len(failures) - 200} more in report.json | | | |")
    return "\n".join(lines) + "\n"


def write_markdown(report_dir: Path, document: dict[str, Any]) -> Path:
    """Write summary.md; return its path."""
    path = report_dir / SUMMARY_NAME
    path.write_text(render_markdown(document), encoding="utf-8")
    return path
