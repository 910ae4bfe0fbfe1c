"""Wiring: options, configuration, collection routing and the per-item protocol.

Everything substantive lives in its own module (tasks, candidates, taskrun, runtime,
collect, metrics, report); this module connects them to pytest's hooks.
"""

from __future__ import annotations

import atexit
import os
import signal
import uuid
from collections.abc import Generator
from pathlib import Path
from types import FrameType
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests

from . import hookspecs
from .candidates import resolve_layout, run_label_order
from .collect.phases import TaskFile, describe_failure
from .db.dbcheck import postgres_image_option
from .errors import BackendBenchFormatError, CandidateFailure, HarnessError
from .http.fixtures import HTTP_STATS_KEY, ITEM_OPTIONS_KEY, ItemOptions, backendbench_sample, http, mocks, service
from .metrics import MetricOptions, ordered_tiers, tier_sort_key
from .recorder import ResultRecorder, base_manifest
from .report.journal import load_results
from .report.tables import render_grid, sr_line, summary_rows, task_rows
from .runtime import RUNTIME_CHOICES, create_runtime, resolve_runtime_name
from .runtime.base import DEFAULT_IMAGE_ALIASES, Runtime, RuntimeOptions, default_cache_dir
from .taskrun import CANDIDATE_KEY, ITEM_EXTRA_KEY, REGISTRY_KEY, TaskRun, TaskRunRegistry
from .tasks import CATEGORIES, TaskCatalog

__all__ = ["backendbench_sample", "http", "mocks", "service"]

# the database concern (db fixture, db_effect capture, snapshot items) is a plugin of its own,
# loaded with this one so that its options exist before the command line is parsed
pytest_plugins = ("pytest_backendbench.db.dbcheck",)

KIND_ORDER = {"build": 0, "boot": 1, "smoke": 2, "http": 3, "bdd": 4, "snapshot": 5}
TASK_DATA_KEY = pytest.StashKey[dict[str, Any]]()
MALFORMED_TASK_KEY = pytest.StashKey[str]()
"""Set on items whose task.yaml or contract is malformed: they end as errors, not failures."""
SETTINGS_KEY = pytest.StashKey["BenchSettings"]()
RECORDER_KEY = pytest.StashKey[ResultRecorder]()
GENERATED_KEY = pytest.StashKey[set[str]]()
"""Candidate keys (``task`` or ``task@sample-k``) that --generate wrote in this run."""
MARKERS = (
    "requirement(*ids): the task requirements (task.yaml ids) this oracle item checks",
    "category(name): failure category: " + ", ".join(CATEGORIES),
    "tier(name): oracle tier: base, r1, r2, ... (cumulative; --oracle-tier selects)",
    "weight(value): the item's weight in the dense score (default 1.0)",
    "cwe(id): the CWE number a security item checks (e.g. 639 for IDOR); required with category('security')",
    "db_effect(op, table=None): a database operation the item must cause (INSERT/UPDATE/DELETE/SELECT)",
)


