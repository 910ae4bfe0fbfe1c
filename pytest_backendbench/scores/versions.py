"""Task versions: a content hash of everything that defines a task's verdicts.

Hashed: the visible task (benchmarks/<task>/: spec, OpenAPI, task.yaml, any file there), the
hidden oracle (tests, conftest, features and steps, DB cases, fixtures) and the mocks the task
names. Not hashed: the reference and alternate solutions, REVIEW notes and mutants (they judge
the oracle, not candidates), caches. Two runs with equal hashes judged the same task.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

from ..errors import BackendBenchFormatError
from ..tasks import Task, TaskCatalog

EXCLUDED_DIRS = frozenset({"reference", "alternates", "__pycache__", ".pytest_cache", "node_modules"})
EXCLUDED_FILES = frozenset({"REVIEW.md", "mutants.yaml"})
DISTRIBUTION = "pytest-backendbench"


def harness_version() -> str:
    """The installed distribution's version (package metadata), else the package's own."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        from .. import __version__

        return __version__


def _files(root: Path) -> Iterator[Path]:
    if not root.is_dir():
        return
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if any(part in EXCLUDED_DIRS or part.startswith(".") for part in relative.parts[:-1]):
            continue
        if path.is_file() and path.name not in EXCLUDED_FILES and not path.name.startswith(".") and path.suffix != ".pyc":
            yield path


def task_hash(task: Task, mocks_dir: Path | None = None) -> str:
    """sha256 over (where, relative path, bytes) of every verdict-defining file, in path order."""
    digest = hashlib.sha256()
    roots = [("visible", task.benchmark_dir), ("oracle", task.oracle_dir)]
    roots += [(f"mock:{name}", mocks_dir / name) for name in sorted(task.mocks)] if mocks_dir is not None else []
    for label, root in roots:
        for path in _files(root):
            digest.update(f"{label}:{path.relative_to(root).as_posix()}\0".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def task_versions(catalog: TaskCatalog, task_ids: list[str]) -> dict[str, str]:
    """task id -> content hash for the tasks of a run (tasks that do not load are left out)."""
    versions = {}
    for task_id in task_ids:
        try:
            task = catalog.load(task_id)
        except BackendBenchFormatError:  # a malformed task is reported by collection, not here
            continue
        versions[task_id] = task_hash(task, catalog.mocks_dir)
    return versions
