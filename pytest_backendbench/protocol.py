"""The run protocol of task items: preconditions, outcome classification, the report payload.

Registered only when a bench is in use. Before an item's fixtures run, its candidate must be
built (boot items) or started (every later item); when that failed, the item fails (the
candidate's fault) or errors (ours) in its setup, without running its fixtures. After each
phase, ``pytest_runtest_makereport`` classifies the outcome (outcomes.py) and attaches a
``PhaseRecord`` (results.py) that the recorder merges. When a run's last item is torn down,
the run is finished (service stopped, phase data recorded).
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from .collect.routing import fresh_items_ahead, malformed_problem
from .errors import CandidateFailure, HarnessError
from .http.fixtures import http_sessions_of
from .items import ItemKind, item_kind
from .markers import (
    declared_skip,
    item_ab_checks,
    item_category,
    item_cwe,
    item_cwes,
    item_requirements,
    item_tier,
    item_weight,
)
from .outcomes import Outcome, classify, describe_failure, reason
from .results import ItemResult, PhaseRecord, score_facts, security_facts
from .runkey import run_key_of
from .session import bench_session
from .taskrun import TaskRun, item_extra, session_registry

TASK_DATA_KEY = pytest.StashKey[dict[str, Any]]()
"""The finished run's phase data, set on its last item at teardown."""
ARTIFACT_PROPERTIES = ("screenshot",)
ITEM_RESULT_FIELDS = set(ItemResult.__dataclass_fields__)


def run_of(item: pytest.Item) -> TaskRun | None:
    """The TaskRun of a task item; None for the harness's own tests."""
    registry = session_registry(item.config)
    if registry is None or run_key_of(item) is None:
        return None
    return registry.for_item(item)


def precondition(run: TaskRun, kind: ItemKind, ahead: int | None = None) -> BaseException | None:
    """The failure that keeps an item from running (build/boot failed, service died), if any."""
    try:
        if kind is ItemKind.BUILD:
            return None
        if kind is ItemKind.BOOT:
            run.ensure_built()
        elif kind.needs_service and run.task.isolation == "item":
            run.ensure_fresh(ahead)
        else:
            run.ensure_started()
    except (CandidateFailure, HarnessError) as failure:
        return failure
    except Exception as err:  # noqa: BLE001 - a bug of ours or the engine's becomes a harness error
        error = HarnessError(f"{type(err).__name__}: {err}")
        error.__cause__ = err
        return error
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Refuse to set up an item whose task or candidate cannot run.

    Raising here, before pytest's own setup, keeps pytest's setup/teardown bookkeeping intact
    (a blocked item sets nothing up, and its teardown still tears down what the previous item
    left), where a hand-made protocol left the next task's first item "not torn down properly".
    """
    __tracebackhide__ = True
    malformed = malformed_problem(item)
    if malformed is not None:
        raise HarnessError(f"the task is malformed, nothing of it can run: {malformed}")
    run = run_of(item)
    if run is None:
        return
    kind = item_kind(item)
    ahead = fresh_items_ahead(item)
    if ahead is not None:
        run.fresh_ahead = ahead
    blocker = precondition(run, kind, ahead)
    if blocker is not None:
        raise blocker.with_traceback(None)  # shared by many items: never let its traceback grow
    if kind.needs_service and run.task.isolation == "item":
        item_extra(item)["boot_seconds"] = run.boot_seconds  # the boot cost this item paid


def _finish_run_if_last(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    run = run_of(item)
    if run is None:
        return
    if nextitem is None or run_key_of(nextitem) != run_key_of(item):
        item.stash[TASK_DATA_KEY] = run.finish()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    """After the item's own teardown: finish its run when it was the run's last item."""
    try:
        return (yield)
    finally:
        _finish_run_if_last(item, nextitem)


def _oracle_dirs(item: pytest.Item, run: TaskRun) -> tuple[Path, ...]:
    """The task's oracle folder, and the folder of the module the item really runs: in
    importlib mode pytest reuses a module already in ``sys.modules`` under the same name, which
    an earlier in-process session (a catalogue, a pytester run) may have loaded from a copy."""
    dirs = [run.task.oracle_dir.resolve()]
    module_file = getattr(getattr(item, "module", None), "__file__", None)
    if module_file:
        dirs.append(Path(module_file).resolve().parent)
    return tuple(dirs)


def _oracle_location(excinfo: pytest.ExceptionInfo[BaseException], run: TaskRun) -> str:
    for entry in reversed(excinfo.traceback):
        if Path(str(entry.path)).is_relative_to(run.task.oracle_dir):
            return f"at {entry.path}:{entry.lineno + 1}: {str(entry.statement).strip()}"
    return ""


def skip_reason(report: pytest.TestReport) -> str:
    """The reason pytest recorded for a skip (its longrepr is (path, line, reason))."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr or "no reason given")


