"""Benchmark tasks: loading and validating ``benchmarks/<task>/`` (the visible contract).

A task is what a generator may read (spec.md, openapi.yaml, requirements) plus where its
hidden oracle lives. Every malformed input raises ``TaskFormatError`` naming file and field.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import warnings
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from .errors import TaskFormatError, load_yaml_file, parse_yaml
from .file_schemas import TASK_SCHEMA, validate_file

TASK_ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
TASK_KINDS = tuple(TASK_SCHEMA["properties"]["kind"]["enum"])
DATABASES = tuple(TASK_SCHEMA["properties"]["database"]["enum"])
CATEGORIES = (
    "api_surface",
    "authorization",
    "validation",
    "state",
    "side_effects",
    "workflow",
    "security",
)


@dataclass(frozen=True)
class HealthCheck:
    """How to tell the service is ready: an HTTP path answering below 500, or an open port."""

    path: str | None = "/health"
    timeout_s: float = 60.0


@dataclass(frozen=True)
class VisibleTask:
    """Everything a generator may read. Built from benchmarks/ only, never from oracles/."""

    id: str
    title: str
    kind: str
    spec_path: Path
    openapi_path: Path | None
    requirements: dict[str, str]
    assets: tuple[Path, ...]
    verbatim: bool = False  # spec.md is the whole prompt (an imported benchmark's own), to be sent as is
    code_files: tuple[str, ...] = ()  # an imported task's one code file (BaxBench: app.py); () = the answer names its files

    @property
    def spec(self) -> str:
        """The task's prose specification."""
        return self.spec_path.read_text(encoding="utf-8")

    @property
    def openapi(self) -> str | None:
        """The OpenAPI contract as text, if the task has one."""
        return self.openapi_path.read_text(encoding="utf-8") if self.openapi_path else None


@dataclass(frozen=True)
class Task:
    """One benchmark task: the visible contract and where its hidden oracle lives."""

    id: str
    title: str
    kind: str
    domains: tuple[str, ...]
    port: int
    health: HealthCheck
    database: str
    mocks: tuple[str, ...]
    env: dict[str, str]
    requirements: dict[str, str]
    benchmark_dir: Path
    oracle_dir: Path
    primary_route: str = "/"
    extra: dict[str, Any] = field(default_factory=dict)
    isolation: str = "task"  # "item": every oracle item meets a freshly started container
    dockerfile: str | None = None  # the task supplies the image: a candidate is only its code files
    build_files: tuple[str, ...] = ()  # more files of benchmarks/<task>/ in the build context
    memory: str | None = None  # the service's memory limit (docker syntax), overriding the session's
    openapi_strict: bool = True  # False: an invalid openapi.yaml loads with a warning (imported benchmarks)
    prompt: str = "contract"  # "verbatim": spec.md is the whole prompt; requirement ids are oracle bookkeeping

    @property
    def task_yaml(self) -> Path:
        """The file this task was loaded from (collection errors point here)."""
        return self.benchmark_dir / "task.yaml"

    @property
    def spec_path(self) -> Path:
        """The task's spec.md."""
        return self.benchmark_dir / "spec.md"

    @property
    def openapi_path(self) -> Path | None:
        """The task's OpenAPI contract, when it has one (frontend tasks may not)."""
        path = self.benchmark_dir / "openapi.yaml"
        return path if path.is_file() else None

    @property
    def reference_dir(self) -> Path:
        """The reference candidate that must pass the whole oracle."""
        return self.oracle_dir / "reference"

    @cached_property
    def visible(self) -> VisibleTask:
        """The generator's view of the task: nothing below oracles/ is reachable from it.

        A task-supplied Dockerfile is how the harness runs candidates, not part of the contract
        (BaxBench never shows its images to a model): it stays hidden; its ``build_files`` (the
        framework's starting files, e.g. requirements.txt) are visible. A ``prompt: verbatim``
        task shows no requirement list: its ids only tie oracle items to task.yaml.
        """
        hidden = {self.benchmark_dir / "task.yaml", *([self.benchmark_dir / self.dockerfile] if self.dockerfile else [])}
        assets = tuple(sorted(p for p in self.benchmark_dir.rglob("*") if p.is_file() and p not in hidden))
        verbatim = self.prompt == "verbatim"
        imported = self.extra.get("baxbench")  # the importer records the framework's code file(s) there
        code_files = imported.get("code_files") if isinstance(imported, dict) else None
        return VisibleTask(
            id=self.id,
            title=self.title,
            kind=self.kind,
            spec_path=self.spec_path,
            openapi_path=self.openapi_path,
            requirements={} if verbatim else dict(self.requirements),
            assets=assets,
            verbatim=verbatim,
            code_files=tuple(str(f) for f in code_files) if isinstance(code_files, list) else (),
        )


ISOLATIONS = tuple(TASK_SCHEMA["properties"]["isolation"]["enum"])
PROMPTS = tuple(TASK_SCHEMA["properties"]["prompt"]["enum"])
IMAGE_KEYS = ("isolation", "dockerfile", "build_files", "memory")
MEMORY_PATTERN = re.compile(r"^[0-9]+(\.[0-9]+)?[bkmgBKMG]?$")


