"""Running one Gherkin scenario in-process through behave's own runner.

behave's step registry is module-global: its decorators are bound to
``behave.step_registry.registry``, so loading a second steps module that defines the same
step text raises ``AmbiguousStep`` even after the module attribute is replaced (behave issues
#264, #209, #549). Each scenario therefore loads its step modules into that registry after
clearing its per-keyword lists in place, moves the step definitions into a registry of its
own, and clears the global one again: every scenario starts from an empty registry, and two
steps modules that define the same step text with different bodies never meet.

Step modules get E2EDev compatibility at load time, without changing their files
(docs/bdd.md lists each rewrite): ``webdriver.Chrome(...)`` is the shared browser and its
``quit()``/``close()`` leave it running, ``file://`` URLs open the candidate's entry page,
a module-level ``after_scenario``/``before_scenario`` is run as a scenario hook,
``time.sleep`` follows a configurable :class:`SleepPolicy`, and an HTTP server the step code
starts on a fixed port (E2EDev's ``TCPServer(("", 8000), SimpleHTTPRequestHandler)``) gets a
free port instead, which ``driver.get`` maps back, so xdist workers never clash.
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
import traceback
import types
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast
from urllib.parse import urljoin, urlsplit, urlunsplit

import behave
from behave.configuration import Configuration
from behave.model_core import FileLocation
from behave.model_type import Status
from behave.runner import Context, ModelRunner
from behave.runner_util import parse_features
from behave.step_registry import AmbiguousStep, StepRegistry

BEHAVE_PACKAGE = Path(behave.__file__).resolve().parent
HARNESS_PACKAGE = Path(__file__).resolve().parent
BEHAVE_ARGS = (
    "--no-summary",
    "--format=null",
    "--no-capture",  # pytest captures output; behave's capture would hide it from pytest
    "--no-capture-stderr",
    "--no-logcapture",
    "--no-color",
    "--no-snippets",
)
SCENARIO_HOOKS = ("before_scenario", "after_scenario")
E2EDEV_SLEEP_CAP_S = 0.5
E2EDEV_REAL_SLEEP_PROJECTS = frozenset({"05", "21", "27", "37"})
"""E2EDev's own runner keeps these projects' sleeps (their pages animate or poll on timers)."""

STATUSES = ("passed", "failed", "error", "undefined")
ORACLE_FAULT = "oracle error (not the candidate's fault): "
ORACLE_EXCEPTIONS: tuple[type[BaseException], ...] = (NameError, ImportError, SyntaxError, AmbiguousStep, NotImplementedError)
BROWSER_GONE_MARKERS = ("chrome not reachable", "not connected to devtools", "session deleted", "invalid session id")

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


@dataclass(frozen=True)
class FailingStep:
    """The step a scenario stopped at."""

    keyword: str
    text: str
    line: int

    def __str__(self) -> str:
        return f"{self.keyword} {self.text} (line {self.line})"


@dataclass
class ScenarioResult:
    """How one scenario ended; ``error`` and ``undefined`` are the oracle's or the harness's fault."""

    status: str
    scenario: str
    feature: str
    line: int
    failing_step: FailingStep | None = None
    message: str = ""
    traceback: str = ""
    duration: float = 0.0
    steps_run: int = 0

    @property
    def passed(self) -> bool:
        """Whether every step passed."""
        return self.status == "passed"

    @property
    def oracle_fault(self) -> bool:
        """True when the failure says nothing about the candidate (broken oracle, dead browser)."""
        return self.status in ("error", "undefined")


class OracleLoadError(Exception):
    """A steps module or environment file could not be loaded (import error, ambiguous step)."""


class StepServers:
    """HTTP servers a scenario's step code started: the ports it asked for and those it got."""

    LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "0.0.0.0", "::1"})

    def __init__(self) -> None:
        self.ports: dict[int, int] = {}
        self.servers: list[socketserver.BaseServer] = []

    def server_class(self, real: type[socketserver.TCPServer]) -> type[socketserver.TCPServer]:
        """A subclass of real that binds a free port when the step code asks for a fixed one."""
        servers = self

        class StepServer(real):  # type: ignore[valid-type,misc]
            allow_reuse_address = True

            def server_bind(self) -> None:
                address: Any = cast(Any, self).server_address
                host, port = address[:2]
                if port:
                    self.server_address = (host, 0)
                super().server_bind()
                if port:
                    servers.ports[int(port)] = int(self.server_address[1])
                servers.servers.append(self)

        StepServer.__name__ = StepServer.__qualname__ = real.__name__
        return StepServer

    def map_url(self, url: str) -> str:
        """``http://localhost:8000/x`` -> the port the step's server really got."""
        parts = urlsplit(url)
        port = parts.port
        if port is None or port not in self.ports or parts.hostname not in self.LOCAL_HOSTS:
            return url
        netloc = parts.netloc.rsplit(":", 1)[0] + f":{self.ports[port]}"
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))

    def close(self) -> None:
        """Stop the servers (in the background: shutdown() waits for serve_forever's next poll)."""
        for server in self.servers:
            threading.Thread(target=_stop_server, args=(server,), daemon=True).start()
        self.servers.clear()
        self.ports.clear()


