"""The agent docs run: README's agent example copied literally into a pytest.ini, and every
example of docs/agents.md's CLI section either generated from the adapters or executed here.

The engine-free checks are fast; the README run uses real mini-swe-agent in the docker
sandbox against a scripted server (the url-shortener reference as its answers), on the base
oracle tier to keep its time modest.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from docker import DockerClient

from pytest_backendbench.agents.adapters import ADAPTERS, adapters_markdown
from pytest_backendbench.agents.cli_agent import parse_agent_definitions, read_usage
from pytest_backendbench.runtime.cleanup import count_session_objects

from ..conftest import read_report

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode: helpers next to tests are imported by path
from protocol_servers import SUBMIT, ScriptedModelServer, Step, shell_script

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()
AGENTS_MD = (REPO / "docs" / "agents.md").read_text()


def section(text: str, heading: str) -> str:
    """The Markdown from ``heading`` to the next heading of the same or a higher level (outside code blocks)."""
    start = text.index(heading)
    level = len(heading) - len(heading.lstrip("#"))
    lines = text[start:].splitlines(keepends=True)
    fenced, kept = False, [lines[0]]
    for line in lines[1:]:
        fenced ^= line.startswith("```")
        if not fenced and re.match(rf"#{{1,{level}}} ", line):
            break
        kept.append(line)
    return "".join(kept)


def blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)


README_AGENTS = section(README, "### Agent CLIs")
DOCS_CLIS = section(AGENTS_MD, "## Agent CLIs")


def test_the_adapter_table_of_docs_agents_md_is_generated_from_the_adapters() -> None:
    generated = re.search(r"<!-- adapters:begin[^>]*-->\n(.*?)<!-- adapters:end -->", AGENTS_MD, re.DOTALL)
    assert generated is not None, "docs/agents.md lost its generated adapters block"
    assert generated.group(1) == adapters_markdown(), "regenerate it: python -c 'from pytest_backendbench.agents.adapters import adapters_markdown as m; print(m())'"
    for adapter in ADAPTERS.values():
        assert adapter.command in AGENTS_MD


def test_the_readme_and_docs_ini_examples_are_the_same_and_parse() -> None:
    (readme_ini,) = blocks(README_AGENTS, "ini")
    docs_ini = blocks(DOCS_CLIS, "ini")
    assert readme_ini in docs_ini
    lines = readme_ini.splitlines()
    assert lines[:2] == ["[pytest]", "backendbench_agents ="]
    definitions = parse_agent_definitions(lines[2:])
    assert set(definitions) == {"my-mini"} and definitions["my-mini"].image == "backendbench/agent-mini:latest"


def test_the_docs_conftest_and_usage_examples_work(tmp_path: Path) -> None:
    (conftest,) = blocks(DOCS_CLIS, "python")
    (tmp_path / "docs_conftest.py").write_text(conftest)
    added: list[tuple[str, str]] = []

    class Config:
        def addinivalue_line(self, name: str, line: str) -> None:
            added.append((name, line))

    spec = importlib.util.spec_from_file_location("docs_conftest", tmp_path / "docs_conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.pytest_configure(Config())
    assert [name for name, _ in added] == ["backendbench_agents"]
    assert parse_agent_definitions([added[0][1]])["tiny"].env == ("TINY_KEY",)
    (usage,) = blocks(DOCS_CLIS, "json")
    assert read_usage(usage) == json.loads(usage) == {"tokens_in": 120, "tokens_out": 80, "cost_usd": 0.0012, "steps": 3}


@pytest.mark.docker
@pytest.mark.slow
def test_the_login_shell_of_a_built_image_finds_the_cli(engine: DockerClient) -> None:
    from pytest_backendbench.cli.main import main as backendbench

    assert backendbench(["agent-image", "--with", "mini"]) == 0
    output = engine.containers.run("backendbench/agent-mini:latest", ["bash", "-lc", "command -v mini && mini --help"], remove=True)
    assert output.startswith(b"/usr/local/bin/mini\n") and b"This is mini-swe-agent version 2.4.6" in output and b"--exit-immediately" in output


@pytest.mark.docker
@pytest.mark.slow
def test_the_readme_agent_example_copied_into_a_pytest_ini_runs(
    pytester: pytest.Pytester, engine: DockerClient, monkeypatch: pytest.MonkeyPatch, agent_base_image: str
) -> None:
    (ini,) = blocks(README_AGENTS, "ini")
    (shell,) = blocks(README_AGENTS, "sh")
    build, run = shell.split("\n", 1)
    assert build == "backendbench agent-image --with mini"
    subprocess.run([sys.executable, "-m", "pytest_backendbench.cli", *shlex.split(build)[1:]], check=True, capture_output=True)
    (pytester.path / "pytest.ini").write_text(ini)
    words = shlex.split(run.replace("\\\n", " "))
    env_assignment, command, *args = words
    assert command == "pytest" and env_assignment.startswith("BACKENDBENCH_OPENAI_BASE_URL=")
    steps = shell_script(Step(bash=SUBMIT))
    monkeypatch.setenv("BACKENDBENCH_IMAGE_ALIASES", f"python:3.12-slim={agent_base_image}")
    with ScriptedModelServer(steps) as server:
        monkeypatch.setenv("BACKENDBENCH_OPENAI_BASE_URL", server.base_url)  # the README's localhost:8000 stands for this server
        # where the README user stands in their checkout, the test names it; the base tier keeps CI short
        result = pytester.runpytest(*args, f"--bench-root={REPO}", "--bench-runtime=docker", "--bench-report-dir=report", "--oracle-tier=base", "-p", "no:cacheprovider")
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0 and outcomes.get("errors", 0) == 0 and outcomes["passed"] > 20, result.stdout.str()[-4000:]
    report = read_report(pytester.path / "report")
    generation = report["tasks"][0]["generation"]
    assert generation["model"] == "cmd:my-mini:qwen2.5-coder" and generation["exit_reason"] == "submitted"
    assert generation["proxy_model_calls"] == len(steps) == server.main_calls
    assert generation["trajectory"].endswith("trajectory/mini.traj.json")
    assert {body["model"] for _, body in server.requests} == {"qwen2.5-coder"}
    assert count_session_objects(engine, report["manifest"]["session_id"]).total == 0
