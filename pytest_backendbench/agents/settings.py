"""Agent options: this module's rows of the settings table (config.py), and their typed view.

Every setting of the sandbox and of the ``agent:`` loop has an option (``--agent-steps``), an
environment variable (``BACKENDBENCH_AGENT_STEPS``) and an ini key (``backendbench_agent_steps``),
resolved by config.py (command line > environment > ini > default). ``AgentSettings.from_config``
turns the resolved values into one typed, checked record. Cheap to import on purpose: config.py
imports it at every pytest start.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..config import Setting
from ..setting_values import count, existing_folder, positive_number, seconds, size

if TYPE_CHECKING:  # the sandbox imports the docker SDK: not at every pytest start
    from .sandbox import SandboxLimits

ACTION_MODES = ("tools", "text")
NETWORKS = ("bridge", "none")
AGENTS_INI = "backendbench_agents"
"""Ini key of ``cmd:`` agent definitions (``name: image=..., command=..., env=KEY1,KEY2``)."""
DEFAULT_MEMORY, DEFAULT_CPUS, DEFAULT_PIDS, DEFAULT_DISK = "2g", 1.0, 512, "2g"  # sandbox.SandboxLimits' defaults
DEFAULT_COMMAND_TIMEOUT_S, DEFAULT_WALL_S = 120.0, 1800.0


def _optional_float(text: str) -> float | None:
    return None if text.strip().lower() in ("", "none", "0") else float(text)


def _optional_int(text: str) -> int | None:
    return None if text.strip().lower() in ("", "none", "0") else int(text)


def _optional_str(text: str) -> str | None:
    return text.strip() or None


def _optional_size(text: str) -> str | None:
    """a size such as 512m or 2g, or none (unbounded)"""
    return None if text.strip().lower() in ("", "none") else size(text)


def _agent(name: str, kind: Callable[[str], Any], default: Any, help: str, metavar: str = "N", choices: tuple[str, ...] | None = None) -> Setting:
    # dest = name: AgentSettings.from_config reads the options by their plain names
    return Setting(name, "--" + name.replace("_", "-"), kind, default, help, group="agents", choices=choices, metavar=None if choices else metavar, dest=name)


SETTINGS: tuple[Setting, ...] = (
    _agent("agent_image", _optional_str, None, "sandbox image (default: the offline base image plus git, curl, build tools)", "IMAGE"),
    _agent("agent_network", str, "bridge", "sandbox network: bridge (can pip install) or none", "NET", NETWORKS),
    _agent("agent_memory", size, DEFAULT_MEMORY, "memory limit of the sandbox", "SIZE"),
    _agent("agent_cpus", positive_number, DEFAULT_CPUS, "CPU limit of the sandbox"),
    _agent("agent_pids", int, DEFAULT_PIDS, "process limit of the sandbox"),
    _agent("agent_disk", _optional_size, DEFAULT_DISK, "size of the sandbox's /workspace (none: unbounded)", "SIZE"),
    _agent("agent_command_timeout", seconds, DEFAULT_COMMAND_TIMEOUT_S, "seconds one agent command may run", "S"),
    _agent("agent_seconds", seconds, DEFAULT_WALL_S, "wall-time budget of one sample", "S"),
    _agent("agent_steps", int, 50, "budget of model calls per sample (agent:)"),
    _agent("agent_tokens", _optional_int, None, "budget of tokens (in + out, summed over calls) per sample (agent:)"),
    _agent("agent_cost", _optional_float, None, "budget in USD per sample (agent:; needs --openai-price)", "USD"),
    _agent("agent_actions", str, "tools", "how agent: acts: tools (function calling) or text (```bash blocks)", "MODE", ACTION_MODES),
    _agent("agent_prompt", existing_folder, None, "folder with system.md and task.md replacing the default prompts", "DIR"),
    _agent("verify_budget", count, 0, "self_verify calls an agent may make per sample (0: none, the main protocol)"),
    _agent("agent_output_chars", int, 10_000, "characters of a command's output shown to the model (head and tail)"),
)
# the ini list of cmd: agents (backendbench_agents) is declared in config.py and read by cli_agent.py


@dataclass(frozen=True)
class AgentSettings:
    """The resolved agent settings of a run."""

    agent_image: str | None = None
    agent_network: str = "bridge"
    agent_memory: str = DEFAULT_MEMORY
    agent_cpus: float = DEFAULT_CPUS
    agent_pids: int = DEFAULT_PIDS
    agent_disk: str | None = DEFAULT_DISK
    agent_command_timeout: float = DEFAULT_COMMAND_TIMEOUT_S
    agent_seconds: float = DEFAULT_WALL_S
    agent_steps: int = 50
    agent_tokens: int | None = None
    agent_cost: float | None = None
    agent_actions: str = "tools"
    agent_prompt: str | None = None
    verify_budget: int = 0
    agent_output_chars: int = 10_000

    @classmethod
    def from_config(cls, config: pytest.Config) -> AgentSettings:
        """The settings of this run, as the plugin resolved the whole table (config.py)."""
        from ..config import bench_config

        bench = bench_config(config)
        settings = cls(**{f.name: bench[f.name] for f in fields(cls)})
        settings.check()
        return settings

    def check(self) -> None:
        """Refuse settings that cannot work, saying what to use instead."""
        for name in ("agent_steps", "agent_output_chars", "agent_pids"):
            if getattr(self, name) < 1:
                raise pytest.UsageError(f"--{name.replace('_', '-')} {getattr(self, name)}: expected at least 1")
        if self.verify_budget < 0:
            raise pytest.UsageError(f"--verify-budget {self.verify_budget}: expected 0 (no self-verify) or more")
        for name in ("agent_seconds", "agent_command_timeout", "agent_cpus"):
            if getattr(self, name) <= 0:
                raise pytest.UsageError(f"--{name.replace('_', '-')} {getattr(self, name)}: expected a positive number")
        if self.agent_prompt is not None:
            folder = Path(self.agent_prompt)
            missing = [n for n in ("system.md", "task.md") if not (folder / n).is_file()]
            if missing:
                raise pytest.UsageError(f"--agent-prompt {folder}: missing {', '.join(missing)} (copy pytest_backendbench/agents/prompts/ and edit it)")

    def limits(self) -> SandboxLimits:
        """The sandbox limits these settings ask for."""
        from .sandbox import SandboxLimits

        return SandboxLimits(
            memory=self.agent_memory,
            cpus=self.agent_cpus,
            pids=self.agent_pids,
            disk=self.agent_disk,
            command_timeout_s=self.agent_command_timeout,
            wall_s=self.agent_seconds,
        )
