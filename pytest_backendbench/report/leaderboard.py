"""What ``report compare``'s HTML page shows above the runs: the leaderboard (sortable, each run
linked to its own report), each task's verdict per run (linked to its failing items) and the
paired differences of every run against the first (McNemar, paired bootstrap).

The page itself is html.py's template; this module only turns the leaderboard and the pairs
into cells with the text shown, the value a column sorts by and, where there is one, a link.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .cells import fmt
from .html import HTML_NAME, failure_anchor
from .merge import leaderboard_table


def report_link(report: Path, page_folder: Path) -> str:
    """The run's own report.html (else its report.json), relative to the folder of the page."""
    folder = report if report.is_dir() else report.parent
    target = folder / HTML_NAME if (folder / HTML_NAME).is_file() else (report if report.is_file() else folder / "report.json")
    return Path(os.path.relpath(target.resolve(), page_folder.resolve())).as_posix()


def _difference(value: float | None, interval: list[float] | None) -> str:
    """A paired difference and its 95% interval, '-' when no task was paired."""
    if value is None:
        return "-"
    return fmt(value, percent=False) + (f" [{interval[0]:+.3f}, {interval[1]:+.3f}]" if interval else "")


def leaderboard_context(board: dict[str, Any], pairs: list[dict[str, Any]], runs: list[tuple[str, Path, dict[str, Any]]], page_folder: Path) -> dict[str, Any]:
    """The page's leaderboard part for ``runs`` (label, report path, document) in page order."""
    links = {label: report_link(path, page_folder) for label, path, _ in runs}
    header, rows = leaderboard_table(board)
    board_rows = [
        [{"text": text, "sort": "" if value is None else value, "href": links.get(str(row[0][1])) if index == 0 else None} for index, (text, value) in enumerate(row)]
        for row in rows
    ]
    task_ids = sorted({t["task"] for _, _, d in runs for t in d["tasks"]})
    tasks = []
    for task in task_ids:
        cells: list[dict[str, Any]] = []
        for index, (_, _, document) in enumerate(runs, start=1):
            candidates = [t for t in document["tasks"] if t["task"] == task]
            failing = [(t["candidate"], sum(1 for i in t["items"] if i["outcome"] in ("failed", "error"))) for t in candidates]
            bad = [(candidate, n) for candidate, n in failing if n]
            if not candidates:
                cells.append({"text": "-", "sort": "", "href": None})
            elif not bad:
                cells.append({"text": "✓ all passed", "sort": 0, "href": None})
            else:
                total = sum(n for _, n in bad)
                phase = next((t["phase_failed"] for t in candidates if t.get("phase_failed")), None)
                text = f"{total} failing" + (f" ({phase})" if phase else "")
                cells.append({"text": text, "sort": total, "href": "#" + failure_anchor(index, bad[0][0])})
        tasks.append([{"text": task, "sort": task, "href": None}, *cells])
    paired = [
        [
            f"{p['b']} − {p['a']}",
            f"{p['paired_candidates']} of {p['tasks']} tasks",
            ", ".join(p["gained"]) or "none",
            ", ".join(p["lost"]) or "none",
            f"{p['discordant']['a_only_success']} / {p['discordant']['b_only_success']}; p = {p['mcnemar_p']:.4g}",
            _difference(p["sr_difference"], p["sr_difference_ci95"]),
            _difference(p["test_acc_difference"], p["test_acc_difference_ci95"]),
        ]
        for p in pairs
    ]
    return {
        "header": header,
        "rows": board_rows,
        "task_header": ["task", *[label for label, _, _ in runs]],
        "tasks": tasks,
        "paired_header": ["B − A", "paired on", "tasks gained by B", "tasks lost by B", "McNemar (A only / B only)", "SR difference [95% CI]", "Test.Acc difference [95% CI]"],
        "paired": paired,
        "resamples": pairs[0]["bootstrap"]["resamples"] if pairs else None,
    }
