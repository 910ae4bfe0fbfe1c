"""What a benchmark session prints: its header line and, at the end, the per-task grid and metrics."""

from __future__ import annotations

from typing import Any

import pytest

from .report.tables import cwe_table, render_grid, sr_line, summary_rows, task_rows
from .scores.publication import publication_line
from .session import bench_session, recorder_of


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    """The runtime, the tasks, the oracle tier, the doctor's verdict, and folders under benchmarks/ that are no task."""
    session = bench_session(config)
    if session is None:
        return None
    lines = [f"backendbench: {session.runtime_line}; tasks: {', '.join(session.task_ids)}; oracle tier: {session.tier}"]
    from .diagnosis import diagnose  # the doctor's one-line verdict: what this machine can evaluate

    lines.append(diagnose().summary_line())
    skipped = session.catalog.folders_without_task()
    if skipped:
        lines.append(f"backendbench: not tasks (no task.yaml): {', '.join(skipped)}")
    return lines


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Print the report's tables after pytest's own summary (the controller only)."""
    recorder = recorder_of(config)
    if recorder is None or recorder.document is None:
        return
    document = recorder.document
    terminalreporter.section("backendbench summary")
    not_publishable = publication_line(document)
    if not_publishable:
        terminalreporter.write_line(not_publishable, red=True, bold=True)
    header, rows = task_rows(document)
    for line in render_grid(header, rows):
        terminalreporter.write_line(line)
    terminalreporter.write_line("")
    terminalreporter.write_line(sr_line(document["summary"]), bold=True)
    width = max(len(name) for name, _ in summary_rows(document))
    for name, value in summary_rows(document):
        terminalreporter.write_line(f"{name.ljust(width)}  {value}")
    cwe_header, cwe_rows = cwe_table([("", document)])
    if cwe_header:
        terminalreporter.write_line("")
        for line in render_grid(cwe_header, cwe_rows):
            terminalreporter.write_line(line)
    if not_publishable:
        terminalreporter.write_line(not_publishable, red=True, bold=True)  # again where the eye ends
    terminalreporter.write_line(f"report: {recorder.report_dir / 'report.json'}")
