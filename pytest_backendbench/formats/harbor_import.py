"""``backendbench import harbor DIR``: Harbor tasks (one folder, or a dataset of them) as tasks of this harness.

Each Harbor task becomes ``benchmarks/<id>/`` and ``oracles/<id>/``:

- the visible task is its ``instruction.md`` as ``spec.md``, sent verbatim (``prompt: verbatim``),
  with an empty OpenAPI contract (a Harbor task has no HTTP contract);
- its environment runs unchanged: ``environment/Dockerfile`` is the task's Dockerfile
  (``dockerfile:``, the other files of ``environment/`` its ``build_files``), with three lines
  added after it: the candidate's files into the environment's working directory (where Harbor's
  agent would have left them) and a placeholder listener on the task's port, which is how this
  harness sees the container is up (it needs ``python3`` in the environment);
- its tests run unchanged: ``tests/`` is copied to ``oracles/<id>/harbor_tests/`` and one oracle
  item, ``test_harbor_reward``, puts them at ``/tests`` in the candidate's running container,
  runs ``bash /tests/test.sh`` and reads ``/logs/verifier/reward.json`` (else ``reward.txt``):
  reward 1.0 passes, less fails, no reward is an error naming ``test.sh``.

An agent of this harness (``agent:``, ``cmd:``) then works on it like any task: it gets the
instruction and ``environment/``'s files, and its candidate is judged by the task's own tests.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .harbor_task import HarborTask, HarborTaskError, build_environment

ORACLE_TESTS = "harbor_tests"
TASK_DOCKERFILE = "harbor.Dockerfile"
PORT = 8000
REQUIREMENT = "H1"
ORACLE_MODULE = '''"""Harbor task {name}: its own tests/test.sh, unchanged, in the candidate's container; the reward is the verdict."""

from pathlib import Path

import pytest

from pytest_backendbench.formats.harbor_task import run_tests_in

TESTS = Path(__file__).parent / "{tests}"


@pytest.mark.requirement("{requirement}")
@pytest.mark.category("workflow")
def test_harbor_reward(container):
    verdict = run_tests_in(container, TESTS, timeout_s={timeout})
    assert verdict.passed, f"reward {{verdict.reward}} (1.0 passes); rewards {{verdict.rewards}}; test.sh exited {{verdict.exit_code}}:\\n{{verdict.output[-3000:]}}"
'''


@dataclass
class HarborImportSummary:
    """What an import wrote."""

    source: Path
    out: Path
    tasks: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return f"imported {len(self.tasks)} Harbor task(s) from {self.source} into {self.out}: {', '.join(self.tasks)}"


def harbor_task_folders(source: Path) -> list[Path]:
    """``source`` itself when it is a task, else its subfolders holding a task.toml (a dataset checked out)."""
    if (source / "task.toml").is_file():
        return [source]
    folders = sorted(p.parent for p in source.glob("*/task.toml"))
    if not folders:
        raise HarborTaskError(f"{source}: no task.toml here or in its subfolders; name a Harbor task folder or a dataset of them")
    return folders


def task_id_of(folder: Path) -> str:
    """A task id from the folder's name (lower case, letters, digits and dashes)."""
    return re.sub(r"[^a-z0-9]+", "-", folder.name.lower()).strip("-") or "harbor-task"


def import_harbor(source: Path, out: Path, *, build: bool = True) -> HarborImportSummary:
    """Write every Harbor task under ``source`` into the bench root ``out``; ``HarborTaskError`` names a bad file.

    With ``build`` each task's environment is built first (on the local docker engine): an environment that does
    not build is the task's fault, named at import, not a build failure charged to every candidate later.
    """
    summary = HarborImportSummary(source, out)
    tasks = [HarborTask.load(folder) for folder in harbor_task_folders(source)]
    if build:
        import docker

        client = docker.from_env()
        try:
            for task in tasks:
                build_environment(client, task)
        finally:
            client.close()
    for task in tasks:
        summary.tasks.append(write_task(task, out, task_id_of(task.folder)))
    return summary


def write_task(task: HarborTask, out: Path, task_id: str) -> str:
    bench, oracle = out / "benchmarks" / task_id, out / "oracles" / task_id
    for path in (bench, oracle):
        if path.exists():
            shutil.rmtree(path)
    environment = task.folder / "environment"
    shutil.copytree(environment, bench, ignore=shutil.ignore_patterns("Dockerfile"))
    dockerfile = (environment / "Dockerfile").read_text(encoding="utf-8")
    workdir = _workdir(dockerfile)
    (bench / TASK_DOCKERFILE).write_text(
        dockerfile.rstrip("\n") + "\n"
        "# added by backendbench import harbor: the candidate where Harbor's agent leaves its work, and a listener\n"
        "# on the task's port that tells the harness the container is up (the task's own tests judge it)\n"
        f"COPY . {workdir}\nWORKDIR {workdir}\n"
        f'CMD ["python3", "-m", "http.server", "--directory", "/tmp", "{PORT}"]\n',
        encoding="utf-8",
    )
    build_files = sorted(p.relative_to(bench).as_posix() for p in bench.rglob("*") if p.is_file() and p.name != TASK_DOCKERFILE)
    (bench / "spec.md").write_text(task.instruction, encoding="utf-8")
    contract = {"openapi": "3.0.3", "info": {"title": task.name, "version": "1"}, "paths": {}}
    (bench / "openapi.yaml").write_text(yaml.safe_dump(contract, sort_keys=False), encoding="utf-8")
    config = {
        "id": task_id, "title": task.name, "kind": "backend", "port": PORT, "health": {"path": "/", "timeout_s": 120},
        "prompt": "verbatim", "isolation": "task", "requirements": {REQUIREMENT: "the task's own tests/test.sh give reward 1.0"}, "dockerfile": TASK_DOCKERFILE, "build_files": build_files,
        "harbor": {"name": task.name, "source": str(task.folder.resolve())},
    }
    (bench / "task.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    shutil.copytree(task.folder / "tests", oracle / ORACLE_TESTS)
    module = ORACLE_MODULE.format(name=json.dumps(task.name)[1:-1], tests=ORACLE_TESTS, timeout=task.verifier_timeout_s, requirement=REQUIREMENT)
    (oracle / "test_harbor.py").write_text(module, encoding="utf-8")
    return task_id


def _workdir(dockerfile: str) -> str:
    """The environment's last WORKDIR (Harbor's agent works there), else /app."""
    found = re.findall(r"^\s*WORKDIR\s+(\S+)\s*$", dockerfile, flags=re.MULTILINE | re.IGNORECASE)
    return found[-1] if found else "/app"
