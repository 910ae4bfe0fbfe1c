"""``cmd:<name>`` agents: a built-in adapter (``adapters.py``) or any CLI an ini line defines.

``--bench-model=cmd:mini:gpt-4o-mini`` runs the built-in mini-swe-agent adapter on the model
``gpt-4o-mini``; the built-ins are mini, aider, openhands, claude-code and codex. Any other CLI
is defined in the ini file, by an image, a command and the environment variables to pass::

    [pytest]
    backendbench_agents =
        tiny: image=my/tiny-agent, command=tiny-agent --task "$BACKENDBENCH_TASK_PROMPT", env=TINY_KEY

Each field runs up to the next ``, <key>=`` (keys: image, command, env, network), so a command
may contain commas. ``env`` lists variables copied from the harness's environment (``KEY``)
or set literally (``KEY=value``). A conftest adds definitions the same way, with
``config.addinivalue_line("backendbench_agents", "...")`` in ``pytest_configure``; a line
named like a built-in replaces it.

The command runs with ``bash -lc`` in the workspace, with the task prompt in
``$BACKENDBENCH_TASK_PROMPT`` and in the file ``$BACKENDBENCH_TASK_PROMPT_FILE``, bounded by the
sample's wall time. The model is reached only through the harness's metering proxy
(``proxy.py``), whose API root and key the command finds in ``$OPENAI_BASE_URL`` /
``$OPENAI_API_BASE`` / ``$OPENAI_API_KEY``, ``$ANTHROPIC_BASE_URL`` / ``$ANTHROPIC_API_KEY`` and
``$BACKENDBENCH_MODEL_BASE_URL`` / ``$BACKENDBENCH_MODEL_API_KEY`` (a variable named in ``env=``
keeps the value given there). Files left in ``$BACKENDBENCH_TRAJECTORY_DIR`` are copied into
the report's artifacts. A CLI that exits non-zero before the proxy saw any model call failed
to start, which is a harness error of that sample (re-run with ``--bench-resume``); otherwise
the workspace is the candidate, whatever the exit code. A CLI that knows its token usage may
write ``.backendbench/usage.json`` (``{"tokens_in": .., "tokens_out": .., "cost_usd": ..,
"steps": ..}``); its numbers take precedence over the proxy's count in the report.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from .adapters import ADAPTERS, Adapter, find_adapter
from .sandbox_base import NETWORKS, SandboxSpec
from .workspace import CANDIDATE_FORMAT_FILE, REQUIREMENTS_FILE, SCRATCH_DIR

MODEL_PREFIX = "cmd:"
AGENTS_INI = "backendbench_agents"
DEFINITION_KEYS = ("image", "command", "env", "network")
PROMPT_FILE = f"{SCRATCH_DIR}/task_prompt.md"
USAGE_FILE = f"{SCRATCH_DIR}/usage.json"
MAX_PROMPT_ENV_BYTES = 100_000  # one environment string may not exceed 128 KiB (execve's MAX_ARG_STRLEN)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_FIELD = re.compile(r"(?:^|,)\s*(" + "|".join(DEFINITION_KEYS) + r")\s*=")


class AgentDefinitionError(ValueError):
    """A ``cmd:`` agent definition that cannot be used: says which one, what is wrong, what to write."""


class TranscriptSink(Protocol):
    """Where events go (``agents.transcript.TranscriptWriter``)."""

    def write(self, kind: str, **data: Any) -> None:
        """Record one event."""


@dataclass(frozen=True)
class CliAgentDefinition:
    """One ``cmd:<name>`` agent: the command, the image it runs in, the variables it gets."""

    name: str
    command: str
    image: str | None = None  # None: the run's --agent-image, else the default agent image
    env: tuple[str, ...] = ()  # "KEY" (copied from the harness's environment) or "KEY=value"
    network: str | None = None  # None: the run's --agent-network

    @classmethod
    def parse(cls, line: str, source: str = "backendbench_agents") -> CliAgentDefinition:
        """Parse ``name: image=..., command=..., env=K1,K2``; ``AgentDefinitionError`` names the defect."""
        name, colon, rest = line.partition(":")
        name = name.strip()
        if not colon or not _NAME.match(name):
            raise AgentDefinitionError(
                f"{source}: {line.strip()!r}: expected 'name: image=IMAGE, command=COMMAND, env=KEY1,KEY2' "
                "(a name of letters, digits, '.', '_' or '-', then a colon)"
            )
        matches = list(_FIELD.finditer(rest))
        if not matches or rest[: matches[0].start()].strip():
            raise AgentDefinitionError(f"{source}: agent {name!r}: expected fields key=value with keys {', '.join(DEFINITION_KEYS)}")
        values: dict[str, str] = {}
        for index, match in enumerate(matches):
            end = matches[index + 1].start() if index + 1 < len(matches) else len(rest)
            key = match.group(1)
            if key in values:
                raise AgentDefinitionError(f"{source}: agent {name!r}: {key}= given twice")
            values[key] = rest[match.end() : end].strip()
        command = values.get("command", "")
        if not command:
            raise AgentDefinitionError(f"{source}: agent {name!r}: command= is missing or empty; it is what runs in the sandbox")
        env = tuple(e.strip() for e in values.get("env", "").split(",") if e.strip())
        for entry in env:
            if not _ENV_NAME.match(entry.partition("=")[0]):
                raise AgentDefinitionError(f"{source}: agent {name!r}: env entry {entry!r} is not KEY or KEY=value")
        network = values.get("network") or None
        if network is not None and network not in NETWORKS:
            raise AgentDefinitionError(f"{source}: agent {name!r}: network={network}: expected one of {', '.join(NETWORKS)}")
        return cls(name=name, command=command, image=values.get("image") or None, env=env, network=network)

    def environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The variables to pass into the sandbox; a missing ``KEY`` is an error naming it."""
        passed: dict[str, str] = {}
        for entry in self.env:
            key, equals, value = entry.partition("=")
            if equals:
                passed[key] = value
            elif key in environ:
                passed[key] = environ[key]
            else:
                raise AgentDefinitionError(f"agent cmd:{self.name} passes {key} into its sandbox, but {key} is not set; export it and re-run")
        return passed


