"""The task's own items, collected from ``benchmarks/<task>/task.yaml``: build, boot, smoke.

They run before the oracle items of their task. A malformed task.yaml or contract becomes
a collection error of that file naming the field, never a traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests

from ..appbuild.items import app_check_items
from ..bdd.page_screenshot import record_page_screenshot
from ..errors import BackendBenchFormatError, CandidateFailure, HarnessError
from ..items import BenchItem, ItemKind
from ..outcomes import describe_failure
from ..results import PRIMARY_STATUS_PROPERTY
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
        for run_key in registry.run_keys(task.id):
            for kind in PhaseItem.KINDS:
                name = f"{kind.value}[{run_key.label}]" if run_key.label else kind.value
                yield PhaseItem.from_parent(self, name=name, kind=kind, run_key=run_key)
            yield from app_check_items(self, task, run_key)  # app.build's measured checks (--bench-app-checks)


class PhaseItem(BenchItem):
    """One lifecycle phase of one candidate: build, boot, or smoke (primary route answers)."""

    KINDS = (ItemKind.BUILD, ItemKind.BOOT, ItemKind.SMOKE)

    def runtest(self) -> None:
        __tracebackhide__ = True
        run = registry_of(self.config).for_item(self)
        if run is None:
            raise HarnessError(f"{self.nodeid}: phase item without a candidate run (collection bug)")
        if self.kind is ItemKind.BUILD:
            run.ensure_built()
            return
        service = run.ensure_started()
        if self.kind is ItemKind.SMOKE:
            url = service.base_url + run.task.primary_route
            try:
                response = requests.get(url, timeout=10)
            except requests.RequestException as err:
                raise SmokeFailure(f"GET {run.task.primary_route} got no answer: {type(err).__name__}") from None
            self.user_properties.append((PRIMARY_STATUS_PROPERTY, response.status_code))  # app.build's viability reads it
            if response.status_code >= 500:
                raise SmokeFailure(f"GET {run.task.primary_route} answered {response.status_code}", response.text[:500])
            record_page_screenshot(self, run, service.base_url)  # --bench-page-screenshot (report compare --visual)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:  # type: ignore[override]
        if isinstance(excinfo.value, (CandidateFailure, HarnessError)):
            return describe_failure(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, 0, f"{self.run_key}: {self.kind.value}"

