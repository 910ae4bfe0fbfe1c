"""A benchmark session: what ``--candidate`` (or ``--bench-generate``) resolved to.

``start_session`` runs once per process at configure time, only when a bench is in use: it
finds the bench root and tasks, generates candidates if asked, resolves the candidate layout,
builds the runtime options and the ``TaskRunRegistry``, and on the controller the result
recorder. Everything it decides lives in one ``BenchSession`` in ``config.stash``.
"""

from __future__ import annotations

import atexit
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .candidates import CandidateLayout, resolve_layout
from .config import BenchConfig
from .errors import BackendBenchFormatError, HarnessError
from .http.fixtures import ItemOptions, set_item_options
from .interrupt import install_interrupt_handler, interrupt_of
from .metrics import MetricOptions
from .recorder import ResultRecorder, base_manifest
from .report.journal import load_results
from .results import TaskResult
from .runkey import RunKey
from .runtime import create_runtime, resolve_runtime_name
from .runtime.base import DEFAULT_IMAGE_ALIASES, Runtime, RuntimeOptions, default_cache_dir
from .taskrun import REGISTRY_KEY, TaskRunRegistry
from .tasks import TaskCatalog, ValidContracts
from .xdist_glue import check_distribution, register_xdist_glue

MANIFEST_SETTINGS = (
    "candidate", "model", "samples", "bench_root", "tasks", "oracle_tier", "categories", "alpha", "beta", "request_timeout",
    "strict_contract", "no_contract_check", "memory", "cpus", "pids", "repeat", "shard_durations", "openai_reasoning_effort", "active_params", "carbon_factors",
)
"""The settings recorded in the report's manifest (their report names are kept stable)."""
MANIFEST_NAMES = {"tasks": "bb_tasks"}


@dataclass(frozen=True)
class BenchSession:
    """What the session's hooks share: the catalog, the selected tasks, the run settings (resolved once, never reassigned)."""

    catalog: TaskCatalog
    task_ids: list[str]
    tier: str
    previous: dict[str, TaskResult]  # candidate key -> result from --bench-resume
    runtime_name: str
    session_id: str
    runtime_line: str
    candidate: str = ""  # the candidate folder: --candidate, or where --bench-generate wrote
    rerun_errors: bool = False
    categories: frozenset[str] = frozenset()  # --bench-category: only oracle items of these categories run
    task_problems: dict[str, str | None] = field(default_factory=dict)  # task id -> why it cannot run (checked once)
    collection_args: list[str] = field(default_factory=list)  # what a run without paths collects (collect/routing.py)

    @property
    def error_nodeids(self) -> set[str]:
        """Node ids that ended in a harness error in the resumed report."""
        return {i.nodeid for r in self.previous.values() for i in r.items if i.outcome == "error"}


SESSION_KEY = pytest.StashKey[BenchSession]()
RECORDER_KEY = pytest.StashKey[ResultRecorder]()
GENERATED_KEY = pytest.StashKey[set[RunKey]]()
"""The runs (task, sample) whose candidates --bench-generate wrote in this run."""


def bench_session(config: pytest.Config) -> BenchSession | None:
    """The session, or None when no bench is in use (the plugin is inert then)."""
    return config.stash.get(SESSION_KEY, None)


def recorder_of(config: pytest.Config) -> ResultRecorder | None:
    """The controller's result recorder (None on xdist workers and without a bench)."""
    return config.stash.get(RECORDER_KEY, None)


def bench_in_use(bench: BenchConfig) -> bool:
    """Whether this run evaluates candidates: nothing of the plugin acts otherwise."""
    return bool(bench.candidate or bench.generate)