class BenchSettings:
    """What --candidate and friends resolved to, shared by the hooks below."""

    def __init__(
        self, catalog: TaskCatalog, task_ids: list[str], tier: str, previous: dict[str, Any], runtime_name: str, session_id: str, runtime_line: str
    ) -> None:
        self.runtime_name = runtime_name
        self.runtime_line = runtime_line
        self.session_id = session_id
        self.catalog = catalog
        self.task_ids = task_ids
        self.tier = tier
        self.previous = previous  # candidate key -> TaskResult from --resume
        self.task_problems: dict[str, str | None] = {}  # task id -> why it cannot run (checked once)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("backendbench", "evaluate generated web services (pytest-backendbench)")
    group.addoption("--candidate", metavar="DIR", help="candidate folder, or a root of <task>/ (or <task>/sample-<k>/) folders")
    group.addoption("--bench-root", metavar="DIR", help="folder holding benchmarks/, oracles/ and mocks/ (default: the rootdir)")
    group.addoption("--task", action="append", dest="bb_tasks", default=[], metavar="ID", help="evaluate only this task (repeatable)")
    group.addoption("--runtime", choices=RUNTIME_CHOICES, default="auto", help="how candidates run: docker, process (trusted code only) or auto")
    group.addoption("--oracle-tier", default="final", metavar="TIER", help="run oracle tiers up to this one: base, r1, r2, ... or final (all)")
    group.addoption("--report-dir", default="backendbench-report", metavar="DIR", help="where report.json, summary.md and the journal go")
    group.addoption("--alpha", type=float, default=0.6, help="weight of Req.Acc in Balanced (default 0.6)")
    group.addoption("--beta", type=float, default=0.4, help="weight of Test.Acc in Balanced (default 0.4)")
    group.addoption("--request-timeout", type=float, default=10.0, metavar="S", help="per-request timeout of the http fixture")
    group.addoption("--build-timeout", type=float, default=900.0, metavar="S", help="deadline for building one candidate")
    group.addoption("--boot-timeout", type=float, default=None, metavar="S", help="deadline for health (default: the task's health.timeout_s)")
    group.addoption("--strict-contract", action="store_true", help="fail an item whose responses break openapi.yaml (default: record only)")
    group.addoption("--resume", metavar="REPORT", help="skip candidates already finished in this report dir / report.json / journal")
    group.addoption("--rerun-errors", action="store_true", help="with --resume: run only the items that ended in a harness error")
    group.addoption("--memory", default="512m", help="memory limit per candidate container")
    group.addoption("--cpus", type=float, default=1.0, help="CPU limit per candidate container")
    group.addoption("--pids", type=int, default=256, help="process limit per candidate container")
    group.addoption("--image-alias", action="append", default=[], metavar="NAME=IMAGE", help="build FROM NAME with a local IMAGE (air-gapped machines)")
    group.addoption("--base-image", default=None, metavar="IMAGE", help="BASE_IMAGE build argument for candidate Dockerfiles")
    group.addoption("--repeat", type=int, default=1, metavar="N", help="run every candidate N times: flip rate, pass^k and a confidence interval for SR")
    group.addoption("--shard", default=None, metavar="K/N", help="evaluate only shard K of N (a deterministic split by task)")
    group.addoption(
        "--shard-durations", default=None, metavar="FILE",
        help="with --shard: balance shards by the task times in this durations.json or report.json (default: split by id)",
    )
    group.addoption("--seed", type=int, default=0, help="seed recorded in the manifest and given to candidates as BACKENDBENCH_SEED")
    group.addoption("--chromium", metavar="PATH", help="Chromium binary for Gherkin scenarios (default /usr/bin/chromium)")
    group.addoption("--chromedriver", metavar="PATH", help="ChromeDriver matching --chromium (default /usr/bin/chromedriver)")
    group.addoption("--headed", action="store_true", help="show the browser instead of running it headless")
    group.addoption("--browser-locale", metavar="LOCALE", help="the browser's locale (LANG), e.g. de-DE, for suites written for one")
    group.addoption("--browser-arg", action="append", default=[], metavar="ARG", help="extra Chromium flag (repeatable)")
    group.addoption(
        "--cdn", choices=("offline", "live", "off"), default="offline",
        help="CDN hosts in the browser: offline (default) serves them from npm packages cached locally, live uses the internet, off makes them fail fast",
    )
    group.addoption("--bdd-sleep", default="task", metavar="POLICY", help="time.sleep in step code: real, cap:S, S, or task (the task's e2edev.sleep_policy)")
    group.addoption("--generate", action="store_true", help="first let the generator for --model write candidates (from the visible task only), then evaluate them")
    group.addoption("--model", metavar="NAME", help="the generator's model: reference, openai:<model>, or what a conftest generator answers to")
    group.addoption("--samples", type=int, default=1, metavar="K", help="candidates per task to generate (pass@k)")
    group.addoption("--generate-jobs", type=int, default=1, metavar="N", help="generations to run at once")
    from .generators import add_generator_options

    add_generator_options(group)
    from .agents.settings import add_agent_options

    add_agent_options(group, parser)
    parser.addini("backendbench_image_aliases", "NAME=IMAGE lines, as --image-alias", type="linelist", default=[])
    parser.addini("backendbench_base_image", "default for --base-image", default="")
    parser.addini("backendbench_bench_root", "default for --bench-root (relative to the rootdir)", default="")


