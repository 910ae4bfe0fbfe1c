"""A scenario item that reaches an InfiniteWeb goal: its evaluator's outcome in the item's result.

The goal's outcome (checkpoints, dense reward, success) goes into the item's result as ``goal``
(report.json, report.html, scores/infiniteweb.py) and into a report section. The verdict: a
scenario that failed stays the candidate's failure (its partial reward is still recorded); a
scenario that passed fails when a checkpoint did not pass (the spec asks the app for its
progress flags); a broken evaluator is the oracle's error in either case, naming the goal file.
"""

from __future__ import annotations

import pytest

from ...errors import CandidateFailure
from .evaluators import EvaluatorError, GoalOutcome
from .goals import Goal

GOAL_RESULT_FIELD = "goal"
"""The ``ItemResult`` field the outcome is stored under (results.py)."""


class GoalNotReached(CandidateFailure):
    """The scenario passed but the goal's evaluator found checkpoints not passed."""


def record_goal(item: pytest.Item, goal: Goal, outcome: GoalOutcome | None, why_missing: str) -> GoalOutcome:
    """Keep the goal's outcome for the report, on any item whose pool job carried the goal (a
    scenario, a GUI judge's session); without one (the page was abandoned before the evaluator
    could run) the goal is ``not_evaluated`` for ``why_missing`` and counts 0."""
    from ...taskrun import item_extra

    if outcome is None:
        outcome = GoalOutcome(goal.id, goal.where(item.config.rootpath), "not_evaluated", reason=why_missing or "the page was gone")
    else:
        outcome.file = goal.where(item.config.rootpath)
    item_extra(item)[GOAL_RESULT_FIELD] = outcome.to_dict()
    item.add_report_section("call", "goal", outcome.describe())
    return outcome


def check_goal(outcome: GoalOutcome, where: str) -> None:
    """Raise for a broken evaluator (oracle's error) or a goal not reached (candidate's failure)."""
    __tracebackhide__ = True
    if outcome.status == "broken":
        raise EvaluatorError(f"goal {outcome.goal} ({outcome.file}): {outcome.reason}")
    if not outcome.success:
        missed = [c for c in outcome.checkpoints if not c.passed]
        what = ", ".join(f"{c.name!r} (weight {c.weight:g})" for c in missed) if missed else outcome.reason
        raise GoalNotReached(
            f"goal {outcome.goal!r} not reached: {what}; dense reward {outcome.reward:.4g}",
            where,  # the item's location; the checkpoints are in its "goal" section
        )