def _task_file(benchmark_dir: Path, path: Path, name: object, key: str) -> str:
    """A file named in task.yaml: relative, inside the task's folder, and present."""
    if not isinstance(name, str) or not name or name.startswith("/") or ".." in Path(name).parts:
        raise TaskFormatError(path, f"got {name!r}; expected a file name relative to {benchmark_dir}", field=key)
    if not (benchmark_dir / name).is_file():
        raise TaskFormatError(path, f"{name!r} does not exist in {benchmark_dir}", field=key)
    return name


def _image_keys(data: dict[str, Any], benchmark_dir: Path, path: Path) -> dict[str, Any]:
    """``isolation``, ``dockerfile``, ``build_files`` and ``memory``: how the task's service is run."""
    isolation = data.get("isolation", "task")
    dockerfile = data.get("dockerfile")
    if dockerfile is not None:
        dockerfile = _task_file(benchmark_dir, path, dockerfile, "dockerfile")
    build_files = data.get("build_files", []) or []
    if build_files and dockerfile is None:
        raise TaskFormatError(path, "build_files needs dockerfile: they are copied next to the task's Dockerfile", field="build_files")
    files = tuple(_task_file(benchmark_dir, path, name, "build_files") for name in build_files)
    memory = data.get("memory")
    if memory is not None and not MEMORY_PATTERN.match(str(memory)):  # the schema's pattern covers strings; 1.5 as a number too
        raise TaskFormatError(path, f"got {memory!r}; expected a memory size in docker syntax, e.g. 512m or 1g", field="memory")
    return {"isolation": isolation, "dockerfile": dockerfile, "build_files": files, "memory": None if memory is None else str(memory)}


def load_task(benchmark_dir: Path, oracle_root: Path) -> Task:
    """Load and validate ``benchmark_dir/task.yaml``; raise ``TaskFormatError`` on any defect."""
    path = benchmark_dir / "task.yaml"
    if not path.is_file():
        raise TaskFormatError(path, "file not found; every benchmarks/<task>/ folder needs a task.yaml")
    data = validate_file(load_yaml_file(path, TaskFormatError), TASK_SCHEMA, path, TaskFormatError)  # types, enums, ranges

    task_id = data["id"]
    if task_id != benchmark_dir.name:
        raise TaskFormatError(path, f"{task_id!r} differs from the folder name {benchmark_dir.name!r}", field="id")
    if not TASK_ID_PATTERN.match(task_id):
        raise TaskFormatError(path, f"{task_id!r}: use lower-case letters, digits, '-' and '_'", field="id")
    title = data["title"]
    kind = data.get("kind", "backend")
    port = data.get("port", 8000)
    health_raw = data.get("health", {}) or {}
    health_path = health_raw.get("path")
    timeout = health_raw.get("timeout_s", 60)
    database = data.get("database", "none")
    mocks = data.get("mocks", []) or []
    env = data.get("env", {}) or {}
    domains = data.get("domains", []) or []
    requirements = data.get("requirements", {}) or {}
    primary_route = data.get("primary_route", "/")

    image_keys = _image_keys(data, benchmark_dir, path)

    spec = benchmark_dir / "spec.md"
    if not spec.is_file():
        raise TaskFormatError(spec, "file not found; every task needs a spec.md")
    openapi_strict = data.get("openapi_strict", True)
    prompt = data.get("prompt", "contract")
    known = {"id", "title", "kind", "domains", "port", "health", "database", "mocks", "env", "requirements", "primary_route", "openapi_strict", "prompt", *IMAGE_KEYS}
    task = Task(
        id=task_id,
        title=title,
        kind=kind,
        domains=tuple(str(d) for d in domains),
        port=port,
        health=HealthCheck(path=health_path if "health" in data else "/health", timeout_s=float(timeout)),
        database=database,
        mocks=tuple(mocks),
        env={str(k): str(v) for k, v in env.items()},
        requirements=dict(requirements),
        benchmark_dir=benchmark_dir,
        oracle_dir=oracle_root / task_id,
        primary_route=primary_route,
        extra={k: v for k, v in data.items() if k not in known},
        openapi_strict=openapi_strict,
        prompt=prompt,
        **image_keys,
    )
    if task.kind == "backend" and task.openapi_path is None:
        raise TaskFormatError(benchmark_dir / "openapi.yaml", "file not found; a backend task needs its OpenAPI contract")
    return task


class LenientContractWarning(UserWarning):
    """A task with ``openapi_strict: false`` has an openapi.yaml that fails strict validation."""


LENIENT_KEY = "x-backendbench-invalid"
"""Set on a contract that failed validation and was loaded anyway: nothing checks responses against it."""


@functools.cache
def _validator_version() -> str:
    from importlib.metadata import version

    return version("openapi-spec-validator")


