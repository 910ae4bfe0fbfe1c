"""The agent: loop against the scripted chat server, in the process sandbox (real commands, fast).

What only a container can show (no oracles/ visible, Ctrl-C leaves nothing, the candidate
passing under docker) is in test_agent_docker.py.
"""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from pytest_backendbench.agents.loop import AgentLoop, AgentOutcome, AgentStep, format_observation, truncate
from pytest_backendbench.agents.sandbox import CommandResult, SandboxSpec, open_sandbox
from pytest_backendbench.agents.selfverify import Verdict
from pytest_backendbench.agents.settings import AgentSettings
from pytest_backendbench.agents.transcript import TranscriptWriter, read_transcript
from pytest_backendbench.agents.verify import SelfVerifier
from pytest_backendbench.formats.atif import validate as validate_atif
from pytest_backendbench.llm.chat import ChatClient, OpenAISettings, ProviderError
from pytest_backendbench.tasks import TaskCatalog, VisibleTask

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).parent))  # importlib mode: helpers next to tests are imported by path
from chat_server import ScriptedChatServer, Turn, text_bash


@pytest.fixture(scope="module")
def task() -> VisibleTask:
    return TaskCatalog(REPO).load("url-shortener").visible


@pytest.fixture
def sandbox(task: VisibleTask) -> Iterator[object]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the process sandbox says loudly that it is not one
        box = open_sandbox(SandboxSpec(task=task, key="url-shortener", session_id="test-loop"), "process")
    with box:
        yield box


def run_loop(
    server: ScriptedChatServer,
    task: VisibleTask,
    sandbox: object,
    tmp_path: Path,
    verifier: SelfVerifier | None = None,
    on_step: object = None,
    price: str | None = None,
    **settings: object,
) -> tuple[AgentOutcome, list[dict[str, object]]]:
    openai = OpenAISettings(base_url=server.base_url, attempts=3, price=price, retry_backoff_s=0.01, environ={}).resolved()
    agent = AgentSettings(**settings)  # type: ignore[arg-type]
    transcript = TranscriptWriter(tmp_path / "transcript")
    with requests.Session() as session:
        loop = AgentLoop(ChatClient(openai, "scripted", session), openai, agent, task, sandbox, transcript, verifier, on_step)  # type: ignore[arg-type]
        try:
            outcome = loop.run()
        finally:
            transcript.close("test")
    return outcome, read_transcript(transcript.path)


def fake_verify(verdicts: list[bool]) -> SelfVerifier:
    """A verifier whose oracle answers from a list (the real oracle runs in the docker e2e)."""
    answers = iter(verdicts)

    def verify(task: str, candidate: Path, bench_root: Path, runtime: str, timeout_s: float) -> Verdict:
        assert (candidate / "spec.md").is_file()  # the snapshot is the workspace
        assert 1.0 <= timeout_s <= 1800.0  # bounded by what is left of the sample's wall time
        passed = next(answers)
        return Verdict(passed, "tests", 1.0 if passed else 0.5)

    return SelfVerifier("url-shortener", REPO, budget=2, verify=verify)


def test_submit_after_commands_writes_files_and_transcript(task: VisibleTask, sandbox: object, tmp_path: Path) -> None:
    turns = [Turn(bash="echo hello > note.txt && cat note.txt"), Turn(bash="exit 3"), Turn(tool="submit")]
    with ScriptedChatServer(turns) as server:
        outcome, events = run_loop(server, task, sandbox, tmp_path)
    assert (outcome.exit_reason, outcome.steps, outcome.commands) == ("submitted", 3, 2)
    assert (outcome.tokens_in, outcome.tokens_out) == (3000, 300)
    actions = [e for e in events if e["type"] == "action"]
    assert actions[0]["observation"] == "<returncode>0</returncode>\n<output>\nhello\n</output>"
    assert actions[1]["exit_code"] == 3 and "<returncode>3</returncode>" in str(actions[1]["observation"])
    # the tool result went back to the model as a tool message answering its call
    second = server.requests[1]["messages"]
    assert second[-1] == {"role": "tool", "tool_call_id": "call_0", "content": actions[0]["observation"]}
    assert [t["function"]["name"] for t in server.requests[0]["tools"]] == ["bash", "submit"]
    assert events[-1]["type"] == "end" and events[-1]["exit_reason"] == "submitted"
    assert (tmp_path / "transcript" / "transcript.html").read_text().count("<code>$ ") == 2
    # the ATIF trajectory beside it: system, task, three answers with their tool calls answered by their observations
    trajectory = json.loads((tmp_path / "transcript" / "trajectory.json").read_text())
    assert validate_atif(trajectory)
    steps = trajectory["steps"]
    assert [s["source"] for s in steps] == ["system", "user", "agent", "agent", "agent"]
    assert steps[2]["tool_calls"] == [{"tool_call_id": "call_0", "function_name": "bash", "arguments": {"command": "echo hello > note.txt && cat note.txt"}}]
    assert steps[2]["observation"]["results"][0]["source_call_id"] == "call_0"
    assert steps[2]["observation"]["results"][0]["content"] == actions[0]["observation"]
    assert steps[3]["metrics"] == {"prompt_tokens": 1000, "completion_tokens": 100}
    assert trajectory["final_metrics"] == {"total_steps": 5, "total_prompt_tokens": 3000, "total_completion_tokens": 300}


