"""InfiniteWeb: the dense reward and binary success of task goals (weighted-checkpoint evaluators).

Per goal run (a scenario item carrying a goal): dense reward = Σ weight · passed over the
evaluator's checkpoints (weights sum to 1), success = every checkpoint passed. A goal whose
evaluator could not run (broken evaluator, page abandoned) counts 0 and not reached, as a harness
error counts "not passed" everywhere else. Per task: the mean reward and the success rate over
its goals; over the run: the same pooled over every goal run, and per goal id. Goals a GUI
judge's session reached (``agent_*``) are the agent's reward, reported apart.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from statistics import mean
from typing import Any

from ..results import ItemResult, TaskResult
from .records import counted, ratio


def goal_runs(items: Iterable[ItemResult]) -> list[dict[str, Any]]:
    """The goal outcomes of the items that carry one."""
    return [i.goal for i in items if isinstance(i.goal, dict)]


def reward_of(goal: dict[str, Any]) -> float:
    """The run's dense reward (0 unless the evaluator ran)."""
    return float(goal.get("reward") or 0.0) if goal.get("status") == "evaluated" else 0.0


def task_goal_figures(result: TaskResult) -> dict[str, Any]:
    """A task's goals: how many, their mean dense reward and success rate (None without goals)."""
    goals = goal_runs(counted(result))
    return {
        "goals": len(goals),
        "goal_reward": mean(reward_of(g) for g in goals) if goals else None,
        "goal_success": ratio(sum(1 for g in goals if g.get("success")), len(goals)),
    }


def agent_goal_runs(result: TaskResult) -> list[dict[str, Any]]:
    """Goals a GUI judge's session reached (a frontend judge case naming a goal): the agent's
    reward, InfiniteWeb's use of its evaluators, kept apart from the scenarios' (the app's)."""
    return goal_runs(i for i in result.items if i.kind == "judge")


def infiniteweb(results: list[TaskResult]) -> dict[str, Any]:
    """Mean dense reward and success rate over every goal run of the run, and per goal; the
    runs of GUI judges (``agent_*``) apart."""
    agent = [g for r in results for g in agent_goal_runs(r)]
    runs = [(r.task, g) for r in results for g in goal_runs(counted(r))]
    by_goal: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for task, goal in runs:
        by_goal[f"{task}/{goal.get('goal')}"].append(goal)
    return {
        "goal_runs": len(runs),
        "mean_reward": mean(reward_of(g) for _, g in runs) if runs else None,
        "success_rate": ratio(sum(1 for _, g in runs if g.get("success")), len(runs)),
        "not_evaluated": sum(1 for _, g in runs if g.get("status") != "evaluated"),
        "agent_goal_runs": len(agent),
        "agent_mean_reward": mean(reward_of(g) for g in agent) if agent else None,
        "agent_success_rate": ratio(sum(1 for g in agent if g.get("success")), len(agent)),
        "by_goal": {
            key: {"runs": len(goals), "mean_reward": mean(reward_of(g) for g in goals), "success_rate": ratio(sum(1 for g in goals if g.get("success")), len(goals))}
            for key, goals in sorted(by_goal.items())
        },
    }


def goal_rows(document: dict[str, Any]) -> list[tuple[str, str, str, str, str, str]]:
    """One row per goal run of a report (report.html's goals table): candidate, goal, file,
    dense reward, success, and each checkpoint's outcome (or why there are none)."""
    rows = []
    for task in document["tasks"]:
        for item in task["items"]:
            goal = item.get("goal")
            if not isinstance(goal, dict):
                continue
            if goal.get("status") == "evaluated":
                checks = "; ".join(f"{'✓' if c['passed'] else '✗'} {c['name']} ({c['weight']:g})" for c in goal.get("checkpoints") or [])
            else:
                checks = f"{str(goal.get('status', '')).replace('_', ' ')}: {goal.get('reason', '')}"
            rows.append((task["candidate"], str(goal.get("goal")), str(goal.get("file")), f"{reward_of(goal):.3f}", "yes" if goal.get("success") else "no", checks))
    return rows
