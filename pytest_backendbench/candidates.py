"""Candidates: the generated services under evaluation, and how ``--candidate`` finds them.

``--candidate`` may name one candidate, a root with one folder per task id, or a root with
``<task>/sample-<k>/`` folders (pass@k). A task with no candidate is reported as missing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import CandidateFormatError, load_yaml_file
from .file_schemas import CANDIDATE_SCHEMA, validate_file
from .runkey import SAMPLE_PATTERN, RunKey

FORMAT_RULES = """\
## Candidate format (every rule must hold)

1. A `Dockerfile` at the root whose first two lines are exactly:

       ARG BASE_IMAGE=python:3.12-slim
       FROM ${BASE_IMAGE}

   The harness may substitute another Python base image through BASE_IMAGE. Install
   dependencies in the Dockerfile (e.g. `pip install -r requirements.txt`); the running
   service has no internet access.
2. The service listens on `0.0.0.0`, on the TCP port given in the `PORT` environment
   variable (default 8000), and answers its health path (see the specification) as soon as
   it is ready. If the specification says it uses PostgreSQL, it connects with the
   `DATABASE_URL` environment variable.
3. A `candidate.yaml` at the root containing `run: <command>`: the command that starts the
   service from the root folder without Docker (after `pip install -r requirements.txt`),
   e.g. `run: python app.py`.
4. Every file is complete: no placeholders, no "rest unchanged", no "...".
"""
"""The candidate format every generated service must follow, as a model or an agent is told it."""

IGNORED_NAMES = frozenset({".git", "__pycache__", ".venv", "venv", "node_modules", ".pytest_cache", ".mypy_cache"})


@dataclass(frozen=True)
class Candidate:
    """One generated service for one task (one sample of it, for pass@k)."""

    task_id: str
    path: Path
    sample: str = ""
    run: str | None = None
    generation: dict[str, Any] = field(default_factory=dict)

    @property
    def run_key(self) -> RunKey:
        """The identity of this candidate's (first) run."""
        return RunKey.of(self.task_id, self.sample)

    @property
    def key(self) -> str:
        """Identifies the candidate in reports and messages: ``task`` or ``task@sample-k``."""
        return str(self.run_key)

    @property
    def has_dockerfile(self) -> bool:
        """Whether the candidate can be built by the docker runtime."""
        return (self.path / "Dockerfile").is_file()

    def content_hash(self) -> str:
        """A hash of every file that matters, so an unchanged candidate is never rebuilt."""
        return hash_tree(self.path)


@dataclass(frozen=True)
class MissingCandidate:
    """A selected task for which ``--candidate`` holds nothing: its items fail as missing."""

    task_id: str
    searched: Path
    sample: str = ""

    @property
    def key(self) -> str:
        """Same key scheme as ``Candidate``."""
        return str(RunKey.of(self.task_id, self.sample))


def iter_tree_files(root: Path) -> list[Path]:
    """Files below root that belong to the candidate (caches and VCS folders left out)."""
    files: list[Path] = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part in IGNORED_NAMES for part in rel.parts) or path.suffix == ".pyc":
            continue
        if path.is_file():
            files.append(path)
    return files


def hash_tree(root: Path) -> str:
    """sha256 over relative paths, modes and contents, stable across machines."""
    digest = hashlib.sha256()
    for path in iter_tree_files(root):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0x" if path.stat().st_mode & 0o111 else b"\0-")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def load_candidate_yaml(path: Path) -> dict[str, Any]:
    """Read and validate ``candidate.yaml``; an absent file is an empty mapping."""
    file = path / "candidate.yaml"
    if not file.is_file():
        return {}
    return validate_file(load_yaml_file(file, CandidateFormatError), CANDIDATE_SCHEMA, file, CandidateFormatError)


def _is_single_candidate(path: Path) -> bool:
    return any((path / name).exists() for name in ("Dockerfile", "candidate.yaml", "index.html"))


def _is_code_only_candidate(path: Path, task_ids: list[str]) -> bool:
    """A candidate that is only code (``app.py``: the task supplies the Dockerfile) for the one
    selected task: files at the top, and no folder named after the task or a sample."""
    if len(task_ids) != 1 or (path / task_ids[0]).is_dir():
        return False
    entries = [p for p in path.iterdir() if not p.name.startswith(".")]
    return any(p.is_file() for p in entries) and not any(p.is_dir() and SAMPLE_PATTERN.match(p.name) for p in entries)


def _make(task_id: str, path: Path, sample: str = "") -> Candidate:
    data = load_candidate_yaml(path)
    declared = data.get("task")
    if declared is not None and declared != task_id:
        raise CandidateFormatError(path / "candidate.yaml", f"says task {declared!r} but sits where task {task_id!r} is expected", field="task")
    return Candidate(task_id=task_id, path=path, sample=sample, run=data.get("run"), generation=dict(data.get("generation") or {}))


@dataclass(frozen=True)
class CandidateLayout:
    """What ``--candidate`` points at: one candidate for one task, or a root of task folders."""

    root: Path
    single_task: str | None

    def samples(self, task_id: str) -> list[str]:
        """Sample names for a task ("" for a lone candidate), without reading candidate.yaml."""
        folder = self.folder(task_id)
        if folder is None or not folder.is_dir():
            return [""]
        names = [p.name for p in folder.iterdir() if p.is_dir() and SAMPLE_PATTERN.match(p.name)]
        return sorted(names, key=lambda n: int(n.split("-")[1])) or [""]

    def folder(self, task_id: str) -> Path | None:
        """The folder that holds this task's candidate(s), None if --candidate is for another task."""
        if self.single_task is not None:
            return self.root if task_id == self.single_task else None
        return self.root / task_id

    def candidate(self, task_id: str, sample: str) -> Candidate | MissingCandidate:
        """The candidate for (task, sample); CandidateFormatError if its candidate.yaml is bad."""
        folder = self.folder(task_id)
        if folder is None or not folder.is_dir():
            return MissingCandidate(task_id, folder or self.root / task_id, sample)
        path = folder / sample if sample else folder
        if not path.is_dir():
            return MissingCandidate(task_id, path, sample)
        return _make(task_id, path, sample)


def resolve_layout(root: Path, task_ids: list[str]) -> CandidateLayout:
    """Decide what ``--candidate`` is; errors here are usage errors (nothing can run)."""
    root = root.resolve()
    if not root.exists():
        raise CandidateFormatError(root, "does not exist; --candidate takes a candidate folder or a root of <task>/ folders")
    if not root.is_dir():
        raise CandidateFormatError(root, "is not a folder; --candidate takes a candidate folder or a root of <task>/ folders")
    if not _is_single_candidate(root) and not _is_code_only_candidate(root, task_ids):
        return CandidateLayout(root, None)
    declared = load_candidate_yaml(root).get("task")
    if declared is None:
        if len(task_ids) != 1:
            raise CandidateFormatError(
                root / "candidate.yaml",
                "a single candidate must say which task it is for (task: <id>), or select one task with --bench-task",
                field="task",
            )
        declared = task_ids[0]
    if declared not in task_ids:
        raise CandidateFormatError(
            root / "candidate.yaml", f"task {declared!r} is not among the selected tasks ({', '.join(task_ids) or 'none'})", field="task"
        )
    return CandidateLayout(root, declared)
