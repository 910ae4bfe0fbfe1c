"""Built-in ``cmd:`` agents: mini-swe-agent, aider, OpenHands, Claude Code and Codex CLI.

Each adapter knows how the CLI is installed on top of the harness's agent image (pinned, from
its own package registry), the command line that runs it unattended on one prompt, the
environment that keeps it offline-safe (configured, no first-run questions, no update checks,
no price-map downloads, cost tracking tolerant of local model names), the names under which it
reads the model's base URL and key (pointed at the harness's metering proxy), and where it
writes its trajectory. The command leaves that trajectory in ``$BACKENDBENCH_TRAJECTORY_DIR``
(``.backendbench/trajectory/`` of the workspace), which the harness copies into the report's
artifacts before the sandbox goes; ``trajectories.py`` reads steps, tokens, cost and the CLI's
own submit signal from it.

``--bench-model=cmd:<agent>:<model>`` runs one, e.g. ``cmd:mini:gpt-4o-mini``; the model name
is sent upstream as given. A ``backendbench_agents`` ini line of the same name replaces the
built-in definition.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .trajectories import AgentFigures, read_aider, read_claude, read_codex, read_mini, read_openhands

TRAJECTORY_DIR = ".backendbench/trajectory"
ADAPTER_REPOSITORY = "backendbench/agent-"

_NODE = (
    "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs npm "
    "&& rm -rf /var/lib/apt/lists/*\n"
)


def _venv(name: str, requirement: str, *commands: str) -> str:
    """Install a PyPI CLI into its own venv (its pins never meet the candidate's packages) and
    link its commands into /usr/local/bin, which every login shell has on PATH."""
    links = " ".join(f"&& ln -s /opt/agent-cli/{name}/bin/{c} /usr/local/bin/{c}" for c in commands)
    return f"RUN python -m venv /opt/agent-cli/{name} && /opt/agent-cli/{name}/bin/pip install --no-cache-dir {requirement} {links}\n"


@dataclass(frozen=True)
class Adapter:
    """One built-in agent CLI."""

    name: str
    title: str
    package: str  # "pip:NAME==VERSION" or "npm:NAME@VERSION": what the image installs
    install: str  # Dockerfile lines after FROM the agent image
    command: str  # bash; $BACKENDBENCH_AGENT_MODEL, $BACKENDBENCH_TASK_PROMPT(_FILE), $T (trajectory dir) are set
    env: dict[str, str]  # fixed, offline-safe environment
    model_env: Callable[[str, str, str, str], dict[str, str]]  # (base_url, root_url, key, model) -> variables the CLI reads
    read: Callable[[Path], AgentFigures]  # the copied trajectory folder -> figures
    main_file: str  # the trajectory file the report links to (relative to the trajectory folder)
    docs: str = ""  # one line for docs/agents.md
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def dockerfile(self) -> str:
        """The image's Dockerfile, built with ``--build-arg AGENT_IMAGE=<the agent image>``."""
        env = " ".join(f"{k}={v}" for k, v in sorted(self.env.items()))
        return f"ARG AGENT_IMAGE\nFROM ${{AGENT_IMAGE}}\n{self.install}ENV {env}\n"

    def image_tag(self, agent_image_id: str) -> str:
        """Content tag: the Dockerfile and the agent image it builds on."""
        digest = hashlib.sha256((self.dockerfile + "\0" + agent_image_id).encode()).hexdigest()
        return f"{ADAPTER_REPOSITORY}{self.name}:{digest[:16]}"

    @property
    def version(self) -> str:
        """The pinned version of its package (``pip:NAME==V`` or ``npm:NAME@V``)."""
        return self.package.rpartition("==" if "==" in self.package else "@")[2]

    @property
    def stable_tag(self) -> str:
        """The tag users name in ini lines and ``docker run`` (moved to the newest build)."""
        return f"{ADAPTER_REPOSITORY}{self.name}:latest"


def _openai_env(base_url: str, root_url: str, key: str, model: str) -> dict[str, str]:
    return {"OPENAI_API_KEY": key, "OPENAI_API_BASE": base_url, "OPENAI_BASE_URL": base_url, "BACKENDBENCH_AGENT_MODEL": model}


def _anthropic_env(base_url: str, root_url: str, key: str, model: str) -> dict[str, str]:
    return {
        "ANTHROPIC_BASE_URL": root_url,
        "ANTHROPIC_API_KEY": key,
        "ANTHROPIC_MODEL": model,
        "ANTHROPIC_SMALL_FAST_MODEL": model,  # background calls (titles, summaries) go to the same server
        "ANTHROPIC_DEFAULT_HAIKU_MODEL": model,
        "BACKENDBENCH_AGENT_MODEL": model,
    }


def _openhands_env(base_url: str, root_url: str, key: str, model: str) -> dict[str, str]:
    return {"LLM_API_KEY": key, "LLM_BASE_URL": base_url, "LLM_MODEL": f"openai/{model}", "BACKENDBENCH_AGENT_MODEL": model}


_MINI = Adapter(
    name="mini",
    title="mini-swe-agent",
    package="pip:mini-swe-agent==2.4.6",
    install=_venv("mini", "mini-swe-agent==2.4.6", "mini"),
    command=(
        'mini --yolo --exit-immediately --cost-limit 0 --model "openai/$BACKENDBENCH_AGENT_MODEL" '
        '--task "$BACKENDBENCH_TASK_PROMPT" --output "$T/mini.traj.json"'
    ),
    env={
        "MSWEA_CONFIGURED": "true",  # else the first run opens an interactive setup and exits 1
        "MSWEA_COST_TRACKING": "ignore_errors",  # local model names are not in LiteLLM's price list
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no price-map download (6 s lost offline)
        "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": "3",
    },
    model_env=_openai_env,
    read=read_mini,
    main_file="mini.traj.json",
    docs="mini-swe-agent 2.x (tool calls over chat completions via LiteLLM); submits with `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`",
)

_AIDER = Adapter(
    name="aider",
    title="aider",
    package="pip:aider-chat==0.86.2",
    install=_venv("aider", "aider-chat==0.86.2", "aider"),
    command=(
        "read=(); for f in spec.md openapi.yaml REQUIREMENTS.md CANDIDATE_FORMAT.md; do [ -f \"$f\" ] && read+=(--read \"$f\"); done\n"
        'aider --model "openai/$BACKENDBENCH_AGENT_MODEL" --yes-always --no-git --no-auto-commits --no-stream --no-pretty '
        "--no-fancy-input --no-auto-lint --no-check-update --no-show-model-warnings --no-show-release-notes --no-detect-urls "
        '--analytics-disable --analytics-log "$T/aider.analytics.jsonl" --chat-history-file "$T/aider.chat.history.md" '
        '--input-history-file "$T/aider.input.history" --llm-history-file "$T/aider.llm.history" '
        '"${read[@]}" --message-file "$BACKENDBENCH_TASK_PROMPT_FILE"'
    ),
    env={"LITELLM_LOCAL_MODEL_COST_MAP": "True", "AIDER_CHECK_UPDATE": "false"},
    model_env=_openai_env,
    read=read_aider,
    main_file="aider.chat.history.md",
    docs="aider (one message, whole-file or diff edits over chat completions); exits after the message",
)

_OPENHANDS = Adapter(
    name="openhands",
    title="OpenHands CLI",
    package="pip:openhands==1.16.0",
    install=_venv("openhands", "openhands==1.16.0", "openhands"),
    command='openhands --headless --override-with-envs -f "$BACKENDBENCH_TASK_PROMPT_FILE" 2>&1 | tee "$T/openhands.log"',
    env={"RUNTIME": "local", "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    model_env=_openhands_env,
    read=read_openhands,
    main_file="openhands.log",
    docs="OpenHands CLI 1.x in headless mode; needs Python 3.12 (see the note below)",
    notes=("openhands 1.16.0 on PyPI requires Python ==3.12.*; the agent image's Python is 3.11",),
)

_CLAUDE = Adapter(
    name="claude-code",
    title="Claude Code",
    package="npm:@anthropic-ai/claude-code@2.1.332",
    install=_NODE + "RUN npm install -g --no-fund --no-audit @anthropic-ai/claude-code@2.1.332 && claude --version\n",
    command=(
        "set -o pipefail\n"
        'claude -p "$BACKENDBENCH_TASK_PROMPT" --model "$BACKENDBENCH_AGENT_MODEL" --output-format stream-json --verbose '
        '--dangerously-skip-permissions | tee "$T/claude.stream.jsonl"\n'
        'status=$?; cp -r "$HOME/.claude/projects" "$T/claude-projects" 2>/dev/null; exit $status'
    ),
    env={
        "IS_SANDBOX": "1",  # --dangerously-skip-permissions as root, which the sandbox is
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
    },
    model_env=_anthropic_env,
    read=read_claude,
    main_file="claude.stream.jsonl",
    docs="Claude Code in print mode (Anthropic Messages API, streamed); its `result` event carries turns, usage and cost",
)

_CODEX = Adapter(
    name="codex",
    title="Codex CLI",
    package="npm:@openai/codex@0.171.0",
    install=_NODE + "RUN npm install -g --no-fund --no-audit @openai/codex@0.171.0 && codex --version\n",
    command=(
        "set -o pipefail\n"
        'codex exec --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox --json -m "$BACKENDBENCH_AGENT_MODEL" '
        '-c model_provider=backendbench -c "model_providers.backendbench={name=\\"backendbench\\", base_url=\\"$OPENAI_BASE_URL\\", '
        'env_key=\\"OPENAI_API_KEY\\", wire_api=\\"responses\\"}" "$BACKENDBENCH_TASK_PROMPT" | tee "$T/codex.jsonl"\n'
        'status=$?; cp -r "$HOME/.codex/sessions" "$T/codex-sessions" 2>/dev/null; exit $status'
    ),
    env={"CODEX_DISABLE_UPDATE_CHECK": "1", "RUST_LOG": "error"},
    model_env=_openai_env,
    read=read_codex,
    main_file="codex.jsonl",
    docs="Codex CLI `exec --json` with a custom provider on the Responses API",
)

ADAPTERS: dict[str, Adapter] = {a.name: a for a in (_MINI, _AIDER, _OPENHANDS, _CLAUDE, _CODEX)}
ALIASES = {"mini-swe-agent": "mini", "claude": "claude-code", "openhands-cli": "openhands"}


def find_adapter(name: str) -> Adapter | None:
    """The built-in adapter called ``name`` (or one of its aliases), else None."""
    return ADAPTERS.get(ALIASES.get(name, name))


def adapters_markdown() -> str:
    """docs/agents.md's table and command lines of the built-in adapters (a test keeps the page equal to it)."""
    lines = [
        "| `--bench-model` | CLI | package (pinned) | image (`backendbench agent-image --with NAME`) | trajectory file |",
        "|---|---|---|---|---|",
    ]
    for adapter in ADAPTERS.values():
        lines.append(
            f"| `cmd:{adapter.name}:<model>` | {adapter.title} | `{adapter.package}` | `{adapter.stable_tag}` | "
            f"`$BACKENDBENCH_TRAJECTORY_DIR/{adapter.main_file}` |"
        )
    for adapter in ADAPTERS.values():
        env = ", ".join(f"`{k}={v}`" for k, v in sorted(adapter.env.items()))
        model_vars = ", ".join(f"`{k}`" for k in sorted(adapter.model_env("URL", "ROOT", "KEY", "MODEL")))
        lines += [
            "",
            f"**{adapter.title}** (`{adapter.name}`): {adapter.docs}.",
            f"Offline-safe environment: {env}. The proxy's address and key arrive as {model_vars}.",
            *[f"Note: {note}." for note in adapter.notes],
            "",
            "```bash",
            adapter.command,
            "```",
        ]
    return "\n".join(lines) + "\n"
