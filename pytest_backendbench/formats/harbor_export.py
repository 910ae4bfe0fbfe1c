"""``backendbench export harbor``: a task of this harness written as a Harbor task.

Harbor (PyPI ``harbor``, Terminal-Bench's framework) lays a task out as ``task.toml``,
``instruction.md``, ``environment/Dockerfile``, ``solution/solve.sh`` and ``tests/test.sh``; the
agent works in the environment's container, then Harbor copies ``tests/`` in, runs ``test.sh``
and reads ``/logs/verifier/reward.json`` (or ``reward.txt``). The export maps:

- ``instruction.md``: the visible task (the prompt ``cmd:`` agents get, then spec.md); the same
  files the built-in agent starts from are in ``/app`` (spec.md, openapi.yaml, REQUIREMENTS.md,
  CANDIDATE_FORMAT.md), where the candidate is written;
- ``environment/``: a Python image with this harness installed in ``/opt/backendbench`` (its
  source is copied into the task: the verifier needs nothing from outside the task but PyPI at
  build time) and, for a ``database: postgres`` task, PostgreSQL's server binaries; a task that
  supplies its own Dockerfile (imported BaxBench) has that Dockerfile instead, less the
  candidate's COPY and its entry point, which the verifier starts (``harbor_own_image``);
- ``solution/``: the reference (or any candidate folder: the bench exports a mutant this way),
  copied into ``/app`` by ``solve.sh``;
- ``tests/``: the hidden oracle (``oracles/<task>`` without reference and alternates, the
  task's ``benchmarks/<task>`` and the mocks it names) and ``test.sh``, which runs
  ``python -m pytest_backendbench.formats.harbor_verify``: the oracle against ``/app`` with the
  process runtime (the service, its PostgreSQL cluster and mocks are local processes of the
  container), then the rewards.
"""

from __future__ import annotations

import shlex
import shutil
import textwrap
from pathlib import Path

from ..agents.cli_agent import default_task_prompt
from ..agents.sandbox import SandboxSpec
from ..agents.workspace import prepare_workspace
from ..errors import TaskFormatError
from ..tasks import Task, TaskCatalog
from .harbor_own_image import OwnImage, as_environment_task, harness_layers, own_image_of

PACKAGE_ROOT = Path(__file__).resolve().parents[2]
PACKAGE_FILES = ("setup.cfg", "pyproject.toml", "README.md")
HIDDEN_ORACLE_DIRS = ("reference", "alternates", "__pycache__")
VENV = "/opt/backendbench"


def export_harbor_task(
    bench_root: Path, task_id: str, out: Path, *, solution: Path | None = None, base_image: str = "python:3.12-slim",
    package_root: Path = PACKAGE_ROOT,
) -> Path:
    """Write ``out/<task_id>/`` as a Harbor task; return its folder.

    ``solution`` is the candidate ``solve.sh`` installs (default: the task's reference);
    ``base_image`` the environment's ``FROM`` (a Debian image with python3 and venv).
    A task that supplies its own Dockerfile (imported BaxBench) gets that Dockerfile as its
    environment (``harbor_own_image``). Raises ``TaskFormatError`` for a task that is not
    exportable (a frontend task: Harbor's verifier would need a browser; a Dockerfile that does
    not start the candidate from /app with an ENTRYPOINT or CMD).
    """
    task = TaskCatalog(bench_root).load(task_id)
    if task.kind != "backend":
        raise TaskFormatError(task.task_yaml, f"kind {task.kind!r}: only backend tasks are exported to Harbor (the verifier runs no browser)")
    source = solution or task.reference_dir
    own_image = own_image_of(task, VENV) if task.dockerfile is not None else None
    if own_image is None and not (source / "candidate.yaml").is_file():
        raise TaskFormatError(source, "the solution has no candidate.yaml (how the verifier starts the service)")
    folder = out / task_id
    if folder.exists():
        shutil.rmtree(folder)
    environment, tests, solution_dir = folder / "environment", folder / "tests", folder / "solution"
    prepare_workspace(task.visible, environment / "workspace")
    _copy_package(package_root, environment / "backendbench-src")
    if own_image is None:
        (environment / "Dockerfile").write_text(dockerfile(task, base_image), encoding="utf-8")
    else:
        (environment / "Dockerfile").write_text(own_image.dockerfile, encoding="utf-8")
        for name in task.build_files:
            shutil.copyfile(task.benchmark_dir / name, environment / name)
    shutil.copytree(source, solution_dir / "files", ignore=shutil.ignore_patterns("__pycache__", ".backendbench"))
    _script(solution_dir / "solve.sh", "#!/bin/bash\n# The reference candidate of this task, written into the workspace.\nset -euo pipefail\ncp -a /solution/files/. /app/\n")
    _copy_bench(bench_root, task, tests / "bench")
    if own_image is not None:
        as_environment_task(task, bench_root, tests / "bench")
    _script(tests / "test.sh", verifier_script(task, own_image))
    (folder / "instruction.md").write_text(instruction(task), encoding="utf-8")
    (folder / "task.toml").write_text(task_toml(task), encoding="utf-8")
    return folder


