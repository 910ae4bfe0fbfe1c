"""Loading one scenario's step code: a fresh step registry, E2EDev compatibility shims.

behave's step registry is module-global: its decorators are bound to
``behave.step_registry.registry``, so loading a second steps module that defines the same
step text raises ``AmbiguousStep`` even after the module attribute is replaced (behave issues
#264, #209, #549). Each scenario therefore loads its step modules into that registry after
clearing its per-keyword lists in place (one loader at a time), moves the step definitions into
a registry of its own, and clears the global one again.

Step modules get E2EDev compatibility at load time, without changing their files
(docs/bdd.md lists each rewrite): each module runs with its own ``__import__`` in its own
``__builtins__`` (never the process's), which hands it substitute modules: ``webdriver.Chrome``
is the scenario's browser session, ``time.sleep`` follows a :class:`SleepPolicy`, and server
classes bind a free port (:class:`~.scenario_driver.StepServers`). behave's API has no hook for
what a steps module imports, so this is the one place that decides it.

Scenarios of one worker may run at the same time (the browser pool, bdd/scheduling/pool.py), so the
process-wide state a scenario needs (its step folders on ``sys.path``, the app's folder as the
working directory) is shared with reference counts instead of being set and restored by each.
"""

from __future__ import annotations

import builtins
import contextlib
import http.server
import os
import socketserver
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from behave.step_registry import AmbiguousStep, StepRegistry

from .scenario_driver import ScenarioDriver

SCENARIO_HOOKS = ("before_scenario", "after_scenario")
E2EDEV_SLEEP_CAP_S = 0.5
E2EDEV_REAL_SLEEP_PROJECTS = frozenset({"05", "21", "27", "37"})
"""E2EDev's own runner keeps these projects' sleeps (their pages animate or poll on timers)."""

E2EDEV_EXTRA_MODULES = {"bs4": "beautifulsoup4", "PIL": "Pillow", "cv2": "opencv-python-headless", "numpy": "numpy"}
"""What E2EDev's step modules import besides selenium and behave: the ``[e2edev]`` extra."""

# Registering step definitions goes through behave's module-global registry: one loader at a time.
_REGISTRY_LOCK = threading.Lock()


@dataclass(frozen=True)
class SleepPolicy:
    """What ``time.sleep(n)`` in a step module does: sleep ``min(n, cap_s)``, or all of n."""

    cap_s: float | None = None

    @classmethod
    def real(cls) -> SleepPolicy:
        """Sleeps last as long as the step code says."""
        return cls(None)

    @classmethod
    def capped(cls, cap_s: float = E2EDEV_SLEEP_CAP_S) -> SleepPolicy:
        """Sleeps last at most cap_s seconds (E2EDev's runner uses 0.5)."""
        return cls(cap_s)

    @classmethod
    def parse(cls, text: str) -> SleepPolicy:
        """``real``, ``cap:SECONDS`` or a bare number of seconds; ValueError says what is allowed."""
        value = str(text).strip().lower()
        if value == "real":
            return cls.real()
        number = value.removeprefix("cap:").strip()
        try:
            cap = float(number)
        except ValueError:
            raise ValueError(f"sleep policy {text!r}: expected 'real', 'cap:SECONDS' or a number of seconds") from None
        if cap < 0:
            raise ValueError(f"sleep policy {text!r}: the cap must not be negative")
        return cls.capped(cap)

    @classmethod
    def for_e2edev_project(cls, project: str) -> SleepPolicy:
        """E2EDev's rule: real sleeps for projects 05, 21, 27 and 37, at most 0.5 s elsewhere."""
        number = project.rsplit("_", 1)[-1].rsplit("-", 1)[-1]
        return cls.real() if number in E2EDEV_REAL_SLEEP_PROJECTS else cls.capped()

    def __str__(self) -> str:
        return "real" if self.cap_s is None else f"cap:{self.cap_s:g}"

    def make_sleep(self, real_sleep: Callable[[float], None] = time.sleep) -> Callable[[float], None]:
        """The ``sleep`` function step modules see."""
        cap = self.cap_s
        if cap is None:
            return real_sleep

        def sleep(seconds: float) -> None:
            real_sleep(max(0.0, min(float(seconds), cap)))

        return sleep


class OracleLoadError(Exception):
    """A steps module or environment file could not be loaded (import error, ambiguous step)."""


class _ModuleShim(types.ModuleType):
    """A module that is the real one except for a few overridden names."""

    def __init__(self, real: types.ModuleType, overrides: dict[str, Any]) -> None:
        super().__init__(real.__name__, real.__doc__)
        self.__dict__.update(overrides)
        self.__dict__["_backendbench_real_module"] = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_backendbench_real_module"], name)


