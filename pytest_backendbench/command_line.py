"""What the plugin does to the command line before pytest parses it, and nothing after.

Two things, both in ``pytest_load_initial_conftests`` (pytest's documented place to adjust
``args`` before they are parsed), so ``config.option`` and ``config.args`` are never written
afterwards:

- old option spellings are translated (legacy_options.py), with a ``PytestDeprecationWarning``;
- a benchmark run (``--candidate`` or ``--bench-generate``) needs two pytest options: oracle
  modules of different tasks share file names (``oracles/<task>/test_users.py``), which only
  ``--import-mode=importlib`` imports side by side, and one malformed task must not stop the
  others (``--continue-on-collection-errors``). When the command line and the ini's addopts
  name neither, they are supplied; an import mode the user chose that cannot work is a usage
  error that says what to write instead.
"""

from __future__ import annotations

import warnings
from collections.abc import Generator

import pytest

from .legacy_options import notice, translate

BENCH_ARGS = ("--import-mode=importlib", "--continue-on-collection-errors")
"""What a benchmark run adds to a command line that does not say otherwise."""


def _given(args: list[str], option: str) -> str | None:
    """The value ``option`` was given on ``args`` (last one wins), "" for a flag, None if absent."""
    found: str | None = None
    for position, arg in enumerate(args):
        if arg == "--":
            break
        if arg == option:
            found = args[position + 1] if position + 1 < len(args) and not args[position + 1].startswith("-") else ""
        elif arg.startswith(option + "="):
            found = arg.split("=", 1)[1]
    return found


def bench_requested(args: list[str], parser: pytest.Parser) -> bool:
    """Whether ``args`` start a benchmark run (both options are command-line only: config.py)."""
    namespace = parser.parse_known_args(args)
    return bool(getattr(namespace, "bb_candidate", None) or getattr(namespace, "bb_generate", None))


def bench_arguments(args: list[str]) -> list[str]:
    """The options a benchmark run needs that ``args`` lack; a usage error for a conflicting one."""
    mode = _given(args, "--import-mode")
    if mode not in (None, "importlib"):
        raise pytest.UsageError(
            f"--import-mode={mode}: oracle modules of different tasks share file names (oracles/<task>/test_*.py), "
            "which only --import-mode=importlib imports side by side; drop the option or write --import-mode=importlib"
        )
    missing = []
    if mode is None:
        missing.append("--import-mode=importlib")
    if _given(args, "--continue-on-collection-errors") is None:
        missing.append("--continue-on-collection-errors")
    return missing


# trylast: inside pytest's own wrapper that records warnings of this stage, so the deprecation
# reaches the warnings summary instead of Python's default filters (which hide it)
@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> Generator[None, object, object]:
    """After the initial conftests declared their options: old spellings, then a bench run's needs."""
    result = yield
    rewritten = translate(args, parser)
    if rewritten:
        warnings.warn(pytest.PytestDeprecationWarning(notice(rewritten).strip()), stacklevel=1)
    if bench_requested(args, parser):
        end = args.index("--") if "--" in args else len(args)
        args[end:end] = bench_arguments(args)
    return result