@pytest.hookimpl(trylast=True)  # after the terminal reporter exists: --generate reports progress
def pytest_configure(config: pytest.Config) -> None:
    for marker in MARKERS:
        config.addinivalue_line("markers", marker)
    candidate = config.getoption("candidate")
    generate = config.getoption("generate")
    if not candidate and not generate:
        return
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None and config.getoption("numprocesses", None) and config.getoption("dist", "no") not in ("loadgroup", "no"):
        raise pytest.UsageError(
            f"-n with --dist {config.getoption('dist')} would split a task's items over workers (one service, one database, "
            "in order); add --dist loadgroup"
        )
    bench_root = _bench_root(config)
    catalog = TaskCatalog(bench_root)
    task_ids = _selected_tasks(config, catalog)
    # before generating: agent sandboxes carry the session label too, so the reaper finds them
    session_id = workerinput["backendbench_session"] if workerinput else uuid.uuid4().hex[:12]
    if generate:
        candidate = workerinput["backendbench_candidate"] if workerinput else _generate(config, catalog, task_ids, candidate, session_id)
        config.option.candidate = candidate
    try:
        layout = resolve_layout(Path(candidate), task_ids)
    except BackendBenchFormatError as err:
        raise pytest.UsageError(f"--candidate: {err}") from err
    if layout.single_task is not None and not config.getoption("bb_tasks"):
        task_ids = [layout.single_task]  # one candidate: evaluate its task, not every task as missing
    tier = config.getoption("oracle_tier")
    if config.getoption("rerun_errors") and not config.getoption("resume"):
        raise pytest.UsageError("--rerun-errors needs --resume REPORT (the run whose errors to re-run)")
    previous: dict[str, Any] = {}
    if config.getoption("resume"):
        try:
            previous = {r.candidate: r for r in load_results(Path(config.getoption("resume")))}
            # a sample generated again in this run (its generation had failed for a harness reason) is evaluated again
            previous = {k: r for k, r in previous.items() if f"{r.task}@{r.sample}".rstrip("@") not in config.stash.get(GENERATED_KEY, set())}
        except HarnessError as err:
            raise pytest.UsageError(f"--resume: {err}") from err

    runtime_name, runtime_line = resolve_runtime_name(config.getoption("runtime"))
    options = _runtime_options(config, session_id, catalog, workerinput)
    report_dir = Path(config.getoption("report_dir"))
    if not report_dir.is_absolute():
        report_dir = Path(config.invocation_params.dir) / report_dir

    def make_runtime() -> Runtime:
        supplied = config.hook.pytest_backendbench_runtime(config=config)
        return supplied if supplied is not None else create_runtime(runtime_name, options)

    repeats = config.getoption("repeat")
    if repeats < 1:
        raise pytest.UsageError(f"--repeat {repeats}: expected a whole number >= 1")
    registry = TaskRunRegistry(catalog, layout, make_runtime, report_dir / "artifacts", repeats)
    config.stash[REGISTRY_KEY] = registry
    config.stash[SETTINGS_KEY] = BenchSettings(catalog, task_ids, tier, previous, runtime_name, session_id, runtime_line)
    config.stash[ITEM_OPTIONS_KEY] = ItemOptions(config.getoption("request_timeout"), config.getoption("strict_contract"))
    atexit.register(registry.close)
    config.add_cleanup(registry.close)
    config.option.continue_on_collection_errors = True  # one malformed task must not stop the others
    # oracle modules of different tasks share basenames (test_users.py); importlib mode keeps them apart
    config.option.importmode = "importlib"

    if config.args_source != pytest.Config.ArgsSource.ARGS:
        config.args[:] = _collection_args(catalog, task_ids)

    if workerinput is None:
        manifest = base_manifest(
            runtime_name,
            session_id,
            {k: _jsonable(config.getoption(k)) for k in ("candidate", "model", "samples", "bench_root", "bb_tasks", "oracle_tier", "alpha", "beta", "request_timeout", "strict_contract", "memory", "cpus", "pids", "repeat", "shard_durations")},
            config.getoption("seed"),
            config.getoption("shard"),
        )
        from .doctor import engines_of_run

        manifest["engines"] = engines_of_run(runtime_name, options.postgres_provider)
        carried = [r for r in previous.values() if r.finished]
        if config.getoption("rerun_errors"):
            for result in carried:
                result.items = [i for i in result.items if i.outcome != "error"]
        recorder = ResultRecorder(report_dir, manifest, MetricOptions(config.getoption("alpha"), config.getoption("beta")), carried, config.hook)
        config.stash[RECORDER_KEY] = recorder
        config.pluginmanager.register(recorder, "backendbench-recorder")
        if config.pluginmanager.hasplugin("xdist"):
            config.pluginmanager.register(XdistSessionId(session_id, str(Path(candidate).resolve())), "backendbench-xdist")
        _install_sigterm_handler(config)


class XdistSessionId:
    """Hands the controller's session id (so labels name one session) and the candidate folder
    (which --generate may have chosen) to every worker."""

    def __init__(self, session_id: str, candidate: str) -> None:
        self.session_id = session_id
        self.candidate = candidate

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["backendbench_session"] = self.session_id
        node.workerinput["backendbench_candidate"] = self.candidate