def _stop_server(server: socketserver.BaseServer) -> None:
    server.shutdown()
    server.server_close()


class ScenarioDriver:
    """The shared WebDriver as one scenario sees it.

    Everything is the real driver except: ``get`` opens ``file://`` URLs at the candidate's
    entry page, resolves relative URLs against the base URL and sends URLs of a server the
    step code started on a fixed port to the port it really got; ``quit`` does nothing;
    ``close`` closes the current window only while another one remains.
    """

    def __init__(self, driver: Any, base_url: str, entry_url: str, step_servers: StepServers | None = None) -> None:
        self._driver = driver
        self.base_url = base_url
        self.entry_url = entry_url
        self.step_servers = step_servers or StepServers()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._driver, name)

    def __repr__(self) -> str:
        return f"<ScenarioDriver {self.base_url} over {self._driver!r}>"

    @property
    def wrapped_driver(self) -> Any:
        """The real selenium driver (shared by every scenario of the worker)."""
        return self._driver

    def resolve(self, url: str) -> str:
        """Where ``get(url)`` goes."""
        parts = urlsplit(str(url))
        if parts.scheme == "file":
            entry = urlsplit(self.entry_url)
            return urlunsplit((entry.scheme, entry.netloc, entry.path, parts.query or entry.query, parts.fragment))
        if parts.scheme:
            return self.step_servers.map_url(str(url))
        return urljoin(self.base_url.rstrip("/") + "/", str(url))

    def get(self, url: str) -> None:
        """Navigate, mapping E2EDev's file:// URLs to the running candidate."""
        self._driver.get(self.resolve(url))

    def quit(self) -> None:
        """The browser is shared by the worker's scenarios: it outlives this one."""

    def close(self) -> None:
        """Close the current window unless it is the last one (which would end the session)."""
        if len(self._driver.window_handles) > 1:
            self._driver.close()


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


def _shims(driver: ScenarioDriver, sleep: SleepPolicy) -> dict[str, types.ModuleType]:
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


class _syspath:
    """Step modules may import helpers sitting next to them, as under behave."""

    def __init__(self, folders: Sequence[Path]) -> None:
        self.folders = [str(f) for f in dict.fromkeys(folders)]
        self.added: list[str] = []

    def __enter__(self) -> None:
        for folder in self.folders:
            if folder not in sys.path:
                sys.path.insert(0, folder)
                self.added.append(folder)

    def __exit__(self, *exc_info: object) -> None:
        for folder in self.added:
            try:
                sys.path.remove(folder)
            except ValueError:
                pass


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
                    raise OracleLoadError(f"steps module {path} could not be loaded: {type(err).__name__}: {err}") from err
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