class _ScenarioStepRegistry(StepRegistry):
    """One scenario's step definitions.

    Also matches a step whose text ends in ':' (before a table or text) against a
    definition without the colon, as behave 1.2.6 did and 1.3 no longer does.
    """

    def find_match(self, step: Any) -> Any:
        match = super().find_match(step)
        if match is None and step.name.rstrip().endswith(":"):
            original = step.name
            step.name = original.rstrip()[:-1].rstrip()
            try:
                match = super().find_match(step)
            finally:
                step.name = original
        return match


def make_shims(driver: ScenarioDriver, sleep: SleepPolicy) -> dict[str, types.ModuleType]:
    """Modules a step module imports instead of the real ones (by top-level import name)."""
    import selenium
    import selenium.webdriver
    import selenium.webdriver.chrome.webdriver

    def chrome(*args: Any, **kwargs: Any) -> ScenarioDriver:
        """``webdriver.Chrome(...)``: the shared browser; only a --window-size argument is honoured."""
        options = kwargs.get("options") or kwargs.get("chrome_options") or next(
            (a for a in args if hasattr(a, "arguments")), None
        )
        for argument in getattr(options, "arguments", []) or []:
            if str(argument).startswith("--window-size="):
                try:
                    width, height = (int(v) for v in str(argument).split("=", 1)[1].split(","))
                    driver.wrapped_driver.set_window_size(width, height)
                except ValueError:
                    pass
        return driver

    step_servers = driver.step_servers
    server_classes = {
        name: step_servers.server_class(getattr(socketserver, name)) for name in ("TCPServer", "ThreadingTCPServer", "ForkingTCPServer") if hasattr(socketserver, name)
    }
    http_server_shim = _ModuleShim(
        http.server, {name: step_servers.server_class(getattr(http.server, name)) for name in ("HTTPServer", "ThreadingHTTPServer")}
    )
    import http as http_package

    webdriver_shim = _ModuleShim(selenium.webdriver, {"Chrome": chrome})
    chrome_webdriver_shim = _ModuleShim(selenium.webdriver.chrome.webdriver, {"WebDriver": chrome})
    selenium_shim = _ModuleShim(selenium, {"webdriver": webdriver_shim})
    shims: dict[str, types.ModuleType] = {
        "selenium": selenium_shim,
        "selenium.webdriver": webdriver_shim,
        "selenium.webdriver.chrome.webdriver": chrome_webdriver_shim,
        "socketserver": _ModuleShim(socketserver, server_classes),
        "http.server": http_server_shim,
        "http": _ModuleShim(http_package, {"server": http_server_shim}),
    }
    if sleep.cap_s is not None:
        shims["time"] = _ModuleShim(time, {"sleep": sleep.make_sleep()})
    return shims


def _import_hook(shims: dict[str, types.ModuleType]) -> Callable[..., Any]:
    real_import = builtins.__import__

    def _import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        module = real_import(name, globals, locals, fromlist, level)
        if level != 0:
            return module
        if fromlist:
            return shims.get(name, module)  # `from X import y` looks y up on X
        return shims.get(name.partition(".")[0], module)  # `import a.b` binds a

    return _import


def _step_module_globals(path: Path, shims: dict[str, types.ModuleType]) -> dict[str, Any]:
    """What behave gives a steps module (decorators, matcher functions), plus our import hook."""
    from behave.api.step_matchers import step_matcher, use_step_matcher
    from behave.step_registry import setup_step_decorators

    namespace: dict[str, Any] = {
        "__name__": f"backendbench_steps.{path.stem}",
        "__file__": str(path),
        "__builtins__": dict(builtins.__dict__, __import__=_import_hook(shims)),
        "use_step_matcher": use_step_matcher,
        "step_matcher": step_matcher,
    }
    setup_step_decorators(namespace)
    return namespace


def _exec_module(path: Path, namespace: dict[str, Any]) -> None:
    source = path.read_bytes()
    code = compile(source, str(path), "exec", dont_inherit=True)
    exec(code, namespace)  # noqa: S102 - running the oracle's step code is the point


class _ProcessState:
    """sys.path entries and a working directory shared by the scenarios running now, counted.

    behave's own ``PathManager`` rebinds ``sys.path`` and removes its entries on exit, which is
    right for one run at a time and wrong for scenarios that overlap; ``os.chdir`` is
    process-wide too, so overlapping scenarios must agree on the folder (the pool only overlaps
    scenarios of one candidate, whose folder is the same); one that needs another waits.
    """

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._paths: dict[str, int] = {}
        self._cwd: str | None = None
        self._cwd_users = 0
        self._previous_cwd = ""

    @contextlib.contextmanager
    def paths(self, folders: Sequence[Path]) -> Iterator[None]:
        """Step modules may import helpers sitting next to them, as under behave."""
        entries = [str(f) for f in dict.fromkeys(folders)]
        with self._changed:
            for entry in entries:
                if self._paths.get(entry, 0) == 0 and entry in sys.path:
                    continue  # already there for other reasons: leave it alone
                if self._paths.get(entry, 0) == 0:
                    sys.path.insert(0, entry)
                self._paths[entry] = self._paths.get(entry, 0) + 1
            counted = [e for e in entries if e in self._paths]
        try:
            yield
        finally:
            with self._changed:
                for entry in counted:
                    self._paths[entry] -= 1
                    if self._paths[entry] == 0:
                        del self._paths[entry]
                        with contextlib.suppress(ValueError):
                            sys.path.remove(entry)

    @contextlib.contextmanager
    def working_directory(self, folder: Path | None) -> Iterator[None]:
        """The app's folder as the working directory (E2EDev's runner runs behave there)."""
        if folder is None:
            yield
            return
        wanted = str(folder)
        with self._changed:
            while self._cwd_users and self._cwd != wanted:
                self._changed.wait()
            if not self._cwd_users:
                self._previous_cwd = os.getcwd()
                os.chdir(wanted)
                self._cwd = wanted
            self._cwd_users += 1
        try:
            yield
        finally:
            with self._changed:
                self._cwd_users -= 1
                if not self._cwd_users:
                    os.chdir(self._previous_cwd)
                    self._cwd = None
                    self._changed.notify_all()


