"""A task that supplies its own Dockerfile (imported BaxBench), exported to Harbor.

The task's Dockerfile becomes Harbor's environment, less what starts the candidate: the
``COPY`` of the candidate itself (the agent writes it into ``/app``) and the ``ENTRYPOINT`` (or
``CMD``), which the verifier starts instead, as a local process of Harbor's container
(``harbor_verify --entry``, ``harbor_entry``). This harness is installed in its own venv on top.
The exported bench's copy of the task no longer names the Dockerfile (the environment is built
from it), so the process runtime runs it; its oracle gets a ``conftest.py`` whose ``container``
fixture is Harbor's container itself (``harbor_local``).
"""

from __future__ import annotations

import json
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..errors import TaskFormatError
from ..importers.baxbench.bridge import VENDORED_DIR
from ..tasks import Task

CANDIDATE_DIR = "/app"
CANDIDATE_SOURCES = ("/", ".", "./")
"""``COPY`` sources that are the candidate itself (the build context is the candidate's folder)."""
OWN_IMAGE_KEYS = ("dockerfile", "build_files")
ORACLE_CONFTEST = (
    "# Written by backendbench export harbor: the candidate's container is Harbor's own (see harbor_local).\n"
    "from pytest_backendbench.formats.harbor_local import container  # noqa: F401 - the fixture, in place of the harness's\n"
)


@dataclass(frozen=True)
class OwnImage:
    """The environment's Dockerfile made from the task's, and the entry point it no longer starts."""

    dockerfile: str
    entry: str


def harness_layers(venv: str, before_workspace: str = "") -> str:
    """The Dockerfile's end in every export: this harness in its own venv (the verifier's oracle),
    ``before_workspace`` (e.g. PostgreSQL's binaries), then the visible files in /app as the workdir."""
    return (
        "# this harness runs the hidden oracle in the verifier (tests/test.sh); its own venv, apart from the candidate's\n"
        "COPY backendbench-src /tmp/backendbench-src\n"
        f"RUN python3 -m venv {venv} && {venv}/bin/pip install --no-cache-dir /tmp/backendbench-src && rm -rf /tmp/backendbench-src\n"
        f"{before_workspace}COPY workspace/ {CANDIDATE_DIR}/\nWORKDIR {CANDIDATE_DIR}\n"
    )

def own_image_of(task: Task, venv: str) -> OwnImage:
    """The task's Dockerfile as Harbor's environment; ``TaskFormatError`` naming it when it cannot be one."""
    path = task.benchmark_dir / str(task.dockerfile)
    kept, entry, workdir = [], None, None
    for line in _logical_lines(path.read_text(encoding="utf-8")):
        word, _, rest = line.strip().partition(" ")
        instruction = word.upper()
        if instruction in ("ENTRYPOINT", "CMD"):
            entry = _command(rest.strip(), path)
            continue
        if instruction in ("COPY", "ADD") and _is_candidate_copy(rest):
            continue
        if instruction == "WORKDIR":
            workdir = rest.strip()
        kept.append(line)
    if entry is None:
        raise TaskFormatError(path, "no ENTRYPOINT or CMD: the verifier would not know how to start the candidate")
    if workdir is None or workdir.rstrip("/") != CANDIDATE_DIR:
        raise TaskFormatError(path, f"WORKDIR is {workdir or 'not set'}: the candidate must live in {CANDIDATE_DIR}, where Harbor's agent writes it")
    harness = harness_layers(venv)
    header = f"# {task.id}'s own Dockerfile ({path.name}) without the candidate's COPY and its entry point ({entry}), which the verifier starts\n"
    return OwnImage(header + "\n".join(kept).rstrip("\n") + "\n" + harness, entry)


def as_environment_task(task: Task, bench_root: Path, bench: Path) -> None:
    """The exported bench's copy of the task: no Dockerfile of its own, the container fixture Harbor's,
    and the test code imported BaxBench tasks share (``oracles/_baxbench``) when the source has it."""
    vendored = bench_root / "oracles" / VENDORED_DIR
    if vendored.is_dir():
        shutil.copytree(vendored, bench / "oracles" / VENDORED_DIR, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
    task_yaml = bench / "benchmarks" / task.id / "task.yaml"
    data = yaml.safe_load(task_yaml.read_text(encoding="utf-8"))
    for key in OWN_IMAGE_KEYS:
        data.pop(key, None)
    task_yaml.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120), encoding="utf-8")
    conftest = bench / "oracles" / task.id / "conftest.py"
    existing = conftest.read_text(encoding="utf-8") if conftest.is_file() else ""
    conftest.write_text(existing + ("\n" if existing else "") + ORACLE_CONFTEST, encoding="utf-8")


def _logical_lines(text: str) -> list[str]:
    """The Dockerfile's instructions, continuation lines joined (comments and blank lines kept)."""
    lines, pending = [], ""
    for raw in text.splitlines():
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        lines.append(pending + raw)
        pending = ""
    if pending:
        lines.append(pending)
    return lines


def _is_candidate_copy(rest: str) -> bool:
    words = [w for w in shlex.split(rest) if not w.startswith("--")]
    return len(words) >= 2 and all(source in CANDIDATE_SOURCES for source in words[:-1])


def _command(rest: str, path: Path) -> str:
    """An ENTRYPOINT's command line: the shell form as written, the exec form joined."""
    if rest.startswith("["):
        try:
            argv = json.loads(rest)
        except ValueError as err:
            raise TaskFormatError(path, f"ENTRYPOINT {rest} is neither JSON (exec form) nor a command line: {err}") from err
        return shlex.join(str(a) for a in argv)
    return rest
