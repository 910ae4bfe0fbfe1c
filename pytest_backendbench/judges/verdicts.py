"""A judge's verdict (YES / PARTIAL / NO) and the error for an answer that carries none."""

from __future__ import annotations

import re
from enum import Enum

from ..errors import HarnessError

CREDIT = {"YES": 1.0, "PARTIAL": 0.5, "NO": 0.0}
"""FullStack-Bench's and WebGen-Bench's credit: a PARTIAL counts half."""

RAW_SHOWN_CHARS = 2000
"""How much of an unusable answer an error shows (the whole answer is in the trajectory)."""


class Verdict(str, Enum):
    """What a judge concluded about one case."""

    YES = "YES"
    PARTIAL = "PARTIAL"
    NO = "NO"

    @property
    def credit(self) -> float:
        """The case's share of a point: 1, 0.5 or 0."""
        return CREDIT[self.value]


class JudgeAnswerError(HarnessError):
    """The judge model answered something that parses as no action and no verdict.

    A harness error, never a NO: the candidate did nothing wrong when the judge rambles. The
    message shows the raw answer so that a user can see what the model said.
    """

    def __init__(self, problem: str, raw: str) -> None:
        self.problem = problem
        self.raw = raw
        shown = raw if len(raw) <= RAW_SHOWN_CHARS else raw[:RAW_SHOWN_CHARS] + f"... ({len(raw)} characters)"
        super().__init__(f"the judge's answer is unusable: {problem}\n--- the raw answer ---\n{shown}")


def parse_verdict(text: str, *, allowed: tuple[Verdict, ...] = (Verdict.YES, Verdict.PARTIAL, Verdict.NO)) -> Verdict:
    """The verdict the answer ends with (the last of YES/PARTIAL/NO standing as a word).

    Judges are asked to end with their verdict; the last one counts because a model often
    repeats the question's options before it answers. None of them is a ``JudgeAnswerError``.
    """
    words = "|".join(v.value for v in allowed)
    found = re.findall(rf"(?<![A-Za-z])({words})(?![A-Za-z])", text)
    if not found:
        raise JudgeAnswerError(f"no verdict ({' / '.join(v.value for v in allowed)}) in it", text)
    return Verdict(found[-1])
