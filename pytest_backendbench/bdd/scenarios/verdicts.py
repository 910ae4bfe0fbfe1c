"""How a scenario behave ran ended, and whose fault that is.

behave marks each step passed, failed, undefined, ...; this module turns the first failing
step's exception into a verdict: the candidate's failure (an assertion, a missing element, a
selenium timeout), an oracle error (broken step code, an undefined or pending step) or a
harness error (the browser stopped answering), with a message that names the step's code line.
"""

from __future__ import annotations

import os
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import behave
from behave.model_type import Status
from behave.step_registry import AmbiguousStep

BEHAVE_PACKAGE = Path(behave.__file__).resolve().parent
HARNESS_PACKAGE = Path(__file__).resolve().parent
STATUSES = ("passed", "failed", "error", "undefined")
ORACLE_FAULT = "oracle error (not the candidate's fault): "
ORACLE_EXCEPTIONS: tuple[type[BaseException], ...] = (NameError, ImportError, SyntaxError, AmbiguousStep, NotImplementedError)
BROWSER_GONE_MARKERS = ("chrome not reachable", "not connected to devtools", "session deleted", "invalid session id")


@dataclass(frozen=True)
class FailingStep:
    """The step a scenario stopped at."""

    keyword: str
    text: str
    line: int

    def __str__(self) -> str:
        return f"{self.keyword} {self.text} (line {self.line})"


@dataclass
class ScenarioResult:
    """How one scenario ended; ``error`` and ``undefined`` are the oracle's or the harness's fault."""

    status: str
    scenario: str
    feature: str
    line: int
    failing_step: FailingStep | None = None
    message: str = ""
    traceback: str = ""
    duration: float = 0.0
    steps_run: int = 0

    @property
    def passed(self) -> bool:
        """Whether every step passed."""
        return self.status == "passed"

    @property
    def oracle_fault(self) -> bool:
        """True when the failure says nothing about the candidate (broken oracle, dead browser)."""
        return self.status in ("error", "undefined")



FAILED_STATUSES = (Status.failed, Status.error, Status.undefined, Status.pending, Status.hook_error)


def judge(scenario: Any, result: ScenarioResult) -> None:
    """Fill result from the scenario behave ran: who is at fault and where."""
    steps = list(scenario.all_steps)
    result.steps_run = sum(1 for s in steps if s.status not in (Status.untested, Status.skipped, Status.undefined))
    failing = next((s for s in steps if s.status in FAILED_STATUSES), None)
    if failing is None:
        if scenario.status == Status.passed:
            result.status = "passed"
            return
        # every step passed, a hook or cleanup did not
        exc = getattr(scenario, "exception", None)
        result.status = "error"
        result.message = ORACLE_FAULT + "a scenario hook failed: " + (
            _exception_line(exc) if exc is not None else str(getattr(scenario, "error_message", "") or scenario.status.name)
        )
        result.traceback = format_exception(exc) if exc is not None else ""
        return
    result.failing_step = FailingStep(failing.keyword, failing.name, failing.line)
    if failing.status == Status.undefined:
        result.status = "undefined"
        result.message = (
            ORACLE_FAULT + "no step definition matches "
            f"'{failing.keyword} {failing.name}' (line {failing.line})"
        )
        return
    if failing.status == Status.pending:
        result.status = "error"
        result.message = ORACLE_FAULT + f"step '{failing.keyword} {failing.name}' is not implemented"
        return
    exc = failing.exception
    if exc is None:
        result.status = "error"
        result.message = ORACLE_FAULT + (failing.error_message or "a step hook failed")
        return
    result.traceback = format_exception(exc)
    where = _step_code_line(exc)
    if _browser_gone(exc):
        result.status = "error"
        result.message = f"the shared browser stopped answering (a harness error, not the candidate's fault): {_exception_line(exc)}"
    elif _oracle_bug(exc):
        result.status = "error"
        result.message = ORACLE_FAULT + f"the step code raised {_exception_line(exc)}" + where
    else:
        result.status = "failed"
        result.message = _exception_line(exc) + where


def _frames(exc: BaseException) -> list[traceback.FrameSummary]:
    return list(traceback.extract_tb(exc.__traceback__))


def _is_under(filename: str, folder: Path) -> bool:
    try:
        return Path(filename).resolve().is_relative_to(folder)
    except (OSError, ValueError):
        return False


def _oracle_bug(exc: BaseException) -> bool:
    """Raised because the step code is wrong, whatever page it ran against."""
    if isinstance(exc, ORACLE_EXCEPTIONS):
        return True
    frames = _frames(exc)
    # e.g. a TypeError from calling the step function with the wrong parameters
    return bool(frames) and (_is_under(frames[-1].filename, BEHAVE_PACKAGE) or _is_under(frames[-1].filename, HARNESS_PACKAGE))


def _browser_gone(exc: BaseException) -> bool:
    from selenium.common.exceptions import InvalidSessionIdException, WebDriverException

    if isinstance(exc, InvalidSessionIdException):
        return True
    if isinstance(exc, WebDriverException):
        text = (exc.msg or "").lower()
        return any(marker in text for marker in BROWSER_GONE_MARKERS)
    try:
        from urllib3.exceptions import HTTPError as Urllib3Error
    except ImportError:  # pragma: no cover - selenium depends on urllib3
        return isinstance(exc, ConnectionError)
    return isinstance(exc, (ConnectionError, Urllib3Error))


def _exception_line(exc: BaseException) -> str:
    """``Type: message`` without selenium's session info and native stack trace."""
    from selenium.common.exceptions import TimeoutException

    text = getattr(exc, "msg", None)
    if not isinstance(text, str):
        text = str(exc)
    text = text.split("\nStacktrace:", 1)[0]
    text = "\n".join(line for line in text.splitlines() if not line.strip().startswith("(Session info:")).strip()
    if isinstance(exc, AssertionError):
        if text:
            return text
        source = _step_source_line(exc)
        return f"assertion failed: {source}" if source else "assertion failed"
    if isinstance(exc, TimeoutException) and not text:
        text = "timed out waiting for an element or condition that never came"
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


def _step_frame(exc: BaseException) -> traceback.FrameSummary | None:
    """The innermost frame in oracle code (neither behave, selenium, the stdlib nor us)."""
    for frame in reversed(_frames(exc)):
        filename = frame.filename
        if _is_under(filename, BEHAVE_PACKAGE) or _is_under(filename, HARNESS_PACKAGE):
            continue
        if f"{os.sep}site-packages{os.sep}" in filename or filename.startswith((sys.prefix, sys.base_prefix)):
            continue
        return frame
    return None


def _step_source_line(exc: BaseException) -> str:
    frame = _step_frame(exc)
    return (frame.line or "").strip() if frame else ""


def _step_code_line(exc: BaseException) -> str:
    frame = _step_frame(exc)
    if frame is None:
        return ""
    return f"\n  at {frame.filename}:{frame.lineno}: {(frame.line or '').strip()}"


def format_exception(exc: BaseException) -> str:
    """The traceback without behave's frames (and without ours, unless the error is ours)."""
    frames = [f for f in _frames(exc) if not _is_under(f.filename, BEHAVE_PACKAGE)]
    oracle_frames = [f for f in frames if not _is_under(f.filename, HARNESS_PACKAGE)]
    frames = oracle_frames or frames
    lines = traceback.format_list(frames)
    return "Traceback (most recent call last):\n" + "".join(lines) + _exception_line(exc) + "\n"