def parse_agent_definitions(lines: Iterable[str], source: str = "backendbench_agents") -> dict[str, CliAgentDefinition]:
    """Definitions by name from ini lines (blank lines and ``#`` comments skipped); a name defined twice is an error."""
    definitions: dict[str, CliAgentDefinition] = {}
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        definition = CliAgentDefinition.parse(line, source)
        if definition.name in definitions:
            raise AgentDefinitionError(f"{source}: agent {definition.name!r} is defined twice")
        definitions[definition.name] = definition
    return definitions


def agent_definitions(config: Any) -> dict[str, CliAgentDefinition]:
    """The definitions of a run: the ``backendbench_agents`` ini lines (conftests add theirs with
    ``config.addinivalue_line``); none when the key is not registered."""
    try:
        lines = config.getini(AGENTS_INI)
    except ValueError:
        return {}
    return parse_agent_definitions(lines if isinstance(lines, list) else str(lines).splitlines(), f"ini {AGENTS_INI}")


@dataclass(frozen=True)
class AgentChoice:
    """What ``--bench-model=cmd:<name>[:<model>]`` runs: a definition, its adapter when built in, the model."""

    definition: CliAgentDefinition
    adapter: Adapter | None = None
    model: str | None = None  # sent upstream as given; None: the CLI's own choice (user-defined CLIs only)

    @property
    def label(self) -> str:
        """``cmd:<name>`` or ``cmd:<name>:<model>``, as in the generation record."""
        return MODEL_PREFIX + self.definition.name + (f":{self.model}" if self.model else "")


def find_agent(definitions: Mapping[str, CliAgentDefinition], model: str) -> CliAgentDefinition:
    """The definition ``--bench-model=cmd:<name>`` asks for (ini lines, then built-ins)."""
    return resolve_agent(definitions, model).definition


def resolve_agent(definitions: Mapping[str, CliAgentDefinition], model: str) -> AgentChoice:
    """``cmd:<name>[:<model>]`` -> what runs; the error lists the defined and built-in names."""
    name, _, model_name = model.removeprefix(MODEL_PREFIX).partition(":")
    if name in definitions:
        return AgentChoice(definitions[name], None, model_name or None)  # an ini line replaces a built-in of its name
    adapter = find_adapter(name)
    if adapter is None:
        known = ", ".join(sorted(definitions)) or "none"
        raise AgentDefinitionError(
            f"--bench-model {model}: no agent {name!r} is defined (defined: {known}; built in: {', '.join(ADAPTERS)}); add "
            f"'{name}: image=..., command=...' to the backendbench_agents ini key"
        )
    if not model_name:
        raise AgentDefinitionError(
            f"--bench-model {model}: name the model the built-in {adapter.title} adapter should use, e.g. "
            f"--bench-model=cmd:{adapter.name}:gpt-4o-mini (sent as given to --openai-base-url)"
        )
    env = tuple(f"{k}={v}" for k, v in adapter.env.items())
    return AgentChoice(CliAgentDefinition(name=adapter.name, command=adapter.command, env=env), adapter, model_name)


def default_task_prompt(spec: SandboxSpec) -> str:
    """A short prompt that points the CLI at the task's files (used when the caller gives none)."""
    task = spec.task
    return (
        f"Build the {task.kind} service `{task.id}` ({task.title}) in the current folder.\n\n"
        f"The folder holds its specification: spec.md (the specification), openapi.yaml (the HTTP contract, "
        f"when present), {REQUIREMENTS_FILE} (numbered requirements) and {CANDIDATE_FORMAT_FILE} (the rules the "
        "folder must follow: a Dockerfile, the port from $PORT, a candidate.yaml). Read them first.\n\n"
        "Write the complete service into this folder, start it and try it with curl, fix what fails, and stop "
        "the server when you are done. The folder as you leave it is built and tested from outside over HTTP.\n"
    )


def read_usage(text: str) -> dict[str, float]:
    """tokens_in / tokens_out / cost_usd / steps from the CLI's optional usage.json (ignored when malformed)."""
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        key: data[key]
        for key in ("tokens_in", "tokens_out", "cost_usd", "steps")
        if isinstance(data.get(key), (int, float)) and not isinstance(data.get(key), bool) and data[key] >= 0
    }

