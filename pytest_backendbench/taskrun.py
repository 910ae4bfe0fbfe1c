"""Per-worker task lifecycle: build once, boot once, share the service, stop at the task's end.

Each (task, candidate sample) gets one ``TaskRun``. Build and boot happen lazily, so items
selected with ``-k`` or ``--lf`` still get a running service; the first failure is sticky
and every later item of the task fails with that phase instead of retrying.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .candidates import Candidate, CandidateLayout, MissingCandidate
from .errors import (
    BackendBenchFormatError,
    BuildFailure,
    CandidateFailure,
    CandidateMissing,
    HarnessError,
    ServiceCrashed,
)
from .openapi_contract import Contract
from .results import SPREAD_ITEMS_FIELD
from .runkey import RunKey, run_key_of, run_label
from .runtime.base import CandidateImage, RenewableService, RunningService, Runtime, WarmableService, load_mock
from .runtime.static import StaticSiteRuntime, is_static_site
from .tasks import LENIENT_KEY, Task, TaskCatalog, ValidContracts, load_contract

ITEM_EXTRA_KEY = pytest.StashKey[dict[str, Any]]()
"""Extra per-item facts other concerns record (db_effects, db_valid, artifacts): merged into the report."""

SERVICE_LOG_LINES = 200


@dataclass
class TaskRun:
    """One candidate's lifecycle within this worker."""

    task: Task
    candidate: Candidate | MissingCandidate | CandidateFailure
    runtime_factory: Callable[[], Runtime]
    mocks_dir: Path
    run_key: RunKey
    contract_source: Callable[[], Contract | None] = lambda: None
    image: CandidateImage | None = None
    service: RunningService | None = None
    failure: CandidateFailure | None = None
    error: HarnessError | None = None
    phase_data: dict[str, Any] = field(default_factory=dict)
    boot_seconds: float | None = None  # how long starting the current service took (wall clock)
    service_met: bool = False  # an item has met the current service (``isolation: item`` starts another)
    spread_items: int = 0  # the run's items in this session when they spread over workers (0: one worker runs them all)
    fresh_ahead: int | None = None  # ``isolation: item``: items of this run due next on this worker that want a fresh service

    @property
    def key(self) -> str:
        """The run key as the report writes it: ``task`` or ``task@<run label>``."""
        return str(self.run_key)

    @property
    def label(self) -> str:
        """The run label (sample, repetition; "" for a lone candidate run once)."""
        return self.run_key.label

    @property
    def sample(self) -> str:
        """The candidate sample this run evaluates ("" for a lone candidate)."""
        return self.run_key.sample

    @property
    def repeat(self) -> int:
        """Which repetition of the candidate this is (0 when runs are not repeated)."""
        return self.run_key.repeat

    def _fail(self, failure: CandidateFailure) -> CandidateFailure:
        """Record the candidate's failure: every later item of the run fails with it (``_blocked``)."""
        self.failure = failure
        self.phase_data.update(phase_failed=failure.phase.value, failure_reason=failure.title)
        return failure

    def _errored(self, error: HarnessError) -> HarnessError:
        """Record a harness error: every later item of the run ends in it (``_blocked``)."""
        self.error = error
        return error

    @contextlib.contextmanager
    def _sticky(self) -> Iterator[None]:
        """A candidate failure or harness error raised in the block sticks to the run: recorded
        here, it is raised again for every later item of the run (``_blocked``)."""
        __tracebackhide__ = True
        try:
            yield
        except CandidateFailure as failure:
            raise self._fail(failure)
        except HarnessError as err:
            self._errored(err)
            raise

    def _blocked(self) -> None:
        __tracebackhide__ = True
        # a sticky failure is raised again for every later item: drop the traceback each time,
        # or it grows with every raise and formatting it gets slower item after item
        if self.error is not None:
            raise self.error.with_traceback(None)
        if self.failure is not None:
            raise self.failure.with_traceback(None)

    def ensure_built(self) -> CandidateImage:
        """Build once; re-raise the sticky failure on every later call."""
        __tracebackhide__ = True
        self._blocked()
        if self.image is not None:
            return self.image
        candidate = self.candidate
        if isinstance(candidate, CandidateFailure):
            raise self._fail(candidate)
        if isinstance(candidate, MissingCandidate):
            raise self._fail(CandidateMissing(f"no candidate for task {self.task.id!r}", f"looked for {candidate.searched}"))
        if candidate.generation.get("error_kind") == "harness":
            # the model's server failed, not the model: every item is an error, re-runnable
            raise self._errored(HarnessError(
                f"generation of {self.key} failed for a reason outside the model: {candidate.generation.get('error', '?')}; "
                "re-run it with --bench-generate --bench-resume"
            ))
        with self._sticky():
            try:
                self.image = self.runtime_factory().build(candidate, self.task)
            except BackendBenchFormatError as err:
                raise BuildFailure("the candidate is malformed", str(err)) from err
        self.phase_data.update(
            candidate_path=str(candidate.path),
            content_hash=self.image.content_hash,
            image=self.image.ref,
            image_digest=self.image.digest,
            build_cached=self.image.cached,
            build_seconds=round(self.image.build_seconds, 3),
        )
        return self.image

    def ensure_started(self) -> RunningService:
        """Boot once (after building); a service that died since fails the caller."""
        __tracebackhide__ = True
        self.ensure_built()
        if self.service is None:
            try:
                mocks = [load_mock(self.mocks_dir, name) for name in self.task.mocks]
            except BackendBenchFormatError as err:
                raise self._errored(HarnessError(str(err))) from err
            if self.image is None:  # ensure_built returned: only a bug of ours gets here
                raise HarnessError(f"{self.key}: built but no image recorded")
            started = time.monotonic()
            with self._sticky():
                self.service = self.runtime_factory().start(self.image, self.task, mocks)
            self.boot_seconds = round(time.monotonic() - started, 3)
            self.service_met = False
            self.phase_data.setdefault("ready_seconds", round(self.service.ready_seconds, 3))
            if self.task.isolation == "item" and self.fresh_ahead:
                self._warm(self.fresh_ahead - 1)  # the first of them meets this service
        self.check_alive()
        return self.service

    def ensure_fresh(self, ahead: int | None = None) -> RunningService:
        """``isolation: item``: a service no earlier item has met (renewed in place where the
        runtime can, else the previous one is stopped and another started). ``ahead``: how many
        later items of this run this worker will run next (None: unknown); a service that can
        boot their fresh instances in the background meanwhile is asked to."""
        __tracebackhide__ = True
        self._blocked()
        if self.service is not None and self.service_met:
            if isinstance(self.service, RenewableService) and self._renew(self.service):
                self.check_alive()
                self._warm(ahead)
                return self.service
            service, self.service = self.service, None
            service.stop()
        service = self.ensure_started()
        self.service_met = True
        self._warm(ahead)
        return service

    def _warm(self, ahead: int | None) -> None:
        if isinstance(self.service, WarmableService) and ahead != 0:
            self.service.warm(ahead)

    def _renew(self, service: RenewableService) -> bool:
        __tracebackhide__ = True
        started = time.monotonic()
        with self._sticky():
            renewed = service.renew()
        if renewed:
            self.boot_seconds = round(time.monotonic() - started, 3)
        return renewed

    def check_alive(self) -> None:
        """Turn a service that stopped mid-run into a sticky failure for the rest of the task."""
        __tracebackhide__ = True
        self._blocked()
        if self.service is not None and not self.service.alive():
            reason = self.service.exit_reason() or "stopped"
            crash = ServiceCrashed(f"the service stopped mid-run: {reason}", _tail(self.service.logs(tail=30)))
            if self.task.isolation == "item":
                raise crash  # only this item's container: the next item meets a fresh one
            raise self._fail(crash)

    def contract(self) -> Contract | None:
        """The task's contract validator (None for tasks without openapi.yaml)."""
        return self.contract_source()

    def finish(self) -> dict[str, Any]:
        """Stop the service and return the task-level facts for the report."""
        if self.service is not None:
            try:
                self.phase_data["service_log"] = self.service.logs(tail=SERVICE_LOG_LINES)
            finally:
                self.service.stop()
                self.service = None
        self.phase_data["finished"] = True
        if self.spread_items:
            self.phase_data[SPREAD_ITEMS_FIELD] = self.spread_items
        return dict(self.phase_data)


