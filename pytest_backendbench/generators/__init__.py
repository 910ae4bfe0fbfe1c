"""Built-in generators, registered as ordinary pytest plugins with ``trylast`` hook implementations.

- ``reference``: copies each task's reference candidate (pipeline validation only);
- ``openai:<model>``: any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, ...).

A ``pytest_backendbench_generate`` hook in a conftest.py or plugin runs before these, so a
user's generator can take over any model name, these included. ``orchestrate`` runs the hook
per (task, sample); ``agent`` answers ``agent:<model>``/``cmd:<name>``; ``settings`` holds the
``--openai-*`` rows of the settings table.

Importing the package is cheap (the settings table reads ``settings`` at every pytest start):
the generators, and requests with them, load on first use.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..llm.chat import OpenAISettings
    from .openai_compat import OpenAICompatGenerator
    from .reference import ReferenceGenerator

__all__ = ["OpenAICompatGenerator", "ReferenceGenerator", "register_builtin_generators"]

REFERENCE_PLUGIN = "backendbench-generator-reference"
OPENAI_PLUGIN = "backendbench-generator-openai"


def register_builtin_generators(pluginmanager: Any, bench_root: Path, openai_settings: OpenAISettings | None = None) -> None:
    """Register the built-in generators once (a second call, e.g. on an xdist worker, is a no-op).

    ``openai_settings`` normally comes from ``OpenAISettings.from_config(config)``; whatever it
    leaves unset is read from the BACKENDBENCH_OPENAI_* environment when generating.
    """
    from .openai_compat import OpenAICompatGenerator
    from .reference import ReferenceGenerator

    if not pluginmanager.has_plugin(REFERENCE_PLUGIN):
        pluginmanager.register(ReferenceGenerator(bench_root), REFERENCE_PLUGIN)
    if not pluginmanager.has_plugin(OPENAI_PLUGIN):
        pluginmanager.register(OpenAICompatGenerator(openai_settings), OPENAI_PLUGIN)


def __getattr__(name: str) -> Any:
    """The generator classes, imported when first asked for."""
    if name == "OpenAICompatGenerator":
        from . import openai_compat

        return getattr(openai_compat, name)
    if name == "ReferenceGenerator":
        from .reference import ReferenceGenerator

        return ReferenceGenerator
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