PROCESS_STATE = _ProcessState()


def _clear_global_registry() -> StepRegistry:
    from behave import step_registry

    registry = step_registry.registry
    for definitions in registry.steps.values():
        definitions.clear()
    registry.error_handler.clear()
    return registry


def load_step_definitions(
    step_modules: Sequence[Path], shims: dict[str, types.ModuleType], entry_file: Path | None = None
) -> tuple[StepRegistry, list[dict[str, Any]]]:
    """Load step modules into a registry of their own; return it and the modules' globals.

    With ``entry_file`` (a static candidate's entry page on disk), a module-level ``file_path``
    or ``file_path_placeholder`` string is bound to its path afterwards, as E2EDev's runner
    rewrites them, so step code that reads the page from disk finds it.

    Raises OracleLoadError naming the module on an import error or an ambiguous step.
    """
    from behave.api.step_matchers import use_default_step_matcher

    namespaces: list[dict[str, Any]] = []
    with _REGISTRY_LOCK:
        global_registry = _clear_global_registry()
        try:
            for path in step_modules:
                namespace = _step_module_globals(path, shims)
                use_default_step_matcher()
                try:
                    _exec_module(path, namespace)
                except AmbiguousStep as err:
                    raise OracleLoadError(f"ambiguous step definitions in {path}: {err}") from err
                except Exception as err:
                    raise OracleLoadError(f"steps module {path} could not be loaded: {type(err).__name__}: {err}{_install_hint(err)}") from err
                finally:
                    use_default_step_matcher()
                if "file_path_placeholder" in namespace and "file_path" not in namespace:
                    namespace["file_path"] = namespace["file_path_placeholder"]  # E2EDev renames it so
                if entry_file is not None and isinstance(namespace.get("file_path"), str):
                    namespace["file_path"] = str(entry_file)
                namespaces.append(namespace)
            registry = _ScenarioStepRegistry()
            registry.steps = {keyword: list(definitions) for keyword, definitions in global_registry.steps.items()}
        finally:
            _clear_global_registry()
    return registry, namespaces


def _install_hint(err: BaseException) -> str:
    name = getattr(err, "name", None) if isinstance(err, ModuleNotFoundError) else None
    if name and name.split(".")[0] in E2EDEV_EXTRA_MODULES:
        return " (install the e2edev extra: pip install 'pytest-backendbench[e2edev]')"
    return ""


def _chain(hooks: list[Callable[..., Any]]) -> Callable[..., Any]:
    def run_all(context: Any, *args: Any) -> None:
        for hook in hooks:
            hook(context, *args)

    return run_all


def collect_hooks(environment: dict[str, Any] | None, step_namespaces: list[dict[str, Any]]) -> dict[str, Callable[..., Any]]:
    """behave hooks: those of environment.py, plus before/after_scenario defined in step modules.

    behave never calls hooks defined in a steps module; E2EDev's modules put their
    ``after_scenario`` (driver.quit) there, so they run here as scenario hooks.
    """
    hooks: dict[str, list[Callable[..., Any]]] = {}
    if environment:
        for name, value in environment.items():
            if name.startswith(("before_", "after_")) and callable(value):
                hooks.setdefault(name, []).append(value)
    for namespace in step_namespaces:
        for name in SCENARIO_HOOKS:
            value = namespace.get(name)
            if callable(value) and getattr(value, "__module__", None) == namespace["__name__"]:
                hooks.setdefault(name, []).append(value)
    return {name: _chain(list(reversed(fns)) if name.startswith("after_") else fns) for name, fns in hooks.items()}


def load_environment(path: Path, shims: dict[str, types.ModuleType]) -> dict[str, Any]:
    namespace = _step_module_globals(path, shims)
    try:
        _exec_module(path, namespace)
    except Exception as err:
        raise OracleLoadError(f"{path} could not be loaded: {type(err).__name__}: {err}") from err
    return namespace

