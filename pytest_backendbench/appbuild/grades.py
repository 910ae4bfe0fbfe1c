"""app.build's checks, its grades, and the thresholds that turn our measurements into them.

app.build (arXiv 2509.03310, section 4.5) grades six checks PASS / WARN / FAIL (or NA when a
check does not apply); s = 1 / 0.5 / 0, except AB-07 whose s is continuous in [0, 1]. The
thresholds below are ours (the paper leaves them to its human assessors); docs/appbuild.md
states them with the reasons.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

BOOT, PROMPT, CREATE, VIEW_EDIT, SWEEP, PERFORMANCE = "AB-01", "AB-02", "AB-03", "AB-04", "AB-06", "AB-07"
CHECKS: dict[str, str] = {
    BOOT: "Boot & home",
    PROMPT: "Prompt correspondence",
    CREATE: "Create",
    VIEW_EDIT: "View/Edit",
    SWEEP: "Clickable sweep",
    PERFORMANCE: "Performance",
}
"""app.build's six checks (its Table 2); all weigh the same before NA re-normalisation."""
VIABILITY_GATES = (BOOT, PROMPT)
"""V = 1 when none of these is FAIL (app.build's equation 1)."""


class Grade(str, enum.Enum):
    """A check's verdict for one app; ``ERROR`` is ours: the harness could not measure it."""

    PASS = "PASS"
    WARN = "WARN"
    FAIL = "FAIL"
    NA = "NA"
    ERROR = "ERROR"

    @property
    def score(self) -> float | None:
        """app.build's s: PASS 1, WARN 0.5, FAIL 0; an error counts 0 (fixed denominators); NA None (dropped)."""
        return {Grade.PASS: 1.0, Grade.WARN: 0.5, Grade.FAIL: 0.0, Grade.ERROR: 0.0}.get(self)


def check_id_problem(check: str) -> str | None:
    """Why ``check`` is not an app.build check id a task may tag items with, or None."""
    if check in (CREATE, VIEW_EDIT):
        return None
    if check in CHECKS:
        return f"{check} is measured by the harness itself; tag items only with {CREATE} (create) or {VIEW_EDIT} (view/edit)"
    return f"{check!r} is not an app.build check; tag items with {CREATE} (create) or {VIEW_EDIT} (view/edit)"


def grade_of_items(outcomes: Iterable[bool]) -> Grade:
    """AB-03/AB-04 from their tagged items: PASS all passed, WARN some did, FAIL none did, NA no items."""
    seen = list(outcomes)
    if not seen:
        return Grade.NA
    return Grade.PASS if all(seen) else Grade.WARN if any(seen) else Grade.FAIL


# --- AB-06: the clickable sweep ----------------------------------------------------------------

SWEEP_DEAD_SHARE_FAIL = 0.5
"""A sweep FAILs when at least this share of the clicked controls did nothing visible."""


@dataclass(frozen=True)
class SweepCounts:
    """What a sweep found, per clicked element (an element counts once in each class it hit)."""

    clicked: int
    broken: int
    """Elements whose click raised an uncaught error, got a same-origin 5xx, reached an error page or hung the page."""
    console_errors: int
    dead: int
    """Elements whose click changed nothing: no DOM change, navigation, request, dialog, window or download."""


def sweep_grade(counts: SweepCounts) -> Grade:
    """FAIL: any broken element, or most controls dead; WARN: any console error or dead control; PASS: none; NA: nothing to click.

    app.build lists "unbound handlers, non-working controls" among its failure modes: one
    control that throws or errors on the server is a FAIL, as a user meets it at once; a console
    error or a control without a visible effect is a WARN (it may be intended: a toggle with no
    DOM change, a logged warning).
    """
    if counts.broken:
        return Grade.FAIL  # a primary route that hangs fails before anything is clicked
    if counts.clicked == 0:
        return Grade.NA
    if counts.dead / counts.clicked >= SWEEP_DEAD_SHARE_FAIL:
        return Grade.FAIL
    if counts.console_errors or counts.dead:
        return Grade.WARN
    return Grade.PASS


# --- AB-07: Lighthouse's performance score -----------------------------------------------------

PERFORMANCE_PASS = 0.9
"""Lighthouse's own bands: 0.90-1 good (green) is PASS ..."""
PERFORMANCE_WARN = 0.5
"""... 0.50-0.89 needs improvement (orange) is WARN, below 0.50 poor (red) is FAIL."""


def performance_grade(score: float) -> Grade:
    """PASS / WARN / FAIL by Lighthouse's colour bands (Q uses the score itself, as app.build does)."""
    if score >= PERFORMANCE_PASS:
        return Grade.PASS
    return Grade.WARN if score >= PERFORMANCE_WARN else Grade.FAIL


# --- AB-02: the judge's answer -----------------------------------------------------------------


def parse_grade(text: str) -> Grade | None:
    """The first PASS / WARN / FAIL word of a judge's answer (None when it has none)."""
    import re

    match = re.search(r"\b(PASS|WARN|FAIL)\b", text.upper())
    return Grade(match.group(1)) if match else None