def _generate(config: pytest.Config, catalog: TaskCatalog, task_ids: list[str], candidate: str | None, session_id: str) -> str:
    """--generate: run the model's generator for every selected task, once, on the controller."""
    from .generate import GenerationSetupError, generate_candidates
    from .generators import OpenAISettings, register_builtin_generators

    model = config.getoption("model")
    if not model:
        raise pytest.UsageError("--generate needs --model NAME (reference, openai:<model>, or a conftest generator's model)")
    register_builtin_generators(config.pluginmanager, catalog.bench_root, OpenAISettings.from_config(config))
    from .agents.generator import register_agent_generator

    register_agent_generator(config, catalog.bench_root, session_id)
    out = Path(candidate) if candidate else Path(config.invocation_params.dir) / "backendbench-runs" / model.replace("/", "_").replace(":", "_")
    try:
        tasks = [catalog.load(t) for t in task_ids]
    except BackendBenchFormatError as err:
        raise pytest.UsageError(f"--generate: {err}") from err
    writer = config.get_terminal_writer()
    try:
        generate_candidates(
            config.hook, tasks, out, model, config.getoption("samples"), jobs=config.getoption("generate_jobs"),
            progress=lambda line: writer.line(f"backendbench generate: {line}"), resume=bool(config.getoption("resume")),
            generated=config.stash.setdefault(GENERATED_KEY, set()),
        )
    except (GenerationSetupError, BackendBenchFormatError) as err:
        raise pytest.UsageError(f"--generate: {err}") from err
    return str(out)


def _jsonable(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool, type(None), list)) else str(value)


def _bench_root(config: pytest.Config) -> Path:
    option = config.getoption("bench_root") or config.getini("backendbench_bench_root")
    root = Path(option) if option else Path(config.rootpath)
    if not root.is_absolute():
        root = (Path(config.invocation_params.dir) if config.getoption("bench_root") else Path(config.rootpath)) / root
    if not (root / "benchmarks").is_dir():
        raise pytest.UsageError(f"--bench-root: {root} has no benchmarks/ folder; point --bench-root at the folder holding benchmarks/ and oracles/")
    return root.resolve()


def _selected_tasks(config: pytest.Config, catalog: TaskCatalog) -> list[str]:
    known = catalog.task_ids()
    requested = config.getoption("bb_tasks") or known
    unknown = [t for t in requested if t not in known]
    if unknown:
        raise pytest.UsageError(f"--task: unknown task(s) {', '.join(unknown)}; tasks under {catalog.benchmarks_dir}: {', '.join(known) or 'none'}")
    if not requested:
        raise pytest.UsageError(f"no tasks under {catalog.benchmarks_dir}")
    selected = list(dict.fromkeys(requested))
    shard = config.getoption("shard")
    if shard:
        index, count = parse_shard(shard)
        durations = None
        if config.getoption("shard_durations"):
            from .dispatch.balance import load_durations

            try:
                durations = load_durations(Path(config.getoption("shard_durations")))
            except HarnessError as err:
                raise pytest.UsageError(f"--shard-durations: {err}") from err
        selected = shard_tasks(selected, index, count, durations)
    return selected


def parse_shard(text: str) -> tuple[int, int]:
    """``K/N`` -> (K, N) with 1 <= K <= N, else a usage error saying what is expected."""
    left, sep, right = text.partition("/")
    if not sep or not left.isdigit() or not right.isdigit() or not 1 <= int(left) <= int(right):
        raise pytest.UsageError(f"--shard {text!r}: expected K/N with 1 <= K <= N, e.g. --shard 2/3")
    return int(left), int(right)


def shard_tasks(task_ids: list[str], index: int, count: int, durations: dict[str, float] | None = None) -> list[str]:
    """Shard K of N: balanced by recorded durations when given, else every N-th task of the sorted ids."""
    from .dispatch.balance import shard_tasks as balanced

    return balanced(task_ids, index, count, durations)