def _tail(text: str) -> str:
    lines = text.strip().splitlines()
    return "service log (last lines):\n" + "\n".join("  " + line for line in lines) if lines else "service log: (empty)"


class TaskRunRegistry:
    """All TaskRuns of this worker, the runtime they share, and the task catalogue."""

    def __init__(
        self,
        catalog: TaskCatalog,
        layout: CandidateLayout | None,
        runtime_factory: Callable[[], Runtime],
        artifacts_dir: Path,
        repeats: int = 1,
        valid_contracts: ValidContracts | None = None,
    ) -> None:
        self.repeats = repeats
        self.valid_contracts = valid_contracts
        self.catalog = catalog
        self.layout = layout
        self._runtime_factory = runtime_factory
        self._runtime: Runtime | None = None
        self._static: StaticSiteRuntime | None = None
        self.artifacts_dir = artifacts_dir
        self.runs: dict[RunKey, TaskRun] = {}
        self._tasks: dict[str, Task | BackendBenchFormatError] = {}
        self._contracts: dict[str, Contract | None | BackendBenchFormatError] = {}

    def static_runtime(self) -> Runtime:
        """The server for static frontend candidates (files only), whatever the main runtime."""
        if self._static is None:
            self._static = StaticSiteRuntime()
        return self._static

    def runtime(self) -> Runtime:
        """The runtime, created on first use (no daemon is contacted before a build)."""
        if self._runtime is None:
            self._runtime = self._runtime_factory()
        return self._runtime

    def task(self, task_id: str) -> Task:
        """Load a task once; a malformed one raises the same format error every time."""
        if task_id not in self._tasks:
            try:
                self._tasks[task_id] = self.catalog.load(task_id)
            except BackendBenchFormatError as err:
                self._tasks[task_id] = err
        loaded = self._tasks[task_id]
        if isinstance(loaded, BackendBenchFormatError):
            raise loaded
        return loaded

    def contract(self, task_id: str) -> Contract | None:
        """The task's contract, parsed, validated and compiled once per worker for all its runs.

        A malformed task or contract raises the same format error every time.
        """
        if task_id not in self._contracts:
            try:
                spec = load_contract(self.task(task_id), self.valid_contracts)
                # a contract loaded despite failing validation (openapi_strict: false) checks nothing
                self._contracts[task_id] = Contract(spec) if spec is not None and not spec.get(LENIENT_KEY) else None
            except BackendBenchFormatError as err:
                self._contracts[task_id] = err
        loaded = self._contracts[task_id]
        if isinstance(loaded, BackendBenchFormatError):
            raise loaded
        return loaded

    def samples(self, task_id: str) -> list[str]:
        """The run labels of a task: one per candidate sample and repetition ([""] for one run)."""
        samples = self.layout.samples(task_id) if self.layout else [""]
        if self.repeats <= 1:
            return samples
        return [run_label(sample, repeat) for sample in samples for repeat in range(1, self.repeats + 1)]

    def run(self, key: RunKey) -> TaskRun:
        """The TaskRun of ``key``, created on first use."""
        if key not in self.runs:
            task = self.task(key.task)
            candidate: Candidate | MissingCandidate | CandidateFailure
            if self.layout is None:
                raise HarnessError(f"{key}: no candidate layout in this session (--candidate or --bench-generate resolves one)")
            try:
                candidate = self.layout.candidate(key.task, key.sample)
            except BackendBenchFormatError as err:
                candidate = BuildFailure("the candidate is malformed", str(err))
            runtime = self.runtime
            if isinstance(candidate, Candidate) and is_static_site(candidate, task):
                runtime = self.static_runtime
            self.runs[key] = TaskRun(task, candidate, runtime, self.catalog.mocks_dir, key, lambda: self.contract(key.task))
        return self.runs[key]

    def run_keys(self, task_id: str) -> list[RunKey]:
        """The runs of a task: one per candidate sample and repetition (one key for one run)."""
        return [RunKey(task_id, label) for label in self.samples(task_id)]

    def for_item(self, item: pytest.Item) -> TaskRun | None:
        """The TaskRun an item belongs to, None for the harness's own tests."""
        key = run_key_of(item)
        if key is None:
            return None
        return self.run(key)

    def close(self) -> None:
        """Stop every service and let the runtime remove all it created."""
        failed: list[str] = []
        for key, run in self.runs.items():
            try:
                run.finish()
            except Exception as err:  # noqa: BLE001 - teardown must reach the runtime's close whatever one run did
                failed.append(f"{key}: {type(err).__name__}: {err}")
        for runtime in (self._runtime, self._static):
            if runtime is not None:
                runtime.close()
        if failed:
            # not raised: close runs at session end and exit; the runtime's close removed what was left
            warnings.warn(
                pytest.PytestWarning("stopping a service failed (its runtime removed what was left): " + "; ".join(failed)), stacklevel=2
            )


