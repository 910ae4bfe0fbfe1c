"""Settings of app.build's measured checks (part of config.py's table).

Cheap to import on purpose: it is read at every pytest start.
"""

from __future__ import annotations

from ..config import Setting
from ..setting_values import count, positive_count, seconds

MEASURES = ("sweep", "lighthouse")
"""What ``--bench-app-checks`` can turn on: AB-06 (the clickable sweep) and AB-07 (Lighthouse)."""
DEFAULT_SWEEP_DEPTH = 2
DEFAULT_SWEEP_BUDGET = 25
DEFAULT_LIGHTHOUSE_TIMEOUT_S = 120.0
LIGHTHOUSE_VERSION = "12.2.3"
"""The Lighthouse release the thresholds and tests were made with (``npm install -g lighthouse@12.2.3``)."""


def parse_measures(text: str) -> tuple[str, ...]:
    """off, all, or a comma-separated list of sweep, lighthouse"""
    words = [w.strip().lower() for w in text.split(",") if w.strip()]
    if words in ([], ["off"]):
        return ()
    if words in (["all"], ["on"]):
        return MEASURES
    unknown = [w for w in words if w not in MEASURES]
    if unknown:
        raise ValueError(text)
    return tuple(m for m in MEASURES if m in words)


def _measures_text(text: str) -> str:
    """off, all, or a comma-separated list of sweep, lighthouse (kept as text; items.py reads it with parse_measures)"""
    return ",".join(parse_measures(text)) or "off"


SETTINGS: tuple[Setting, ...] = (
    Setting("app_checks", "--bench-app-checks", _measures_text, "off", group="app_build", metavar="off|all|sweep,lighthouse",
            help="app.build's measured checks for tasks with a browser UI: sweep (AB-06, clickable sweep), lighthouse (AB-07, performance), all (both, and AB-02 prompt correspondence when --bench-judge names a model); off by default: they add tens of seconds to every full-stack candidate"),
    Setting("sweep_depth", "--bench-sweep-depth", count, DEFAULT_SWEEP_DEPTH, group="app_build", metavar="N",
            help="AB-06: how many clicks deep the sweep goes from the primary route (0: only the controls the primary route shows)"),
    Setting("sweep_budget", "--bench-sweep-budget", positive_count, DEFAULT_SWEEP_BUDGET, group="app_build", metavar="N",
            help="AB-06: at most this many controls clicked per candidate"),
    Setting("lighthouse", "--bench-lighthouse", default=None, group="app_build", metavar="PATH",
            help=f"AB-07: the lighthouse command (default: lighthouse on PATH; npm install -g lighthouse@{LIGHTHOUSE_VERSION})"),
    Setting("lighthouse_timeout", "--bench-lighthouse-timeout", seconds, DEFAULT_LIGHTHOUSE_TIMEOUT_S, group="app_build", metavar="S",
            help="AB-07: seconds one Lighthouse run may take; past it the check is a harness error"),
)
