"""Extension points: generators, result observers and runtimes plug in here (pluggy).

Hooks are always called with keyword arguments, so implementations may accept a subset
and specs can gain arguments later.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .agents.loop import AgentStep
    from .results import TaskResult
    from .runtime.base import Runtime
    from .tasks import VisibleTask


@pytest.hookspec(firstresult=True)
def pytest_backendbench_generate(task: VisibleTask, workspace: Path, model: str) -> dict[str, Any] | None:
    """Write a candidate for ``task`` into ``workspace`` using only the task's visible material.

    Return generation metadata (model, tokens_in, tokens_out, cost_usd, seconds) or None if
    this implementation does not handle ``model``. The first non-None answer wins.
    """


@pytest.hookspec
def pytest_backendbench_task_result(task: str, result: TaskResult) -> None:
    """Observe a finished task (loggers, trackers, RL reward collectors)."""


@pytest.hookspec(firstresult=True)
def pytest_backendbench_runtime(config: pytest.Config) -> Runtime | None:
    """Supply a runtime other than the built-in ``process`` and ``docker`` ones."""


@pytest.hookspec
def pytest_backendbench_agent_step(task: VisibleTask, sample: str, step: AgentStep) -> bool | None:
    """Observe one step of an ``agent:`` run (the model's reply, its actions and observations).

    ``sample`` is ``""`` or ``sample-k``; ``step`` carries the step number, actions, the
    observations as shown to the model, tokens, cost, seconds and verify calls so far. Return
    True to stop the run after this step (exit reason ``stopped``; the workspace is still
    judged), e.g. to enforce a budget of your own. Called on the thread generating the sample.
    """