def _runtime_options(config: pytest.Config, session_id: str, catalog: TaskCatalog, workerinput: dict[str, Any] | None) -> RuntimeOptions:
    aliases: dict[str, str] = {}
    env_aliases = os.environ.get("BACKENDBENCH_IMAGE_ALIASES", "")
    for entry in [*config.getini("backendbench_image_aliases"), *env_aliases.split(","), *config.getoption("image_alias")]:
        entry = entry.strip()
        if not entry:
            continue
        name, sep, image = entry.partition("=")
        if not sep or not name or not image:
            raise pytest.UsageError(f"--image-alias {entry!r}: expected NAME=IMAGE, e.g. python:3.12-slim=backendbench/python:3.11")
        aliases[name.strip()] = image.strip()
    aliases = aliases or dict(DEFAULT_IMAGE_ALIASES)
    base_image = config.getoption("base_image") or config.getini("backendbench_base_image") or os.environ.get("BACKENDBENCH_BASE_IMAGE") or None
    cores = os.cpu_count() or 1
    return RuntimeOptions(
        session_id=session_id,
        worker_id=workerinput["workerid"] if workerinput else "master",
        cache_dir=default_cache_dir(),
        mocks_dir=catalog.mocks_dir,
        build_timeout_s=config.getoption("build_timeout"),
        boot_timeout_s=config.getoption("boot_timeout"),
        request_timeout_s=config.getoption("request_timeout"),
        memory_limit=config.getoption("memory"),
        cpu_limit=config.getoption("cpus"),
        pids_limit=config.getoption("pids"),
        image_aliases=aliases,
        base_image=base_image,
        postgres_image=postgres_image_option(config),
        max_parallel_builds=max(1, cores // 2),
        max_running_services=max(2, cores),
    )


def _collection_args(catalog: TaskCatalog, task_ids: list[str]) -> list[str]:
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


def _install_sigterm_handler(config: pytest.Config) -> None:
    """SIGTERM ends the run like Ctrl-C: teardown runs and the report is written."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt("SIGTERM")

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous)

    signal.signal(signal.SIGTERM, on_sigterm)
    config.add_cleanup(restore)


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    settings = _settings(config)
    if settings is None:
        return None
    lines = [f"backendbench: {settings.runtime_line}; tasks: {', '.join(settings.task_ids)}; oracle tier: {settings.tier}"]
    from .doctor import diagnose

    lines.append(diagnose().summary_line())
    skipped = settings.catalog.folders_without_task()
    if skipped:
        lines.append(f"backendbench: not tasks (no task.yaml): {', '.join(skipped)}")
    return lines


# --- collection ---------------------------------------------------------------------------


def _settings(config: pytest.Config) -> BenchSettings | None:
    return config.stash.get(SETTINGS_KEY, None)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    settings = _settings(config)
    rootpath = Path(config.rootpath)
    if settings is None:
        # without --candidate, a plain `pytest` never collects oracles or references
        for folder in ("oracles", "benchmarks", "mocks"):
            if collection_path.is_relative_to(rootpath / folder):
                return True
        return None
    oracles = settings.catalog.oracles_dir
    if collection_path.is_relative_to(oracles) and collection_path != oracles:
        rel = collection_path.relative_to(oracles).parts
        if rel[0] not in settings.task_ids:
            return True
        if len(rel) >= 2 and rel[1] in ("reference", "mutants", "steps", "candidates"):
            return True
        if len(rel) >= 3 and rel[1] == "features" and rel[2] == "steps":
            return True
    if collection_path.is_relative_to(settings.catalog.mocks_dir):
        return True
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    settings = _settings(parent.config)
    if settings is None:
        return None
    catalog = settings.catalog
    if file_path.name == "task.yaml" and file_path.parent.parent == catalog.benchmarks_dir:
        return TaskFile.from_parent(parent, path=file_path)
    if file_path.suffix == ".feature" and file_path.is_relative_to(catalog.oracles_dir):
        try:
            from .bdd.gherkin import FeatureFile
        except ImportError as err:
            raise HarnessError(f"Gherkin scenarios need behave and selenium: {err}") from err
        return FeatureFile.from_parent(parent, path=file_path)  # type: ignore[no-any-return]
    return None


@pytest.hookimpl(wrapper=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> Generator[None, Any, Any]:
    result = yield
    settings = _settings(collector.config)
    if settings is None or result is None or not collector.path.is_relative_to(settings.catalog.oracles_dir):
        return result
    task_id = settings.catalog.task_of_path(collector.path)
    registry = collector.config.stash[REGISTRY_KEY]
    try:
        known = registry.task(task_id).requirements if task_id else {}
    except BackendBenchFormatError:
        known = {}
    for item in result if isinstance(result, list) else [result]:
        if isinstance(item, pytest.Function):
            problem = _marker_problem(item, known)
            if problem:
                raise collector.CollectError(f"{item.nodeid}: {problem}")
    return result


def _marker_problem(item: pytest.Item, known_requirements: dict[str, str]) -> str | None:
    """What is wrong with an oracle item's markers, or None."""
    requirement = list(item.iter_markers("requirement"))
    if not requirement or not any(m.args for m in requirement):
        return "oracle items need @pytest.mark.requirement('R1', ...) naming task.yaml requirements"
    ids = [str(a) for m in requirement for a in m.args]
    unknown = [r for r in ids if known_requirements and r not in known_requirements]
    if unknown:
        return f"requirement(s) {', '.join(unknown)} not in task.yaml (known: {', '.join(sorted(known_requirements))})"
    category = item.get_closest_marker("category")
    if category is None or not category.args:
        return "oracle items need @pytest.mark.category(...) with one of " + ", ".join(CATEGORIES)
    if category.args[0] not in CATEGORIES:
        return f"category {category.args[0]!r} is not one of {', '.join(CATEGORIES)}"
    weight = item.get_closest_marker("weight")
    if weight is not None and (not weight.args or not isinstance(weight.args[0], (int, float)) or weight.args[0] < 0):
        return "weight(...) takes one non-negative number"
    cwe = item.get_closest_marker("cwe")
    if cwe is not None and (len(cwe.args) != 1 or not isinstance(cwe.args[0], int) or isinstance(cwe.args[0], bool) or cwe.args[0] <= 0):
        return "cwe(...) takes one positive CWE number, e.g. @pytest.mark.cwe(639)"
    if category.args[0] == "security" and cwe is None:
        return "security items need @pytest.mark.cwe(<number>) naming the weakness they check (e.g. 639 for IDOR)"
    return None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    settings = _settings(metafunc.config)
    if settings is None or not metafunc.definition.path.is_relative_to(settings.catalog.oracles_dir):
        return
    task_id = settings.catalog.task_of_path(metafunc.definition.path)
    if task_id is None:
        return
    samples = metafunc.config.stash[REGISTRY_KEY].samples(task_id)
    if samples != [""] and "backendbench_sample" in metafunc.fixturenames:
        metafunc.parametrize("backendbench_sample", samples, ids=samples)


def item_kind(item: pytest.Item) -> str:
    """http for Python oracle functions, else the item class's declared kind."""
    return getattr(item, "backendbench_kind", "http")


def item_tier(item: pytest.Item) -> str:
    marker = item.get_closest_marker("tier")
    return str(marker.args[0]) if marker and marker.args else "base"


def pytest_itemcollected(item: pytest.Item) -> None:
    """Tie each task item to its candidate run as it is collected.

    The xdist group marker must exist before any plugin's modifyitems runs: xdist's worker
    turns it into the node id suffix that keeps a task's items on one worker.
    """
    settings = _settings(item.config)
    if settings is None:
        return
    task_id = settings.catalog.task_of_path(Path(item.path))
    if task_id is None or task_id not in settings.task_ids:
        return
    registry = item.config.stash[REGISTRY_KEY]
    problem = _task_problem(registry, task_id, settings.task_problems)
    if problem is not None:
        item.stash[MALFORMED_TASK_KEY] = problem
        return
    sample = getattr(item, "sample", None)
    if sample is None:
        callspec = getattr(item, "callspec", None)
        sample = callspec.params.get("backendbench_sample", "") if callspec else ""
        if not sample:
            sample = registry.samples(task_id)[0]
    key = f"{task_id}@{sample}" if sample else task_id
    item.stash[CANDIDATE_KEY] = key
    item.add_marker(pytest.mark.xdist_group(key))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    settings = _settings(config)
    if settings is None:
        return
    order = {task_id: index for index, task_id in enumerate(settings.task_ids)}
    tiers = ordered_tiers(item_tier(i) for i in items if item_kind(i) not in KIND_ORDER or KIND_ORDER[item_kind(i)] >= 3)
    limit = settings.tier
    if limit != "final" and tiers and limit not in tiers and limit != "base":
        raise pytest.UsageError(f"--oracle-tier {limit!r}: the selected tasks have tiers {', '.join(tiers)} (or use final)")

    selected: list[pytest.Item] = []
    deselected: list[pytest.Item] = []
    rerun_errors = config.getoption("rerun_errors")
    error_nodeids = {i.nodeid for r in settings.previous.values() for i in r.items if i.outcome == "error"}
    for item in items:
        key = item.stash.get(CANDIDATE_KEY, None)
        if key is None:  # the harness's own tests, or a task that cannot run (marked at collection)
            selected.append(item)
            continue
        kind = item_kind(item)
        is_oracle = KIND_ORDER.get(kind, 3) >= 3
        previous = settings.previous.get(key)
        if rerun_errors:
            keep = item.nodeid in error_nodeids
        else:
            keep = previous is None or not previous.finished
        if keep and is_oracle and limit != "final" and tier_sort_key(item_tier(item)) > tier_sort_key(limit):
            keep = False
        (selected if keep else deselected).append(item)

    def sort_key(item: pytest.Item) -> tuple[int, tuple[int, int], int]:
        key = item.stash.get(CANDIDATE_KEY, None)
        if key is None:
            task_id = settings.catalog.task_of_path(Path(item.path))
            return (order.get(task_id, len(order)) if task_id else len(order), (0, 0), 0)
        task_id, _, label = key.partition("@")
        return (order[task_id], run_label_order(label), KIND_ORDER.get(item_kind(item), 3))

    selected.sort(key=sort_key)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
    items[:] = selected


def _task_problem(registry: TaskRunRegistry, task_id: str, checked: dict[str, str | None]) -> str | None:
    """Why a task cannot run at all (malformed task.yaml or contract), checked once per task."""
    if task_id not in checked:
        try:
            registry.contract(task_id)
            checked[task_id] = None
        except BackendBenchFormatError as err:
            checked[task_id] = str(err)
    return checked[task_id]


# --- running ------------------------------------------------------------------------------


def _run_of(item: pytest.Item) -> TaskRun | None:
    registry = item.config.stash.get(REGISTRY_KEY, None)
    if registry is None or CANDIDATE_KEY not in item.stash:
        return None
    return registry.for_item(item)


def _precondition(run: TaskRun, item: pytest.Item) -> BaseException | None:
    """The failure that keeps this item from running (build/boot failed, service died), if any."""
    kind = item_kind(item)
    try:
        if kind == "build":
            return None
        if kind == "boot":
            run.ensure_built()
        else:
            run.ensure_started()
    except (CandidateFailure, HarnessError) as failure:
        return failure
    except Exception as err:  # noqa: BLE001 - a bug of ours or the engine's becomes a harness error
        return HarnessError(f"{type(err).__name__}: {err}")
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    malformed = item.stash.get(MALFORMED_TASK_KEY, None)
    if malformed is not None:
        _report_without_running(item, nextitem, HarnessError(f"the task is malformed, nothing of it can run: {malformed}"))
        return True
    run = _run_of(item)
    if run is None:
        return None
    blocker = _precondition(run, item)
    if blocker is None:
        return None
    _report_without_running(item, nextitem, blocker)
    return True


def _report_without_running(item: pytest.Item, nextitem: pytest.Item | None, blocker: BaseException) -> None:
    """Emit setup/call/teardown reports for an item that cannot run, without its fixtures.

    A candidate failure fails the call phase (a failure, counted against the candidate); a
    harness error fails the setup phase (an error, never counted).
    """
    ihook = item.ihook
    ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)

    def raise_blocker() -> None:
        raise blocker.with_traceback(None)  # shared by many items: never let its traceback grow

    harness = isinstance(blocker, HarnessError)
    setup = pytest.CallInfo.from_call(raise_blocker if harness else (lambda: None), when="setup")
    ihook.pytest_runtest_logreport(report=ihook.pytest_runtest_makereport(item=item, call=setup))
    if not harness:
        call = pytest.CallInfo.from_call(raise_blocker, when="call")
        ihook.pytest_runtest_logreport(report=ihook.pytest_runtest_makereport(item=item, call=call))
    _finish_task_if_last(item, nextitem)
    teardown = pytest.CallInfo.from_call(lambda: None, when="teardown")
    ihook.pytest_runtest_logreport(report=ihook.pytest_runtest_makereport(item=item, call=teardown))
    ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)


