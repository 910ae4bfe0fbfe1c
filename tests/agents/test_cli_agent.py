"""``cmd:<name>`` agents: parsing definitions, and a tiny agent CLI of our own run in a real sandbox.

The tiny CLI is a shell script baked into a test image on the offline base image: it checks
the prompt and the passed-through key, writes the notes service into the workspace, records
its token usage, and exits. Its workspace must then pass the notes task under the docker
runtime, like any other candidate.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from docker import DockerClient

from pytest_backendbench.agents.cli_agent import (
    AgentDefinitionError,
    CliAgentDefinition,
    agent_definitions,
    find_agent,
    parse_agent_definitions,
)
from pytest_backendbench.agents.cli_run import AgentStartFailure, ModelAccess, run_cli_agent
from pytest_backendbench.agents.sandbox import SandboxLimits, SandboxSpec, UnsandboxedAgentWarning
from pytest_backendbench.runtime.cleanup import CACHE_LABEL, count_session_objects
from pytest_backendbench.tasks import VisibleTask

from ..conftest import read_report
from .conftest import BENCH

TINY_AGENT = r"""#!/bin/bash
# A stand-in agent CLI: checks what the harness promised, then writes the notes service.
set -eu
[ -n "${TINY_AGENT_KEY:-}" ] || { echo "tiny-agent: TINY_AGENT_KEY is not set" >&2; exit 2; }
diff <(printf '%s' "$BACKENDBENCH_TASK_PROMPT") "$BACKENDBENCH_TASK_PROMPT_FILE" >/dev/null || { echo "prompt differs" >&2; exit 3; }
grep -q "notes" "$BACKENDBENCH_TASK_PROMPT_FILE"
[ ! -e oracles ] && [ ! -e ../oracles ] || { echo "an oracle is visible" >&2; exit 4; }
cp /opt/tiny-agent/app.py app.py
cp /opt/tiny-agent/Dockerfile Dockerfile
echo "run: python app.py" > candidate.yaml
printf '{"tokens_in": 120, "tokens_out": 80, "cost_usd": 0.0012}' > "$BACKENDBENCH_WORKSPACE/.backendbench/usage.json"
echo "tiny-agent ($TINY_AGENT_MODE) wrote $(ls | wc -l) files in $PWD"
"""

TINY_IMAGE_DOCKERFILE = """\
ARG BASE_IMAGE=backendbench/python:3.11
FROM ${BASE_IMAGE}
COPY tiny-agent /usr/local/bin/tiny-agent
COPY app.py Dockerfile.candidate /opt/tiny-agent/
RUN mv /opt/tiny-agent/Dockerfile.candidate /opt/tiny-agent/Dockerfile && chmod +x /usr/local/bin/tiny-agent
"""


class Events:
    """A transcript sink that keeps the events (the real writer is the loop's, tested there)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def write(self, kind: str, **data: Any) -> None:
        self.events.append({"type": kind, **data})


@pytest.fixture(scope="session")
def tiny_agent_image(engine: DockerClient, agent_base_image: str) -> str:
    """The test image with the tiny CLI, built once and cached by content like other images."""
    reference = BENCH / "oracles" / "notes" / "reference"
    with tempfile.TemporaryDirectory() as context:
        folder = Path(context)
        (folder / "Dockerfile").write_text(TINY_IMAGE_DOCKERFILE)
        (folder / "tiny-agent").write_text(TINY_AGENT)
        shutil.copy(reference / "app.py", folder / "app.py")
        shutil.copy(reference / "Dockerfile", folder / "Dockerfile.candidate")
        digest = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(folder.iterdir())) + agent_base_image.encode()).hexdigest()
        tag = f"backendbench/test-tiny-agent:{digest[:16]}"
        if not engine.images.list(name=tag):
            engine.images.build(path=context, tag=tag, labels={CACHE_LABEL: "1"}, buildargs={"BASE_IMAGE": agent_base_image}, pull=False, rm=True)
    return tag


