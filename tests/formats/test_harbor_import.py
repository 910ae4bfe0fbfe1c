"""``backendbench import harbor``: a Harbor task run by this harness, its tests unchanged, the built-in agent on it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from docker import DockerClient

from pytest_backendbench.cli.main import main as backendbench

from ..conftest import read_report

sys.path.insert(0, str(Path(__file__).parents[1] / "agents"))  # importlib mode: the scripted chat server is imported by path
from chat_server import ScriptedChatServer, Turn


def test_a_dataset_without_tasks_and_a_malformed_task_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  make_harbor_task: Callable[..., Path]) -> None:
    assert backendbench(["import", "harbor", str(tmp_path), "--out", str(tmp_path / "bench")]) == 2
    assert f"{tmp_path}: no task.toml here or in its subfolders" in capsys.readouterr().err
    make_harbor_task(tmp_path, "unused", toml="[task\n")
    assert backendbench(["import", "harbor", str(tmp_path), "--out", str(tmp_path / "bench")]) == 2
    assert "answer/task.toml: not valid TOML" in capsys.readouterr().err


@pytest.mark.docker
def test_an_environment_that_does_not_build_is_named_at_import(tmp_path: Path, capsys: pytest.CaptureFixture[str], docker_client: DockerClient,
                                                              base_image: str, make_harbor_task: Callable[..., Path]) -> None:
    make_harbor_task(tmp_path, base_image, dockerfile="RUN echo no such package >&2 && false\n")
    assert backendbench(["import", "harbor", str(tmp_path), "--out", str(tmp_path / "bench")]) == 2
    error = capsys.readouterr().err
    assert "answer/environment/Dockerfile: the environment does not build" in error and "no such package" in error
    assert not (tmp_path / "bench").exists()


@pytest.mark.docker
def test_the_built_in_agent_solves_an_imported_harbor_task_judged_by_its_own_tests(
    pytester: pytest.Pytester, docker_client: DockerClient, base_image: str, make_harbor_task: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = make_harbor_task(pytester.path / "harbor", base_image)
    assert backendbench(["import", "harbor", str(source.parent), "--out", str(pytester.path / "bench")]) == 0
    assert (pytester.path / "bench" / "oracles" / "answer" / "harbor_tests" / "test.sh").read_text() == (source / "tests" / "test.sh").read_text()
    turns = [Turn(bash="cat spec.md && echo 42 > answer.txt && echo 'task: answer' > candidate.yaml"), Turn(tool="submit")]
    monkeypatch.setenv("BACKENDBENCH_IMAGE_ALIASES", f"python:3.12-slim={base_image}")
    with ScriptedChatServer(turns) as server:
        monkeypatch.setenv("BACKENDBENCH_OPENAI_BASE_URL", server.base_url)
        result = pytester.runpytest(
            "--bench-generate", "--bench-model=agent:scripted", "--candidate=runs", "--bench-root=bench", "--bench-runtime=docker",
            "--bench-report-dir=report", "-p", "no:cacheprovider", "-W", "ignore::UserWarning",
        )
    assert "Write 42 into /app/answer.txt." in server.requests[1]["messages"][-1]["content"]  # the instruction is spec.md
    result.assert_outcomes(passed=4)  # build, boot, the (empty) contract and the task's own test.sh
    (harbor_item,) = [i for i in read_report(pytester.path / "report")["tasks"][0]["items"] if i["nodeid"].endswith("test_harbor_reward")]
    assert harbor_item["outcome"] == "passed"
