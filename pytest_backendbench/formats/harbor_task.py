"""A Harbor task read and verified by this harness: its own environment and tests, run unchanged.

A Harbor task folder holds ``task.toml``, ``instruction.md``, ``environment/Dockerfile`` (the
container the agent works in), ``tests/test.sh`` (the verifier, run in that container after the
agent) and optionally ``solution/solve.sh``. Verifying a candidate here is what Harbor does after
an agent's run: build the environment, put the candidate into its working directory, copy
``tests/`` to ``/tests``, run ``bash /tests/test.sh`` and read ``/logs/verifier/reward.json``
(else ``reward.txt``). The reward is the verdict: 1.0 (or more) passes.

Bad input is an error naming the file, never a silent 0: a malformed ``task.toml``, a missing
``instruction.md``, environment or ``tests/test.sh``, an environment that does not build (the
build log's last lines), tests that write no reward (test.sh's exit code and last output).
"""

from __future__ import annotations

import io
import json
import tarfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import HarnessError

try:  # Python >= 3.11; tomli is the same parser for 3.10
    import tomllib
except ImportError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

REWARD_DIR = "/logs/verifier"
LABEL = "io.backendbench.harbor"


class HarborTaskError(HarnessError):
    """A Harbor task this harness cannot run: the message names the file and what is wrong."""