@pytest.mark.parametrize(
    ("settings", "price", "reason", "steps"),
    [
        ({"agent_steps": 3}, None, "steps", 3),
        ({"agent_tokens": 2500}, None, "tokens", 3),  # 1,100 tokens per call: 3,300 >= 2,500 after the third
        ({"agent_cost": 2.0}, "1000/1000", "cost", 2),  # 1.1 USD per call
    ],
)
def test_each_budget_ends_the_run(
    task: VisibleTask, sandbox: object, tmp_path: Path, settings: dict[str, object], price: str | None, reason: str, steps: int
) -> None:
    with ScriptedChatServer([Turn(bash="true")]) as server:
        outcome, events = run_loop(server, task, sandbox, tmp_path, price=price, **settings)
    assert (outcome.exit_reason, outcome.steps, len(server.requests)) == (reason, steps, steps)
    assert events[-1]["exit_reason"] == reason


def test_time_budget_cuts_a_command_and_ends_the_run(task: VisibleTask, sandbox: object, tmp_path: Path) -> None:
    with ScriptedChatServer([Turn(bash="sleep 30")]) as server:
        outcome, events = run_loop(server, task, sandbox, tmp_path, agent_seconds=2.0)
    assert outcome.exit_reason == "time" and outcome.seconds < 10
    action = next(e for e in events if e["type"] == "action")
    assert action["timed_out"] is True and "was killed" in str(action["observation"])


def test_hanging_command_is_killed_and_the_loop_goes_on(task: VisibleTask, sandbox: object, tmp_path: Path) -> None:
    with ScriptedChatServer([Turn(bash="sleep 300"), Turn(bash="echo alive"), Turn(tool="submit")]) as server:
        outcome, events = run_loop(server, task, sandbox, tmp_path, agent_command_timeout=3.0)
    actions = [e for e in events if e["type"] == "action"]
    assert outcome.exit_reason == "submitted"
    assert actions[0]["exit_code"] is None and "<returncode>killed</returncode>" in str(actions[0]["observation"])
    assert "alive" in str(actions[1]["observation"])


def test_megabytes_of_output_reach_the_model_as_head_and_tail(task: VisibleTask, sandbox: object, tmp_path: Path) -> None:
    command = "echo START; head -c 3000000 /dev/zero | tr '\\0' x; echo; echo END"
    with ScriptedChatServer([Turn(bash=command), Turn(tool="submit")]) as server:
        outcome, _ = run_loop(server, task, sandbox, tmp_path, agent_output_chars=2000)
    observation = server.requests[1]["messages"][-1]["content"]
    assert len(observation) < 2600
    assert observation.count("START") == 1 and "END" in observation and "characters elided" in observation
    assert "too long" in observation and outcome.exit_reason == "submitted"


def test_truncate_keeps_head_and_tail() -> None:
    text, elided = truncate("a" * 50 + "b" * 50, 20)
    assert elided == 80 and text.startswith("a" * 10) and text.endswith("b" * 10)
    shown = format_observation(CommandResult(0, "ok\n", 0.1, False), 100)
    assert shown == "<returncode>0</returncode>\n<output>\nok\n</output>"