class ScenarioRunner:
    """Runs scenarios one at a time through behave's ModelRunner (one per scenario).

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

        ``driver`` is a selenium WebDriver (the shared browser); the scenario sees it as
        ``context.driver`` (a :class:`ScenarioDriver`) next to ``context.base_url``.
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
        step_servers = StepServers()
        scenario_driver = ScenarioDriver(driver, base_url, entry_url or base_url.rstrip("/") + "/", step_servers)
        shims = _shims(scenario_driver, sleep or self.sleep)
        folders = [p.parent for p in step_modules] + ([environment_file.parent] if environment_file else [])
        try:
            with _syspath(folders), _working_directory(app_dir):
                try:
                    registry, namespaces = load_step_definitions(step_modules, shims, entry_file)
                    environment = _load_environment(environment_file, shims) if environment_file else None
                except OracleLoadError as err:
                    result.message = ORACLE_FAULT + str(err)
                    result.traceback = _format_exception(err.__cause__ or err)
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
                _judge(scenario, result)
        finally:
            step_servers.close()
            result.duration = time.perf_counter() - started
        return result


@contextlib.contextmanager
def _working_directory(folder: Path | None) -> Iterator[None]:
    if folder is None:
        yield
        return
    previous = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(previous)


def _load_environment(path: Path, shims: dict[str, types.ModuleType]) -> dict[str, Any]:
    namespace = _step_module_globals(path, shims)
    try:
        _exec_module(path, namespace)
    except Exception as err:
        raise OracleLoadError(f"{path} could not be loaded: {type(err).__name__}: {err}") from err
    return namespace


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


FAILED_STATUSES = (Status.failed, Status.error, Status.undefined, Status.pending, Status.hook_error)


def _judge(scenario: Any, result: ScenarioResult) -> None:
    """Fill result from the scenario behave ran: who is at fault and where."""
    steps = list(scenario.all_steps)
    result.steps_run = sum(1 for s in steps if s.status not in (Status.untested, Status.skipped, Status.undefined))
    failing = next((s for s in steps if s.status in FAILED_STATUSES), None)
    if failing is None:
        if scenario.status == Status.passed:
            result.status = "passed"
            return
        # every step passed, a hook or cleanup did not
        exc = getattr(scenario, "exception", None)
        result.status = "error"
        result.message = ORACLE_FAULT + "a scenario hook failed: " + (
            _exception_line(exc) if exc is not None else str(getattr(scenario, "error_message", "") or scenario.status.name)
        )
        result.traceback = _format_exception(exc) if exc is not None else ""
        return
    result.failing_step = FailingStep(failing.keyword, failing.name, failing.line)
    if failing.status == Status.undefined:
        result.status = "undefined"
        result.message = (
            ORACLE_FAULT + "no step definition matches "
            f"'{failing.keyword} {failing.name}' (line {failing.line})"
        )
        return
    if failing.status == Status.pending:
        result.status = "error"
        result.message = ORACLE_FAULT + f"step '{failing.keyword} {failing.name}' is not implemented"
        return
    exc = failing.exception
    if exc is None:
        result.status = "error"
        result.message = ORACLE_FAULT + (failing.error_message or "a step hook failed")
        return
    result.traceback = _format_exception(exc)
    where = _step_code_line(exc)
    if _browser_gone(exc):
        result.status = "error"
        result.message = f"the shared browser stopped answering (a harness error, not the candidate's fault): {_exception_line(exc)}"
    elif _oracle_bug(exc):
        result.status = "error"
        result.message = ORACLE_FAULT + f"the step code raised {_exception_line(exc)}" + where
    else:
        result.status = "failed"
        result.message = _exception_line(exc) + where


def _frames(exc: BaseException) -> list[traceback.FrameSummary]:
    return list(traceback.extract_tb(exc.__traceback__))


def _is_under(filename: str, folder: Path) -> bool:
    try:
        return Path(filename).resolve().is_relative_to(folder)
    except (OSError, ValueError):
        return False


def _oracle_bug(exc: BaseException) -> bool:
    """Raised because the step code is wrong, whatever page it ran against."""
    if isinstance(exc, ORACLE_EXCEPTIONS):
        return True
    frames = _frames(exc)
    # e.g. a TypeError from calling the step function with the wrong parameters
    return bool(frames) and (_is_under(frames[-1].filename, BEHAVE_PACKAGE) or _is_under(frames[-1].filename, HARNESS_PACKAGE))


def _browser_gone(exc: BaseException) -> bool:
    from selenium.common.exceptions import InvalidSessionIdException, WebDriverException

    if isinstance(exc, InvalidSessionIdException):
        return True
    if isinstance(exc, WebDriverException):
        text = (exc.msg or "").lower()
        return any(marker in text for marker in BROWSER_GONE_MARKERS)
    try:
        from urllib3.exceptions import HTTPError as Urllib3Error
    except ImportError:  # pragma: no cover - selenium depends on urllib3
        return isinstance(exc, ConnectionError)
    return isinstance(exc, (ConnectionError, Urllib3Error))


def _exception_line(exc: BaseException) -> str:
    """``Type: message`` without selenium's session info and native stack trace."""
    from selenium.common.exceptions import TimeoutException

    text = getattr(exc, "msg", None)
    if not isinstance(text, str):
        text = str(exc)
    text = text.split("\nStacktrace:", 1)[0]
    text = "\n".join(line for line in text.splitlines() if not line.strip().startswith("(Session info:")).strip()
    if isinstance(exc, AssertionError):
        if text:
            return text
        source = _step_source_line(exc)
        return f"assertion failed: {source}" if source else "assertion failed"
    if isinstance(exc, TimeoutException) and not text:
        text = "timed out waiting for an element or condition that never came"
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


def _step_frame(exc: BaseException) -> traceback.FrameSummary | None:
    """The innermost frame in oracle code (neither behave, selenium, the stdlib nor us)."""
    for frame in reversed(_frames(exc)):
        filename = frame.filename
        if _is_under(filename, BEHAVE_PACKAGE) or _is_under(filename, HARNESS_PACKAGE):
            continue
        if f"{os.sep}site-packages{os.sep}" in filename or filename.startswith((sys.prefix, sys.base_prefix)):
            continue
        return frame
    return None


def _step_source_line(exc: BaseException) -> str:
    frame = _step_frame(exc)
    return (frame.line or "").strip() if frame else ""


def _step_code_line(exc: BaseException) -> str:
    frame = _step_frame(exc)
    if frame is None:
        return ""
    return f"\n  at {frame.filename}:{frame.lineno}: {(frame.line or '').strip()}"


def _format_exception(exc: BaseException) -> str:
    """The traceback without behave's frames (and without ours, unless the error is ours)."""
    frames = [f for f in _frames(exc) if not _is_under(f.filename, BEHAVE_PACKAGE)]
    oracle_frames = [f for f in frames if not _is_under(f.filename, HARNESS_PACKAGE)]
    frames = oracle_frames or frames
    lines = traceback.format_list(frames)
    return "Traceback (most recent call last):\n" + "".join(lines) + _exception_line(exc) + "\n"

