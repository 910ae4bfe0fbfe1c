"""What the browser showed when a scenario failed: for the report (screenshot, URL, console), never for the verdict."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class FailureCapture:
    """What the browser showed when a scenario failed: for the report, never for the verdict."""

    screenshot: bytes | None = None
    url: str = ""
    console: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    hung: bool = False

    @property
    def console_text(self) -> str:
        """The console log, one message a line."""
        return "\n".join(self.console) if self.console else "(empty)"


def format_log_entry(entry: dict[str, Any]) -> str:
    """One console message as ``[LEVEL] source: message`` (a chromedriver log entry)."""
    return f"[{entry.get('level', '?')}] {entry.get('source', '')}: {entry.get('message', '')}".rstrip()
