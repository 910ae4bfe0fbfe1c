"""Whose fault an item's exception is, and how it reads in the report.

Only the candidate's behaviour counts against it: a ``CandidateFailure`` the harness raised on
purpose (build, boot, crash, contract, smoke), an assertion or ``pytest.fail`` in the oracle
module's own code, and a request to the candidate's service that failed (timeout, reset,
refused, unreadable body). Everything else is an error: a ``HarnessError``, any exception
(bare ``assert`` included) raised inside the harness package, an exception of a library the
harness called (openapi-core, psycopg, a mock's ``raise_for_status``), and a broken oracle
(``NameError``, ``ImportError``, a missing fixture). ``CandidateFailure`` subclasses
``AssertionError``, so the order of the checks below matters: origin before type.

Package modules that hold oracle helpers (http/api.py) declare ``__oracle_support__ = True``:
an assertion or ``pytest.fail`` raised there is the oracle's verdict on the candidate's answer
and counts as the candidate's failure; anything else raised there stays a harness error.
"""

from __future__ import annotations

import enum
import traceback
from pathlib import Path

import pytest

from .errors import CandidateFailure, HarnessError

PACKAGE_DIR = Path(__file__).resolve().parent
ORACLE_SUPPORT_FLAG = "__oracle_support__"


class Outcome(str, enum.Enum):
    """How one phase of a task item ended, as the report counts it."""

    PASSED = "passed"
    FAILED = "failed"  # the candidate's fault
    ERROR = "error"  # the harness's, the oracle's or the machine's: never counted
    SKIPPED = "skipped"


class Origin(str, enum.Enum):
    """Where an exception was raised, by the innermost frame of code we know."""

    ORACLE = "oracle"
    ORACLE_SUPPORT = "oracle support"  # a package module declaring __oracle_support__
    HARNESS = "harness"
    ELSEWHERE = "elsewhere"


def exception_origin(excinfo: pytest.ExceptionInfo[BaseException], oracle_dirs: tuple[Path, ...]) -> Origin:
    """The innermost traceback frame that is the harness's or an oracle's decides; library
    frames (requests, openapi-core, psycopg) below it belong to whoever called the library."""
    for entry in reversed(excinfo.traceback):
        path = Path(str(entry.path))
        if path.is_relative_to(PACKAGE_DIR):
            return Origin.ORACLE_SUPPORT if entry.frame.f_globals.get(ORACLE_SUPPORT_FLAG) is True else Origin.HARNESS
        if any(path.is_relative_to(folder) for folder in oracle_dirs):
            return Origin.ORACLE
    return Origin.ELSEWHERE


def _is_request_error(exc: BaseException) -> bool:
    import requests

    return isinstance(exc, requests.RequestException)


def _targets_service(exc: BaseException, service_url: str | None) -> bool:
    """Whether a requests exception came from a request to the candidate's service."""
    request = getattr(exc, "request", None)
    url = getattr(request, "url", None) or ""
    return bool(service_url) and str(url).startswith(str(service_url).rstrip("/"))


def classify(excinfo: pytest.ExceptionInfo[BaseException], oracle_dirs: tuple[Path, ...], service_url: str | None = None) -> Outcome:
    """FAILED (the candidate's fault) or ERROR (anyone else's) for a raised exception."""
    exc = excinfo.value
    if isinstance(exc, HarnessError):
        return Outcome.ERROR
    if isinstance(exc, CandidateFailure):
        return Outcome.FAILED  # the harness's explicit verdict about the candidate
    if isinstance(exc, (NameError, ImportError, SyntaxError, pytest.FixtureLookupError)):
        return Outcome.ERROR  # a broken oracle
    origin = exception_origin(excinfo, oracle_dirs)
    if _is_request_error(exc):
        # the candidate's answer (or its silence) through the http fixture or oracle code;
        # a request to a mock or elsewhere that fails inside the harness is ours
        if origin is Origin.ORACLE or _targets_service(exc, service_url):
            return Outcome.FAILED
        return Outcome.ERROR
    if origin is Origin.ORACLE:
        return Outcome.FAILED  # the oracle's assertion, or its code choking on the candidate's answer
    if origin is Origin.ORACLE_SUPPORT and isinstance(exc, (AssertionError, pytest.fail.Exception)):
        return Outcome.FAILED  # an oracle helper's assertion about the candidate's answer
    return Outcome.ERROR  # inside the harness, or a library it called


def reason(exc: BaseException, service_alive: bool | None = None, exit_reason: str | None = None) -> str:
    """A one-line reason for the report."""
    if isinstance(exc, CandidateFailure):
        return f"[{exc.phase.value}] {exc.title}"
    if isinstance(exc, HarnessError):
        return f"[harness error] {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    if _is_request_error(exc):
        from urllib.parse import urlsplit

        import requests

        request = getattr(exc, "request", None)
        target = f"{request.method} {urlsplit(request.url).path}" if request is not None and request.url else "request"
        if isinstance(exc, requests.Timeout):
            return f"{target}: no answer within the request timeout (the service hung)"
        if service_alive is False:
            return f"{target}: connection failed, the service {exit_reason}"
        if isinstance(exc, requests.JSONDecodeError):
            return f"the service's answer is not valid JSON: {exc}"
        return f"{target}: {type(exc).__name__}: connection failed or was reset"
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def describe_failure(failure: BaseException) -> str:
    """The readable text of a failure: title and detail of ours, with the cause's traceback
    kept for harness errors that wrap someone else's exception (so our bugs stay debuggable)."""
    if isinstance(failure, CandidateFailure):
        text = f"[{failure.phase.value}] {failure.title}"
        return f"{text}\n{failure.detail}" if failure.detail else text
    if isinstance(failure, HarnessError):
        text = f"[harness error, not the candidate's fault] {failure}"
        cause = failure.__cause__
        if cause is not None and not isinstance(cause, (HarnessError, CandidateFailure)) and cause.__traceback__ is not None:
            text += "\n\ncaused by:\n" + "".join(traceback.format_exception(cause)).rstrip()
        return text
    return f"{type(failure).__name__}: {failure}"
