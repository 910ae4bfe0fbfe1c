"""``isolation: item`` and the task.yaml keys of task-supplied images, on a fake runtime (no engine)."""

from __future__ import annotations

import dataclasses
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pytest_backendbench.candidates import Candidate, resolve_layout
from pytest_backendbench.errors import BootFailure, ServiceCrashed, TaskFormatError
from pytest_backendbench.runtime.base import CandidateImage, MockSpec
from pytest_backendbench.runtime.docker import _build_context, _task_image_hash
from pytest_backendbench.tasks import Task, TaskCatalog, load_task

from .test_taskrun import BENCH, FakeService, make_run

PROBE_BENCH = Path(__file__).resolve().parents[1] / "runtime" / "data" / "probe-bench"
PROBE = Path(__file__).resolve().parents[1] / "runtime" / "candidates" / "probe"


@dataclass
class FreshRuntime:
    """Starts a new fake service every time, and remembers them all."""

    started: list[FakeService] = field(default_factory=list)
    start_error: BaseException | None = None
    name: str = "fake"
    trusted_only: bool = False

    def build(self, candidate: Candidate, task: Task) -> CandidateImage:
        return CandidateImage(candidate, "fake:1", "abc", cached=False, build_seconds=0.5)

    def start(self, image: CandidateImage, task: Task, mocks: list[MockSpec]) -> FakeService:
        if self.start_error is not None:
            raise self.start_error
        self.started.append(FakeService())
        return self.started[-1]

    def close(self) -> None:
        pass


@pytest.fixture
def per_item() -> Task:
    return dataclasses.replace(TaskCatalog(BENCH).load("notes"), isolation="item")


def test_every_item_meets_a_service_no_earlier_item_met(per_item: Task) -> None:
    runtime = FreshRuntime()
    run = make_run(per_item, runtime)  # type: ignore[arg-type]
    booted = run.ensure_started()  # the boot item: nobody has met it yet
    first = run.ensure_fresh()
    assert first is booted and len(runtime.started) == 1
    second = run.ensure_fresh()
    third = run.ensure_fresh()
    assert len({id(first), id(second), id(third)}) == 3
    assert [s.stopped for s in runtime.started] == [1, 1, 0]
    assert run.boot_seconds is not None and run.boot_seconds >= 0


def test_a_crash_under_per_item_isolation_ends_only_that_item(per_item: Task) -> None:
    runtime = FreshRuntime()
    run = make_run(per_item, runtime)  # type: ignore[arg-type]
    run.ensure_fresh().running = False  # the candidate killed its own server during the item
    with pytest.raises(ServiceCrashed):
        run.check_alive()
    assert run.failure is None
    assert run.ensure_fresh().alive() and len(runtime.started) == 2


def test_a_boot_failure_stays_sticky_under_per_item_isolation(per_item: Task) -> None:
    runtime = FreshRuntime(start_error=BootFailure("never listened"))
    run = make_run(per_item, runtime)  # type: ignore[arg-type]
    for _ in range(2):
        with pytest.raises(BootFailure):
            run.ensure_fresh()
    assert run.failure is not None


def test_the_image_keys_are_read(tmp_path: Path) -> None:
    task = TaskCatalog(PROBE_BENCH).load("probe")
    assert (task.isolation, task.dockerfile, task.build_files, task.memory) == ("item", "Dockerfile", ("requirements.txt",), "96m")
    assert not {"isolation", "dockerfile", "build_files", "memory"} & set(task.extra)
    notes = TaskCatalog(BENCH).load("notes")
    assert (notes.isolation, notes.dockerfile, notes.build_files, notes.memory) == ("task", None, (), None)


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ("isolation: test", "isolation", "expected task (one service per run) or item"),
        ("dockerfile: Nowhere", "dockerfile", "'Nowhere' does not exist in"),
        ("dockerfile: ../probe/Dockerfile", "dockerfile", "expected a file name relative to"),
        ("build_files: requirements.txt", "build_files", "expected a list of files"),
        ("memory: lots", "memory", "expected a memory size in docker syntax, e.g. 512m or 1g"),
    ],
)
def test_a_bad_image_key_names_the_field(tmp_path: Path, line: str, field: str, message: str) -> None:
    folder = tmp_path / "benchmarks" / "probe"
    shutil.copytree(PROBE_BENCH / "benchmarks" / "probe", folder)
    text = (folder / "task.yaml").read_text()
    key = line.split(":")[0]
    kept = "\n".join(row for row in text.splitlines() if not row.startswith(key + ":"))
    (folder / "task.yaml").write_text(kept + "\n" + line + "\n")
    with pytest.raises(TaskFormatError) as info:
        load_task(folder, tmp_path / "oracles")
    assert info.value.field == field and message in info.value.message