def test_malformed_tool_calls_get_corrections_not_a_crash(task: VisibleTask, sandbox: object, tmp_path: Path) -> None:
    turns = [
        Turn(tool="bash", arguments="{not json"),
        Turn(tool="python", arguments="{}"),
        Turn(tool="bash", arguments='{"cmd": "ls"}'),
        Turn(content="I think I am done."),  # no tool call at all
        Turn(tool="self_verify"),  # not offered without a verify budget
        Turn(tool="submit"),
    ]
    with ScriptedChatServer(turns) as server:
        outcome, _ = run_loop(server, task, sandbox, tmp_path)
    assert (outcome.exit_reason, outcome.invalid_actions, outcome.commands) == ("submitted", 5, 0)
    said = [r["messages"][-1]["content"] for r in server.requests[1:]]
    assert "not valid JSON" in said[0]
    assert "no tool named 'python'" in said[1]
    assert 'one string argument "command"' in said[2]
    assert server.requests[4]["messages"][-1]["role"] == "user" and "called no tool" in said[3]
    assert "no tool named 'self_verify'" in said[4]


def test_429_is_retried_then_the_run_goes_on(task: VisibleTask, sandbox: object, tmp_path: Path) -> None:
    turns = [Turn(status=429, headers={"Retry-After": "0"}), Turn(tool="submit")]
    with ScriptedChatServer(turns) as server:
        outcome, _ = run_loop(server, task, sandbox, tmp_path)
    assert outcome.exit_reason == "submitted" and len(server.requests) == 2 and outcome.steps == 1


def test_500_forever_is_a_provider_error_with_the_figures(task: VisibleTask, sandbox: object, tmp_path: Path) -> None:
    with ScriptedChatServer([Turn(bash="true"), Turn(status=500)]) as server, pytest.raises(ProviderError, match="answered HTTP 500") as raised:
        run_loop(server, task, sandbox, tmp_path)
    assert raised.value.metadata["exit_reason"] == "error" and raised.value.metadata["steps"] == 1


def test_401_is_a_provider_error(task: VisibleTask, sandbox: object, tmp_path: Path) -> None:
    with ScriptedChatServer([Turn(status=401)]) as server, pytest.raises(ProviderError, match="check BACKENDBENCH_OPENAI_API_KEY"):
        run_loop(server, task, sandbox, tmp_path)


def test_verify_budget_counts_calls_and_refuses_one_past_it(task: VisibleTask, sandbox: object, tmp_path: Path) -> None:
    turns = [Turn(tool="self_verify"), Turn(tool="self_verify"), Turn(tool="self_verify"), Turn(tool="submit")]
    verifier = fake_verify([False, True])
    with ScriptedChatServer(turns) as server:
        outcome, events = run_loop(server, task, sandbox, tmp_path, verifier=verifier, verify_budget=2)
    shown = [r["messages"][-1]["content"] for r in server.requests[1:]]
    assert shown[0] == "SELF_VERIFY_FAIL\nPhase: tests\n(1 self_verify call left)"
    assert shown[1] == "SELF_VERIFY_PASS\nPhase: tests\n(0 self_verify calls left)"
    assert shown[2].startswith("self_verify refused: the budget of 2 calls per sample is spent")
    assert [t["function"]["name"] for t in server.requests[0]["tools"]] == ["bash", "submit", "self_verify"]
    assert (outcome.verify_calls, outcome.verify_refused, outcome.pass_seen) == (2, 1, True)
    assert outcome.metadata()["submitted_with_pass"] is True
    assert [e.get("verdict") for e in events if e["type"] == "verify"] == ["SELF_VERIFY_FAIL", "SELF_VERIFY_PASS", None]


