"""Harbor tasks verified by this harness with their own environment and tests (real engine), and bad input named."""

from __future__ import annotations

from pathlib import Path

import pytest
from docker import DockerClient

from pytest_backendbench.formats.harbor_task import HarborTask, HarborTaskError, verify_candidate

TEST_SH = """#!/bin/bash
# Harbor's convention: a reward in /logs/verifier
if [ "$(cat /app/answer.txt 2>/dev/null)" = "42" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""


def harbor_task(root: Path, base_image: str, *, toml: str = '[task]\nname = "demo/answer"\n[verifier]\ntimeout_sec = 60.0\n',
                dockerfile: str = "", test_sh: str = TEST_SH) -> Path:
    folder = root / "answer"
    (folder / "environment").mkdir(parents=True)
    (folder / "tests").mkdir()
    (folder / "task.toml").write_text(toml)
    (folder / "instruction.md").write_text("Write 42 into /app/answer.txt.\n")
    (folder / "environment" / "Dockerfile").write_text(f"FROM {base_image}\n{dockerfile}WORKDIR /app\n")
    (folder / "tests" / "test.sh").write_text(test_sh)
    return folder


def candidate(root: Path, answer: str) -> Path:
    folder = root / f"candidate-{answer}"
    folder.mkdir()
    (folder / "answer.txt").write_text(answer + "\n")
    return folder


def test_malformed_task_toml_is_named(tmp_path: Path) -> None:
    folder = harbor_task(tmp_path, "unused", toml='[task]\nname = "unterminated\n')
    with pytest.raises(HarborTaskError, match=r"answer/task.toml: not valid TOML: .*line 2"):
        HarborTask.load(folder)
    (folder / "tests" / "test.sh").unlink()
    (folder / "task.toml").write_text("[task]\n")
    with pytest.raises(HarborTaskError, match=r"answer/tests/test.sh: missing"):
        HarborTask.load(folder)


@pytest.mark.docker
def test_the_tasks_own_tests_give_the_verdict(tmp_path: Path, docker_client: DockerClient, base_image: str) -> None:
    task = HarborTask.load(harbor_task(tmp_path, base_image))
    assert task.name == "demo/answer" and task.instruction.startswith("Write 42")
    assert verify_candidate(task, candidate(tmp_path, "42"), docker_client).rewards == {"reward": 1.0}
    wrong = verify_candidate(task, candidate(tmp_path, "41"), docker_client)
    assert wrong.reward == 0.0 and not wrong.passed


@pytest.mark.docker
def test_tests_that_write_no_reward_and_environments_that_do_not_build_are_named(tmp_path: Path, docker_client: DockerClient, base_image: str) -> None:
    silent = HarborTask.load(harbor_task(tmp_path / "silent", base_image, test_sh="#!/bin/bash\necho checked everything\nexit 3\n"))
    with pytest.raises(HarborTaskError, match=r"(?s)answer/tests/test.sh: wrote no reward .* it exited 3; its last output:\nchecked everything"):
        verify_candidate(silent, candidate(tmp_path, "42"), docker_client)
    broken = HarborTask.load(harbor_task(tmp_path / "broken", base_image, dockerfile="RUN echo no such package >&2 && false\n"))
    with pytest.raises(HarborTaskError, match=r"(?s)answer/environment/Dockerfile: the environment does not build: .*no such package"):
        verify_candidate(broken, candidate(tmp_path / "broken", "42"), docker_client)