def test_build_files_need_a_dockerfile(tmp_path: Path) -> None:
    folder = tmp_path / "benchmarks" / "probe"
    shutil.copytree(PROBE_BENCH / "benchmarks" / "probe", folder)
    text = (folder / "task.yaml").read_text().replace("dockerfile: Dockerfile\n", "")
    (folder / "task.yaml").write_text(text)
    with pytest.raises(TaskFormatError, match="build_files needs dockerfile"):
        load_task(folder, tmp_path / "oracles")


def test_the_build_context_is_the_code_plus_the_tasks_files(tmp_path: Path) -> None:
    task = TaskCatalog(PROBE_BENCH).load("probe")
    candidate_dir = tmp_path / "candidate"
    shutil.copytree(PROBE, candidate_dir)
    (candidate_dir / "Dockerfile").write_text("FROM scratch\n")
    (candidate_dir / "__pycache__").mkdir()
    (candidate_dir / "__pycache__" / "app.cpython-311.pyc").write_bytes(b"x")
    candidate = Candidate("probe", candidate_dir)
    with _build_context(candidate, task) as (context, notes):
        files = sorted(p.relative_to(context).as_posix() for p in context.rglob("*") if p.is_file())
        assert files == ["Dockerfile", "app.py", "requirements.txt"]
        assert (context / "Dockerfile").read_text() == (PROBE_BENCH / "benchmarks" / "probe" / "Dockerfile").read_text()
    assert not context.exists()
    assert any("the candidate's own Dockerfile is ignored" in note for note in notes)
    before = _task_image_hash(candidate, task)
    (candidate_dir / "app.py").write_text((candidate_dir / "app.py").read_text() + "\n# changed\n")
    assert _task_image_hash(candidate, task) != before, "a changed candidate is a new image"


def test_a_code_only_folder_is_one_candidate_when_one_task_is_selected() -> None:
    assert resolve_layout(PROBE, ["probe"]).single_task == "probe"
    assert resolve_layout(PROBE, ["probe", "notes"]).single_task is None


@dataclass
class RenewableFake(FakeService):
    can_renew: bool = True
    renewals: int = 0

    def renew(self) -> bool:
        if not self.can_renew:
            return False
        self.renewals += 1
        self.running = True
        return True


@dataclass
class RenewingRuntime(FreshRuntime):
    can_renew: bool = True

    def start(self, image: CandidateImage, task: Task, mocks: list[MockSpec]) -> FakeService:
        self.started.append(RenewableFake(can_renew=self.can_renew))
        return self.started[-1]


def test_a_runtime_that_can_renew_in_place_is_asked_to(per_item: Task) -> None:
    runtime = RenewingRuntime()
    run = make_run(per_item, runtime)  # type: ignore[arg-type]
    service = run.ensure_fresh()
    run.ensure_fresh().running = False  # a crash in the second item: the third still gets a renewed one
    assert run.ensure_fresh() is service and service.alive()
    assert len(runtime.started) == 1 and isinstance(service, RenewableFake) and service.renewals == 2 and service.stopped == 0
    assert run.boot_seconds is not None


def test_a_service_that_cannot_renew_is_replaced(per_item: Task) -> None:
    runtime = RenewingRuntime(can_renew=False)
    run = make_run(per_item, runtime)  # type: ignore[arg-type]
    first = run.ensure_fresh()
    second = run.ensure_fresh()
    assert first is not second and first.stopped == 1 and len(runtime.started) == 2
