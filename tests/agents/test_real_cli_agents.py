"""Real agent CLIs from their published packages, in the docker sandbox, against scripted servers.

mini-swe-agent (PyPI, chat completions with tool calls), aider (PyPI, chat completions, whole
-file edits) and Claude Code (npm, the Anthropic Messages API streamed) write the url-shortener
candidate through the harness's metering proxy; the scripted server answers with the
reference's files (read here, by the test; the sandbox never sees oracles/). Each run then
evaluates the candidate with the real oracle: every item passes, the report's steps, tokens
and cost are the CLI's own trajectory's (the proxy's count beside them), the trajectory is
linked from report.html, nothing labelled is left. A real mini started with a flag it does
not know exits before any model call: every item is a harness error with mini's own words in
the terminal, and ``--bench-resume`` generates that sample again.

The images are built once (``backendbench agent-image --with ...``, cached by content) and
reused by every later run.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import pytest
from docker import DockerClient

from pytest_backendbench.formats.atif import validate as validate_atif
from pytest_backendbench.runtime.cleanup import count_session_objects

from ..conftest import read_report

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode: helpers next to tests are imported by path
from protocol_servers import SUBMIT, ScriptedModelServer, Step, aider_whole_answer, shell_script

REPO = Path(__file__).resolve().parents[2]
PRICE = (0.15, 0.60)
RUN = ("--bench-task=url-shortener", f"--bench-root={REPO}", "--bench-runtime=docker", "--bench-report-dir=report", "-p", "no:cacheprovider")

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture
def model_env(monkeypatch: pytest.MonkeyPatch, agent_base_image: str) -> pytest.MonkeyPatch:
    monkeypatch.setenv("BACKENDBENCH_OPENAI_PRICE", f"{PRICE[0]}/{PRICE[1]}")
    monkeypatch.setenv("BACKENDBENCH_IMAGE_ALIASES", f"python:3.12-slim={agent_base_image}")
    return monkeypatch


def proxy_cost(tokens_in: int, tokens_out: int) -> float:
    return round((tokens_in * PRICE[0] + tokens_out * PRICE[1]) / 1e6, 6)


def generate_and_judge(pytester: pytest.Pytester, model: str, *extra: str) -> tuple[pytest.RunResult, float]:
    started = time.monotonic()
    result = pytester.runpytest("--bench-generate", f"--bench-model={model}", "--candidate=runs/a", *RUN, *extra)
    return result, time.monotonic() - started


def assert_all_passed(result: pytest.RunResult) -> dict[str, int]:
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0 and outcomes.get("errors", 0) == 0 and outcomes["passed"] > 100, result.stdout.str()[-4000:]
    return outcomes


def check_report(pytester: pytest.Pytester, result: pytest.RunResult, engine: DockerClient, trajectory_name: str) -> dict:
    report = read_report(pytester.path / "report")
    generation = report["tasks"][0]["generation"]
    assert generation["trajectory"].endswith("/trajectory/" + trajectory_name)
    assert (pytester.path / "report" / generation["trajectory"]).stat().st_size > 0
    html = (pytester.path / "report" / "report.html").read_text()
    assert f'<a href="{generation["trajectory"]}">trajectory</a>' in html
    page = (pytester.path / "report" / generation["transcript_html"]).read_text()
    assert f'<a href="trajectory/{trajectory_name}">' in page
    assert "submitted with pass rate" not in result.stdout.str()  # no self_verify was offered
    assert count_session_objects(engine, report["manifest"]["session_id"]).total == 0
    # the CLI's log converted to ATIF beside it, linked next to it
    assert f'<a href="{generation["atif_trajectory"]}">ATIF</a>' in html
    generation["atif"] = atif = json.loads((pytester.path / "report" / generation["atif_trajectory"]).read_text())
    assert validate_atif(atif) and atif["agent"]["model_name"] == "scripted-1"
    return dict(generation)


def agent_steps(atif: dict) -> list[dict]:
    return [s for s in atif["steps"] if s["source"] == "agent"]


def answered_calls(atif: dict) -> list[tuple[str, str]]:
    """(function name, observation) of every tool call an observation answered."""
    pairs = []
    for step in agent_steps(atif):
        names = {c["tool_call_id"]: c["function_name"] for c in step.get("tool_calls") or []}
        for result in (step.get("observation") or {}).get("results") or []:
            if result.get("source_call_id") in names:
                pairs.append((names[result["source_call_id"]], result.get("content") or ""))
    return pairs


def test_real_mini_failing_before_the_model_is_a_harness_error_then_resume_writes_url_shortener(
    pytester: pytest.Pytester, engine: DockerClient, model_env: pytest.MonkeyPatch
) -> None:
    # An ini line named like the built-in replaces it: the real mini with a flag it does not know.
    pytester.makeini("[pytest]\nbackendbench_agents =\n    mini: image=backendbench/agent-mini:latest, command=mini --no-such-flag --yolo\n")
    steps = shell_script(Step(bash=SUBMIT))
    with ScriptedModelServer(steps) as server:
        model_env.setenv("BACKENDBENCH_OPENAI_BASE_URL", server.base_url)
        # the image the ini names is the built-in's stable tag: build it as a user would
        from pytest_backendbench.cli.main import main as backendbench

        assert backendbench(["agent-image", "--with", "mini"]) == 0
        broken, _ = generate_and_judge(pytester, "cmd:mini:scripted-1")
        assert server.requests == []
        outcomes = broken.parseoutcomes()
        assert outcomes.get("errors", 0) > 100 and outcomes.get("failed", 0) == 0 and outcomes.get("passed", 0) == 0, broken.stdout.str()[-3000:]
        broken.stdout.fnmatch_lines([
            "*generate url-shortener with cmd:mini:scripted-1: HARNESS ERROR (re-run with --bench-resume) after *s: cmd:mini:scripted-1 exited with code 2 *before it called the model*",
            "*| *No such option: --no-such-flag*",
        ])
        first = read_report(pytester.path / "report")["tasks"][0]
        assert first["generation"]["error_kind"] == "harness" and "No such option: --no-such-flag" in first["generation"]["error"]
        assert first["generation"]["proxy_model_calls"] == 0 and first["generation"]["agent_exit_code"] == 2

        pytester.makeini("[pytest]\n")  # back to the built-in adapter
        result, seconds = generate_and_judge(pytester, "cmd:mini:scripted-1", "--bench-resume=report")
    assert_all_passed(result)
    assert server.main_calls == len(steps)  # mini ran once, every call through the proxy
    result.stdout.fnmatch_lines(["*generate url-shortener with cmd:mini:scripted-1: done in *s (exit submitted, 6 steps, 6000+600 tokens, $0.0013)"])
    generation = check_report(pytester, result, engine, "mini.traj.json")
    # steps and tokens from mini's trajectory; its cost is 0 for a model LiteLLM cannot price, so the proxy's price stands
    assert (generation["steps"], generation["tokens_in"], generation["tokens_out"]) == (6, 6000, 600)
    assert (generation["agent_exit_status"], generation["agent_submitted"], generation["exit_reason"]) == ("Submitted", True, "submitted")
    assert generation["cost_usd"] == proxy_cost(6000, 600) == generation["proxy_cost_usd"]
    assert generation["proxy_model_calls"] == 6
    atif = generation["atif"]
    assert (atif["agent"]["name"], atif["agent"]["version"]) == ("mini-swe-agent", "2.4.6")
    assert len(agent_steps(atif)) == 6 and [s["source"] for s in atif["steps"][:2]] == ["system", "user"]
    calls = answered_calls(atif)
    assert len(calls) == 6 and calls[4][0] == "bash" and "syntax-ok" in calls[4][1]
    assert (atif["final_metrics"]["total_prompt_tokens"], atif["final_metrics"]["total_completion_tokens"]) == (6000, 600)
    print(f"mini: resumed run {seconds:.1f}s, generation {generation['seconds']}s")


def test_real_aider_writes_url_shortener_through_a_server_on_all_interfaces(
    pytester: pytest.Pytester, engine: DockerClient, model_env: pytest.MonkeyPatch
) -> None:
    with ScriptedModelServer(aider_whole_answer(), host="0.0.0.0") as server:
        model_env.setenv("BACKENDBENCH_OPENAI_BASE_URL", server.base_url.replace("0.0.0.0", "127.0.0.1"))
        result, seconds = generate_and_judge(pytester, "cmd:aider:scripted-1")
    assert_all_passed(result)
    generation = check_report(pytester, result, engine, "aider.chat.history.md")
    # aider's analytics log counts its one answer; the proxy also saw its side calls (history summaries)
    assert (generation["steps"], generation["tokens_in"], generation["tokens_out"]) == (1, 1000, 100)
    assert (generation["agent_exit_status"], generation["exit_reason"]) == ("Completed --message-file", "submitted")
    calls = generation["proxy_model_calls"]
    assert calls == server.main_calls >= 1 and generation["cost_usd"] == proxy_cost(1000 * calls, 100 * calls)
    atif = generation["atif"]
    (answer,) = agent_steps(atif)  # aider makes no tool calls: its answer, then the edits it applied
    assert answer["message"].startswith("Here is the complete service.") and answer["metrics"]["prompt_tokens"] == 1000
    assert "Applied edit to app.py" in answer["observation"]["results"][0]["content"]
    assert atif["steps"][-2]["source"] == "user" and "url-shortener" in atif["steps"][-2]["message"]
    assert atif["final_metrics"]["total_cost_usd"] == generation["cost_usd"]  # aider priced the local model at 0: the proxy's price
    print(f"aider: run {seconds:.1f}s, generation {generation['seconds']}s")


def test_real_claude_code_writes_url_shortener_over_the_messages_api(
    pytester: pytest.Pytester, engine: DockerClient, model_env: pytest.MonkeyPatch
) -> None:
    steps = shell_script(Step(text="Done: the service is written."))
    with ScriptedModelServer(steps) as server:
        model_env.setenv("BACKENDBENCH_OPENAI_BASE_URL", server.base_url)
        result, seconds = generate_and_judge(pytester, "cmd:claude-code:scripted-1")
    assert_all_passed(result)
    assert {p for p in server.paths()} <= {"/v1/messages", "/v1/messages/count_tokens"}
    generation = check_report(pytester, result, engine, "claude.stream.jsonl")
    trajectory = (pytester.path / "report" / generation["trajectory"]).read_text().splitlines()
    final = next(line for line in reversed(trajectory) if '"type":"result"' in line.replace(" ", ""))
    cost = float(re.search(r'"total_cost_usd":\s*([0-9.]+)', final).group(1))  # type: ignore[union-attr]
    assert (generation["steps"], generation["tokens_in"], generation["tokens_out"]) == (len(steps), 1000 * len(steps), 100 * len(steps))
    assert (generation["agent_exit_status"], generation["agent_submitted"]) == ("success", True)
    assert generation["cost_usd"] == round(cost, 6) and cost > 0  # Claude Code's own price
    atif = generation["atif"]
    assert atif["agent"]["name"] == "claude-code" and atif["final_metrics"]["total_cost_usd"] == round(cost, 6)
    calls = answered_calls(atif)
    assert [name for name, _ in calls] == ["Bash"] * (len(steps) - 1) and "syntax-ok" in calls[-1][1]
    assert agent_steps(atif)[-1]["message"] == "Done: the service is written."
    print(f"claude-code: run {seconds:.1f}s, generation {generation['seconds']}s")


def test_openhands_cannot_install_on_the_python_3_11_agent_image_and_says_why(engine: DockerClient, agent_base_image: str, tmp_path: Path) -> None:
    from pytest_backendbench.agents.adapters import ADAPTERS
    from pytest_backendbench.agents.agent_image import ensure_adapter_image
    from pytest_backendbench.errors import HarnessError

    with pytest.raises(HarnessError) as failure:
        ensure_adapter_image(engine, ADAPTERS["openhands"], agent_base_image, tmp_path)
    message = str(failure.value)
    assert "note: openhands 1.16.0 on PyPI requires Python ==3.12.*; the agent image's Python is 3.11" in message
    assert "Requires-Python ==3.12.*" in message  # pip's own words, from the build log


def test_real_codex_writes_the_candidate_over_the_responses_api(engine: DockerClient, session_id: str, tmp_path: Path) -> None:
    """Codex CLI through the proxy on the Responses API (generation only: judging is the same as above)."""
    from protocol_servers import reference_files

    from pytest_backendbench.agents.cli_agent import resolve_agent
    from pytest_backendbench.agents.cli_run import ModelAccess, run_cli_agent
    from pytest_backendbench.agents.sandbox import SandboxLimits, SandboxSpec
    from pytest_backendbench.tasks import TaskCatalog

    task = TaskCatalog(REPO).load("url-shortener").visible
    steps = shell_script(Step(text="Done."))
    with ScriptedModelServer(steps) as server:
        spec = SandboxSpec(task=task, key="url-shortener", session_id=session_id, limits=SandboxLimits(wall_s=600))
        metadata = run_cli_agent(
            resolve_agent({}, "cmd:codex:scripted-1"), spec, tmp_path / "out", engine="docker",
            access=ModelAccess(server.base_url, None, 60, PRICE), trajectory_out=tmp_path / "trajectory",
        )
    assert set(server.paths()) == {"/v1/responses"} and server.main_calls == len(steps)
    for name, text in reference_files().items():
        assert (tmp_path / "out" / name).read_text().rstrip("\n") == text.rstrip("\n")
    assert (metadata["exit_reason"], metadata["agent_exit_status"], metadata["agent_submitted"]) == ("submitted", "turn.completed", True)
    assert (metadata["steps"], metadata["tokens_in"], metadata["tokens_out"]) == (len(steps), 1000 * len(steps), 100 * len(steps))
    assert metadata["proxy_model_calls"] == len(steps) and metadata["cost_usd"] == proxy_cost(1000 * len(steps), 100 * len(steps))
    from pytest_backendbench.agents.trajectories import cli_trajectory

    atif = cli_trajectory(tmp_path / "trajectory", "codex", "0.171.0", "scripted-1", "the prompt")
    assert atif is not None and validate_atif(atif)
    assert [name for name, _ in answered_calls(atif)] == ["command_execution"] * (len(steps) - 1)
    assert "syntax-ok" in answered_calls(atif)[-1][1] and agent_steps(atif)[-1]["message"] == "Done."
    assert atif["final_metrics"]["total_prompt_tokens"] == 1000 * len(steps)
    assert count_session_objects(engine, session_id).total == 0
