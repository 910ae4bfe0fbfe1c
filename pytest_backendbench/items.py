"""The kinds of task items and the base class of the items the harness collects itself.

Phase items (collect/phases.py), Gherkin scenarios (bdd/gherkin.py) and database cases
(db/checks/db_cases.py) are ``BenchItem``s: their ``kind`` and ``run_key`` are set once, at
construction, and every reader (the protocol, the database concern, the catalogue) asks
``item_kind(item)`` or the stash's ``RUN_KEY`` instead of probing ad-hoc attributes. Python
oracle functions stay ``pytest.Function``s (kind ``http``); routing gives them their run key.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from .errors import BackendBenchFormatError, TaskFormatError
from .runkey import RUN_KEY, RunKey

if TYPE_CHECKING:
    from .tasks import Task


class ItemKind(str, enum.Enum):
    """What a task item checks; the value is the report's ``kind`` field."""

    BUILD = "build"
    BOOT = "boot"
    SMOKE = "smoke"
    HTTP = "http"
    BDD = "bdd"
    SNAPSHOT = "snapshot"
    JUDGE = "judge"  # a natural-language case a model judges (judges/): its own figures, never Test.Acc
    APP_CHECK = "app_check"  # app.build's measured checks (appbuild/: sweep, Lighthouse, prompt): Q only, never Test.Acc

    @property
    def order(self) -> int:
        """Run order within one candidate: build, boot, smoke, then the oracle items."""
        return list(ItemKind).index(self)

    @property
    def is_oracle(self) -> bool:
        """Oracle items check behaviour (Test.Acc, Req.Acc); the others check viability."""
        return self in (ItemKind.HTTP, ItemKind.BDD, ItemKind.SNAPSHOT)

    @property
    def needs_service(self) -> bool:
        """Items that talk to the running service (their failures may be a crash)."""
        return self.is_oracle or self in (ItemKind.JUDGE, ItemKind.APP_CHECK)


class BenchItem(pytest.Item):
    """A task item the harness collects itself: its kind and its run are known at construction.

    ``run_key`` is None only for a scenario collected outside a benchmark session (a feature
    file run on its own); such an item belongs to no run and the run protocol ignores it.
    """

    def __init__(self, *, kind: ItemKind, run_key: RunKey | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.kind = kind
        self.run_key = run_key
        if run_key is not None:
            self.stash[RUN_KEY] = run_key


class CaseFile(pytest.File):
    """A task's file of cases that become one item per case and candidate run (database cases,
    judge cases): a malformed file reads as one line naming the file, the case and the field."""

    @staticmethod
    def run_item_name(name: str, run_key: RunKey) -> str:
        """The item's name for one candidate run: the case's name, the run's label in brackets."""
        return f"{name}[{run_key.label}]" if run_key.label else name

    def case_task(self, load: Callable[[str], Task]) -> Task:
        """The task whose oracle folder holds the file (``oracles/<task>/<folder>/<file>``), loaded
        by ``load`` (the session registry's ``task``); a malformed task is this file's collection error."""
        try:
            return load(self.path.parent.parent.name)
        except BackendBenchFormatError as err:
            raise self.CollectError(f"malformed task: {err}") from err

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        """One line for a malformed file; a full traceback only for bugs of ours."""
        if isinstance(excinfo.value, (TaskFormatError, self.CollectError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


def item_kind(item: pytest.Item) -> ItemKind:
    """The item's kind: declared by a ``BenchItem``, ``http`` for Python oracle functions."""
    return item.kind if isinstance(item, BenchItem) else ItemKind.HTTP