# -- definitions ---------------------------------------------------------------------------------


def test_definitions_parse_commands_with_commas_and_env_lists() -> None:
    definitions = parse_agent_definitions(
        [
            "# one agent per line",
            "aider: image=my/aider, command=aider --yes-always --message-file \"$BACKENDBENCH_TASK_PROMPT_FILE\", env=OPENAI_API_KEY",
            "",
            "mini: command=mini -y --task \"$BACKENDBENCH_TASK_PROMPT\" -c a,b, env=OPENAI_API_KEY,MSWEA_MODEL_NAME=openai/gpt-4o, network=bridge",
        ]
    )
    assert definitions["aider"] == CliAgentDefinition(
        name="aider", command='aider --yes-always --message-file "$BACKENDBENCH_TASK_PROMPT_FILE"', image="my/aider", env=("OPENAI_API_KEY",)
    )
    mini = definitions["mini"]
    assert mini.command == 'mini -y --task "$BACKENDBENCH_TASK_PROMPT" -c a,b' and mini.image is None and mini.network == "bridge"
    assert mini.environment({"OPENAI_API_KEY": "sk-1", "OTHER": "x"}) == {"OPENAI_API_KEY": "sk-1", "MSWEA_MODEL_NAME": "openai/gpt-4o"}
    assert find_agent(definitions, "cmd:mini") is mini


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("no colon here", r"'no colon here': expected 'name: image=IMAGE, command=COMMAND, env=KEY1,KEY2'"),
        ("a: image=x", r"agent 'a': command= is missing or empty"),
        ("a: run=x", r"agent 'a': expected fields key=value with keys image, command, env, network"),
        ("a: command=x, env=1BAD", r"agent 'a': env entry '1BAD' is not KEY or KEY=value"),
        ("a: command=x, network=host", r"agent 'a': network=host: expected one of bridge, none"),
        ("a: command=x, command=y", r"agent 'a': command= given twice"),
    ],
)
def test_bad_definitions_say_what_to_write(line: str, message: str) -> None:
    with pytest.raises(AgentDefinitionError, match=message):
        parse_agent_definitions([line], "ini backendbench_agents")


def test_unknown_agents_and_unset_variables_are_named() -> None:
    definitions = parse_agent_definitions(["a: command=x, env=NEEDED_KEY"])
    with pytest.raises(AgentDefinitionError, match=r"--bench-model cmd:b: no agent 'b' is defined \(defined: a; built in: mini, aider, openhands, claude-code, codex\)"):
        find_agent(definitions, "cmd:b")
    with pytest.raises(AgentDefinitionError, match=r"agent cmd:a passes NEEDED_KEY into its sandbox, but NEEDED_KEY is not set"):
        definitions["a"].environment({})


