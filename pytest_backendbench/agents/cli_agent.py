"""``cmd:<name>`` agents: any agent CLI, run once per sample inside the sandbox.

A definition names an image, a command and the environment variables to pass through::

    [pytest]
    backendbench_agents =
        aider: image=my/aider-agent, command=aider --yes-always --message-file "$BACKENDBENCH_TASK_PROMPT_FILE", env=OPENAI_API_KEY
        mini: command=mini -y -t "$BACKENDBENCH_TASK_PROMPT", env=OPENAI_API_KEY,MSWEA_MODEL_NAME=openai/gpt-4o-mini

Each field runs up to the next ``, <key>=`` (keys: image, command, env, network), so a command
may contain commas. ``env`` lists variables copied from the harness's environment (``KEY``)
or set literally (``KEY=value``). A conftest adds definitions the same way, with
``config.addinivalue_line("backendbench_agents", "...")`` in ``pytest_configure``.

The command runs with ``bash -lc`` in the workspace, with the task prompt in
``$BACKENDBENCH_TASK_PROMPT`` and in the file ``$BACKENDBENCH_TASK_PROMPT_FILE`` (under the
workspace's ``.backendbench/``, which is not copied out), bounded by the sample's wall time.
Whatever it leaves in the workspace becomes the candidate, whatever its exit code. A CLI that
knows its token usage may write ``.backendbench/usage.json`` (``{"tokens_in": ..,
"tokens_out": .., "cost_usd": ..}``); the numbers go into the report.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from .sandbox import NETWORKS, SandboxSpec, open_sandbox
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


def find_agent(definitions: Mapping[str, CliAgentDefinition], model: str) -> CliAgentDefinition:
    """The definition ``--bench-model=cmd:<name>`` asks for; the error lists the defined names."""
    name = model.removeprefix(MODEL_PREFIX)
    if name not in definitions:
        known = ", ".join(sorted(definitions)) or "none"
        raise AgentDefinitionError(
            f"--bench-model {model}: no agent {name!r} is defined (defined: {known}); add "
            f"'{name}: image=..., command=...' to the backendbench_agents ini key"
        )
    return definitions[name]


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


def run_cli_agent(
    definition: CliAgentDefinition,
    spec: SandboxSpec,
    workspace_out: Path,
    transcript: TranscriptSink | None = None,
    *,
    engine: str = "docker",
    prompt: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Run the agent CLI for one sample and copy its workspace to ``workspace_out``; return generation metadata.

    Raises ``AgentDefinitionError`` (a passed-through variable is unset) before anything starts,
    and ``HarnessError`` when the sandbox cannot start. The CLI's own failure is not an error:
    its exit code and reason are recorded and its workspace is still the candidate.
    """
    passed = definition.environment(os.environ if environ is None else environ)
    text = prompt if prompt is not None else default_task_prompt(spec)
    encoded = text.encode("utf-8")
    in_env = text if len(encoded) <= MAX_PROMPT_ENV_BYTES else (
        encoded[:MAX_PROMPT_ENV_BYTES].decode("utf-8", errors="ignore") + "\n[truncated; the whole prompt is in $BACKENDBENCH_TASK_PROMPT_FILE]\n"
    )
    sample_spec = replace(
        spec,
        image=definition.image or spec.image,
        network=definition.network or spec.network,
        env={**spec.env, **passed, "BACKENDBENCH_TASK_PROMPT": in_env, "BACKENDBENCH_TASK_ID": spec.task.id},
        files={**spec.files, PROMPT_FILE: text},
    )
    model = MODEL_PREFIX + definition.name
    # The workspace path differs per engine; the command learns it from its working directory.
    command = (
        f'export BACKENDBENCH_WORKSPACE="$PWD" BACKENDBENCH_TASK_PROMPT_FILE="$PWD/{PROMPT_FILE}"\n' + definition.command
    )
    with open_sandbox(sample_spec, engine) as sandbox:
        if transcript is not None:
            transcript.write(
                "start",
                model=model,
                command=definition.command,
                sandbox=sandbox.description,
                budgets={"seconds": sample_spec.limits.wall_s},
            )
            transcript.write("message", role="user", content=text)
        result = sandbox.run(command, timeout_s=sandbox.remaining_s())
        usage = _read_usage(sandbox.run(f"cat {USAGE_FILE} 2>/dev/null", timeout_s=10).output)
        sandbox.copy_out(workspace_out)
        description, sandboxed = sandbox.description, sandbox.sandboxed
    reason = "time" if result.timed_out else ("submitted" if result.exit_code == 0 else "error")
    metadata: dict[str, Any] = {
        "model": model,
        "exit_reason": reason,
        "agent_seconds": round(result.seconds, 3),
        "sandbox": description,
        "sandboxed": sandboxed,
        "network": sample_spec.network,
        **usage,
    }
    if result.exit_code is not None:
        metadata["agent_exit_code"] = result.exit_code
    if transcript is not None:
        transcript.write(
            "action",
            step=1,
            action="command",
            command=definition.command,
            exit_code=result.exit_code,
            seconds=round(result.seconds, 3),
            timed_out=result.timed_out,
            observation=result.output,
        )
        transcript.write("end", exit_reason=reason, **usage)
    return metadata


def _read_usage(text: str) -> dict[str, float]:
    """tokens_in / tokens_out / cost_usd from the CLI's optional usage.json (ignored when malformed)."""
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        key: data[key]
        for key in ("tokens_in", "tokens_out", "cost_usd")
        if isinstance(data.get(key), (int, float)) and not isinstance(data.get(key), bool) and data[key] >= 0
    }