@dataclass(frozen=True)
class HarborTask:
    """One Harbor task folder, checked."""

    folder: Path
    name: str
    config: dict[str, Any]
    instruction: str

    @classmethod
    def load(cls, folder: Path) -> HarborTask:
        """Read ``folder``; ``HarborTaskError`` naming the file when a part is missing or malformed."""
        toml_path = folder / "task.toml"
        if not toml_path.is_file():
            raise HarborTaskError(f"{toml_path}: missing; a Harbor task folder holds task.toml, instruction.md, environment/ and tests/")
        try:
            config = tomllib.loads(toml_path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as err:
            raise HarborTaskError(f"{toml_path}: not valid TOML: {err}") from err
        for key in ("task", "verifier", "agent", "environment"):
            if key in config and not isinstance(config[key], dict):
                raise HarborTaskError(f"{toml_path}: [{key}] must be a table, found {type(config[key]).__name__}")
        for required in ("instruction.md", "environment/Dockerfile", "tests/test.sh"):
            if not (folder / required).is_file():
                raise HarborTaskError(f"{folder / required}: missing; Harbor runs the agent in environment/Dockerfile's image and verifies with tests/test.sh")
        task_table = config.get("task") or {}
        name = str(task_table.get("name") or folder.name)
        return cls(folder, name, config, (folder / "instruction.md").read_text(encoding="utf-8"))

    @property
    def verifier_timeout_s(self) -> float:
        value = (self.config.get("verifier") or {}).get("timeout_sec", 600.0)
        return float(value) if isinstance(value, (int, float)) else 600.0


@dataclass(frozen=True)
class HarborVerdict:
    """What the task's own tests said about a candidate."""

    rewards: dict[str, float]
    exit_code: int
    output: str

    @property
    def reward(self) -> float:
        return float(self.rewards.get("reward", 0.0))

    @property
    def passed(self) -> bool:
        return self.reward >= 1.0


def _tar(source: Path, prefix: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        archive.add(str(source), arcname=prefix)
    return buffer.getvalue()


def _read_file(container: Any, path: str) -> str | None:
    import docker.errors

    try:
        chunks, _ = container.get_archive(path)
    except docker.errors.NotFound:
        return None
    with tarfile.open(fileobj=io.BytesIO(b"".join(chunks))) as archive:
        member = archive.next()
        handle = archive.extractfile(member) if member is not None else None
        return handle.read().decode("utf-8", errors="replace") if handle is not None else None


def build_environment(client: Any, task: HarborTask) -> str:
    """Build ``environment/`` (cached by the engine); the image id. ``HarborTaskError`` naming the Dockerfile on failure."""
    import docker.errors

    dockerfile = task.folder / "environment" / "Dockerfile"
    try:
        image, _ = client.images.build(path=str(dockerfile.parent), rm=True, forcerm=True, labels={LABEL: "1"})
    except docker.errors.BuildError as err:
        lines = [str(chunk.get("stream") or chunk.get("error") or "").rstrip() for chunk in err.build_log]
        tail = "\n".join(line for line in lines if line)[-2000:]
        raise HarborTaskError(f"{dockerfile}: the environment does not build: {err.msg}\n{tail}") from err
    return str(image.id)


def verify_candidate(task: HarborTask, candidate: Path, client: Any | None = None) -> HarborVerdict:
    """Run the task's own tests on ``candidate`` (copied into the environment's working directory)."""
    import docker

    client = client or docker.from_env()
    image = build_environment(client, task)
    workdir = client.images.get(image).attrs.get("Config", {}).get("WorkingDir") or "/app"
    container = client.containers.run(image, ["sleep", "infinity"], entrypoint=[], detach=True, labels={LABEL: "1"},
                                      name=f"backendbench-harbor-{uuid.uuid4().hex[:10]}")
    try:
        container.exec_run(["mkdir", "-p", workdir, REWARD_DIR, "/tests"])
        container.put_archive(workdir, _tar(candidate, "."))
        container.put_archive("/", _tar(task.folder / "tests", "tests"))
        result = container.exec_run(["timeout", str(int(task.verifier_timeout_s)), "bash", "/tests/test.sh"], workdir=workdir)
        output = result.output.decode("utf-8", errors="replace") if isinstance(result.output, bytes) else str(result.output)
        rewards = _rewards(task, container, result.exit_code, output)
    finally:
        container.remove(force=True)
    return HarborVerdict(rewards, int(result.exit_code or 0), output)


def _rewards(task: HarborTask, container: Any, exit_code: int, output: str) -> dict[str, float]:
    return rewards_from(_read_file(container, f"{REWARD_DIR}/reward.json"), _read_file(container, f"{REWARD_DIR}/reward.txt"),
                        task.folder / "tests" / "test.sh", exit_code, output)


def rewards_from(reward_json: str | None, reward_txt: str | None, test_sh: Path, exit_code: int, output: str) -> dict[str, float]:
    """Harbor's reading of the reward files (reward.json first); ``HarborTaskError`` naming ``test_sh`` when there is none."""
    if reward_json is not None:
        try:
            data = json.loads(reward_json)
        except ValueError as err:
            raise HarborTaskError(f"{test_sh}: wrote a reward.json that is not JSON ({err})") from err
        if isinstance(data, (int, float)) and not isinstance(data, bool):
            return {"reward": float(data)}
        if not isinstance(data, dict) or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in data.values()):
            raise HarborTaskError(f"{test_sh}: reward.json must map names to numbers, found {reward_json[:200]!r}")
        return {str(k): float(v) for k, v in data.items()}
    if reward_txt is not None:
        try:
            return {"reward": float(reward_txt.strip())}
        except ValueError as err:
            raise HarborTaskError(f"{test_sh}: wrote a reward.txt that is not a number: {reward_txt.strip()[:100]!r}") from err
    tail = "\n".join(output.rstrip().splitlines()[-15:])
    raise HarborTaskError(
        f"{test_sh}: wrote no reward ({REWARD_DIR}/reward.json or reward.txt); it exited {exit_code}; its last output:\n{tail}"
    )


def run_tests_in(container: Any, tests: Path, timeout_s: float) -> HarborVerdict:
    """An imported task's oracle: Harbor's ``tests/`` into ``/tests`` of the candidate's running container
    (the ``container`` fixture), ``bash /tests/test.sh``, the reward files read back."""
    for path in sorted(p for p in tests.rglob("*") if p.is_file()):
        container.put_file(f"/tests/{path.relative_to(tests).as_posix()}", path.read_bytes(), 0o755)
    container.exec(["mkdir", "-p", REWARD_DIR])
    result = container.exec(["bash", "/tests/test.sh"], timeout=timeout_s)

    def read(name: str) -> str | None:
        try:
            return bytes(container.get_file(f"{REWARD_DIR}/{name}")).decode("utf-8", errors="replace")
        except FileNotFoundError:
            return None

    output = result.text
    return HarborVerdict(rewards_from(read("reward.json"), read("reward.txt"), tests / "test.sh", result.exit_code, output), result.exit_code, output)
