"""Built-in generators, registered as ordinary pytest plugins with ``trylast`` hook implementations.

- ``reference``: copies each task's reference candidate (pipeline validation only);
- ``openai:<model>``: any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, ...).

A ``pytest_backendbench_generate`` hook in a conftest.py or plugin runs before these, so a
user's generator can take over any model name, these included.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .openai_compat import OpenAICompatGenerator, OpenAISettings
from .reference import ReferenceGenerator

__all__ = ["OpenAICompatGenerator", "OpenAISettings", "ReferenceGenerator", "register_builtin_generators"]

REFERENCE_PLUGIN = "backendbench-generator-reference"
OPENAI_PLUGIN = "backendbench-generator-openai"


def register_builtin_generators(pluginmanager: Any, bench_root: Path, openai_settings: OpenAISettings | None = None) -> None:
    """Register the built-in generators once (a second call, e.g. on an xdist worker, is a no-op).

    ``openai_settings`` normally comes from ``OpenAISettings.from_config(config)``; whatever it
    leaves unset is read from the BACKENDBENCH_OPENAI_* environment when generating.
    """
    if not pluginmanager.has_plugin(REFERENCE_PLUGIN):
        pluginmanager.register(ReferenceGenerator(bench_root), REFERENCE_PLUGIN)
    if not pluginmanager.has_plugin(OPENAI_PLUGIN):
        pluginmanager.register(OpenAICompatGenerator(openai_settings), OPENAI_PLUGIN)
