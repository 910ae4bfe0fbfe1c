"""TaskRun's sticky failures and the registry's teardown, against a fake runtime (no engine).

In the manner of xdist's test_dsession.py: the collaborators are small fakes that record what
they were asked, so the lifecycle rules are checked in milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pytest_backendbench.candidates import Candidate, MissingCandidate
from pytest_backendbench.errors import BootFailure, BuildFailure, CandidateMissing, HarnessError, ServiceCrashed
from pytest_backendbench.runkey import RunKey
from pytest_backendbench.runtime.base import CandidateImage, MockSpec
from pytest_backendbench.taskrun import TaskRun
from pytest_backendbench.tasks import Task, TaskCatalog

BENCH = Path(__file__).resolve().parents[1] / "data" / "bench"


@dataclass
class FakeService:
    base_url: str = "http://127.0.0.1:1"
    mock_urls: dict[str, str] = field(default_factory=dict)
    database_url: str | None = None
    ready_seconds: float = 0.1
    running: bool = True
    stopped: int = 0
    fail_stop: bool = False

    def logs(self, tail: int | None = None) -> str:
        return "line 1\nline 2"

    def alive(self) -> bool:
        return self.running

    def exit_reason(self) -> str | None:
        return None if self.running else "exited with code 3"

    def restart(self) -> None:
        self.running = True

    def stop(self) -> None:
        self.stopped += 1
        self.running = False
        if self.fail_stop:
            raise RuntimeError("engine gone")


@dataclass
class FakeRuntime:
    build_error: BaseException | None = None
    start_error: BaseException | None = None
    builds: int = 0
    starts: int = 0
    closed: int = 0
    service: FakeService = field(default_factory=FakeService)
    name: str = "fake"
    trusted_only: bool = False

    def build(self, candidate: Candidate, task: Task) -> CandidateImage:
        self.builds += 1
        if self.build_error is not None:
            raise self.build_error
        return CandidateImage(candidate, "fake:1", "abc", cached=False, build_seconds=0.5)

    def start(self, image: CandidateImage, task: Task, mocks: list[MockSpec]) -> FakeService:
        self.starts += 1
        if self.start_error is not None:
            raise self.start_error
        return self.service

    def close(self) -> None:
        self.closed += 1


@pytest.fixture
def task() -> Task:
    return TaskCatalog(BENCH).load("notes")


def make_run(task: Task, runtime: FakeRuntime, candidate: object = None) -> TaskRun:
    chosen = candidate if candidate is not None else Candidate("notes", BENCH / "oracles" / "notes" / "reference")
    return TaskRun(task, chosen, lambda: runtime, BENCH / "mocks", RunKey("notes"))  # type: ignore[arg-type]


def test_a_build_failure_is_sticky_and_built_once(task: Task) -> None:
    runtime = FakeRuntime(build_error=BuildFailure("pip install failed", "no such package"))
    run = make_run(task, runtime)
    with pytest.raises(BuildFailure) as first:
        run.ensure_built()
    with pytest.raises(BuildFailure) as again:
        run.ensure_started()
    assert again.value is first.value and runtime.builds == 1 and runtime.starts == 0
    assert run.phase_data["phase_failed"] == "build" and run.phase_data["failure_reason"] == "pip install failed"


def test_a_boot_failure_is_sticky(task: Task) -> None:
    runtime = FakeRuntime(start_error=BootFailure("never listened"))
    run = make_run(task, runtime)
    for _ in range(3):
        with pytest.raises(BootFailure):
            run.ensure_started()
    assert runtime.starts == 1


def test_a_harness_error_is_sticky_and_never_a_candidate_failure(task: Task) -> None:
    runtime = FakeRuntime(build_error=HarnessError("daemon gone"))
    run = make_run(task, runtime)
    for _ in range(2):
        with pytest.raises(HarnessError):
            run.ensure_started()
    assert runtime.builds == 1 and run.failure is None and "phase_failed" not in run.phase_data


def test_a_service_that_dies_fails_every_later_item(task: Task) -> None:
    runtime = FakeRuntime()
    run = make_run(task, runtime)
    assert run.ensure_started() is runtime.service
    runtime.service.running = False
    with pytest.raises(ServiceCrashed, match="the service stopped mid-run: exited with code 3"):
        run.ensure_started()
    runtime.service.running = True  # even if it came back: the run already failed
    with pytest.raises(ServiceCrashed):
        run.check_alive()


def test_a_missing_candidate_fails_as_missing(task: Task) -> None:
    run = make_run(task, FakeRuntime(), MissingCandidate("notes", Path("/runs/notes")))
    with pytest.raises(CandidateMissing, match="no candidate for task 'notes'"):
        run.ensure_built()


def test_finish_stops_the_service_and_records_its_log(task: Task) -> None:
    runtime = FakeRuntime()
    run = make_run(task, runtime)
    run.ensure_started()
    data = run.finish()
    assert runtime.service.stopped == 1 and data["finished"] and data["service_log"] == "line 1\nline 2"
    assert data["build_seconds"] == 0.5 and data["ready_seconds"] == 0.1


def test_the_registry_reaches_the_runtime_close_even_when_a_stop_fails(task: Task, tmp_path: Path) -> None:
    from pytest_backendbench.candidates import resolve_layout
    from pytest_backendbench.taskrun import TaskRunRegistry

    runtime = FakeRuntime(service=FakeService(fail_stop=True))
    registry = TaskRunRegistry(TaskCatalog(BENCH), resolve_layout(BENCH / "oracles" / "notes" / "reference", ["notes"]), lambda: runtime, tmp_path)
    registry.run(RunKey("notes")).ensure_started()
    with pytest.warns(pytest.PytestWarning, match="stopping a service failed .*notes: RuntimeError: engine gone"):
        registry.close()
    assert runtime.closed == 1


def test_the_registry_keys_its_runs_by_run_key_and_each_run_knows_its_sample_and_repeat(task: Task, tmp_path: Path) -> None:
    """One TaskRun per RunKey; sample and repetition come from the key, the candidate from its sample."""
    from pytest_backendbench.candidates import resolve_layout
    from pytest_backendbench.taskrun import TaskRunRegistry

    root = tmp_path / "runs"
    for sample in ("sample-1", "sample-2"):
        (root / "notes" / sample).mkdir(parents=True)
        (root / "notes" / sample / "candidate.yaml").write_text("task: notes\n")
    registry = TaskRunRegistry(TaskCatalog(BENCH), resolve_layout(root, ["notes"]), FakeRuntime, tmp_path / "artifacts", repeats=2)
    keys = registry.run_keys("notes")
    assert [str(k) for k in keys] == ["notes@sample-1+repeat-1", "notes@sample-1+repeat-2", "notes@sample-2+repeat-1", "notes@sample-2+repeat-2"]
    run = registry.run(keys[3])
    assert registry.run(RunKey("notes", "sample-2+repeat-2")) is run and list(registry.runs) == [keys[3]]
    assert (run.run_key, run.sample, run.repeat, run.key) == (keys[3], "sample-2", 2, "notes@sample-2+repeat-2")
    assert isinstance(run.candidate, Candidate) and run.candidate.path == root / "notes" / "sample-2"


# --- the run protocol's preconditions (protocol.precondition) on the same fakes -------------------


def test_each_kind_of_item_waits_for_what_it_needs(task: Task) -> None:
    """build items need nothing, boot items a built image, every later item a started service."""
    from pytest_backendbench.items import ItemKind
    from pytest_backendbench.protocol import precondition

    runtime = FakeRuntime()
    run = make_run(task, runtime)
    assert precondition(run, ItemKind.BUILD) is None and (runtime.builds, runtime.starts) == (0, 0)
    assert precondition(run, ItemKind.BOOT) is None and (runtime.builds, runtime.starts) == (1, 0)
    assert precondition(run, ItemKind.HTTP) is None and (runtime.builds, runtime.starts) == (1, 1)
    assert precondition(run, ItemKind.SNAPSHOT) is None and (runtime.builds, runtime.starts) == (1, 1)


def test_a_failed_boot_blocks_every_later_item_with_the_same_failure(task: Task) -> None:
    from pytest_backendbench.items import ItemKind
    from pytest_backendbench.protocol import precondition

    run = make_run(task, FakeRuntime(start_error=BootFailure("not ready after 3s", "service log: (empty)")))
    first = precondition(run, ItemKind.SMOKE)
    assert isinstance(first, BootFailure) and precondition(run, ItemKind.HTTP) is first and precondition(run, ItemKind.BDD) is first


def test_a_bug_below_the_runtime_becomes_a_harness_error_naming_it(task: Task) -> None:
    """An exception that is neither the candidate's nor ours (a KeyError in an engine call) is an error, never a failure."""
    from pytest_backendbench.items import ItemKind
    from pytest_backendbench.protocol import precondition

    run = make_run(task, FakeRuntime(build_error=KeyError("Id")))
    blocker = precondition(run, ItemKind.BOOT)
    assert isinstance(blocker, HarnessError) and str(blocker) == "KeyError: 'Id'" and isinstance(blocker.__cause__, KeyError)


def test_the_service_dying_mid_run_fails_the_next_item_as_a_crash(task: Task) -> None:
    from pytest_backendbench.items import ItemKind
    from pytest_backendbench.protocol import precondition

    runtime = FakeRuntime()
    run = make_run(task, runtime)
    assert precondition(run, ItemKind.HTTP) is None
    runtime.service.running = False
    crash = precondition(run, ItemKind.HTTP)
    assert isinstance(crash, ServiceCrashed) and "exited with code 3" in crash.title
    assert run.phase_data["phase_failed"] == crash.phase.value