def instruction(task: Task) -> str:
    """The visible task: the prompt ``cmd:`` agents get (pointing at /app's files), then spec.md itself."""
    spec = SandboxSpec(task=task.visible, key=task.id, session_id="harbor")
    prompt = default_task_prompt(spec).replace("in the current folder", "in /app (the current folder)")
    return f"{prompt.rstrip()}\n\n---\n\n{task.visible.spec}"


def dockerfile(task: Task, base_image: str) -> str:
    """The environment: the base image, this harness in its own venv, PostgreSQL's binaries when the task needs them."""
    postgres = (
        "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql "
        "&& rm -rf /var/lib/apt/lists/*\n"
        if task.database == "postgres" else ""
    )
    return f"FROM {base_image}\n" + harness_layers(VENV, postgres)


def verifier_script(task: Task, own_image: OwnImage | None = None) -> str:
    """``tests/test.sh``: the oracle on /app, rewards in /logs/verifier (none written when the harness itself failed)."""
    entry = "" if own_image is None else f" --entry {shlex.quote(own_image.entry)} --entry-port {task.port}"
    return (
        "#!/bin/bash\n"
        "# This harness's hidden oracle against the service in /app; writes /logs/verifier/reward.json\n"
        "set -uo pipefail\n"
        f"exec {VENV}/bin/python -m pytest_backendbench.formats.harbor_verify --bench-root /tests/bench "
        f"--task {shlex.quote(task.id)} --candidate /app --logs /logs/verifier{entry}\n"
    )


def task_toml(task: Task) -> str:
    """Harbor's ``task.toml`` (its task-template's sections)."""
    keywords = ", ".join(f'"{k}"' for k in ("backendbench", task.kind, *task.domains))
    title = task.title.replace("\\", "\\\\").replace('"', '\\"')
    return textwrap.dedent(f"""\
        # Exported by pytest-backendbench (backendbench export harbor) from task {task.id}.
        schema_version = "1.0"

        [task]
        name = "backendbench/{task.id}"
        description = "{title}"
        keywords = [{keywords}]

        [metadata]
        category = "programming"
        difficulty = "medium"
        source = "pytest-backendbench"
        database = "{task.database}"

        [verifier]
        timeout_sec = 1800.0

        [agent]
        timeout_sec = 3600.0

        [environment]
        build_timeout_sec = 1200.0
        """)


def _copy_package(root: Path, dest: Path) -> None:
    if not (root / "pytest_backendbench").is_dir():
        raise TaskFormatError(root, "no pytest_backendbench/ source here to copy into the task (export from a source checkout)")
    shutil.copytree(root / "pytest_backendbench", dest / "pytest_backendbench", ignore=shutil.ignore_patterns("__pycache__"))
    for name in PACKAGE_FILES:
        if (root / name).is_file():
            shutil.copyfile(root / name, dest / name)


def _copy_bench(bench_root: Path, task: Task, dest: Path) -> None:
    """A bench root holding only this task (benchmark, oracle without reference and alternates) and its mocks."""
    shutil.copytree(task.benchmark_dir, dest / "benchmarks" / task.id, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(task.oracle_dir, dest / "oracles" / task.id, ignore=shutil.ignore_patterns(*HIDDEN_ORACLE_DIRS))
    for mock in task.mocks:
        shutil.copytree(bench_root / "mocks" / mock, dest / "mocks" / mock, ignore=shutil.ignore_patterns("__pycache__"))


def _script(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)
