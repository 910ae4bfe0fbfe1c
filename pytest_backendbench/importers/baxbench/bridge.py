"""Runs one of BaxBench's tests, unchanged, as a pytest item against the candidate's container.

The imported bench keeps BaxBench's scenario modules, ``exploits.py``, ``cwes.py`` and scenario
files under ``oracles/_baxbench/`` (names pytest does not collect); each task's generated
``test_baxbench.py`` calls :meth:`BaxBenchTask.functional` or :meth:`BaxBenchTask.security`
once per BaxBench test. What BaxBench's runner (``tasks.py``, ``Task.test_code``) does around a
test is done here the same way, in the same order:

- the test gets an ``AppInstance`` whose ``port`` is the container fixture's localhost
  forwarder and whose ``container_id`` is the engine's id; every ``docker.from_env()`` in the
  copied modules answers the fixture's engine (Docker, rootless Podman or a remote engine);
- the crash check runs before and after the test (``ps`` in the container, looking for the
  entry point command): a server process gone after the test adds CWE-703, unless the test
  found CWE-400 (the exhaustion explains the crash);
- a functional test passes when it returns a true value; an exception or the time limit fails
  it; a crash during it adds CWE-703 to the item's ``found_cwes`` (BaxBench counts it as a
  security result of the sample) without changing the functional verdict;
- a security test fails listing every CWE it returns; ``None``, an exception or the time
  limit is *inconclusive*: the item passes and counts no CWE, as in BaxBench, and says so.

``__oracle_support__``: a failure raised here is the candidate's, not the harness's.
"""

from __future__ import annotations

import importlib
import logging
import sys
import threading
import types
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker

from ...errors import OracleError
from ...results import FOUND_CWES_PROPERTY, INCONCLUSIVE_PROPERTY
from .standin_env import Env

__oracle_support__ = True

VENDORED_DIR = "_baxbench"
"""The folder below oracles/ holding BaxBench's copied modules (shared by every imported task)."""
CRASH_CWE = 703
EXHAUSTION_CWE = 400
LOG_TAIL_LINES = 12
BAXBENCH_EXTRA_MODULES = {"imageio": "imageio", "pdfplumber": "pdfplumber"}
"""Modules BaxBench's scenario modules import that the harness does not depend on: the
``[baxbench]`` extra (module -> distribution). docker, requests and yaml are dependencies."""


class InconclusiveWarning(UserWarning):
    """A BaxBench security test that could not complete: the item passes, counting no CWE."""


class _BoundDocker(types.ModuleType):
    """``docker`` as BaxBench's copied modules see it: ``from_env()`` is the candidate's engine."""

    def __init__(self) -> None:
        super().__init__("docker")
        self.engine: Any = None

    def from_env(self, *args: Any, **kwargs: Any) -> Any:
        if self.engine is None:
            raise RuntimeError("BaxBench's code asked for Docker outside a test: no candidate container is bound")
        return self.engine

    def __getattr__(self, name: str) -> Any:
        return getattr(docker, name)


BOUND_DOCKER = _BoundDocker()


def _load(src: Path, scenario_module: str) -> types.ModuleType:
    """Import ``scenarios.<module>`` from the vendored tree and bind its Docker use to the fixture."""
    if str(src) not in sys.path:
        sys.path.insert(0, str(src))
    try:
        module = importlib.import_module(f"scenarios.{scenario_module}")
    except ModuleNotFoundError as err:
        top = (err.name or "").split(".")[0]
        if top not in BAXBENCH_EXTRA_MODULES:
            raise
        raise OracleError(
            f"BaxBench's scenario module {scenario_module} imports {top}, which this Python lacks: "
            f"install the baxbench extra: pip install 'pytest-backendbench[baxbench]' ({BAXBENCH_EXTRA_MODULES[top]})"
        ) from err
    for name in ("exploits", "env.base", f"scenarios.{scenario_module}"):
        loaded = sys.modules.get(name)
        if loaded is not None and isinstance(getattr(loaded, "docker", None), types.ModuleType):
            loaded.docker = BOUND_DOCKER  # type: ignore[attr-defined]
    from . import standin_env

    standin_env.docker = BOUND_DOCKER  # type: ignore[attr-defined]
    return module


@dataclass
class Outcome:
    """What BaxBench's runner would record for one test."""

    value: Any = None
    returned: bool = False  # the test returned (an exception after that keeps its value, as in BaxBench)
    error: str | None = None
    crashed: bool = False


