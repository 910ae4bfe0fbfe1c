"""The failure vocabulary: who is at fault and in which phase.

Failures that are the candidate's fault subclass ``AssertionError`` (so pytest reports them
as failed, schemathesis-style); failures that are the harness's or the machine's fault
subclass ``HarnessError`` and are reported as errors, never counted against the candidate.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Any

import yaml


class Phase(str, Enum):
    """Where in a task's life a failure happened (self-verify prints this)."""

    MISSING = "missing"
    BUILD = "build"
    STARTUP = "startup"
    TESTS = "tests"


class BackendBenchFormatError(Exception):
    """Bad input in a task, contract or candidate: names the file, the field and the fix."""

    def __init__(self, path: object, message: str, field: str | None = None) -> None:
        self.path = str(path)
        self.field = field
        self.message = message
        where = f"{self.path}: {field}: " if field else f"{self.path}: "
        super().__init__(where + message)


class TaskFormatError(BackendBenchFormatError):
    """A malformed task.yaml, spec.md, openapi.yaml or oracle file."""


class CandidateFormatError(BackendBenchFormatError):
    """A malformed candidate directory or candidate.yaml."""


class CandidateFailure(AssertionError):
    """The candidate's fault: a wrong answer, a build that fails, a boot that never ends."""

    phase: Phase = Phase.TESTS

    def __init__(self, title: str, detail: str = "") -> None:
        self.title = title
        self.detail = detail
        super().__init__(f"{title}\n{detail}".rstrip())


class CandidateMissing(CandidateFailure):
    """No candidate directory exists for a selected task."""

    phase = Phase.MISSING


class BuildFailure(CandidateFailure):
    """The candidate's own build (Dockerfile, requirements.txt) failed or timed out."""

    phase = Phase.BUILD


class BootFailure(CandidateFailure):
    """The candidate built but did not become healthy, or died before the items ran."""

    phase = Phase.STARTUP


class ServiceCrashed(CandidateFailure):
    """The candidate was healthy once and then exited or was killed mid-run."""

    phase = Phase.TESTS


class HarnessError(Exception):
    """Our fault or the machine's (engine unreachable, disk full, a bug of ours): reported apart."""


class OracleError(HarnessError):
    """The hidden oracle itself is broken (undefined or ambiguous step, a steps module that does
    not import): reported as an error, never counted against the candidate."""


class BrowserError(HarnessError):
    """The shared browser is missing, does not start, or died: the machine's fault, not the candidate's."""


SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader where PyYAML was built with it: the same documents about seven times
faster than the pure-Python one (every process parses every selected task's YAML at collection)."""


def parse_yaml(text: str, path: object, error_type: type[BackendBenchFormatError]) -> Any:
    """Parse the YAML ``text`` of ``path``; a syntax error becomes ``error_type`` naming the line and column."""
    try:
        return yaml.load(text, Loader=SAFE_LOADER)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise error_type(path, f"not valid YAML{where}: {getattr(err, 'problem', err)}") from err


def load_yaml_file(path: object, error_type: type[BackendBenchFormatError]) -> object:
    """Parse a YAML file; a syntax error becomes ``error_type`` naming the line and column."""
    return parse_yaml(Path(str(path)).read_text(encoding="utf-8"), path, error_type)
