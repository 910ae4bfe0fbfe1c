"""The terminal summary of a benchmark session: the per-task grid and the headline metrics."""

from __future__ import annotations

from typing import Any

import pytest

from .report.tables import render_grid, sr_line, summary_rows, task_rows
from .session import RECORDER_KEY


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Print the report's tables after pytest's own summary (the controller only)."""
    recorder = config.stash.get(RECORDER_KEY, None)
    if recorder is None or recorder.document is None:
        return
    document = recorder.document
    terminalreporter.section("backendbench summary")
    header, rows = task_rows(document)
    for line in render_grid(header, rows):
        terminalreporter.write_line(line)
    terminalreporter.write_line("")
    terminalreporter.write_line(sr_line(document["summary"]), bold=True)
    width = max(len(name) for name, _ in summary_rows(document))
    for name, value in summary_rows(document):
        terminalreporter.write_line(f"{name.ljust(width)}  {value}")
    terminalreporter.write_line(f"report: {recorder.report_dir / 'report.json'}")
