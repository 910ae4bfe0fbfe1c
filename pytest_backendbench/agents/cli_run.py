"""Running one ``cmd:`` agent for one sample: sandbox, metering proxy, trajectory, attribution.

The order matters: the sandbox opens (with the adapter's image, built on demand), the proxy
starts at the address the sandbox sees the host at, the CLI runs with the proxy as its model
endpoint, then — before the sandbox is removed — its trajectory folder and its workspace are
copied out. A CLI that exits non-zero without one model call reached the proxy failed to
start (a wrong flag, a missing key, an image without the CLI): ``AgentStartFailure``, a
harness error of the sample, carrying the tail of its output. Any other ending leaves the
workspace to be judged, with the exit status recorded.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from ..errors import HarnessError
from .adapters import TRAJECTORY_DIR, Adapter
from .cli_agent import (
    MAX_PROMPT_ENV_BYTES,
    PROMPT_FILE,
    USAGE_FILE,
    AgentChoice,
    CliAgentDefinition,
    TranscriptSink,
    default_task_prompt,
    read_usage,
)
from .proxy import MeteringProxy
from .sandbox import SandboxSpec, open_sandbox
from .trajectories import AgentFigures

DEFAULT_UPSTREAM = "https://api.openai.com/v1"
TAIL_LINES = 30
GENERIC_MODEL_ENV = ("OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY")


@dataclass(frozen=True)
class ModelAccess:
    """Where the proxy forwards to (the host's view) and what it charges."""

    upstream: str = DEFAULT_UPSTREAM
    api_key: str | None = None
    timeout_s: float = 600.0
    prices: tuple[float, float] | None = None


class AgentStartFailure(HarnessError):
    """The CLI exited non-zero before it called the model: a setup problem, not the model's work."""

    def __init__(self, message: str, metadata: dict[str, Any]) -> None:
        super().__init__(message)
        self.metadata = metadata


def output_tail(text: str, lines: int = TAIL_LINES) -> str:
    """The last ``lines`` lines of a CLI's output, for the terminal and the report."""
    kept = text.rstrip("\n").splitlines()[-lines:]
    return "\n".join(kept) if kept else "(no output)"


def model_environment(choice: AgentChoice, proxy: MeteringProxy | None, passed: dict[str, str]) -> dict[str, str]:
    """The variables that point the CLI at the proxy, under the names it reads; ``env=`` values win."""
    if proxy is None:
        return {}
    values = {
        "BACKENDBENCH_MODEL_BASE_URL": proxy.base_url,
        "BACKENDBENCH_MODEL_ROOT_URL": proxy.root_url,
        "BACKENDBENCH_MODEL_API_KEY": proxy.token,
    }
    if choice.adapter is not None:
        values.update(choice.adapter.model_env(proxy.base_url, proxy.root_url, proxy.token, choice.model or ""))
    else:
        values.update(
            {
                "OPENAI_BASE_URL": proxy.base_url,
                "OPENAI_API_BASE": proxy.base_url,
                "OPENAI_API_KEY": proxy.token,
                "ANTHROPIC_BASE_URL": proxy.root_url,
                "ANTHROPIC_API_KEY": proxy.token,
            }
        )
    return {k: v for k, v in values.items() if k not in passed}


def _adapter_image(adapter: Adapter, spec: SandboxSpec) -> str:
    import docker
    from docker.errors import DockerException

    from ..runtime.base import DEFAULT_BASE_IMAGE, default_cache_dir
    from .agent_image import ensure_adapter_image

    try:
        client = docker.from_env(timeout=120)
    except DockerException as err:
        raise HarnessError(f"the docker engine does not answer ({err}); start dockerd to build the {adapter.title} image") from err
    try:
        return ensure_adapter_image(client, adapter, spec.base_image or DEFAULT_BASE_IMAGE, spec.cache_dir or default_cache_dir())
    finally:
        client.close()


def _open_proxy(access: ModelAccess, host: str) -> MeteringProxy:
    try:
        return MeteringProxy(access.upstream, host, api_key=access.api_key, timeout_s=access.timeout_s).start()
    except OSError as err:
        raise HarnessError(
            f"cannot open the model proxy at {host}, where the sandbox sees this host: {err}; cmd: agents need the "
            "sandbox's bridge gateway on this machine (a local Docker engine; rootless Podman and remote engines keep "
            "it elsewhere)"
        ) from err


def run_cli_agent(
    agent: AgentChoice | CliAgentDefinition,
    spec: SandboxSpec,
    workspace_out: Path,
    transcript: TranscriptSink | None = None,
    *,
    engine: str = "docker",
    prompt: str | None = None,
    environ: dict[str, str] | None = None,
    access: ModelAccess | None = None,
    trajectory_out: Path | None = None,
) -> dict[str, Any]:
    """Run the agent CLI for one sample and copy its workspace to ``workspace_out``; return generation metadata.

    Raises ``AgentDefinitionError`` (a passed-through variable is unset) before anything starts,
    ``AgentStartFailure`` when the CLI exits non-zero before any model call, and ``HarnessError``
    when the sandbox cannot start.
    """
    # duck-typed: a re-imported module (pytester's in-process runs) has its own AgentChoice class
    choice = cast(AgentChoice, agent) if hasattr(agent, "definition") else AgentChoice(cast(CliAgentDefinition, agent))
    definition, adapter = choice.definition, choice.adapter
    access = access or ModelAccess()
    passed = definition.environment(os.environ if environ is None else environ)
    text = prompt if prompt is not None else default_task_prompt(spec)
    encoded = text.encode("utf-8")
    in_env = text if len(encoded) <= MAX_PROMPT_ENV_BYTES else (
        encoded[:MAX_PROMPT_ENV_BYTES].decode("utf-8", errors="ignore") + "\n[truncated; the whole prompt is in $BACKENDBENCH_TASK_PROMPT_FILE]\n"
    )
    image = definition.image or spec.image
    if adapter is not None and engine == "docker" and definition.image is None:
        image = _adapter_image(adapter, spec)
    extra = {"BACKENDBENCH_AGENT_MODEL": choice.model} if choice.model else {}
    sample_spec = replace(
        spec,
        image=image,
        network=definition.network or spec.network,
        env={**spec.env, **passed, **extra, "BACKENDBENCH_TASK_PROMPT": in_env, "BACKENDBENCH_TASK_ID": spec.task.id},
        files={**spec.files, PROMPT_FILE: text},
    )
    # The workspace path differs per engine; the command learns it from its working directory.
    prelude = (
        f'export BACKENDBENCH_WORKSPACE="$PWD" BACKENDBENCH_TASK_PROMPT_FILE="$PWD/{PROMPT_FILE}" '
        f'BACKENDBENCH_TRAJECTORY_DIR="$PWD/{TRAJECTORY_DIR}"\nmkdir -p "$BACKENDBENCH_TRAJECTORY_DIR"; T="$BACKENDBENCH_TRAJECTORY_DIR"\n'
    )
    with open_sandbox(sample_spec, engine) as sandbox:
        host = sandbox.host_address()
        proxy = _open_proxy(access, host) if host else None
        try:
            exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in model_environment(choice, proxy, passed).items())
            if transcript is not None:
                transcript.write(
                    "start", model=choice.label, command=definition.command, sandbox=sandbox.description, agent_version=adapter.version if adapter else None,
                    model_proxy=proxy.base_url if proxy else None, budgets={"seconds": sample_spec.limits.wall_s},
                )
                transcript.write("message", role="user", content=text)
            result = sandbox.run(prelude + exports + definition.command, timeout_s=sandbox.remaining_s())
            usage = read_usage(sandbox.run(f"cat {USAGE_FILE} 2>/dev/null", timeout_s=10).output)
            copied = trajectory_out is not None and sandbox.copy_folder_out(TRAJECTORY_DIR, trajectory_out)
            sandbox.copy_out(workspace_out)
            description, sandboxed = sandbox.description, sandbox.sandboxed
        finally:
            if proxy is not None:
                proxy.close()
    figures = adapter.read(trajectory_out) if adapter is not None and copied and trajectory_out is not None else AgentFigures()
    calls = proxy.meter.model_calls if proxy is not None else 0
    reason = "time" if result.timed_out else ("error" if result.exit_code != 0 else ("stopped" if figures.submitted is False else "submitted"))
    metadata: dict[str, Any] = {
        "model": choice.label,
        "exit_reason": reason,
        "agent_seconds": round(result.seconds, 3),
        "sandbox": description,
        "sandboxed": sandboxed,
        "network": sample_spec.network,
    }
    if result.exit_code is not None:
        metadata["agent_exit_code"] = result.exit_code
    if proxy is not None:
        metadata.update(proxy.meter.figures(access.prices))
        tokens_in, tokens_out = proxy.meter.tokens()
        metadata.update({k: v for k, v in (("steps", calls), ("tokens_in", tokens_in), ("tokens_out", tokens_out)) if v is not None})
        if "proxy_cost_usd" in metadata:
            metadata["cost_usd"] = metadata["proxy_cost_usd"]
    trajectory_figures = figures.metadata()
    if trajectory_figures.get("cost_usd") == 0 and "cost_usd" in metadata:
        del trajectory_figures["cost_usd"]  # the CLI could not price a local model; the proxy's price stands
    metadata.update(trajectory_figures)
    metadata.update(usage)
    if copied and trajectory_out is not None:
        main = trajectory_out / adapter.main_file if adapter is not None else None
        files = sorted(p for p in trajectory_out.rglob("*") if p.is_file())
        if main is None or not main.is_file():
            main = files[0] if files else None
        if main is not None:
            metadata["trajectory_path"] = str(main)
    if transcript is not None:
        transcript.write(
            "action", step=1, action="command", command=definition.command, exit_code=result.exit_code,
            seconds=round(result.seconds, 3), timed_out=result.timed_out, observation=result.output,
        )
        if proxy is not None:
            transcript.write("proxy", model_calls=[vars(c) for c in proxy.meter.calls])
        if copied and trajectory_out is not None:
            listed = sorted(p.relative_to(trajectory_out.parent).as_posix() for p in trajectory_out.rglob("*") if p.is_file())
            transcript.write("trajectory", files=listed)
        transcript.write("end", exit_reason=reason, **{k: v for k, v in metadata.items() if k in ("steps", "tokens_in", "tokens_out", "cost_usd")})
    if not result.timed_out and result.exit_code != 0 and calls == 0:
        ended = f"exited with code {result.exit_code}" if result.exit_code is not None else "ended without an exit status (its sandbox shell died)"
        raise AgentStartFailure(
            f"{choice.label} {ended} after {result.seconds:.1f}s before it called the model "
            f"(a setup problem of the CLI or its image, not the model's work); the end of its output:\n{output_tail(result.output)}",
            metadata,
        )
    return metadata