def phase_record(item: pytest.Item, report: pytest.TestReport, call: pytest.CallInfo[None], run: TaskRun) -> PhaseRecord:
    """Classify one phase and describe it for the recorder (and fix its longrepr)."""
    import requests

    kind = item_kind(item)
    outcome = Outcome.PASSED
    message = ""
    phase = "tests"
    if report.skipped:
        outcome = Outcome.SKIPPED
        if kind.is_oracle and not declared_skip(item):
            # a skip the task never declared would be a free pass; it is the oracle's fault
            outcome = Outcome.ERROR
            message = f"oracle item skipped without the task declaring why ({skip_reason(report)}); declare it with @pytest.mark.skip(reason=...) or skipif, or fix what skipped it"
    elif report.failed and call.excinfo is not None:
        exc = call.excinfo.value
        service_url = run.service.base_url if run.service is not None else None
        outcome = classify(call.excinfo, _oracle_dirs(item, run), service_url)
        alive: bool | None = None
        if outcome is Outcome.FAILED and run.service is not None and kind.needs_service:
            try:
                run.check_alive()
            except CandidateFailure:
                pass
            alive = run.service.alive()
        message = reason(exc, alive, run.service.exit_reason() if alive is False and run.service is not None else None)
        if isinstance(exc, CandidateFailure):
            phase = exc.phase.value
            if kind.needs_service or report.when == "setup":
                report.longrepr = describe_failure(exc)
        elif isinstance(exc, HarnessError):
            report.longrepr = describe_failure(exc)
        elif isinstance(exc, requests.RequestException) and outcome is Outcome.FAILED:
            report.longrepr = f"{message}\n{_oracle_location(call.excinfo, run)}"
    sessions: list[Any] = http_sessions_of(item)
    stored = item_extra(item)
    extra = dict(stored)
    found_cwes, inconclusive = security_facts(item.user_properties)
    partial, primary_status = score_facts(item.user_properties)
    result = ItemResult(
        nodeid=item.nodeid,
        task=run.task.id,
        candidate=run.key,
        kind=kind.value,
        outcome=outcome.value,
        phase=phase,
        message=message,
        requirements=item_requirements(item),
        category=item_category(item),
        cwe=item_cwe(item),
        cwes=item_cwes(item),
        found_cwes=found_cwes,
        inconclusive=inconclusive,
        partial=partial,
        primary_status=primary_status,
        ab_checks=item_ab_checks(item),
        tier=item_tier(item),
        weight=item_weight(item),
        requests=sum(s.request_count for s in sessions),
        contract_checked=sum(s.checked for s in sessions),
        contract_violations=[v for s in sessions for v in s.violations][:20],
        artifacts={k: str(v) for k, v in item.user_properties if k in ARTIFACT_PROPERTIES},
    )
    for key in [k for k in extra if k in ITEM_RESULT_FIELDS]:
        setattr(result, key, extra.pop(key))
    task_data = None
    if report.when == "teardown" and TASK_DATA_KEY in item.stash:
        finished: dict[str, Any] = item.stash[TASK_DATA_KEY]
        task_data = {**finished, "generation": getattr(run.candidate, "generation", {}) or {}}
    return PhaseRecord(result, report.when or "call", run.run_key.label, task_data, extra)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Attach the phase's ``PhaseRecord`` (as a plain dict: it travels from xdist workers)."""
    report = yield
    run = run_of(item)
    if run is None:
        if malformed_problem(item) is not None and call.excinfo is not None:
            report.longrepr = describe_failure(call.excinfo.value)
        return report
    report.backendbench = phase_record(item, report, call, run).to_dict()  # type: ignore[attr-defined]
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> tuple[str, str, str] | None:
    """Show the verdict, not the phase: a candidate's failure in setup is FAILED, our fault in call is ERROR."""
    data = getattr(report, "backendbench", None)
    if not isinstance(data, dict) or not report.failed:
        return None
    outcome = data["result"]["outcome"]
    if outcome == Outcome.ERROR.value and report.when == "call":
        return "error", "E", "ERROR"
    if outcome == Outcome.FAILED.value and report.when == "setup":
        return "failed", "F", "FAILED"
    return None


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Stop every service and sidecar (and wait for them) before the session ends."""
    registry = session_registry(session.config)
    if registry is not None:
        registry.close()
    bench = bench_session(session.config)
    if bench is not None and bench.runtime_name == "docker" and not hasattr(session.config, "workerinput"):
        _reap_session_objects(bench.session_id)


def _reap_session_objects(session_id: str) -> None:
    """Last line of defence on the controller: remove whatever a worker could not (killed, crashed)."""
    try:
        from .runtime.cleanup import remove_session_objects

        remove_session_objects(None, session_id)
    except (HarnessError, ImportError):
        pass  # no engine to clean: nothing of ours can be running there
