"""The worked examples in the repository's root conftest.py run, and stay quiet unless asked."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from pytest_backendbench.agents.loop import Action, AgentStep

ROOT_CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"


def load_examples() -> ModuleType:
    spec = importlib.util.spec_from_file_location("backendbench_root_conftest", ROOT_CONFTEST)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_examples_generate_observe_and_report(pytester: pytest.Pytester, bench: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(ROOT_CONFTEST, pytester.path / "conftest.py")
    log = pytester.path / "results.jsonl"
    monkeypatch.setenv("BACKENDBENCH_RESULT_LOG", str(log))
    result = pytester.runpytest(
        "--bench-generate", "--bench-model=example:hello-agent", "--candidate=runs", "--bench-runtime=process", "-p", "no:cacheprovider", "-W", "ignore::UserWarning"
    )
    result.stdout.fnmatch_lines(["backendbench generate: generate notes with example:hello-agent: done in *s (exit submitted, 4 steps)"])
    assert (pytester.path / "runs" / "notes" / "app.py").is_file()
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] >= 1 and outcomes["failed"] >= 1  # it boots and answers /health, and implements nothing else
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(x["task"], x["model"]) for x in lines] == [("notes", "example:hello-agent")]


def test_examples_do_nothing_unless_asked(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BACKENDBENCH_RESULT_LOG", raising=False)
    shutil.copy(ROOT_CONFTEST, pytester.path / "conftest.py")
    pytester.makepyfile(test_plain="def test_one():\n    assert True\n")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert sorted(p.name for p in pytester.path.iterdir() if not p.name.startswith(".")) == ["conftest.py", "test_plain.py"]
    examples = load_examples()
    assert examples.pytest_backendbench_generate(task=None, workspace=pytester.path, model="agent:x") is None


@pytest.mark.parametrize(("command", "stop"), [("rm -rf /", True), ("rm -rf / --no-preserve-root", True), ("rm -rf /tmp/build", False), ("ls", False)])
def test_step_guard_stops_a_filesystem_wipe(command: str, stop: bool) -> None:
    step = AgentStep(1, (Action("bash", command=command),), ("",), None, None, None, 0.0, 0)
    assert bool(load_examples().pytest_backendbench_agent_step(task=None, sample="", step=step)) is stop
