"""The ``agent:<model>`` loop: a mini-SWE-style agent over any OpenAI-compatible chat API.

Like mini-swe-agent, the history is linear (system, task, then model reply / observation
pairs) and every action is a shell command; unlike it, the model acts through function calls
by default (``bash(command)``, ``submit()``, and with a verify budget ``self_verify()``), or,
for servers without tool calling, through one fenced ```bash block or the word ``submit`` /
``self_verify`` alone on a line. An observation is the exit code and the output, cut to its
head and tail when longer than the budget (mini-swe-agent's ``<returncode>``/``<output>``
layout). A reply the loop cannot act on gets a corrective observation, never a crash.

The run ends when the model submits, or a budget is spent (steps = model calls, tokens in +
out, cost, wall seconds), or a ``pytest_backendbench_agent_step`` hook stops it. A provider
failure ends it with ``ProviderError`` (a harness error for the sample).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..llm.chat import ChatClient, Completion, GenerationError, OpenAISettings, ProviderError, ToolCall, Usage
from ..tasks import VisibleTask
from .sandbox import CommandResult, Sandbox
from .settings import AgentSettings
from .transcript import TranscriptWriter
from .verify import SelfVerifier

PROMPTS = Path(__file__).parent / "prompts"
EXIT_REASONS = ("submitted", "steps", "tokens", "cost", "time", "stopped", "error")
BASH_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run one shell command with `bash -lc` in the workspace; returns its exit code and output.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "the command line to run"}},
            "required": ["command"],
        },
    },
}
SUBMIT_TOOL = {
    "type": "function",
    "function": {"name": "submit", "description": "End your work: the workspace as it is now is your answer.", "parameters": {"type": "object", "properties": {}}},
}
VERIFY_TOOL = {
    "type": "function",
    "function": {
        "name": "self_verify",
        "description": "Build and test the workspace against the hidden acceptance tests; answers only PASS/FAIL and the phase.",
        "parameters": {"type": "object", "properties": {}},
    },
}
BASH_BLOCK = re.compile(r"^```(?:bash|sh|shell)?[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
WORD_LINE = re.compile(r"^[ \t]*`?(submit|self_verify)(?:\(\))?`?[ \t]*$", re.MULTILINE)
THINKING = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True)
class Action:
    """One thing the model asked for: ``bash`` (with ``command``), ``submit``, ``self_verify``,
    or ``invalid`` (with ``problem``, said back to the model)."""

    kind: str
    command: str | None = None
    call_id: str | None = None
    problem: str | None = None


@dataclass(frozen=True)
class AgentStep:
    """What a ``pytest_backendbench_agent_step`` hook sees after each model call and its actions."""

    number: int
    actions: tuple[Action, ...]
    observations: tuple[str, ...]
    tokens_in: int | None
    tokens_out: int | None
    cost_usd: float | None
    seconds: float
    verify_calls: int


@dataclass
class AgentOutcome:
    """How one sample's loop ended; ``metadata()`` is what goes into candidate.yaml's generation."""

    exit_reason: str = "error"
    steps: int = 0
    commands: int = 0
    invalid_actions: int = 0
    verify_calls: int = 0
    verify_refused: int = 0
    pass_seen: bool = False
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    seconds: float = 0.0
    served_model: str | None = None
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def metadata(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost_usd": self.cost_usd,
            "seconds": round(self.seconds, 3),
            "exit_reason": self.exit_reason,
            "steps": self.steps,
            "commands": self.commands,
            "invalid_actions": self.invalid_actions,
            "verify_calls": self.verify_calls,
            "verify_refused": self.verify_refused,
            "submitted": self.exit_reason == "submitted",
            "submitted_with_pass": self.exit_reason == "submitted" and self.pass_seen,
        }
        if self.served_model:
            data["model"] = self.served_model
        if self.detail:
            data["exit_detail"] = self.detail[:500]
        data.update(self.extra)
        return data


def truncate(text: str, budget: int) -> tuple[str, int]:
    """Head and tail of ``text`` within ``budget`` characters, and how many were left out."""
    if len(text) <= budget:
        return text, 0
    head = budget // 2
    tail = budget - head
    elided = len(text) - head - tail
    return f"{text[:head]}\n<elided_chars>\n{elided} characters elided\n</elided_chars>\n{text[len(text) - tail :]}", elided


def format_observation(result: CommandResult, budget: int) -> str:
    """What the model sees of one command (mini-swe-agent's layout, plus timeout and elision notes)."""
    output, elided = truncate(result.output, budget)
    elided += getattr(result, "dropped_bytes", 0) or 0
    parts = []
    if result.timed_out:
        parts.append(
            f"The command did not finish within {result.seconds:.0f} seconds and was killed (with everything it started). "
            "Run servers in the background and give commands that may hang a timeout."
        )
    if elided:
        parts.append(f"The output was too long: {elided} characters in the middle are left out. Use head, tail or grep to see less at once.")
    parts.append(f"<returncode>{'killed' if result.exit_code is None else result.exit_code}</returncode>")
    parts.append(f"<output>\n{output}</output>" if output.endswith("\n") or not output else f"<output>\n{output}\n</output>")
    return "\n".join(parts)


def load_prompts(folder: Path | None) -> dict[str, str]:
    """The prompt templates: the defaults, with any file of ``folder`` (--agent-prompt) replacing its namesake."""
    templates = {p.stem: p.read_text(encoding="utf-8") for p in sorted(PROMPTS.glob("*.md"))}
    if folder is not None:
        templates.update({p.stem: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.md"))})
    return templates


def fill(template: str, values: dict[str, str]) -> str:
    """``{{name}}`` placeholders filled; unknown ones are left as they are (a user's template may be ahead of us)."""
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: values.get(m.group(1), m.group(0)), template)


def workspace_listing(sandbox: Sandbox) -> str:
    """The files the agent starts with, as a bullet list (from the sandbox, so it is what it will see)."""
    result = sandbox.run("find . -path ./.backendbench -prune -o -type f -print | sed 's|^\\./||' | sort", timeout_s=30)
    files = [line for line in result.output.splitlines() if line.strip()]
    return "\n".join(f"- `{name}`" for name in files) or "- (empty)"


class AgentLoop:
    """One sample: the conversation, its actions in the sandbox, budgets and the transcript."""

    def __init__(
        self,
        client: ChatClient,
        openai: OpenAISettings,
        settings: AgentSettings,
        task: VisibleTask,
        sandbox: Sandbox,
        transcript: TranscriptWriter | None = None,
        verifier: SelfVerifier | None = None,
        on_step: Callable[[AgentStep], bool] | None = None,
    ) -> None:
        self.client = client
        self.openai = openai
        self.settings = settings
        self.task = task
        self.sandbox = sandbox
        self.transcript = transcript
        self.verifier = verifier if settings.verify_budget > 0 else None
        self.on_step = on_step
        self.usage = Usage()
        self.tools_mode = settings.agent_actions == "tools"
        self.outcome = AgentOutcome()

    # --- prompts ---------------------------------------------------------------------------

    def prompts(self) -> tuple[str, str]:
        """(system, task) messages, filled from the templates and the visible task only."""
        s = self.settings
        templates = load_prompts(Path(s.agent_prompt) if s.agent_prompt else None)
        verify_on = self.verifier is not None
        budgets = [f"{s.agent_steps} steps (model replies)", f"{s.agent_seconds:g} seconds"]
        if s.agent_tokens:
            budgets.append(f"{s.agent_tokens} tokens")
        if s.agent_cost:
            budgets.append(f"{s.agent_cost:g} USD")
        if verify_on:
            budgets.append(f"{s.verify_budget} self_verify calls")
        values = {
            "workspace": self.sandbox.workspace,
            "command_timeout": f"{s.agent_command_timeout:g}",
            "verify_budget": str(s.verify_budget),
            "verify_text": "; or `self_verify` alone on a line to run the hidden acceptance tests" if verify_on else "",
            "task_id": self.task.id,
            "title": self.task.title,
            "kind": self.task.kind,
            "budgets": ", ".join(budgets),
        }
        values["verify"] = fill(templates.get("verify", ""), values) if verify_on else ""
        values["actions"] = fill(templates.get("actions_tools" if self.tools_mode else "actions_text", ""), values)
        values["files"] = workspace_listing(self.sandbox)
        return fill(templates["system"], values).strip() + "\n", fill(templates["task"], values).strip() + "\n"

    # --- budgets ---------------------------------------------------------------------------

    def cost(self) -> float | None:
        prices = self.openai.prices()
        if prices is None or self.usage.prompt_tokens is None:
            return None
        return round((self.usage.prompt_tokens * prices[0] + (self.usage.completion_tokens or 0) * prices[1]) / 1e6, 6)

    def spent(self, started: float) -> str | None:
        """The budget that is exhausted, if any (checked before every model call)."""
        s = self.settings
        tokens = (self.usage.prompt_tokens or 0) + (self.usage.completion_tokens or 0)
        cost = self.cost()
        if self.outcome.steps >= s.agent_steps:
            return "steps"
        if s.agent_tokens is not None and tokens >= s.agent_tokens:
            return "tokens"
        if s.agent_cost is not None and cost is not None and cost >= s.agent_cost:
            return "cost"
        if time.monotonic() - started >= s.agent_seconds or self.sandbox.remaining_s() <= 0:
            return "time"
        return None

    # --- the loop --------------------------------------------------------------------------

    def run(self) -> AgentOutcome:
        """Drive the conversation until an exit reason; ProviderError propagates (with metadata)."""
        started = time.monotonic()
        outcome = self.outcome
        system, task_prompt = self.prompts()
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": task_prompt}]
        tools = [BASH_TOOL, SUBMIT_TOOL, *([VERIFY_TOOL] if self.verifier is not None else [])] if self.tools_mode else None
        self._log("start", model=self.client.model, actions=self.settings.agent_actions, verify_budget=self.settings.verify_budget,
                  budgets={"steps": self.settings.agent_steps, "tokens": self.settings.agent_tokens, "cost_usd": self.settings.agent_cost,
                           "seconds": self.settings.agent_seconds}, sandbox=getattr(self.sandbox, "description", ""))
        for message in messages:
            self._log("message", role=message["role"], content=message["content"])
        try:
            while True:
                reason = self.spent(started)
                if reason is not None:
                    outcome.exit_reason = reason
                    break
                try:
                    completion = self.client.complete(messages, self.usage, tools)
                except GenerationError as err:
                    outcome.exit_reason = "error"
                    outcome.detail = str(err)
                    self._finish(started)
                    if isinstance(err, ProviderError):
                        raise ProviderError(str(err), outcome.metadata()) from err
                    raise GenerationError(str(err), outcome.metadata()) from err
                outcome.steps += 1
                outcome.served_model = completion.served_model or outcome.served_model
                messages.append(completion.message or {"role": "assistant", "content": completion.content})
                self._log("model", step=outcome.steps, content=completion.content,
                          tool_calls=[{"id": c.id, "name": c.name, "arguments": c.arguments} for c in completion.tool_calls],
                          finish_reason=completion.finish_reason, tokens_in=self.usage.prompt_tokens,
                          tokens_out=self.usage.completion_tokens, cost_usd=self.cost())
                actions = self.parse(completion)
                observations: list[str] = []
                submitted = False
                for action in actions:
                    observation = self.act(action, started)
                    observations.append(observation)
                    if self.tools_mode and action.call_id is not None:
                        messages.append({"role": "tool", "tool_call_id": action.call_id, "content": observation})
                    if action.kind == "submit":
                        submitted = True
                if not self.tools_mode or not any(a.call_id for a in actions):
                    text = "\n\n".join(observations)
                    messages.append({"role": "user", "content": text})
                step = AgentStep(outcome.steps, tuple(actions), tuple(observations), self.usage.prompt_tokens,
                                 self.usage.completion_tokens, self.cost(), round(time.monotonic() - started, 3),
                                 self.verifier.calls if self.verifier else 0)
                if submitted:
                    outcome.exit_reason = "submitted"
                    self._notify(step)
                    break
                if self._notify(step):
                    outcome.exit_reason = "stopped"
                    outcome.detail = "a pytest_backendbench_agent_step hook stopped the run"
                    break
        finally:
            outcome.seconds = time.monotonic() - started
        self._finish(started)
        return outcome

    def _notify(self, step: AgentStep) -> bool:
        return bool(self.on_step(step)) if self.on_step is not None else False

    def _finish(self, started: float) -> None:
        o = self.outcome
        o.tokens_in, o.tokens_out, o.cost_usd = self.usage.prompt_tokens, self.usage.completion_tokens, self.cost()
        o.seconds = time.monotonic() - started
        if self.verifier is not None:
            o.verify_calls, o.verify_refused, o.pass_seen = self.verifier.calls, self.verifier.refused, self.verifier.pass_seen
        self._log("end", **{k: v for k, v in o.metadata().items()})

    # --- actions ---------------------------------------------------------------------------

    def parse(self, completion: Completion) -> list[Action]:
        """The actions of one reply; what cannot be acted on becomes an ``invalid`` action."""
        if self.tools_mode:
            if not completion.tool_calls:
                return [Action("invalid", problem=self._no_action_text())]
            return [self._from_tool_call(call) for call in completion.tool_calls]
        text = THINKING.sub("", completion.content)
        blocks = BASH_BLOCK.findall(text)
        words = WORD_LINE.findall(text)
        if len(blocks) + len(words) != 1:
            found = f"found {len(blocks)} bash block(s) and {len(words)} submit/self_verify line(s)"
            return [Action("invalid", problem=f"Your reply must contain exactly one action; {found}. {self._no_action_text()}")]
        if blocks:
            return [Action("bash", command=blocks[0].strip())]
        return [Action(words[0])]

    def _no_action_text(self) -> str:
        names = "bash, submit" + (", self_verify" if self.verifier is not None else "")
        if self.tools_mode:
            return f"Your reply called no tool. Act by calling one of the tools ({names}); call submit when you are done."
        extra = " or `self_verify`" if self.verifier is not None else ""
        return f"Give one ```bash block with a command, or `submit`{extra} alone on a line."

    def _from_tool_call(self, call: ToolCall) -> Action:
        names = {"bash", "submit", *({"self_verify"} if self.verifier is not None else set())}
        if call.name not in names:
            return Action("invalid", call_id=call.id, problem=f"There is no tool named {call.name!r}; the tools are {', '.join(sorted(names))}.")
        try:
            arguments = json.loads(call.arguments) if call.arguments.strip() else {}
        except json.JSONDecodeError as err:
            return Action("invalid", call_id=call.id, problem=f"The arguments of your {call.name} call are not valid JSON ({err.msg}); send a JSON object.")
        if not isinstance(arguments, dict):
            return Action("invalid", call_id=call.id, problem=f"The arguments of your {call.name} call must be a JSON object.")
        if call.name == "bash":
            command = arguments.get("command")
            if not isinstance(command, str) or not command.strip():
                return Action("invalid", call_id=call.id, problem='bash needs one string argument "command", e.g. {"command": "ls -la"}.')
            return Action("bash", command=command, call_id=call.id)
        return Action(call.name, call_id=call.id)

    def act(self, action: Action, started: float) -> str:
        """Carry out one action; the observation as the model will see it (also in the transcript)."""
        step = self.outcome.steps
        if action.kind == "invalid":
            self.outcome.invalid_actions += 1
            observation = f"Format error: {action.problem}"
            self._log("action", step=step, call_id=action.call_id, action="invalid", command=None, exit_code=None, seconds=0.0, observation=observation)
            return observation
        if action.kind == "submit":
            observation = "Submitted."
            self._log("action", step=step, call_id=action.call_id, action="submit", command=None, exit_code=None, seconds=0.0, observation=observation)
            return observation
        if action.kind == "self_verify":
            if self.verifier is None:
                return "Format error: self_verify is not available in this run."
            observation, record = self.verifier(self.sandbox, self.settings.agent_seconds - (time.monotonic() - started))
            self._log("verify", step=step, call_id=action.call_id, observation=observation, **record)
            return observation
        self.outcome.commands += 1
        remaining = self.settings.agent_seconds - (time.monotonic() - started)
        timeout = max(1.0, min(self.settings.agent_command_timeout, remaining))
        result = self.sandbox.run(action.command or "", timeout_s=timeout)
        observation = format_observation(result, self.settings.agent_output_chars)
        self._log("action", step=step, call_id=action.call_id, action="bash", command=action.command, exit_code=result.exit_code,
                  seconds=round(result.seconds, 3), timed_out=result.timed_out, output_chars=len(result.output), observation=observation)
        return observation

    def _log(self, kind: str, **data: Any) -> None:
        if self.transcript is not None:
            self.transcript.write(kind, **data)