def start_session(config: pytest.Config, bench: BenchConfig) -> BenchSession:
    """Resolve everything a benchmark run needs, once per process (see the module docstring)."""
    if bench.rerun_errors and not bench.resume:
        raise pytest.UsageError("--bench-rerun-errors needs --bench-resume REPORT (the run whose errors to re-run)")
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    # first, so that its cleanup (the last resort's end) runs after every other one of the session
    install_interrupt_handler(config)
    check_distribution(config)
    catalog = TaskCatalog(bench_root(config, bench))
    task_ids = selected_tasks(bench, catalog)
    # before generating: agent sandboxes carry the session label too, so the reaper finds them
    session_id = workerinput["backendbench_session"] if workerinput else uuid.uuid4().hex[:12]
    candidate, layout = resolve_candidate(config, bench, catalog, task_ids, session_id, workerinput)
    if layout.single_task is not None and not bench.tasks:
        task_ids = [layout.single_task]  # one candidate: evaluate its task, not every task as missing
    runtime_name, runtime_line = resolve_runtime_name(bench.runtime)
    report_dir = resolve_report_dir(config, bench)
    session = BenchSession(
        catalog=catalog, task_ids=task_ids, tier=bench.oracle_tier, previous=resolve_previous(config, bench), runtime_name=runtime_name,
        session_id=session_id, runtime_line=runtime_line, candidate=candidate, rerun_errors=bench.rerun_errors,
        categories=frozenset(bench.categories), collection_args=collection_args(catalog, task_ids),
    )
    options = runtime_options(bench, session_id, catalog, workerinput)

    def make_runtime() -> Runtime:
        supplied = config.hook.pytest_backendbench_runtime(config=config)
        return supplied if supplied is not None else create_runtime(runtime_name, options)

    registry = TaskRunRegistry(catalog, layout, make_runtime, report_dir / "artifacts", bench.repeat, ValidContracts(options.cache_dir / "valid-contracts"))
    config.stash[REGISTRY_KEY] = registry
    config.stash[SESSION_KEY] = session
    set_item_options(config, ItemOptions(bench.request_timeout, bench.strict_contract, not bench.no_contract_check))
    # a run killed by a signal pytest does not handle still stops its services; unregistered at cleanup
    atexit.register(registry.close)
    config.add_cleanup(lambda: atexit.unregister(registry.close))
    config.add_cleanup(registry.close)
    if workerinput is None:
        _start_recorder(config, bench, session, report_dir)
    return session


def resolve_candidate(
    config: pytest.Config, bench: BenchConfig, catalog: TaskCatalog, task_ids: list[str], session_id: str, workerinput: dict[str, Any] | None
) -> tuple[str, CandidateLayout]:
    """The candidate folder (--candidate, or where --bench-generate wrote; a worker reads the controller's) and its layout."""
    candidate = bench.candidate
    if bench.generate:
        candidate = workerinput["backendbench_candidate"] if workerinput else _generate(config, bench, catalog, task_ids, candidate, session_id)
    if candidate is None:  # plugin.py starts a session only with --candidate or --bench-generate
        raise HarnessError("a benchmark session without a candidate folder")
    try:
        return candidate, resolve_layout(Path(candidate), task_ids)
    except BackendBenchFormatError as err:
        raise pytest.UsageError(f"--candidate: {err}") from err


def resolve_previous(config: pytest.Config, bench: BenchConfig) -> dict[str, TaskResult]:
    """--bench-resume's results by candidate key, without the samples generated again in this run."""
    if not bench.resume:
        return {}
    try:
        previous = {r.candidate: r for r in load_results(Path(bench.resume))}
    except HarnessError as err:
        raise pytest.UsageError(f"--bench-resume: {err}") from err
    # a sample generated again in this run (its generation had failed for a harness reason) is evaluated again
    regenerated = config.stash.get(GENERATED_KEY, set())
    return {k: r for k, r in previous.items() if RunKey.of(r.task, r.sample) not in regenerated}


def resolve_report_dir(config: pytest.Config, bench: BenchConfig) -> Path:
    """--bench-report-dir, relative to where pytest was invoked."""
    report_dir = Path(bench.report_dir)
    return report_dir if report_dir.is_absolute() else Path(config.invocation_params.dir) / report_dir


def manifest_options(bench: BenchConfig, session: BenchSession) -> dict[str, Any]:
    """The settings the manifest records; ``candidate`` is the folder evaluated (the generated one under --bench-generate)."""
    options = {MANIFEST_NAMES.get(k, k): _jsonable(bench[k]) for k in MANIFEST_SETTINGS}
    options["candidate"] = session.candidate
    return options


