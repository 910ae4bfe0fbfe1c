"""The versioned JSON report: built from result records, validated against schema.json."""

from __future__ import annotations

import json
import os
import tempfile
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from ..errors import HarnessError
from ..metrics import MetricOptions, run_metrics, summary_with_manifest_facts, task_metrics
from ..results import TaskResult

SCHEMA_VERSION = 1
REPORT_NAME = "report.json"


@lru_cache(maxsize=1)
def report_schema() -> dict[str, Any]:
    """The JSON Schema every report is validated against on write (and on read)."""
    text = resources.files("pytest_backendbench.report").joinpath("schema.json").read_text(encoding="utf-8")
    return dict(json.loads(text))


def build_report(results: list[TaskResult], manifest: dict[str, Any], options: MetricOptions) -> dict[str, Any]:
    """Assemble the report document: manifest, run summary, per-task results with metrics."""
    ordered = sorted(results, key=lambda r: (r.task, r.run_key.order()))
    tasks = []
    for result in ordered:
        entry = result.to_dict()
        entry["metrics"] = task_metrics(result, options)
        tasks.append(entry)
    candidates = {
        r.candidate: {"path": r.candidate_path, "content_hash": r.content_hash, "image": r.image, "image_digest": r.image_digest}
        for r in ordered
    }
    return {
        "schema_version": SCHEMA_VERSION,
        "manifest": {**manifest, "candidates": candidates},
        "summary": summary_with_manifest_facts(run_metrics(ordered, options), manifest, ordered),
        "tasks": tasks,
    }


def validate_report(document: dict[str, Any]) -> None:
    """Raise HarnessError naming the first schema violation (a bug of ours, never the candidate's)."""
    try:
        jsonschema.validate(document, report_schema())
    except jsonschema.ValidationError as err:
        where = "/".join(str(p) for p in err.absolute_path) or "(root)"
        raise HarnessError(f"report does not match its schema at {where}: {err.message}") from err


def write_json_atomic(path: Path, document: dict[str, Any]) -> None:
    """Write via a temp file and rename, so a reader never sees half a report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name, dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2, sort_keys=False)
        handle.write("\n")
    os.replace(tmp, path)


def write_report(report_dir: Path, document: dict[str, Any]) -> Path:
    """Validate and write report.json; return its path."""
    validate_report(document)
    path = report_dir / REPORT_NAME
    write_json_atomic(path, document)
    return path


def load_report(path: Path) -> dict[str, Any]:
    """Read and validate a report (a report dir or report.json)."""
    file = path / REPORT_NAME if path.is_dir() else path
    try:
        document = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError as err:
        raise HarnessError(f"{file}: no report there") from err
    except json.JSONDecodeError as err:
        raise HarnessError(f"{file}: not JSON (line {err.lineno}): {err.msg}") from err
    validate_report(document)
    return dict(document)
