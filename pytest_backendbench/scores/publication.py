"""Whether a run's figures may be published: not while harness errors, collection errors or an
interruption leave items without a verdict (they count as not passed in the headline)."""

from __future__ import annotations

from typing import Any

RERUN_HINT = "re-run them: pytest <the same arguments> --bench-resume <this report's folder> --bench-rerun-errors"
RESUME_HINT = "finish it: pytest <the same arguments> --bench-resume <this report's folder>"


def publication(summary: dict[str, Any], manifest: dict[str, Any]) -> dict[str, Any]:
    """{"publishable", "reasons", "hint"} from the run's summary and manifest."""
    reasons = []
    hints = []
    if summary.get("errors"):
        tasks = summary.get("tasks_with_errors") or []
        reasons.append(f"{summary['errors']} item(s) ended in a harness error ({len(tasks)} task(s): {', '.join(tasks)})")
        hints.append(RERUN_HINT)
    collection = manifest.get("collection_errors") or []
    if collection:
        reasons.append(f"{len(collection)} collection error(s)")
        hints.append("fix the collection errors listed in the report, then run again")
    if manifest.get("interrupted"):
        reasons.append("the run was interrupted")
        hints.append(RESUME_HINT)
    return {"publishable": not reasons, "reasons": reasons, "hint": "; ".join(dict.fromkeys(hints))}


def publication_line(document: dict[str, Any]) -> str | None:
    """The first line of every report format for a run that may not be published, else None."""
    info = document["summary"].get("publication") or publication(document["summary"], document["manifest"])
    if info.get("publishable", True):
        return None
    return f"NOT PUBLISHABLE: {'; '.join(info['reasons'])} (counted as not passed); {info['hint']}"