class BaxBenchTask:
    """One imported (scenario, framework): where its copied tests live and how its server runs."""

    def __init__(self, test_file: str, scenario_module: str, env: dict[str, Any], timeout_s: float = 300.0) -> None:
        self.src = Path(test_file).resolve().parent.parent / VENDORED_DIR
        self.scenario_module = scenario_module
        self.env = Env(**env)
        self.timeout_s = timeout_s

    def _test(self, name: str) -> Any:
        module = _load(self.src, self.scenario_module)
        test = getattr(module, name, None)
        if not callable(test):
            raise TypeError(f"BaxBench scenario module {self.scenario_module} has no test {name} (re-run the import)")
        return test

    def _run(self, name: str, container: Any, log_dir: Path) -> tuple[Outcome, Path]:
        """The test inside BaxBench's ``with ContainerRunner(...)`` block, crash check included."""
        test = self._test(name)
        from scenarios.base import AppInstance

        log_file = log_dir / f"{name}.log"
        logger = logging.getLogger(f"baxbench.{container.id}.{name}")
        logger.setLevel(logging.INFO)
        handler = logging.FileHandler(log_dir / "runner.log")
        logger.addHandler(handler)
        outcome = Outcome()
        BOUND_DOCKER.engine = container.engine
        try:
            ran_before = self.env.process_still_running(container.id, logger)
            instance = AppInstance(port=container.localhost_port, log_file_path=log_file, container_id=container.id, env=self.env)  # type: ignore[arg-type]
            outcome.value = self._call_with_timeout(test, instance)
            outcome.returned = True
            if not self.env.process_still_running(container.id, logger) and ran_before:
                outcome.crashed = True
        except Exception as err:  # noqa: BLE001 - BaxBench's runner catches everything around a test
            outcome.error = f"{type(err).__name__}: {err}"
        finally:
            BOUND_DOCKER.engine = None
            logger.removeHandler(handler)
            handler.close()
        return outcome, log_file

    def _call_with_timeout(self, test: Any, instance: Any) -> Any:
        """The test's result; ``TimeoutError`` after ``timeout_s`` (BaxBench: ``run_test_with_timeout``)."""
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["value"] = test(instance)
            except BaseException as err:  # noqa: BLE001 - re-raised in the item's thread
                box["error"] = err

        thread = threading.Thread(target=target, name=f"baxbench-{test.__name__}", daemon=True)
        thread.start()
        thread.join(self.timeout_s)
        if thread.is_alive():
            raise TimeoutError(f"the test did not finish within {self.timeout_s:g}s")
        if "error" in box:
            raise box["error"]
        return box.get("value")

    def functional(self, name: str, container: Any, log_dir: Path, record_property: Any) -> None:
        """A functional test: passes when it returns a true value."""
        __tracebackhide__ = True
        outcome, log_file = self._run(name, container, log_dir)
        if outcome.crashed:
            record_property(FOUND_CWES_PROPERTY, [CRASH_CWE])
        if not outcome.returned:
            raise AssertionError(f"{name} raised {outcome.error}{_tail(log_file)}")
        if not outcome.value:
            crash = " (the server process crashed during the test: CWE-703)" if outcome.crashed else ""
            raise AssertionError(f"{name} returned {outcome.value!r}{crash}{_tail(log_file)}")

    def security(self, name: str, container: Any, log_dir: Path, record_property: Any) -> None:
        """A security test: fails with every CWE it finds; None (could not complete) is inconclusive."""
        __tracebackhide__ = True
        outcome, log_file = self._run(name, container, log_dir)
        cwes = outcome.value if outcome.returned else None
        if outcome.crashed:
            cwes = set() if cwes is None else cwes
            if not any(_number(c) == EXHAUSTION_CWE for c in cwes):
                cwes = set(cwes) | {CRASH_CWE}
        if cwes is None:
            record_property(INCONCLUSIVE_PROPERTY, True)
            record_property(FOUND_CWES_PROPERTY, [])
            why = outcome.error or "it returned None"
            warnings.warn(InconclusiveWarning(f"BaxBench's {name} could not complete ({why}): inconclusive, no CWE counted"), stacklevel=1)
            return
        found = sorted({_number(c) for c in cwes})
        record_property(FOUND_CWES_PROPERTY, found)
        record_property(INCONCLUSIVE_PROPERTY, False)
        if found:
            named = ", ".join(f"CWE-{n}" for n in found)
            crash = " (the server process crashed during the test)" if outcome.crashed else ""
            raise AssertionError(f"{name} found {named}{crash}{_tail(log_file)}")


def _number(cwe: Any) -> int:
    """A CWE as its number: BaxBench's ``cwes.CWE`` member, or the number the crash check adds."""
    if isinstance(cwe, int):
        return cwe
    value = getattr(cwe, "value", None)
    if isinstance(value, dict) and isinstance(value.get("num"), int):
        return int(value["num"])
    raise TypeError(f"not a BaxBench CWE: {cwe!r}")


def _tail(log_file: Path) -> str:
    """The end of the test's own log (BaxBench's tests explain themselves there)."""
    try:
        lines = log_file.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return ("\n--- " + log_file.name + " (last lines) ---\n" + "\n".join(lines[-LOG_TAIL_LINES:])) if lines else ""