def test_text_actions(task: VisibleTask, sandbox: object, tmp_path: Path) -> None:
    turns = [
        text_bash("echo from-text > t.txt; cat t.txt"),
        Turn(content="two actions\n```bash\nls\n```\n```bash\nls\n```"),
        Turn(content="self_verify"),
        Turn(content="All done.\nsubmit"),
    ]
    verifier = fake_verify([True])
    with ScriptedChatServer(turns) as server:
        outcome, _ = run_loop(server, task, sandbox, tmp_path, verifier=verifier, verify_budget=1, agent_actions="text")
    assert "tools" not in server.requests[0]
    assert "self_verify" in server.requests[0]["messages"][0]["content"]  # the text prompt names the word
    shown = [r["messages"][-1] for r in server.requests[1:]]
    assert shown[0]["role"] == "user" and "from-text" in shown[0]["content"]
    assert "exactly one action; found 2 bash block(s)" in shown[1]["content"]
    assert shown[2]["content"].startswith("SELF_VERIFY_PASS")
    assert (outcome.exit_reason, outcome.invalid_actions, outcome.verify_calls) == ("submitted", 1, 1)
    # text actions carry no tool calls: observations answer the step without a call id; cost per step from the price
    trajectory = json.loads((tmp_path / "transcript" / "trajectory.json").read_text())
    assert validate_atif(trajectory)
    agent_steps = [s for s in trajectory["steps"] if s["source"] == "agent"]
    assert len(agent_steps) == 4 and all("tool_calls" not in s for s in agent_steps)
    assert agent_steps[2]["observation"]["results"][0]["content"].startswith("SELF_VERIFY_PASS")


def test_a_step_hook_can_stop_the_run(task: VisibleTask, sandbox: object, tmp_path: Path) -> None:
    seen: list[AgentStep] = []

    def on_step(step: AgentStep) -> bool:
        seen.append(step)
        return step.number == 2

    with ScriptedChatServer([Turn(bash="echo step")]) as server:
        outcome, _ = run_loop(server, task, sandbox, tmp_path, on_step=on_step)
    assert outcome.exit_reason == "stopped" and [s.number for s in seen] == [1, 2]
    assert seen[0].actions[0].command == "echo step" and "step" in seen[0].observations[0]


def test_prompts_come_from_the_visible_task_and_can_be_replaced(task: VisibleTask, sandbox: object, tmp_path: Path) -> None:
    with ScriptedChatServer([Turn(tool="submit")]) as server:
        run_loop(server, task, sandbox, tmp_path)
    system, user = (m["content"] for m in server.requests[0]["messages"])
    assert "Task: URL Shortener" in user or task.title in user
    assert "`spec.md`" in user and "`CANDIDATE_FORMAT.md`" in user and "50 steps" in user
    assert "self_verify" not in system  # no verify budget, no mention of it
    custom = tmp_path / "prompts"
    custom.mkdir()
    (custom / "system.md").write_text("SYSTEM for {{task_id}} {{unknown}}")
    (custom / "task.md").write_text("TASK {{title}}")
    with ScriptedChatServer([Turn(tool="submit")]) as server:
        run_loop(server, task, sandbox, tmp_path, agent_prompt=str(custom))
    messages = server.requests[0]["messages"]
    assert [m["content"] for m in messages] == ["SYSTEM for url-shortener {{unknown}}\n", f"TASK {task.title}\n"]


def test_agent_settings_resolve_cli_over_env_over_ini() -> None:
    from pytest_backendbench.agents.settings import SETTINGS
    from pytest_backendbench.config import BenchConfig

    def resolve(cli: dict[str, object], env: dict[str, str], ini: dict[str, str] | None = None) -> AgentSettings:
        bench = BenchConfig.resolve(SETTINGS, cli, env, lambda key: (ini or {}).get(key, ""))
        settings = AgentSettings(**{name: bench[name] for name in AgentSettings.__dataclass_fields__})
        settings.check()
        return settings

    settings = resolve({"verify_budget": 3}, {"BACKENDBENCH_AGENT_STEPS": "9"}, {"backendbench_agent_steps": "7", "backendbench_agent_tokens": "500"})
    assert (settings.agent_steps, settings.verify_budget, settings.agent_tokens, settings.agent_cost) == (9, 3, 500, None)
    with pytest.raises(pytest.UsageError, match="BACKENDBENCH_AGENT_TOKENS='many': expected a optional_int"):
        resolve({}, {"BACKENDBENCH_AGENT_TOKENS": "many"})
    with pytest.raises(pytest.UsageError, match="BACKENDBENCH_AGENT_ACTIONS='json': expected one of tools, text"):
        resolve({}, {"BACKENDBENCH_AGENT_ACTIONS": "json"})
    with pytest.raises(pytest.UsageError, match="--verify-budget -1: expected 0"):
        resolve({"verify_budget": -1}, {})
    assert json.dumps(AgentSettings().limits().memory) == '"2g"'
