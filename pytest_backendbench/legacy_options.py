"""The 0.1 spellings of renamed options (``--task``, ``--model``, ``--generate``...), for one release.

Generic option names moved under ``--bench-`` so that they cannot clash with other plugins
(config.py). Registering the old names as aliases would bring the clash back: pytest refuses
an option registered twice. Instead, after the initial conftests have declared their
options, an old spelling that *nobody* registered is rewritten to its new name with a
``PytestDeprecationWarning`` (command_line.py holds the hook); one that another plugin or
conftest owns is left to its owner.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

RENAMED = {
    "--task": "--bench-task",
    "--runtime": "--bench-runtime",
    "--report-dir": "--bench-report-dir",
    "--alpha": "--bench-alpha",
    "--beta": "--bench-beta",
    "--request-timeout": "--bench-request-timeout",
    "--build-timeout": "--bench-build-timeout",
    "--boot-timeout": "--bench-boot-timeout",
    "--resume": "--bench-resume",
    "--rerun-errors": "--bench-rerun-errors",
    "--memory": "--bench-memory",
    "--cpus": "--bench-cpus",
    "--pids": "--bench-pids",
    "--repeat": "--bench-repeat",
    "--shard": "--bench-shard",
    "--seed": "--bench-seed",
    "--headed": "--bench-headed",
    "--generate": "--bench-generate",
    "--model": "--bench-model",
    "--samples": "--bench-samples",
}
"""Old spelling -> the option's name since 0.2."""


def _owned_elsewhere(parser: pytest.Parser, option: str) -> bool:
    """Whether another plugin or conftest registered ``option`` (then it is theirs)."""
    try:
        _, unknown = parser.parse_known_and_unknown_args([option])
    except pytest.UsageError:  # e.g. "expected one argument": known, and so someone else's
        return True
    return option not in unknown


def translate(args: list[str], parser: pytest.Parser) -> list[str]:
    """Rewrite old spellings in ``args`` in place; return the ones rewritten (for the notice).

    Only option tokens are touched (``--task x`` and ``--task=x``); everything after a bare
    ``--`` and every value stays as it is.
    """
    rewritten: list[str] = []
    owned: dict[str, bool] = {}
    for position, arg in enumerate(args):
        if arg == "--":
            break
        name, sep, value = arg.partition("=")
        new = RENAMED.get(name)
        if new is None:
            continue
        if name not in owned:
            owned[name] = _owned_elsewhere(parser, name)
        if owned[name]:
            continue
        args[position] = f"{new}{sep}{value}"
        if name not in rewritten:
            rewritten.append(name)
    return rewritten


def notice(rewritten: Sequence[str]) -> str:
    """The warning's text when old spellings were used."""
    pairs = ", ".join(f"{old} -> {RENAMED[old]}" for old in rewritten)
    return f"backendbench: renamed options ({pairs}); the old spellings are accepted until 0.3\n"