class ValidContracts:
    """OpenAPI documents already found valid, by digest, in a folder every process shares.

    Validating a document against the OpenAPI metaschema costs about 0.15 s of CPU; every xdist
    worker of every session loads every selected task's contract, so without this the main job
    validated each of its 17 contracts three times per run (controller and two workers) and
    ``backendbench validate`` once per mutant. Only a document that passed strict validation is
    remembered, under the digest of its bytes and the validator's version: an edited file, or
    another validator, is validated again. A folder that cannot be written is not an error.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @staticmethod
    def digest(text: str) -> str:
        """The key of one document's text under the installed validator."""
        return hashlib.sha256(f"openapi-spec-validator {_validator_version()}\n{text}".encode()).hexdigest()

    def holds(self, digest: str) -> bool:
        """Whether the document with this digest was found valid before."""
        return (self.folder / digest).is_file()

    def add(self, digest: str) -> None:
        """Remember a document found valid (written whole or not at all)."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            partial = self.folder / f".{digest}.{os.getpid()}"
            partial.write_text("valid\n")
            partial.replace(self.folder / digest)
        except OSError:
            pass


def load_contract(task: Task, valid: ValidContracts | None = None) -> dict[str, Any] | None:
    """Parse and validate the task's OpenAPI contract; raise ``TaskFormatError`` naming the field.

    ``valid``: documents found valid before, whose validation is skipped (and where a newly
    validated one is remembered).
    """
    path = task.openapi_path
    if path is None:
        return None
    text = path.read_text(encoding="utf-8")
    spec = parse_yaml(text, path, TaskFormatError)
    if not isinstance(spec, dict):
        raise TaskFormatError(path, "expected an OpenAPI document (a mapping with openapi, info, paths)")
    digest = ValidContracts.digest(text)
    if valid is not None and valid.holds(digest):
        return spec
    from openapi_spec_validator import validate
    from openapi_spec_validator.validation.exceptions import OpenAPIValidationError, ValidatorDetectError

    try:
        validate(spec)
    except ValidatorDetectError as err:
        raise TaskFormatError(path, "missing or unknown 'openapi' version; expected 3.0.x or 3.1.x", field="openapi") from err
    except OpenAPIValidationError as err:
        field = "/".join(str(p) for p in getattr(err, "absolute_path", [])) or None
        if not task.openapi_strict:
            where = f" at {field}" if field else ""
            warnings.warn(LenientContractWarning(f"{path}: invalid OpenAPI document{where} ({err.message}); loaded anyway (openapi_strict: false), responses are not checked against it"), stacklevel=2)
            return {**spec, LENIENT_KEY: True}
        raise TaskFormatError(path, f"invalid OpenAPI document: {err.message}", field=field) from err
    if valid is not None:
        valid.add(digest)
    return spec


class TaskCatalog:
    """The tasks below a bench root (``benchmarks/`` visible, ``oracles/`` hidden)."""

    def __init__(self, bench_root: Path) -> None:
        self.bench_root = bench_root
        self.benchmarks_dir = bench_root / "benchmarks"
        self.oracles_dir = bench_root / "oracles"
        self._task_of_path: dict[Path, str | None] = {}
        self.mocks_dir = bench_root / "mocks"

    def task_ids(self) -> list[str]:
        """Ids of every folder below benchmarks/ holding a task.yaml, sorted (it is checked on load)."""
        if not self.benchmarks_dir.is_dir():
            return []
        return sorted(p.name for p in self.benchmarks_dir.iterdir() if (p / "task.yaml").is_file() and not p.name.startswith("."))

    def folders_without_task(self) -> list[str]:
        """Folders below benchmarks/ that are not tasks (no task.yaml): reported, not evaluated."""
        if not self.benchmarks_dir.is_dir():
            return []
        return sorted(
            p.name for p in self.benchmarks_dir.iterdir() if p.is_dir() and not p.name.startswith(".") and not (p / "task.yaml").is_file()
        )

    def load(self, task_id: str) -> Task:
        """Load one task by id; a clear error when it does not exist."""
        folder = self.benchmarks_dir / task_id
        if not folder.is_dir():
            known = ", ".join(self.task_ids()) or "none"
            raise TaskFormatError(folder, f"no such task; tasks here: {known}")
        return load_task(folder, self.oracles_dir)

    def task_of_path(self, path: Path) -> str | None:
        """The task id owning a file under oracles/<task>/ or benchmarks/<task>/, else None.

        Asked for every collected item and parametrisation (three times per item), so each path
        is resolved once: thousands of items share a few hundred files.
        """
        if path not in self._task_of_path:
            self._task_of_path[path] = self._owning_task(path.resolve())
        return self._task_of_path[path]

    @cached_property
    def _resolved_roots(self) -> tuple[Path, Path]:
        return self.oracles_dir.resolve(), self.benchmarks_dir.resolve()

    def _owning_task(self, resolved: Path) -> str | None:
        for root in self._resolved_roots:
            try:
                rel = resolved.relative_to(root)
            except ValueError:
                continue
            if rel.parts:
                return rel.parts[0]
        return None