REGISTRY_KEY = pytest.StashKey[TaskRunRegistry]()


def session_registry(config: pytest.Config) -> TaskRunRegistry | None:
    """The session's registry, None without a benchmark session (the one reader of ``REGISTRY_KEY``)."""
    return config.stash.get(REGISTRY_KEY, None)


def registry_of(config: pytest.Config) -> TaskRunRegistry:
    """The session's registry; a clear error when used without --candidate."""
    registry = session_registry(config)
    if registry is None:
        raise HarnessError("backendbench task items need --candidate=DIR")
    return registry


def item_extra(item: pytest.Item) -> dict[str, Any]:
    """The item's extra facts for its report record (``ITEM_EXTRA_KEY``), created empty on first use."""
    return item.stash.setdefault(ITEM_EXTRA_KEY, {})


def base_url_for(item: pytest.Item) -> str:
    """The running service's base URL for a task item (boots it if needed)."""
    __tracebackhide__ = True
    run = registry_of(item.config).for_item(item)
    if run is None:
        raise HarnessError(f"{item.nodeid} does not belong to a benchmark task")
    return run.ensure_started().base_url


def artifact_dir_for(item: pytest.Item) -> Path:
    """Where an item may write files that the report links (screenshots, dumps)."""
    registry = registry_of(item.config)
    key = run_key_of(item)
    path = registry.artifacts_dir / (key.folder_name if key is not None else "_")
    path.mkdir(parents=True, exist_ok=True)
    return path
