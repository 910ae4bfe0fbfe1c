"""AB-07: Lighthouse's performance score of the primary route, measured in the harness's Chromium.

The npm ``lighthouse`` CLI (``npm install -g lighthouse@12.2.3``) attaches to the browser the
harness started (``--port`` of its DevTools endpoint), so the page loads with the same flags as
every scenario: headless, offline CDN, the candidate's URL as the browser sees it (process and
Docker runtimes alike). Only the performance category runs, with Lighthouse's own defaults
(mobile form factor, simulated slow 4G and 4x CPU throttling); its score in [0, 1] is app.build's
AB-07 value, and LCP, TBT, CLS, FCP and Speed Index are kept beside it. The whole JSON report is
kept per candidate. A run past its deadline is killed (its process group) and is a harness error.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import HarnessError
from .settings import LIGHTHOUSE_VERSION

METRICS = {
    "lcp_ms": "largest-contentful-paint",
    "tbt_ms": "total-blocking-time",
    "cls": "cumulative-layout-shift",
    "fcp_ms": "first-contentful-paint",
    "speed_index_ms": "speed-index",
}
"""The figures kept beside the score: our name -> Lighthouse's audit id (numericValue)."""
CANDIDATE_ERRORS = frozenset({"NO_FCP", "NO_LCP", "ERRORED_DOCUMENT_REQUEST", "FAILED_DOCUMENT_REQUEST", "NOT_HTML", "PAGE_HUNG"})
"""Lighthouse runtime errors the page causes (it paints nothing, answers an error, never loads): AB-07 FAIL, score 0."""
INSTALL_HINT = f"install it with `npm install -g lighthouse@{LIGHTHOUSE_VERSION}` (Node 18.16 or later), or point --bench-lighthouse at it"


class LighthouseError(HarnessError):
    """Lighthouse could not measure the page (missing, crashed, timed out): not the candidate's fault."""


@dataclass
class LighthouseResult:
    """One Lighthouse run: the performance score (None when the page caused a runtime error) and its metrics."""

    url: str
    score: float | None
    metrics: dict[str, float | None] = field(default_factory=dict)
    runtime_error: str | None = None
    """``CODE: message`` of a runtime error the page caused (a page that paints nothing, an error status)."""
    warnings: list[str] = field(default_factory=list)
    report: str = ""
    """Where the whole Lighthouse JSON was kept."""
    version: str = ""
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form (report.json's ``app_check.details``)."""
        return {
            "url": self.url, "score": self.score, "metrics": self.metrics, "runtime_error": self.runtime_error,
            "warnings": self.warnings, "report": self.report, "version": self.version, "seconds": self.seconds,
        }


def find_lighthouse(configured: str = "") -> str:
    """The lighthouse command to run, or a LighthouseError saying how to get one."""
    found = shutil.which(configured or "lighthouse")
    if found is None:
        where = f"--bench-lighthouse={configured!r} is not an executable" if configured else "lighthouse is not on PATH"
        raise LighthouseError(f"AB-07 needs Lighthouse: {where}; {INSTALL_HINT}")
    return found


def run_lighthouse(command: str, url: str, *, debugger_address: str, output: Path, timeout_s: float) -> LighthouseResult:
    """Measure ``url`` in the browser whose DevTools endpoint is ``debugger_address`` (host:port)."""
    host, _, port = debugger_address.rpartition(":")
    output.parent.mkdir(parents=True, exist_ok=True)
    log = output.with_suffix(".log")
    args = [
        command, url, f"--port={port}", f"--hostname={host or '127.0.0.1'}", "--output=json", f"--output-path={output}",
        "--only-categories=performance", "--disable-full-page-screenshot", "--quiet",
    ]
    started = time.monotonic()
    output.unlink(missing_ok=True)
    with log.open("wb") as stderr:
        # its own process group: a run past the deadline is killed with everything it started
        process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            raise LighthouseError(
                f"Lighthouse did not finish measuring {url} within {timeout_s:g} s (--bench-lighthouse-timeout); it was killed\n"
                f"hint: a loaded machine slows Lighthouse down; give it more time\n{_tail(log)}".rstrip()
            ) from None
    seconds = round(time.monotonic() - started, 2)
    try:
        data = json.loads(output.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise LighthouseError(f"Lighthouse wrote no report for {url} (exit status {process.returncode}): {err}\n{_tail(log)}".rstrip()) from err
    return parse_report(data, url, output, seconds)


def parse_report(data: dict[str, Any], url: str, output: Path, seconds: float = 0.0) -> LighthouseResult:
    """The score and metrics of a Lighthouse JSON report; a runtime error not of the page's making is a LighthouseError."""
    error = data.get("runtimeError") or {}
    code = str(error.get("code") or "") if isinstance(error, dict) else ""
    if code and code not in CANDIDATE_ERRORS:
        raise LighthouseError(f"Lighthouse could not measure {url}: {code}: {error.get('message', '')}")
    audits = data.get("audits") or {}
    score = ((data.get("categories") or {}).get("performance") or {}).get("score")
    metrics: dict[str, float | None] = {}
    for name, audit_id in METRICS.items():
        value = (audits.get(audit_id) or {}).get("numericValue")
        metrics[name] = round(float(value), 4) if isinstance(value, (int, float)) else None
    return LighthouseResult(
        url=url,
        score=float(score) if isinstance(score, (int, float)) and not code else None,
        metrics=metrics,
        runtime_error=f"{code}: {error.get('message', '')}" if code else None,
        warnings=[str(w) for w in data.get("runWarnings") or []],
        report=str(output),
        version=str(data.get("lighthouseVersion", "")),
        seconds=seconds,
    )


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()
    process.wait()


def _tail(log: Path, lines: int = 15) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return "Lighthouse's last lines:\n" + "\n".join("  " + line for line in text[-lines:]) if text else ""
