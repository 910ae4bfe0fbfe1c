"""Generation: workspaces, candidate.yaml, generator failures, and the no-oracle-leak property."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pluggy
import pytest
import yaml

from pytest_backendbench import hookspecs
from pytest_backendbench.errors import TaskFormatError
from pytest_backendbench.generators import register_builtin_generators
from pytest_backendbench.generators.orchestrate import OUTPUT_MARKER, GenerationSetupError, generate_candidates
from pytest_backendbench.llm.chat import GenerationError
from pytest_backendbench.tasks import Task, TaskCatalog, VisibleTask

from .conftest import read_report

RUN = ("--bench-runtime=process", "-p", "no:cacheprovider")
CANARY = "CANARY-oracle-7f3a9c"


def plugin_manager(bench: Path, *plugins: object) -> pluggy.PluginManager:
    """Our hookspecs, the built-in generators, and the given plugins (registered later: they run first)."""
    pm = pluggy.PluginManager("pytest")
    pm.add_hookspecs(hookspecs)
    register_builtin_generators(pm, bench)
    for plugin in plugins:
        pm.register(plugin)
    return pm


def notes_task(bench: Path) -> Task:
    return TaskCatalog(bench).load("notes")


def candidate_yaml(folder: Path) -> dict[str, Any]:
    return dict(yaml.safe_load((folder / "candidate.yaml").read_text()))


class Recording:
    """A generator that writes the notes app (copied from nowhere hidden: it is test data) and records its calls."""

    def __init__(self, app: str, fail: BaseException | None = None, metadata: dict[str, Any] | None = None) -> None:
        self.app = app
        self.fail = fail
        self.metadata = metadata if metadata is not None else {"tokens_in": 10, "tokens_out": 20, "cost_usd": 0.5}
        self.calls: list[tuple[VisibleTask, Path, str, list[str]]] = []
        self.lock = threading.Lock()

    @pytest.hookimpl
    def pytest_backendbench_generate(self, task: VisibleTask, workspace: Path, model: str) -> dict[str, Any] | None:
        if model != "fake":
            return None
        with self.lock:
            self.calls.append((task, workspace, model, sorted(p.name for p in workspace.iterdir())))
        (workspace / "app.py").write_text(self.app)
        (workspace / "Dockerfile").write_text("ARG BASE_IMAGE=python:3.12-slim\nFROM ${BASE_IMAGE}\nCOPY app.py .\nCMD python app.py\n")
        (workspace / "candidate.yaml").write_text("task: wrong\nrun: python app.py\ngeneration: {model: forged}\nextra: 1\n")
        if self.fail is not None:
            raise self.fail
        return dict(self.metadata)


@pytest.fixture
def notes_app() -> str:
    return (Path(__file__).parent / "data" / "bench" / "oracles" / "notes" / "reference" / "app.py").read_text()


def test_reference_generation_is_evaluated_to_100_percent(pytester: pytest.Pytester, bench: Path) -> None:
    out = bench / "generated"
    [workspace] = generate_candidates(plugin_manager(bench).hook, [notes_task(bench)], out, "reference", 1)
    assert workspace == out / "notes"
    assert sorted(p.name for p in workspace.iterdir()) == ["Dockerfile", "app.py", "candidate.yaml"]
    data = candidate_yaml(workspace)
    assert data["task"] == "notes" and data["run"] == "python app.py"
    generation = data["generation"]
    assert generation["model"] == "reference"
    assert (generation["tokens_in"], generation["tokens_out"], generation["cost_usd"]) == (0, 0, 0.0)
    assert isinstance(generation["seconds"], float) and generation["seconds"] >= 0
    assert (out / OUTPUT_MARKER).is_file()

    pytester.runpytest(f"--candidate={out}", "--bench-report-dir=report", *RUN).assert_outcomes(passed=7)
    report = read_report(bench / "report")
    assert report["summary"]["final_sr"] == 1.0
    assert report["summary"]["generation"]["models"] == ["reference"]
    assert report["tasks"][0]["generation"]["model"] == "reference"


def test_samples_get_their_own_workspaces_and_feed_pass_at_k(pytester: pytest.Pytester, bench: Path) -> None:
    out = bench / "generated"
    workspaces = generate_candidates(plugin_manager(bench).hook, [notes_task(bench)], out, "reference", 2)
    assert workspaces == [out / "notes" / "sample-1", out / "notes" / "sample-2"]
    assert all((w / "Dockerfile").is_file() for w in workspaces)
    pytester.runpytest(f"--candidate={out}", "--bench-report-dir=report", *RUN).assert_outcomes(passed=14)
    report = read_report(bench / "report")
    assert report["summary"]["pass_at_k"] == {"1": 1.0, "2": 1.0}
    assert [t["candidate"] for t in report["tasks"]] == ["notes@sample-1", "notes@sample-2"]


def test_candidate_yaml_keeps_the_generators_run_and_nothing_else_it_forged(bench: Path, notes_app: str) -> None:
    generator = Recording(
        notes_app, metadata={"model": "fake-2024-01", "tokens_in": 10, "tokens_out": "lots", "attempts": 2, "nested": {"x": 1}}
    )
    [workspace] = generate_candidates(plugin_manager(bench, generator).hook, [notes_task(bench)], bench / "out", "fake", 1)
    data = candidate_yaml(workspace)
    assert set(data) == {"task", "run", "generation"}
    assert (data["task"], data["run"]) == ("notes", "python app.py")
    generation = data["generation"]
    assert generation["model"] == "fake" and generation["served_model"] == "fake-2024-01"
    assert generation["tokens_in"] == 10 and generation["tokens_out"] is None and generation["attempts"] == 2
    assert "tokens_out='lots' is not a non-negative number" in generation["warning"]
    assert "nested" not in generation
    from pytest_backendbench.candidates import load_candidate_yaml

    load_candidate_yaml(workspace)  # what the evaluation reads must be valid


def test_a_generator_exception_becomes_a_failed_build_not_an_aborted_run(pytester: pytest.Pytester, bench: Path, notes_app: str) -> None:
    generator = Recording(
        notes_app, fail=GenerationError("the model answered nonsense 3 times", metadata={"tokens_in": 300, "tokens_out": 90, "attempts": 3})
    )
    out = bench / "generated"
    progress: list[str] = []
    [workspace] = generate_candidates(plugin_manager(bench, generator).hook, [notes_task(bench)], out, "fake", 1, progress=progress.append)
    assert sorted(p.name for p in workspace.iterdir()) == ["candidate.yaml"]  # no Dockerfile, no app
    data = candidate_yaml(workspace)
    assert "run" not in data
    assert data["generation"]["error"] == "the model answered nonsense 3 times"
    assert (data["generation"]["tokens_in"], data["generation"]["tokens_out"], data["generation"]["attempts"]) == (300, 90, 3)
    assert len(progress) == 1 and "generate notes with fake: FAILED" in progress[0] and "nonsense" in progress[0]

    result = pytester.runpytest(f"--candidate={out}", "--bench-report-dir=report", *RUN)
    result.assert_outcomes(failed=7)
    report = read_report(bench / "report")
    task = report["tasks"][0]
    assert task["phase_failed"] == "build"
    assert task["generation"]["error"] == "the model answered nonsense 3 times"
    assert report["summary"]["sr"] == 0.0


def test_an_unexpected_exception_is_recorded_with_its_type(bench: Path, notes_app: str) -> None:
    generator = Recording(notes_app, fail=KeyError("choices"))
    [workspace] = generate_candidates(plugin_manager(bench, generator).hook, [notes_task(bench)], bench / "out", "fake", 1)
    assert candidate_yaml(workspace)["generation"]["error"] == "KeyError: 'choices'"


def test_no_generator_for_the_model_is_a_clear_error(bench: Path) -> None:
    with pytest.raises(GenerationSetupError) as info:
        generate_candidates(plugin_manager(bench).hook, [notes_task(bench)], bench / "out", "claude-9", 1)
    message = str(info.value)
    assert "--bench-model 'claude-9': no generator answers for this model" in message
    assert "Generators: reference, openai:<model>." in message
    assert "pytest_backendbench_generate" in message


def test_a_conftest_generator_wins_over_the_builtin_one(pytester: pytest.Pytester, bench: Path) -> None:
    pytester.makeconftest(
        """
        def pytest_backendbench_generate(task, workspace, model):
            if model != "reference":
                return None
            (workspace / "Dockerfile").write_text("FROM scratch\\n")
            return {"tokens_in": 1, "tokens_out": 2, "cost_usd": 0.25}
        """
    )
    config = pytester.parseconfigure()
    register_builtin_generators(config.pluginmanager, bench)
    [workspace] = generate_candidates(config.hook, [notes_task(bench)], bench / "out", "reference", 1)
    assert sorted(p.name for p in workspace.iterdir()) == ["Dockerfile", "candidate.yaml"]
    assert candidate_yaml(workspace)["generation"]["cost_usd"] == 0.25
    with pytest.raises(GenerationSetupError, match=r"a hook in .*conftest\.py"):
        generate_candidates(config.hook, [notes_task(bench)], bench / "out", "unknown", 1)


def test_parallel_generation_keeps_the_order(bench: Path, notes_app: str) -> None:
    class Slow(Recording):
        @pytest.hookimpl
        def pytest_backendbench_generate(self, task: VisibleTask, workspace: Path, model: str) -> dict[str, Any] | None:
            time.sleep(0.2)
            return super().pytest_backendbench_generate(task=task, workspace=workspace, model=model)

    generator = Slow(notes_app)
    started = time.monotonic()
    workspaces = generate_candidates(plugin_manager(bench, generator).hook, [notes_task(bench)], bench / "out", "fake", 4, jobs=4)
    assert time.monotonic() - started < 0.7
    assert [w.name for w in workspaces] == ["sample-1", "sample-2", "sample-3", "sample-4"]
    assert len(generator.calls) == 4


# --- the no-oracle-leak property ------------------------------------------------------------


def reachable(obj: object, where: str = "task") -> Iterator[tuple[str, object]]:
    """Every value reachable from obj through public attributes, containers and folder contents."""
    seen: set[int] = set()
    stack: list[tuple[str, object]] = [(where, obj)]
    while stack:
        name, value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        yield name, value
        if isinstance(value, Path):
            if value.is_dir():
                stack += [(f"{name}/{child.name}", child) for child in value.iterdir()]
        elif isinstance(value, (str, bytes, int, float, bool, type(None))):
            continue
        elif isinstance(value, dict):
            stack += [(f"{name}[{k!r}]", k) for k in value] + [(f"{name}[{k!r}]", v) for k, v in value.items()]
        elif isinstance(value, (list, tuple, set, frozenset)):
            stack += [(f"{name}[{i}]", v) for i, v in enumerate(value)]
        else:
            for attr in dir(value):
                if attr.startswith("_"):
                    continue
                child = getattr(value, attr)
                if not callable(child):
                    stack.append((f"{name}.{attr}", child))


@pytest.fixture
def leaky_bench(bench: Path) -> Path:
    """The notes bench with canaries in the hidden oracle and an extra visible asset."""
    oracle = bench / "oracles" / "notes"
    (oracle / "canary.txt").write_text(CANARY + "\n")
    (oracle / "reference" / "secret.py").write_text(f"SECRET = {CANARY!r}\n")
    (bench / "benchmarks" / "notes" / "docs").mkdir()
    (bench / "benchmarks" / "notes" / "docs" / "glossary.md").write_text("A note has a title.\n")
    return bench


def test_nothing_reachable_from_the_visible_task_is_under_oracles(leaky_bench: Path) -> None:
    task = notes_task(leaky_bench)
    oracles = (leaky_bench / "oracles").resolve()
    visible_root = (leaky_bench / "benchmarks" / "notes").resolve()
    oracle_sources = [p.read_text() for p in task.oracle_dir.rglob("*.py")]
    paths: set[Path] = set()
    for name, value in reachable(task.visible):
        if isinstance(value, Path):
            resolved = value.resolve()
            assert not resolved.is_relative_to(oracles), f"{name} = {value} is under oracles/"
            assert resolved.is_relative_to(visible_root), f"{name} = {value} is outside benchmarks/notes/"
            if resolved.is_file():
                assert CANARY not in resolved.read_text(errors="replace"), name
                paths.add(resolved)
        elif isinstance(value, str):
            assert CANARY not in value, name
            assert str(oracles) not in value and "oracles/" not in value, name
            assert not any(source.strip() and source in value for source in oracle_sources), name
        else:
            assert isinstance(value, (VisibleTask, int, float, bool, type(None), tuple, dict)), f"{name} is a {type(value).__name__}"
    assert "spec" in dir(task.visible) and "openapi" in dir(task.visible)  # the walk did read the files' text
    expected = {p.resolve() for p in visible_root.rglob("*") if p.is_file() and p.name != "task.yaml"}
    assert paths == expected


def test_generators_get_the_visible_task_and_an_empty_workspace_outside_the_bench(leaky_bench: Path, notes_app: str) -> None:
    generator = Recording(notes_app)
    out = leaky_bench.parent / f"{leaky_bench.name}-generated"
    generate_candidates(plugin_manager(leaky_bench, generator).hook, [notes_task(leaky_bench)], out, "fake", 2)
    (out / "notes" / "sample-1" / "stale.txt").write_text("from the previous run")
    generate_candidates(plugin_manager(leaky_bench, generator).hook, [notes_task(leaky_bench)], out, "fake", 2)
    assert len(generator.calls) == 4
    for task, workspace, model, initial in generator.calls:
        assert type(task) is VisibleTask and model == "fake"
        assert initial == []  # every workspace starts empty, also when regenerating
        assert not workspace.resolve().is_relative_to(leaky_bench.resolve())
    assert not (out / "notes" / "sample-1" / "stale.txt").exists()
    assert not any(CANARY in p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())


def test_a_symlink_from_the_visible_contract_into_the_oracle_is_refused(leaky_bench: Path, notes_app: str) -> None:
    link = leaky_bench / "benchmarks" / "notes" / "hints.md"
    os.symlink(leaky_bench / "oracles" / "notes" / "canary.txt", link)
    generator = Recording(notes_app)
    with pytest.raises(TaskFormatError) as info:
        generate_candidates(plugin_manager(leaky_bench, generator).hook, [notes_task(leaky_bench)], leaky_bench.parent / "gen", "fake", 1)
    assert str(link) in str(info.value) and "must not link elsewhere" in str(info.value)
    assert generator.calls == []


def test_output_folders_that_are_not_ours_are_never_overwritten(bench: Path) -> None:
    hook = plugin_manager(bench).hook
    foreign = bench / "mine"
    foreign.mkdir()
    (foreign / "notes").mkdir()
    (foreign / "notes" / "precious.txt").write_text("keep me")
    with pytest.raises(GenerationSetupError, match="is not empty and was not written by --bench-generate"):
        generate_candidates(hook, [notes_task(bench)], foreign, "reference", 1)
    assert (foreign / "notes" / "precious.txt").read_text() == "keep me"
    with pytest.raises(GenerationSetupError, match="must not be written below"):
        generate_candidates(hook, [notes_task(bench)], bench / "oracles" / "generated", "reference", 1)
    with pytest.raises(GenerationSetupError, match="--bench-samples 0"):
        generate_candidates(hook, [notes_task(bench)], bench / "new", "reference", 0)


def test_generate_option_end_to_end(pytester: pytest.Pytester, bench: Path) -> None:
    """Through the plugin's own options: --bench-generate --bench-model=reference writes, then evaluates."""
    result = pytester.runpytest("--bench-generate", "--bench-model=reference", f"--candidate={bench / 'gen'}", "--bench-report-dir=report", *RUN)
    result.assert_outcomes(passed=7)
    result.stdout.fnmatch_lines(["*backendbench generate: generate notes with reference: done in *s*"])
    assert read_report(bench / "report")["tasks"][0]["generation"]["model"] == "reference"
    unknown = pytester.runpytest("--bench-generate", "--bench-model=nope", f"--candidate={bench / 'gen'}", *RUN)
    unknown.stderr.fnmatch_lines(["*--bench-model 'nope': no generator answers for this model. Generators: reference, openai:<model>, agent:<model>, cmd:<name>.*"])


def test_generating_without_candidate_records_the_generated_folder_in_the_manifest(pytester: pytest.Pytester, bench: Path) -> None:
    """--bench-generate without --candidate writes to backendbench-runs/<model>; the manifest names that folder."""
    result = pytester.runpytest("--bench-generate", "--bench-model=reference", "--bench-report-dir=report", *RUN)
    result.assert_outcomes(passed=7)
    generated = pytester.path / "backendbench-runs" / "reference"
    report = read_report(bench / "report")
    assert report["manifest"]["options"]["candidate"] == str(generated)
    assert report["tasks"][0]["candidate_path"] == str(generated.resolve() / "notes")
