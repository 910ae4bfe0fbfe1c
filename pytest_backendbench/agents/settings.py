"""Agent options: one declarative table, resolved CLI > environment > ini > default.

Every setting of the sandbox and of the ``agent:`` loop has an option (``--agent-steps``), an
environment variable (``BACKENDBENCH_AGENT_STEPS``) and an ini key (``backendbench_agent_steps``),
so a tox environment, a CI job and a developer's command line can each set them their own
way. ``AgentSettings.from_config`` reads them at configure time (never at import).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import pytest

from .sandbox import NETWORKS, SandboxLimits

ACTION_MODES = ("tools", "text")
AGENTS_INI = "backendbench_agents"
"""Ini key of ``cmd:`` agent definitions (``name: image=..., command=..., env=KEY1,KEY2``)."""


@dataclass(frozen=True)
class Setting:
    """One agent setting: its option, environment variable, ini key, type, default and help."""

    name: str
    kind: Callable[[str], Any]
    default: Any
    help: str
    metavar: str = "N"
    choices: tuple[str, ...] | None = None

    @property
    def option(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def env(self) -> str:
        return "BACKENDBENCH_" + self.name.upper()

    @property
    def ini(self) -> str:
        return "backendbench_" + self.name


def _optional_float(text: str) -> float | None:
    return None if text.strip().lower() in ("", "none", "0") else float(text)


def _optional_int(text: str) -> int | None:
    return None if text.strip().lower() in ("", "none", "0") else int(text)


def _optional_str(text: str) -> str | None:
    return text.strip() or None


LIMITS = SandboxLimits()
SETTINGS: tuple[Setting, ...] = (
    Setting("agent_image", _optional_str, None, "sandbox image (default: the offline base image plus git, curl, build tools)", "IMAGE"),
    Setting("agent_network", str, "bridge", "sandbox network: bridge (can pip install) or none", "NET", NETWORKS),
    Setting("agent_memory", str, LIMITS.memory, "memory limit of the sandbox", "SIZE"),
    Setting("agent_cpus", float, LIMITS.cpus, "CPU limit of the sandbox"),
    Setting("agent_pids", int, LIMITS.pids, "process limit of the sandbox"),
    Setting("agent_disk", _optional_str, LIMITS.disk, "size of the sandbox's /workspace (none: unbounded)", "SIZE"),
    Setting("agent_command_timeout", float, LIMITS.command_timeout_s, "seconds one agent command may run", "S"),
    Setting("agent_seconds", float, LIMITS.wall_s, "wall-time budget of one sample", "S"),
    Setting("agent_steps", int, 50, "budget of model calls per sample (agent:)"),
    Setting("agent_tokens", _optional_int, None, "budget of tokens (in + out, summed over calls) per sample (agent:)"),
    Setting("agent_cost", _optional_float, None, "budget in USD per sample (agent:; needs --openai-price)", "USD"),
    Setting("agent_actions", str, "tools", "how agent: acts: tools (function calling) or text (```bash blocks)", "MODE", ACTION_MODES),
    Setting("agent_prompt", _optional_str, None, "folder with system.md and task.md replacing the default prompts", "DIR"),
    Setting("verify_budget", int, 0, "self_verify calls an agent may make per sample (0: none, the main protocol)"),
    Setting("agent_output_chars", int, 10_000, "characters of a command's output shown to the model (head and tail)"),
)


def add_agent_options(group: Any, parser: pytest.Parser | None = None) -> None:
    """Register every agent option (and, given the parser, its ini key) in ``group``."""
    for setting in SETTINGS:
        default = "none" if setting.default is None else setting.default
        text = f"{setting.help} (default {default}; env {setting.env}; ini {setting.ini})"
        if setting.choices:
            group.addoption(setting.option, dest=setting.name, choices=setting.choices, default=None, help=text)
        else:
            group.addoption(setting.option, dest=setting.name, metavar=setting.metavar, default=None, help=text)
        if parser is not None:
            parser.addini(setting.ini, setting.help, default="")
    if parser is not None:
        parser.addini(AGENTS_INI, "cmd: agent definitions, one per line: name: image=..., command=..., env=KEY1,KEY2", type="linelist", default=[])


@dataclass(frozen=True)
class AgentSettings:
    """The resolved agent settings of a run."""

    agent_image: str | None = None
    agent_network: str = "bridge"
    agent_memory: str = LIMITS.memory
    agent_cpus: float = LIMITS.cpus
    agent_pids: int = LIMITS.pids
    agent_disk: str | None = LIMITS.disk
    agent_command_timeout: float = LIMITS.command_timeout_s
    agent_seconds: float = LIMITS.wall_s
    agent_steps: int = 50
    agent_tokens: int | None = None
    agent_cost: float | None = None
    agent_actions: str = "tools"
    agent_prompt: str | None = None
    verify_budget: int = 0
    agent_output_chars: int = 10_000

    @classmethod
    def resolve(
        cls, cli: Mapping[str, Any], environ: Mapping[str, str] | None = None, ini: Callable[[str], Any] | None = None
    ) -> AgentSettings:
        """CLI value, else environment, else ini, else the default; a bad value names where it came from."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for setting in SETTINGS:
            raw, source = cli.get(setting.name), setting.option
            if raw is None and env.get(setting.env, "").strip():
                raw, source = env[setting.env], setting.env
            if raw is None and ini is not None and str(ini(setting.ini) or "").strip():
                raw, source = str(ini(setting.ini)), f"ini {setting.ini}"
            if raw is None:
                continue
            try:
                value = setting.kind(str(raw))
            except ValueError as err:
                raise pytest.UsageError(f"{source}={raw!r}: expected a {setting.kind.__name__.lstrip('_').replace('optional_', '')}") from err
            if setting.choices and value not in setting.choices:
                raise pytest.UsageError(f"{source}={raw!r}: expected one of {', '.join(setting.choices)}")
            values[setting.name] = value
        settings = cls(**values)
        settings.check()
        return settings

    @classmethod
    def from_config(cls, config: pytest.Config) -> AgentSettings:
        """The settings of this run (options, environment, ini)."""

        def ini(name: str) -> Any:
            try:
                return config.getini(name)
            except ValueError:  # the plugin did not register its ini keys (a bare pytester run)
                return ""

        return cls.resolve({f.name: config.getoption(f.name, default=None) for f in fields(cls)}, ini=ini)

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
        return SandboxLimits(
            memory=self.agent_memory,
            cpus=self.agent_cpus,
            pids=self.agent_pids,
            disk=self.agent_disk,
            command_timeout_s=self.agent_command_timeout,
            wall_s=self.agent_seconds,
        )
