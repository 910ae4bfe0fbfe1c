"""The task's own items, collected from ``benchmarks/<task>/task.yaml``: build, boot, smoke.

They run before the oracle items of their task. A malformed task.yaml or contract becomes
a collection error of that file naming the field, never a traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests

from ..errors import BackendBenchFormatError, CandidateFailure, HarnessError
from ..outcomes import describe_failure
from ..runkey import RUN_KEY, RunKey
from ..taskrun import registry_of


class SmokeFailure(CandidateFailure):
    """The service booted but its primary route does not answer (app.build's viability)."""


class TaskFile(pytest.File):
    """``benchmarks/<task>/task.yaml``: validates the task and yields its phase items per sample."""

    def collect(self) -> Iterator[pytest.Item]:
        registry = registry_of(self.config)
        task_id = self.path.parent.name
        try:
            task = registry.task(task_id)
            registry.contract(task_id)
        except BackendBenchFormatError as err:
            raise self.CollectError(f"malformed task: {err}") from err
        for sample in registry.samples(task.id):
            for kind in PhaseItem.KINDS:
                name = f"{kind}[{sample}]" if sample else kind
                yield PhaseItem.from_parent(self, name=name, kind=kind, task_id=task.id, sample=sample)


class PhaseItem(pytest.Item):
    """One lifecycle phase of one candidate: build, boot, or smoke (primary route answers)."""

    KINDS = ("build", "boot", "smoke")

    def __init__(self, *, kind: str, task_id: str, sample: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.backendbench_kind = kind
        self.task_id = task_id
        self.sample = sample
        self.stash[RUN_KEY] = RunKey(task_id, sample)

    def runtest(self) -> None:
        __tracebackhide__ = True
        run = registry_of(self.config).for_item(self)
        if run is None:
            raise HarnessError(f"{self.nodeid}: phase item without a candidate run (collection bug)")
        if self.backendbench_kind == "build":
            run.ensure_built()
            return
        service = run.ensure_started()
        if self.backendbench_kind == "smoke":
            url = service.base_url + run.task.primary_route
            try:
                response = requests.get(url, timeout=10)
            except requests.RequestException as err:
                raise SmokeFailure(f"GET {run.task.primary_route} got no answer: {type(err).__name__}") from None
            if response.status_code >= 500:
                raise SmokeFailure(f"GET {run.task.primary_route} answered {response.status_code}", response.text[:500])

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:  # type: ignore[override]
        if isinstance(excinfo.value, (CandidateFailure, HarnessError)):
            return describe_failure(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, 0, f"{self.stash[RUN_KEY]}: {self.backendbench_kind}"

