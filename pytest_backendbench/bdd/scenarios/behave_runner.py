"""Running one Gherkin scenario in-process through behave's own runner.

A scenario gets a fresh step registry with only its own step definitions
(:mod:`.step_loading` explains why behave's global registry needs that), the E2EDev
compatibility rewrites of its step code (same module), a :class:`~.scenario_driver.ScenarioDriver`
over the browser session it was given, and a verdict on whose fault a failure is
(:mod:`.verdicts`). Scenarios may run in several threads at once (one browser session each,
bdd/scheduling/pool.py): nothing here holds per-run state outside the call.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from behave.configuration import Configuration
from behave.model_core import FileLocation
from behave.runner import Context, ModelRunner
from behave.runner_util import parse_features

from .scenario_driver import ScenarioDriver, StepServers, ports_of
from .step_loading import (
    E2EDEV_REAL_SLEEP_PROJECTS,
    E2EDEV_SLEEP_CAP_S,
    PROCESS_STATE,
    SCENARIO_HOOKS,
    OracleLoadError,
    SleepPolicy,
    collect_hooks,
    load_environment,
    load_step_definitions,
    make_shims,
)
from .verdicts import (
    BEHAVE_PACKAGE,
    HARNESS_PACKAGE,
    ORACLE_FAULT,
    STATUSES,
    FailingStep,
    ScenarioResult,
    format_exception,
    judge,
)

BEHAVE_ARGS = (
    "--no-summary",
    "--format=null",
    "--no-capture",  # pytest captures output; behave's capture would hide it from pytest
    "--no-capture-stderr",
    "--no-logcapture",
    "--no-color",
    "--no-snippets",
)
SERVER_MARKERS = (b"TCPServer", b"HTTPServer")
"""Step code mentioning these may start a server at import: its URLs wait for the bind."""


class ScenarioRunner:
    """Runs scenarios through behave's ModelRunner (one per scenario), in any thread.

    Holds the behave configuration, which costs a few milliseconds to build.
    """

    def __init__(self, sleep: SleepPolicy | None = None) -> None:
        self.sleep = sleep or SleepPolicy.real()
        self.config = Configuration(command_args=list(BEHAVE_ARGS), load_config=False)

    def run(
        self,
        feature_path: Path,
        line: int,
        step_modules: Sequence[Path],
        *,
        driver: Any,
        base_url: str,
        entry_url: str | None = None,
        environment_file: Path | None = None,
        sleep: SleepPolicy | None = None,
        app_dir: Path | None = None,
        entry_file: Path | None = None,
    ) -> ScenarioResult:
        """Run the scenario at ``feature_path:line`` (an outline's example row line for one row).

        ``driver`` is a selenium WebDriver (a browser session of the worker); the scenario sees
        it as ``context.driver`` (a :class:`ScenarioDriver`) next to ``context.base_url``.
        ``app_dir`` (the entry page's folder of a static candidate) is the working directory
        while the scenario runs, as under E2EDev's runner, so a server the step code starts
        on the current folder serves the app; ``entry_file`` (its entry page) is what the step
        code's ``file_path`` names. KeyboardInterrupt propagates; every other outcome is a
        :class:`ScenarioResult`.
        """
        started = time.perf_counter()
        feature_path = Path(feature_path).resolve()
        step_modules = [Path(p).resolve() for p in step_modules]
        result = ScenarioResult(status="error", scenario="", feature=str(feature_path), line=line)
        entry = entry_url or base_url.rstrip("/") + "/"
        step_servers = StepServers(expect_servers=_mentions_servers(step_modules), keep_ports=ports_of(base_url, entry))
        scenario_driver = ScenarioDriver(driver, base_url, entry, step_servers)
        shims = make_shims(scenario_driver, sleep or self.sleep)
        folders = [p.parent for p in step_modules] + ([environment_file.parent] if environment_file else [])
        try:
            with PROCESS_STATE.paths(folders), PROCESS_STATE.working_directory(app_dir):
                try:
                    registry, namespaces = load_step_definitions(step_modules, shims, entry_file)
                    environment = load_environment(environment_file, shims) if environment_file else None
                except OracleLoadError as err:
                    result.message = ORACLE_FAULT + str(err)
                    result.traceback = format_exception(err.__cause__ or err)
                    return result
                feature = parse_features([FileLocation(str(feature_path), line)], language=self.config.lang)[0]
                scenario = next((s for s in feature.walk_scenarios() if s.line == line), None)
                if scenario is None:
                    lines = ", ".join(str(s.line) for s in feature.walk_scenarios())
                    result.message = ORACLE_FAULT + f"no scenario starts at {feature_path}:{line} (scenarios start at lines {lines})"
                    return result
                result.scenario = scenario.name
                runner = ModelRunner(self.config, features=[feature], step_registry=registry)
                runner.hooks = collect_hooks(environment, namespaces)
                runner.context = Context(runner)
                with runner.context.use_with_user_mode():
                    # user mode: a step assigning context.driver must not warn about masking
                    runner.context.base_url = base_url
                    runner.context.driver = scenario_driver
                runner.run_model()
                if runner.aborted:
                    raise KeyboardInterrupt("scenario aborted")
                judge(scenario, result)
        finally:
            step_servers.close()
            result.duration = time.perf_counter() - started
        return result


def _mentions_servers(step_modules: Sequence[Path]) -> bool:
    for path in step_modules:
        try:
            source = path.read_bytes()
        except OSError:
            continue
        if any(marker in source for marker in SERVER_MARKERS):
            return True
    return False


def run_scenario(
    feature_path: Path,
    line: int,
    step_modules: Sequence[Path],
    *,
    driver: Any,
    base_url: str,
    entry_url: str | None = None,
    environment_file: Path | None = None,
    sleep: SleepPolicy | None = None,
    app_dir: Path | None = None,
) -> ScenarioResult:
    """One-off convenience around :meth:`ScenarioRunner.run`."""
    return ScenarioRunner(sleep).run(
        feature_path, line, step_modules, driver=driver, base_url=base_url, entry_url=entry_url, environment_file=environment_file, app_dir=app_dir
    )


__all__ = [
    "BEHAVE_PACKAGE",
    "E2EDEV_REAL_SLEEP_PROJECTS",
    "E2EDEV_SLEEP_CAP_S",
    "HARNESS_PACKAGE",
    "ORACLE_FAULT",
    "SCENARIO_HOOKS",
    "STATUSES",
    "FailingStep",
    "OracleLoadError",
    "ScenarioDriver",
    "ScenarioResult",
    "ScenarioRunner",
    "SleepPolicy",
    "StepServers",
    "collect_hooks",
    "load_step_definitions",
    "run_scenario",
]