def _start_recorder(config: pytest.Config, bench: BenchConfig, session: BenchSession, report_dir: Path) -> None:
    manifest = base_manifest(session.runtime_name, session.session_id, manifest_options(bench, session), bench.seed, bench.shard)
    from .diagnosis import engines_of_run

    manifest["engines"] = engines_of_run(session.runtime_name, bench.postgres_provider)  # which PostgreSQL and browser served the run
    from .scores.versions import task_versions

    manifest["task_versions"] = task_versions(session.catalog, session.task_ids)  # what defined each task's verdicts
    carried = [r for r in session.previous.values() if r.finished]
    if bench.rerun_errors:
        for result in carried:
            result.items = [i for i in result.items if i.outcome != "error"]
    recorder = ResultRecorder(report_dir, manifest, MetricOptions(bench.alpha, bench.beta), carried, config.hook)
    config.stash[RECORDER_KEY] = recorder
    config.pluginmanager.register(recorder, "backendbench-recorder")
    interrupt = interrupt_of(config)
    if interrupt is not None:
        interrupt.add_final(lambda: _write_interrupted(recorder))
    register_xdist_glue(config, session.session_id, session.candidate)


def _write_interrupted(recorder: ResultRecorder) -> None:
    """The last resort's report: what the controller has recorded so far, marked interrupted.

    With xdist the controller waits for its workers in teardown (execnet gives them 10 s);
    past the grace period the report is written from here rather than not at all.
    """
    recorder.interrupted = True
    recorder.write()


def _generate(config: pytest.Config, bench: BenchConfig, catalog: TaskCatalog, task_ids: list[str], candidate: str | None, session_id: str) -> str:
    """--bench-generate: run the model's generator for every selected task, once, on the controller."""
    from .generators import register_builtin_generators
    from .generators.orchestrate import GenerationSetupError, generate_candidates
    from .llm.chat import OpenAISettings

    model = bench.model
    if not model:
        raise pytest.UsageError("--bench-generate needs --bench-model NAME (reference, openai:<model>, or a conftest generator's model)")
    register_builtin_generators(config.pluginmanager, catalog.bench_root, OpenAISettings.from_config(config))
    from .generators.agent import register_agent_generator

    register_agent_generator(config, catalog.bench_root, session_id)
    out = Path(candidate) if candidate else Path(config.invocation_params.dir) / "backendbench-runs" / model.replace("/", "_").replace(":", "_")
    try:
        tasks = [catalog.load(t) for t in task_ids]
    except BackendBenchFormatError as err:
        raise pytest.UsageError(f"--bench-generate: {err}") from err
    writer = config.get_terminal_writer()
    try:
        generate_candidates(
            config.hook, tasks, out, model, bench.samples, jobs=bench.generate_jobs,
            progress=lambda line: writer.line(f"backendbench generate: {line}"), resume=bool(bench.resume),
            generated=config.stash.setdefault(GENERATED_KEY, set()),
        )
    except (GenerationSetupError, BackendBenchFormatError) as err:
        raise pytest.UsageError(f"--bench-generate: {err}") from err
    return str(out)


def _jsonable(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool, type(None), list)) else str(value)


def bench_root(config: pytest.Config, bench: BenchConfig) -> Path:
    """--bench-root or its variable (relative to the invocation dir), the ini value (relative to the rootdir), or the rootdir."""
    option = bench.bench_root
    root = Path(option) if option else Path(config.rootpath)
    if not root.is_absolute():
        from_ini = bench.source("bench_root").startswith("ini ")
        root = (Path(config.rootpath) if from_ini else Path(config.invocation_params.dir)) / root
    if not (root / "benchmarks").is_dir():
        hint = ""
        if not option:
            # pytest picks the rootdir before plugin options are known, so the value of
            # `--bench-report-dir DIR` (with a space) counts as a path and can become the rootdir.
            hint = (
                f" (the rootdir; if {root} is the value of an option written with a space, e.g. "
                f"`--bench-report-dir {root}`, write it with `=`: `--bench-report-dir={root}`)"
            )
        raise pytest.UsageError(
            f"--bench-root: {root} has no benchmarks/ folder{hint}; point --bench-root at the folder holding benchmarks/ and oracles/"
        )
    return root.resolve()


