"""Harbor tasks verified by this harness with their own environment and tests (real engine), and bad input named."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from docker import DockerClient

from pytest_backendbench.formats.harbor_task import HarborTask, HarborTaskError, verify_candidate


def candidate(root: Path, answer: str) -> Path:
    folder = root / f"candidate-{answer}"
    folder.mkdir()
    (folder / "answer.txt").write_text(answer + "\n")
    return folder


def test_malformed_task_toml_is_named(tmp_path: Path, make_harbor_task: Callable[..., Path]) -> None:
    folder = make_harbor_task(tmp_path, "unused", toml='[task]\nname = "unterminated\n')
    with pytest.raises(HarborTaskError, match=r"answer/task.toml: not valid TOML: .*line 2"):
        HarborTask.load(folder)
    (folder / "tests" / "test.sh").unlink()
    (folder / "task.toml").write_text("[task]\n")
    with pytest.raises(HarborTaskError, match=r"answer/tests/test.sh: missing"):
        HarborTask.load(folder)


@pytest.mark.docker
def test_the_tasks_own_tests_fail_a_wrong_candidate(tmp_path: Path, docker_client: DockerClient, base_image: str, make_harbor_task: Callable[..., Path]) -> None:
    task = HarborTask.load(make_harbor_task(tmp_path, base_image))
    assert task.name == "demo/answer" and task.instruction.startswith("Write 42")
    # the passing candidate is test_harbor_import's (the built-in agent's work, judged the same way)
    wrong = verify_candidate(task, candidate(tmp_path, "41"), docker_client)
    assert wrong.reward == 0.0 and not wrong.passed


@pytest.mark.docker
def test_tests_that_write_no_reward_are_named(
    tmp_path: Path, docker_client: DockerClient, base_image: str, make_harbor_task: Callable[..., Path]
) -> None:
    silent = HarborTask.load(make_harbor_task(tmp_path / "silent", base_image, test_sh="#!/bin/bash\necho checked everything\nexit 3\n"))
    with pytest.raises(HarborTaskError, match=r"(?s)answer/tests/test.sh: wrote no reward .* it exited 3; its last output:\nchecked everything"):
        verify_candidate(silent, candidate(tmp_path, "42"), docker_client)
