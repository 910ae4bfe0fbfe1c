"""Wiring: the plugin's hooks, options and session objects, and nothing else.

Installed in any project, the plugin only declares its options (config.py) and markers. When
a bench is in use (``--candidate`` or ``--bench-generate``), ``pytest_configure`` resolves the
session (session.py) and registers the modules that act: collection routing
(collect/routing.py), the run protocol (protocol.py), the fixtures (http/fixtures.py), the
database concern (db/checks/dbcheck.py) and the terminal summary (summary.py). Without a bench none
of them is registered: nothing is ignored, collected differently, or auto-used.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from . import hookspecs
from .command_line import pytest_load_initial_conftests  # noqa: F401 - the hook: old spellings, a bench run's pytest options
from .config import SETTINGS_TABLE_KEY, add_settings, all_settings, resolve_config
from .markers import MARKERS

BENCH_PLUGINS = (
    "pytest_backendbench.http.fixtures",
    "pytest_backendbench.db.checks.dbcheck",
    "pytest_backendbench.collect.routing",
    "pytest_backendbench.protocol",
    "pytest_backendbench.summary",
    "pytest_backendbench.judge_hooks",
)
"""Modules registered as plugins for a benchmark session only."""
BENCH_ACTIVE_KEY = pytest.StashKey[bool]()


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """The plugin's own hooks (hookspecs.py)."""
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    """Every setting of config.py's table: option, ini key."""
    add_settings(parser, all_settings())


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Declare the markers and resolve the settings once (command line > environment > ini)."""
    for marker in MARKERS:
        config.addinivalue_line("markers", marker)
    config.stash[SETTINGS_TABLE_KEY] = all_settings()
    resolve_config(config)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A plain ``pytest`` in a bench repository leaves its tasks alone: ignore
    ``<rootdir>/oracles/<task>``, ``benchmarks/<task>`` and ``mocks/<mock>`` only when they are
    recognisably ours (``benchmarks/<task>/task.yaml``, ``mocks/<mock>/mock.yaml`` exist).
    With a bench in use, collection routing (collect/routing.py) decides instead."""
    if config.stash.get(BENCH_ACTIVE_KEY, False):
        return None
    try:
        parts = collection_path.relative_to(config.rootpath).parts
    except ValueError:
        return None
    if len(parts) < 2:
        return None
    root = Path(config.rootpath)
    if parts[0] in ("oracles", "benchmarks") and (root / "benchmarks" / parts[1] / "task.yaml").is_file():
        return True
    if parts[0] == "mocks" and (root / "mocks" / parts[1] / "mock.yaml").is_file():
        return True
    return None


# after the terminal reporter exists (--bench-generate reports progress) and after the settings
@pytest.hookimpl(trylast=True, specname="pytest_configure")
def pytest_configure_bench_session(config: pytest.Config) -> None:
    """With a bench in use: resolve the session and register the modules that act on it."""
    from .config import bench_config

    bench = bench_config(config)
    if not (bench.candidate or bench.generate):
        return
    from .session import start_session  # the heavy part of the package, imported only for a bench

    start_session(config, bench)
    config.stash[BENCH_ACTIVE_KEY] = True
    for name in BENCH_PLUGINS:
        module = importlib.import_module(name)
        if not config.pluginmanager.is_registered(module):
            config.pluginmanager.register(module, name)
