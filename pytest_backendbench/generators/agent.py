"""The generator answering ``--bench-model=agent:<model>`` (our loop) and ``--bench-model=cmd:<name>`` (an agent CLI).

Both give each (task, sample) its own sandbox holding only the visible task, let the agent
work, and copy the workspace out as the candidate, whatever ended the run (a sample that ran
out of budget is still judged). The transcript goes to the report's artifacts; the figures
(steps, verify calls, exit reason, tokens, cost, seconds) to candidate.yaml's ``generation``,
from where the report aggregates them.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
import requests

from ..agents.loop import AgentLoop, AgentStep
from ..agents.sandbox import SandboxSpec, open_sandbox
from ..agents.settings import AgentSettings
from ..agents.transcript import TRANSCRIPT_FILE, TRANSCRIPT_PAGE, TranscriptWriter
from ..agents.verify import SelfVerifier
from ..errors import HarnessError
from ..formats.atif import TRAJECTORY_FILE
from ..llm.chat import ChatClient, GenerationError, OpenAISettings, ProviderError
from ..runkey import RunKey
from ..tasks import VisibleTask
from .orchestrate import GenerationSetupError

AGENT_PREFIX = "agent:"
CMD_PREFIX = "cmd:"
TRANSCRIPTS_DIR = "transcripts"


@dataclass(frozen=True)
class AgentContext:
    """What the agent generator needs from the run: where things are and which engine to use."""

    bench_root: Path
    report_dir: Path  # transcripts go to <report_dir>/artifacts/transcripts/<task>[@sample]/
    engine: str  # "docker" | "process": where sandboxes run
    runtime: str  # the evaluation runtime, which self_verify uses too
    session_id: str
    config: pytest.Config | None = None  # for the agent_step hook and cmd: definitions
    base_image: str | None = None  # what the default agent image builds on (--base-image; None: backendbench/python:3.11)
    cache_dir: Path | None = None  # build locks (BACKENDBENCH_CACHE through the settings table; None: the default)


def sample_of(workspace: Path) -> str:
    """``sample-k`` when generating several samples per task (the workspace's folder name), else ""."""
    return workspace.name if workspace.name.startswith("sample-") else ""


class AgentGenerator:
    """Answers ``agent:<model>`` and ``cmd:<name>``; a user's ``pytest_backendbench_generate`` hook runs first."""

    backendbench_models = (f"{AGENT_PREFIX}<model>", f"{CMD_PREFIX}<name>")

    def __init__(self, context: AgentContext, settings: AgentSettings, openai: OpenAISettings | None = None) -> None:
        self.context = context
        self.settings = settings
        self.openai = openai or OpenAISettings()

    @pytest.hookimpl(trylast=True)
    def pytest_backendbench_generate(self, task: VisibleTask, workspace: Path, model: str) -> dict[str, Any] | None:
        """Run the agent for one sample in its sandbox; the workspace becomes the candidate."""
        if model.startswith(AGENT_PREFIX):
            name = model[len(AGENT_PREFIX) :]
            if not name:
                raise GenerationError("--bench-model agent: needs the server's model name after the colon, e.g. agent:gpt-4o-mini")
            return self._run_loop(task, workspace, name)
        if model.startswith(CMD_PREFIX):
            return self._run_cli(task, workspace, model[len(CMD_PREFIX) :])
        return None

    def spec(self, task: VisibleTask, key: str, env: dict[str, str] | None = None, image: str | None = None) -> SandboxSpec:
        s = self.settings
        return SandboxSpec(
            task=task,
            key=key,
            session_id=self.context.session_id,
            image=image or s.agent_image,
            network=s.agent_network,
            limits=s.limits(),
            env=env or {},
            base_image=self.context.base_image,
            cache_dir=self.context.cache_dir,
        )

    def transcript_folder(self, key: str) -> Path:
        return self.context.report_dir / "artifacts" / TRANSCRIPTS_DIR / key.replace("/", "_")

    def _links(self, key: str) -> dict[str, str]:
        folder = self.transcript_folder(key).relative_to(self.context.report_dir).as_posix()
        return {"transcript": f"{folder}/{TRANSCRIPT_FILE}", "transcript_html": f"{folder}/{TRANSCRIPT_PAGE}", "atif_trajectory": f"{folder}/{TRAJECTORY_FILE}"}

    def _run_loop(self, task: VisibleTask, workspace: Path, model: str) -> dict[str, Any]:
        sample = sample_of(workspace)
        key = str(RunKey.of(task.id, sample))
        openai = self.openai.resolved()
        if self.settings.agent_cost is not None and openai.prices() is None:
            raise GenerationError("--agent-cost needs token prices to count cost: set --openai-price or BACKENDBENCH_OPENAI_PRICE (IN/OUT USD per million tokens)")
        verifier = SelfVerifier(task.id, self.context.bench_root, self.settings.verify_budget, self.context.runtime)
        transcript = TranscriptWriter(self.transcript_folder(key))
        hook = self.context.config.hook if self.context.config is not None else None

        def on_step(step: AgentStep) -> bool:
            if hook is None:
                return False
            answers = hook.pytest_backendbench_agent_step(task=task, sample=sample, step=step)
            return any(bool(a) for a in answers)

        try:
            with open_sandbox(self.spec(task, key), self.context.engine) as sandbox, requests.Session() as session:
                try:
                    loop = AgentLoop(ChatClient(openai, model, session), openai, self.settings, task, sandbox, transcript, verifier, on_step)
                    outcome = loop.run()
                finally:
                    # whatever ended the run, what the agent wrote is the candidate (orchestrate.py empties it on error)
                    sandbox.copy_out(workspace)
                metadata = outcome.metadata()
                metadata["sandbox"] = sandbox.description
                metadata["verify_budget"] = self.settings.verify_budget
        except (GenerationError, HarnessError) as err:
            extra = self._links(key)
            if isinstance(err, HarnessError):
                raise ProviderError(f"the sandbox failed: {err}", {**extra}) from err
            err.metadata.update(extra)
            raise
        finally:
            transcript.close(key)
        metadata.update(self._links(key))
        return metadata

    def _run_cli(self, task: VisibleTask, workspace: Path, name: str) -> dict[str, Any]:
        from ..agents import cli_agent, cli_run  # definitions and the run of an agent CLI

        sample = sample_of(workspace)
        key = str(RunKey.of(task.id, sample))
        try:
            definitions = cli_agent.agent_definitions(self.context.config) if self.context.config is not None else {}
            choice = cli_agent.resolve_agent(definitions, CMD_PREFIX + name)
        except cli_agent.AgentDefinitionError as err:
            raise GenerationSetupError(str(err)) from err
        openai = self.openai.resolved()
        access = cli_run.ModelAccess(openai.base_url or cli_run.DEFAULT_UPSTREAM, openai.api_key, openai.timeout_s or 600.0, openai.prices())
        folder = self.transcript_folder(key)
        transcript = TranscriptWriter(folder)
        try:
            metadata = dict(
                cli_run.run_cli_agent(choice, self.spec(task, key), workspace, transcript, engine=self.context.engine, access=access, trajectory_out=folder / "trajectory")
            )
        except cli_run.AgentStartFailure as err:
            raise ProviderError(str(err), {**self._trajectory_link(err.metadata), **self._links(key)}) from err
        except HarnessError as err:
            raise ProviderError(f"the sandbox failed: {err}", self._links(key)) from err
        finally:
            transcript.close(key)
        metadata = self._trajectory_link(metadata)
        metadata.update(self._links(key))
        return metadata

    def _trajectory_link(self, metadata: dict[str, Any]) -> dict[str, Any]:
        """``trajectory_path`` (a file in the artifacts) becomes ``trajectory``, relative to the report."""
        data = dict(metadata)
        path = data.pop("trajectory_path", None)
        if path:
            data["trajectory"] = Path(path).relative_to(self.context.report_dir).as_posix()
        return data


AGENT_PLUGIN = "backendbench-generator-agent"


def register_agent_generator(config: pytest.Config, bench_root: Path, session_id: str | None = None) -> None:
    """Register the agent generator for this run (once); settings are resolved now, so a bad
    option is a usage error before any sandbox starts."""
    if config.pluginmanager.has_plugin(AGENT_PLUGIN):
        return
    from ..config import bench_config
    from ..runtime import resolve_runtime_name

    bench = bench_config(config)
    report_dir = Path(bench.report_dir or "backendbench-report")
    if not report_dir.is_absolute():
        report_dir = Path(config.invocation_params.dir) / report_dir
    runtime, _ = resolve_runtime_name(bench.runtime or "auto")
    context = AgentContext(bench_root, report_dir, "docker" if runtime == "docker" else "process", runtime, session_id or secrets.token_hex(6), config)
    context = replace(context, base_image=bench.base_image or None, cache_dir=Path(bench.cache_dir) if bench.cache_dir else None)
    settings = AgentSettings.from_config(config)
    model = bench.model or ""
    if model.startswith(CMD_PREFIX):
        from ..agents.cli_checks import check_cli_agent

        check_cli_agent(config, model, context.engine, settings.agent_network)
    config.pluginmanager.register(AgentGenerator(context, settings, OpenAISettings.from_config(config)), AGENT_PLUGIN)
