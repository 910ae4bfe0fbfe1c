"""How a figure is written in a table cell, the same in every table (terminal, Markdown, HTML, charts)."""

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
