"""The run's judge (``--bench-judge``): what judge_hooks.py sets at configure time and every judge reads.

Apart from judges/items.py so that the judges themselves (gui_item.py) and other checks that
ask a judge (appbuild/prompt.py) can read it without importing the item class.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from .model import JudgeModel


@dataclass
class JudgeContext:
    """The run's judge (``--bench-judge``), set at configure time by judge_hooks.py."""

    name: str
    model_for_repeat: Callable[[int], JudgeModel]  # repetition (0 when not repeated) -> model (seed shifted)
    max_steps: int = 15
    deadline_seconds: float = 300.0
    price: tuple[float, float] | None = None  # USD per million input / output tokens
    extra: dict[str, Any] = field(default_factory=dict)


JUDGE_CONTEXT_KEY = pytest.StashKey[JudgeContext | None]()


def judge_context(config: pytest.Config) -> JudgeContext | None:
    """The run's judge, or None when no ``--bench-judge`` was given."""
    return config.stash.get(JUDGE_CONTEXT_KEY, None)


def set_judge_context(config: pytest.Config, context: JudgeContext | None) -> None:
    """Record the run's judge (judge_hooks.py at configure time; None: no ``--bench-judge``)."""
    config.stash[JUDGE_CONTEXT_KEY] = context