def _finish_task_if_last(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    run = _run_of(item)
    if run is None:
        return
    if nextitem is None or nextitem.stash.get(CANDIDATE_KEY, None) != item.stash[CANDIDATE_KEY]:
        item.stash[TASK_DATA_KEY] = run.finish()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    try:
        return (yield)
    finally:
        _finish_task_if_last(item, nextitem)


def _classify(excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    """failed (the candidate's fault) or error (the oracle's, ours, or the machine's)."""
    exc = excinfo.value
    if isinstance(exc, HarnessError):
        return "error"
    if isinstance(exc, (AssertionError, requests.RequestException, pytest.fail.Exception)):
        return "failed"
    if isinstance(exc, (NameError, ImportError, SyntaxError)) or type(exc).__name__ == "FixtureLookupError":
        return "error"  # a broken oracle, not a broken candidate
    package = Path(__file__).parent
    last = excinfo.traceback[-1] if excinfo.traceback else None
    if last is not None and Path(str(last.path)).is_relative_to(package):
        return "error"  # raised inside the harness: a bug of ours
    return "failed"


def _reason(exc: BaseException, run: TaskRun | None) -> str:
    """A one-line reason for the report."""
    if isinstance(exc, CandidateFailure):
        return f"[{exc.phase.value}] {exc.title}"
    if isinstance(exc, HarnessError):
        return f"[harness error] {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    if isinstance(exc, requests.RequestException):
        request = getattr(exc, "request", None)
        target = f"{request.method} {urlsplit(request.url).path}" if request is not None and request.url else "request"
        if isinstance(exc, requests.Timeout):
            return f"{target}: no answer within the request timeout (the service hung)"
        if run is not None and run.service is not None and not run.service.alive():
            return f"{target}: connection failed, the service {run.service.exit_reason()}"
        if isinstance(exc, requests.JSONDecodeError):
            return f"the service's answer is not valid JSON: {exc}"
        return f"{target}: {type(exc).__name__}: connection failed or was reset"
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    run = _run_of(item)
    if run is None:
        if MALFORMED_TASK_KEY in item.stash and call.excinfo is not None:
            report.longrepr = describe_failure(call.excinfo.value)
        return report
    kind = item_kind(item)
    outcome = "passed"
    message = ""
    phase = "tests"
    if report.skipped:
        outcome = "skipped"
    elif report.failed and call.excinfo is not None:
        exc = call.excinfo.value
        outcome = _classify(call.excinfo)
        if outcome == "failed" and run.service is not None and kind in ("http", "bdd", "snapshot"):
            try:
                run.check_alive()
            except CandidateFailure:
                pass
        message = _reason(exc, run)
        if isinstance(exc, CandidateFailure):
            phase = exc.phase.value
            if kind in ("http", "bdd", "snapshot") or not hasattr(item, "repr_failure"):
                report.longrepr = describe_failure(exc)
        elif isinstance(exc, HarnessError):
            report.longrepr = describe_failure(exc)
        elif isinstance(exc, requests.RequestException):
            report.longrepr = f"{message}\n{_oracle_location(call.excinfo, run)}"
    sessions = item.stash.get(HTTP_STATS_KEY, [])
    requirements = [str(a) for m in item.iter_markers("requirement") for a in m.args]
    category = item.get_closest_marker("category")
    weight = item.get_closest_marker("weight")
    data: dict[str, Any] = {
        "task": run.task.id,
        "candidate": run.key,
        "sample": run.sample,
        "repeat": run.repeat,
        "kind": kind,
        "outcome": outcome,
        "phase": phase,
        "message": message,
        "requirements": requirements,
        "category": str(category.args[0]) if category and category.args else None,
        "cwe": _cwe_of(item),
        "tier": item_tier(item),
        "weight": float(weight.args[0]) if weight and weight.args else 1.0,
        "requests": sum(s.request_count for s in sessions),
        "contract_checked": sum(s.checked for s in sessions),
        "contract_violations": [v for s in sessions for v in s.violations][:20],
        "artifacts": {k: str(v) for k, v in item.user_properties if k in ("screenshot",)},
    }
    extra: dict[str, Any] = item.stash.get(ITEM_EXTRA_KEY, {})
    data.update(extra)
    if report.when == "teardown" and TASK_DATA_KEY in item.stash:
        task_data: dict[str, Any] = item.stash[TASK_DATA_KEY]
        data["task_data"] = {**task_data, "generation": getattr(run.candidate, "generation", {}) or {}}
    report.backendbench = data  # type: ignore[attr-defined]
    return report


def _cwe_of(item: pytest.Item) -> int | None:
    """The CWE number of a security item (validated at collection), or None."""
    marker = item.get_closest_marker("cwe")
    return int(marker.args[0]) if marker is not None and marker.args else None


def _oracle_location(excinfo: pytest.ExceptionInfo[BaseException], run: TaskRun) -> str:
    for entry in reversed(excinfo.traceback):
        if Path(str(entry.path)).is_relative_to(run.task.oracle_dir):
            return f"at {entry.path}:{entry.lineno + 1}: {str(entry.statement).strip()}"
    return ""


@pytest.hookimpl(tryfirst=True)
def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> tuple[str, str, str] | None:
    data = getattr(report, "backendbench", None)
    if not isinstance(data, dict) or not report.failed:
        return None
    if data["outcome"] == "error" and report.when == "call":
        return "error", "E", "ERROR"
    if data["outcome"] == "failed" and report.when == "setup":
        return "failed", "F", "FAILED"
    return None


def pytest_sessionfinish(session: pytest.Session) -> None:
    registry = session.config.stash.get(REGISTRY_KEY, None)
    if registry is not None:
        registry.close()
    settings = _settings(session.config)
    if settings is not None and settings.runtime_name == "docker" and not hasattr(session.config, "workerinput"):
        _reap_session_objects(settings.session_id)


def _reap_session_objects(session_id: str) -> None:
    """Last line of defence on the controller: remove whatever a worker could not (killed, crashed)."""
    try:
        from .runtime.cleanup import remove_session_objects

        remove_session_objects(None, session_id)
    except (HarnessError, ImportError):
        pass  # no engine to clean: nothing of ours can be running there


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    recorder = config.stash.get(RECORDER_KEY, None)
    if recorder is None or recorder.document is None:
        return
    document = recorder.document
    terminalreporter.section("backendbench summary")
    header, rows = task_rows(document)
    for line in render_grid(header, rows):
        terminalreporter.write_line(line)
    terminalreporter.write_line("")
    terminalreporter.write_line(sr_line(document["summary"]), bold=True)
    width = max(len(name) for name, _ in summary_rows(document))
    for name, value in summary_rows(document):
        terminalreporter.write_line(f"{name.ljust(width)}  {value}")
    terminalreporter.write_line(f"report: {recorder.report_dir / 'report.json'}")
