"""``agent:`` end to end in the docker sandbox: the issue's "Done when", oracle secrecy, Ctrl-C.

Slow on purpose and few: one full run (scripted agent -> sandbox -> self_verify with the real
url-shortener oracle -> docker evaluation) and one interrupted run.
"""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import docker.errors
import pytest
from docker import DockerClient

from pytest_backendbench.agents.transcript import read_transcript
from pytest_backendbench.runtime.base import SESSION_LABEL
from pytest_backendbench.runtime.cleanup import TASK_LABEL, count_session_objects

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode: helpers next to tests are imported by path
from chat_server import ScriptedChatServer, Turn, url_shortener_script

REPO = Path(__file__).resolve().parents[2]
ORACLE = REPO / "oracles" / "url-shortener"
HUNT = "find / -xdev \\( -path /proc -o -path /sys \\) -prune -o \\( -name 'oracles' -o -name 'test_links.py' -o -name 'mutants.yaml' \\) -print 2>/dev/null; echo hunt-done"

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def oracle_secrets() -> set[str]:
    """What must never reach the model: item names, oracle file names, assertion texts, and
    request paths that only the oracle uses (absent from spec.md and openapi.yaml)."""
    visible = "".join(p.read_text() for p in (REPO / "benchmarks" / "url-shortener").iterdir() if p.is_file())
    found = {"oracles/", "mutants.yaml"}
    for path in ORACLE.rglob("*.py"):
        if {"reference", "alternates"} & set(path.relative_to(ORACLE).parts):
            continue  # candidates that pass the oracle, not the oracle (their app.py is anyone's name)
        found.add(path.relative_to(ORACLE).as_posix() if path.name == "conftest.py" else path.name)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                found.add(node.name)
            if isinstance(node, ast.Assert) and node.msg is not None:
                found.update(c.value for c in ast.walk(node.msg) if isinstance(c, ast.Constant) and isinstance(c.value, str) and len(c.value.strip()) >= 20)
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("/") and len(node.value) > 3
                    and node.value not in visible and " " not in node.value):
                found.add(node.value)
    return {s for s in found if s.strip()}


def test_scripted_agent_builds_url_shortener_in_docker_sandbox(
    pytester: pytest.Pytester, engine: DockerClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = url_shortener_script(verify=True)
    turns.insert(1, Turn(bash=HUNT))  # an agent looking for the oracle finds nothing
    with ScriptedChatServer(turns) as server:
        monkeypatch.setenv("BACKENDBENCH_OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("BACKENDBENCH_OPENAI_PRICE", "0.15/0.60")
        started = time.monotonic()
        result = pytester.runpytest(
            "--bench-generate", "--bench-model=agent:scripted", "--verify-budget=3", "--candidate=runs/a", "--bench-task=url-shortener",
            f"--bench-root={REPO}", "--bench-runtime=docker", "--bench-report-dir=report", "-p", "no:cacheprovider",
        )
        seconds = time.monotonic() - started
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0 and outcomes.get("errors", 0) == 0 and outcomes["passed"] > 100, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["*generate url-shortener with agent:scripted: done in *s (exit submitted, 14 steps, 2 verify calls, 14000+1400 tokens, $0.0029)"])

    report = json.loads((pytester.path / "report" / "report.json").read_text())
    generation = report["tasks"][0]["generation"]
    assert (generation["steps"], generation["verify_calls"], generation["submitted_with_pass"]) == (14, 2, True)
    assert generation["sandbox"].startswith("docker sandbox")
    events = read_transcript(pytester.path / "report" / generation["transcript"])
    verdicts = [e["observation"].splitlines()[0] for e in events if e["type"] == "verify"]
    assert verdicts == ["SELF_VERIFY_FAIL", "SELF_VERIFY_PASS"]  # the planted bug, then the fix
    hunt = next(e for e in events if e["type"] == "action" and e["command"] == HUNT)
    assert hunt["observation"] == "<returncode>0</returncode>\n<output>\nhunt-done\n</output>"
    curl = next(e for e in events if e["type"] == "action" and "-w '%{http_code}" in str(e["command"]))
    assert "200" in curl["observation"]  # the agent ran its service inside the sandbox

    # nothing of the oracle reached the model, over the whole conversation and transcript
    shown = [m["content"] for r in server.requests for m in r["messages"] if m["role"] != "assistant"]
    shown += [str(e.get("observation", "")) for e in events]
    leaks = sorted(s for s in oracle_secrets() if any(s in text for text in shown))
    assert leaks == []
    assert len(oracle_secrets()) > 50  # the check has teeth

    html = (pytester.path / "report" / "report.html").read_text()
    assert "<h3>Generation</h3>" in html and generation["transcript_html"] in html
    assert count_session_objects(engine, report["manifest"]["session_id"]).total == 0
    print(f"e2e: {seconds:.1f}s, {outcomes['passed']} passed, generation {generation['seconds']}s")


def _session_running_sleep(engine: DockerClient) -> str | None:
    """The session of the agent sandbox that runs this test's `sleep 300` (other tests may run
    their own url-shortener sandboxes on the other xdist worker at the same time)."""
    for container in engine.containers.list(filters={"label": ["io.backendbench.role=agent-sandbox", f"{TASK_LABEL}=url-shortener"]}):
        try:
            processes = container.top().get("Processes") or []
        except docker.errors.NotFound:  # vanished meanwhile: not the one we are looking for
            continue
        if any("sleep 300" in " ".join(map(str, row)) for row in processes):
            return str(container.labels.get(SESSION_LABEL))
    return None


def test_ctrl_c_during_generation_leaves_no_container(pytester: pytest.Pytester, engine: DockerClient) -> None:
    with ScriptedChatServer([Turn(bash="sleep 300")]) as server:
        env = {**os.environ, "BACKENDBENCH_OPENAI_BASE_URL": server.base_url}
        command = [
            sys.executable, "-m", "pytest", "--bench-generate", "--bench-model=agent:scripted", "--candidate=runs", "--bench-task=url-shortener",
            f"--bench-root={REPO}", "--bench-runtime=docker", "-p", "no:cacheprovider",
        ]
        process = subprocess.Popen(command, cwd=pytester.path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 120
            session: str | None = None
            while time.monotonic() < deadline and session is None:
                time.sleep(0.5)
                if server.requests:
                    session = _session_running_sleep(engine)
            assert session, "the sandbox never ran the agent's command"
            process.send_signal(signal.SIGINT)
            output, _ = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode != 0
    assert b"KeyboardInterrupt" in output or b"Interrupted" in output or process.returncode == 2, output[-2000:]
    assert count_session_objects(engine, session).total == 0, "a labelled object of the interrupted session is left"