def selected_tasks(bench: BenchConfig, catalog: TaskCatalog) -> list[str]:
    """--bench-task (or every task), then --bench-shard."""
    known = catalog.task_ids()
    requested = bench.tasks or known
    unknown = [t for t in requested if t not in known]
    if unknown:
        raise pytest.UsageError(f"--bench-task: unknown task(s) {', '.join(unknown)}; tasks under {catalog.benchmarks_dir}: {', '.join(known) or 'none'}")
    if not requested:
        raise pytest.UsageError(f"no tasks under {catalog.benchmarks_dir}")
    selected = list(dict.fromkeys(requested))
    if bench.shard:
        index, count = (int(part) for part in bench.shard.split("/"))  # K/N, checked by the settings table (shard_spec)
        durations = None
        if bench.shard_durations:
            from .dispatch.balance import load_durations

            try:
                durations = load_durations(Path(bench.shard_durations))
            except HarnessError as err:
                raise pytest.UsageError(f"--bench-shard-durations: {err}") from err
        selected = shard_tasks(selected, index, count, durations)
    return selected


def shard_tasks(task_ids: list[str], index: int, count: int, durations: dict[str, float] | None = None) -> list[str]:
    """Shard K of N: balanced by recorded durations when given, else every N-th task of the sorted ids."""
    from .dispatch.balance import shard_tasks as balanced

    return balanced(task_ids, index, count, durations)


def runtime_options(bench: BenchConfig, session_id: str, catalog: TaskCatalog, workerinput: dict[str, Any] | None) -> RuntimeOptions:
    """The runtime's settings from the resolved configuration."""
    aliases: dict[str, str] = {}
    for entry in bench.image_aliases:
        entry = entry.strip()
        if not entry:
            continue
        name, sep, image = entry.partition("=")
        if not sep or not name or not image:
            raise pytest.UsageError(f"--image-alias {entry!r}: expected NAME=IMAGE, e.g. python:3.12-slim=backendbench/python:3.11")
        aliases[name.strip()] = image.strip()
    cores = os.cpu_count() or 1
    return RuntimeOptions(
        session_id=session_id,
        worker_id=workerinput["workerid"] if workerinput else "master",
        cache_dir=Path(bench.cache_dir) if bench.cache_dir else default_cache_dir(),
        mocks_dir=catalog.mocks_dir,
        build_timeout_s=bench.build_timeout,
        boot_timeout_s=bench.boot_timeout,
        request_timeout_s=bench.request_timeout,
        memory_limit=bench.memory,
        cpu_limit=bench.cpus,
        pids_limit=bench.pids,
        image_aliases=aliases or dict(DEFAULT_IMAGE_ALIASES),
        base_image=bench.base_image or None,
        postgres_image=bench.postgres_image or None,
        postgres_provider=bench.postgres_provider,
        max_parallel_builds=max(1, cores // 2),
        max_running_services=max(2, cores),
        warm_containers=bench.warm_containers,
        allow_unenforced_limits=bool(bench.allow_unenforced_limits),
        relay=bench.docker_relay if bench.docker_relay is not None else bench.docker_publish,
        relay_bind=bench.relay_bind or None,
    )


def collection_args(catalog: TaskCatalog, task_ids: list[str]) -> list[str]:
    """What a bare ``pytest --candidate X`` collects: each task's task.yaml and oracle folder."""
    args = []
    for task_id in task_ids:
        task_yaml = catalog.benchmarks_dir / task_id / "task.yaml"
        if not task_yaml.is_file():
            raise pytest.UsageError(f"{task_yaml}: file not found; every benchmarks/<task>/ folder needs a task.yaml")
        args.append(str(task_yaml))
        oracle = catalog.oracles_dir / task_id
        if oracle.is_dir():
            args.append(str(oracle))
    return args