def test_definitions_come_from_the_ini_and_from_conftests(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nbackendbench_agents =\n    one: command=echo 1\n")
    pytester.makeconftest(
        """
        def pytest_addoption(parser):
            # what the plugin registers (pytest_backendbench.agents.settings); the plugin is off here
            parser.addini("backendbench_agents", "cmd: agents", type="linelist", default=[])

        def pytest_configure(config):
            config.addinivalue_line("backendbench_agents", "two: command=echo 2, env=K=v")
        """
    )
    pytester.makepyfile(
        """
        from pytest_backendbench.agents.cli_agent import agent_definitions

        def test_names(request):
            found = agent_definitions(request.config)
            assert sorted(found) == ["one", "two"] and found["two"].env == ("K=v",)
        """
    )
    pytester.runpytest("-p", "no:backendbench").assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("ini_line", "model", "message"),
    [
        ("one: command=echo 1", "cmd:nope", "--bench-model cmd:nope: no agent 'nope' is defined (defined: one; built in: mini, aider, openhands, claude-code, codex)"),
        ("one: command=echo 1, env=BB_TEST_NEVER_SET", "cmd:one", "agent cmd:one passes BB_TEST_NEVER_SET into its sandbox, but BB_TEST_NEVER_SET is not set"),
        ("one: command=echo 1", "cmd:mini", "--bench-model cmd:mini: name the model the built-in mini-swe-agent adapter should use"),
    ],
)
def test_configuration_errors_are_usage_errors_naming_the_ini_file(pytester: pytest.Pytester, bench: Path, ini_line: str, model: str, message: str) -> None:
    pytester.makeini(f"[pytest]\nbackendbench_agents =\n    {ini_line}\n")
    result = pytester.runpytest("--bench-generate", f"--bench-model={model}", "--candidate=runs", "--bench-runtime=process", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    error = result.stderr.str()
    assert message in error and f"ini file read: {pytester.path / 'tox.ini'}" in error and "`--bench-root=../checkout`" in error
    assert not (pytester.path / "runs").exists()  # nothing was generated


def test_a_config_without_the_ini_key_has_no_definitions() -> None:
    class Config:
        def getini(self, name: str) -> object:
            raise ValueError(f"unknown configuration value: {name!r}")

    assert agent_definitions(Config()) == {}


# -- running a CLI -------------------------------------------------------------------------------


@pytest.mark.docker
@pytest.mark.slow
def test_a_tiny_cli_writes_a_candidate_that_passes_the_task_under_docker(
    engine: DockerClient,
    tiny_agent_image: str,
    notes_task: VisibleTask,
    session_id: str,
    pytester: pytest.Pytester,
    bench: Path,
    agent_base_image: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    definition = CliAgentDefinition.parse(f"tiny: image={tiny_agent_image}, command=tiny-agent, env=TINY_AGENT_KEY,TINY_AGENT_MODE=docker")
    spec = SandboxSpec(task=notes_task, key="notes", session_id=session_id, network="none", limits=SandboxLimits(memory="256m", disk="64m"))
    events = Events()
    out = pytester.path / "generated" / "notes"
    metadata = run_cli_agent(definition, spec, out, events, environ={"TINY_AGENT_KEY": "k-123"})

    assert metadata["exit_reason"] == "submitted" and metadata["agent_exit_code"] == 0
    assert (metadata["tokens_in"], metadata["tokens_out"], metadata["cost_usd"]) == (120, 80, 0.0012)
    assert metadata["model"] == "cmd:tiny" and metadata["sandboxed"] is True and metadata["network"] == "none"
    assert metadata["sandbox"].startswith(f"docker sandbox {tiny_agent_image} (network none")
    assert sorted(p.name for p in out.iterdir()) == [
        "CANDIDATE_FORMAT.md", "Dockerfile", "REQUIREMENTS.md", "app.py", "candidate.yaml", "openapi.yaml", "spec.md"
    ]
    kinds = [e["type"] for e in events.events]
    assert kinds == ["start", "message", "action", "end"]
    assert "tiny-agent (docker) wrote 7 files in /workspace" in events.events[2]["observation"]
    assert events.events[1]["content"].startswith("Build the backend service `notes`")
    assert count_session_objects(engine, session_id).total == 0

    monkeypatch.setenv("BACKENDBENCH_IMAGE_ALIASES", f"python:3.12-slim={agent_base_image}")
    (out / "candidate.yaml").write_text("task: notes\nrun: python app.py\n")
    result = pytester.runpytest(f"--candidate={out}", "--bench-runtime=docker", "--bench-report-dir=report", "-p", "no:cacheprovider", "--bench-memory=128m")
    result.assert_outcomes(passed=7)
    assert read_report(pytester.path / "report")["tasks"][0]["items"]


@pytest.mark.docker
def test_a_hanging_cli_is_stopped_at_the_wall_time_and_its_work_is_kept(
    engine: DockerClient, notes_task: VisibleTask, session_id: str, agent_base_image: str, tmp_path: Path
) -> None:
    definition = CliAgentDefinition.parse(f"hang: image={agent_base_image}, command=echo partial > app.py; echo thinking; sleep 600")
    spec = SandboxSpec(task=notes_task, key="notes", session_id=session_id, network="none", limits=SandboxLimits(memory="256m", disk="64m", wall_s=3))
    events = Events()
    metadata = run_cli_agent(definition, spec, tmp_path / "out", events, environ={})
    assert metadata["exit_reason"] == "time" and "agent_exit_code" not in metadata
    assert 2.5 <= metadata["agent_seconds"] < 6
    assert (tmp_path / "out" / "app.py").read_text() == "partial\n"
    assert events.events[2]["timed_out"] is True and events.events[2]["observation"] == "thinking\n"
    assert count_session_objects(engine, session_id).total == 0


def test_a_cli_failing_before_any_model_call_is_a_start_failure_with_its_output_tail(notes_task: VisibleTask, tmp_path: Path) -> None:
    definition = CliAgentDefinition.parse(
        'fails: command=cp "$BACKENDBENCH_TASK_PROMPT_FILE" prompt-copy.md; echo "$BACKENDBENCH_TASK_ID $GREETING"; '
        'for i in $(seq 40); do echo "line $i"; done; exit 9, env=GREETING=hello'
    )
    spec = SandboxSpec(task=notes_task, key="notes", session_id="process", limits=SandboxLimits(wall_s=30))
    events = Events()
    with pytest.warns(UnsandboxedAgentWarning), pytest.raises(AgentStartFailure) as failure:
        run_cli_agent(definition, spec, tmp_path / "out", events, engine="process", prompt="Custom prompt for notes\n", environ={})
    message = str(failure.value)
    assert message.startswith("cmd:fails exited with code 9 after ") and "before it called the model" in message
    assert message.endswith("\n".join(f"line {i}" for i in range(11, 41)))  # the last 30 lines
    assert failure.value.metadata["agent_exit_code"] == 9 and failure.value.metadata["proxy_model_calls"] == 0
    assert (tmp_path / "out" / "prompt-copy.md").read_text() == "Custom prompt for notes\n"
    assert events.events[2]["observation"].startswith("notes hello\n")
    assert not (tmp_path / "out" / ".backendbench").exists()


CALLS_THE_MODEL = r"""python - <<'EOF'
import json, os, urllib.request
request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=json.dumps({"model": "m", "messages": []}).encode(),
                                 headers={"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"], "Content-Type": "application/json"})
print(json.load(urllib.request.urlopen(request))["choices"][0]["message"]["content"])
EOF
echo partial > app.py; echo "trajectory" > "$BACKENDBENCH_TRAJECTORY_DIR/own.log"; exit 3"""


def test_a_cli_that_called_the_model_then_failed_leaves_its_candidate_with_the_proxy_figures(notes_task: VisibleTask, tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from protocol_servers import ScriptedModelServer, Step

    definition = CliAgentDefinition(name="half", command=CALLS_THE_MODEL)
    spec = SandboxSpec(task=notes_task, key="notes", session_id="process", limits=SandboxLimits(wall_s=60))
    events = Events()
    with ScriptedModelServer([Step(text="hello from the model")]) as server:
        access = ModelAccess(server.base_url, "sk-real", 30, (1.0, 2.0))
        with pytest.warns(UnsandboxedAgentWarning):
            metadata = run_cli_agent(definition, spec, tmp_path / "out", events, engine="process", environ={}, access=access, trajectory_out=tmp_path / "trajectory")
    assert (metadata["exit_reason"], metadata["agent_exit_code"]) == ("error", 3)
    assert (metadata["proxy_model_calls"], metadata["tokens_in"], metadata["tokens_out"], metadata["cost_usd"]) == (1, 1000, 100, 0.0012)
    assert metadata["trajectory_path"] == str(tmp_path / "trajectory" / "own.log")
    assert (tmp_path / "out" / "app.py").read_text() == "partial\n"
    assert "hello from the model" in events.events[2]["observation"]
    assert [e["type"] for e in events.events] == ["start", "message", "action", "proxy", "trajectory", "end"]
    assert server.requests[0][1]["model"] == "m"
