"""JSON Schemas of the YAML files people write by hand: ``task.yaml``, ``candidate.yaml``, ``mock.yaml``.

Validated with jsonschema (Draft 2020-12). Each property names what it expects in words
(``x-expected``), so a defect reads as before the schemas existed: the file, the field, what
was found and what is expected (``task.yaml: port: got 'http'; expected a TCP port number
(1-65535)``). What a schema cannot say (the id equals the folder name, a named file exists,
spec.md is there) stays in tasks.py; ``python -m pytest_backendbench.file_schemas task`` prints
a schema for editors.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .errors import BackendBenchFormatError

_TEXT = {"type": "string"}
_FILE = {"type": "string", "minLength": 1, "x-expected": "a file name relative to the task's folder"}
_NUMBER = {"type": "number", "not": {"type": "boolean"}}

TASK_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "benchmarks/<task>/task.yaml",
    "type": "object",
    "x-expected": "a mapping with id, title, kind, port, requirements",
    "required": ["id", "title"],
    "properties": {
        "id": {**_TEXT, "x-expected": "the task id, equal to the folder name"},
        "title": {**_TEXT, "x-expected": "a human-readable title"},
        "kind": {"enum": ["backend", "frontend", "fullstack"], "x-expected": "one of backend, frontend, fullstack"},
        "port": {"type": "integer", "not": {"type": "boolean"}, "minimum": 1, "maximum": 65535, "x-expected": "a TCP port number (1-65535)"},
        "health": {
            "type": ["object", "null"],
            "x-expected": "a mapping {path: /health, timeout_s: 60}",
            "properties": {
                "path": {"type": ["string", "null"], "pattern": "^/", "x-expected": "a path starting with '/'"},
                "timeout_s": {**_NUMBER, "exclusiveMinimum": 0, "x-expected": "a positive number of seconds"},
            },
        },
        "database": {"enum": ["none", "postgres"], "x-expected": "one of none, postgres"},
        "mocks": {"type": ["array", "null"], "items": _TEXT, "x-expected": "a list of mock names (folders under mocks/)"},
        "env": {"type": ["object", "null"], "x-expected": "a mapping of environment variables"},
        "domains": {"type": ["array", "null"], "x-expected": "a list of domain names"},
        "requirements": {
            "type": ["object", "null"],
            "additionalProperties": _TEXT,
            "x-expected": 'a mapping of requirement id to its text, e.g. R1: "..."',
        },
        "primary_route": {**_TEXT, "pattern": "^/", "x-expected": "a path starting with '/'"},
        "openapi_strict": {
            "type": "boolean",
            "x-expected": "true (refuse an invalid openapi.yaml) or false (load it with a warning)",
        },
        "prompt": {
            "enum": ["contract", "verbatim"],
            "x-expected": "contract (the harness frames spec.md, openapi.yaml and the requirements) or verbatim (spec.md is the whole prompt)",
        },
        "isolation": {"enum": ["task", "item"], "x-expected": "task (one service per run) or item (a fresh one per item)"},
        "dockerfile": _FILE,
        "build_files": {
            "type": ["array", "null"],
            "items": _FILE,
            "x-expected": "a list of files of the task's folder copied into the build context",
        },
        "memory": {
            "type": ["string", "integer"],
            "not": {"type": "boolean"},
            "pattern": "^[0-9]+(\\.[0-9]+)?[bkmgBKMG]?$",
            "x-expected": "a memory size in docker syntax, e.g. 512m or 1g",
        },
    },
    # other keys (e2edev hints, importer notes) are the task's extras, kept as they are
}
"""task.yaml (INTERFACES.md §5 keys included: isolation, dockerfile, build_files, memory)."""

CANDIDATE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "<candidate>/candidate.yaml",
    "type": ["object", "null"],
    "x-expected": "a mapping with task, run, generation",
    "properties": {
        "task": {**_TEXT, "x-expected": "a string"},
        "run": {**_TEXT, "x-expected": "a string"},
        "generation": {
            "type": ["object", "null"],
            "x-expected": "a mapping of model, tokens_in, tokens_out, cost_usd, seconds",
            "properties": {
                key: {"type": ["number", "null"], "not": {"type": "boolean"}, "minimum": 0, "x-expected": "a non-negative number"}
                for key in ("tokens_in", "tokens_out", "cost_usd", "seconds")
            },
        },
    },
    "additionalProperties": False,
}
"""candidate.yaml: which task a candidate is for, how to run it, what its generation cost."""

MOCK_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "mocks/<mock>/mock.yaml",
    "type": ["object", "null"],
    "x-expected": "a mapping with port, run, health",
    "required": ["port", "run"],
    "properties": {
        "port": {"type": "integer", "x-expected": "the port the mock listens on"},
        "run": {**_TEXT, "x-expected": "the command that starts the mock (it reads PORT)"},
        "health": {**_TEXT, "x-expected": "the mock's health path"},
    },
}
"""mock.yaml: how the harness starts a task's mock service."""

SCHEMAS = {"task": TASK_SCHEMA, "candidate": CANDIDATE_SCHEMA, "mock": MOCK_SCHEMA}


def _field(path: Any) -> str | None:
    return ".".join(str(part) for part in path) or None


def validate_file(data: Any, schema: dict[str, Any], file: Path, error: type[BackendBenchFormatError]) -> dict[str, Any]:
    """``data`` as a mapping ({} for an empty file) if the schema holds, else ``error(file, message,
    field=...)`` for its first defect in field order."""
    from jsonschema import Draft202012Validator

    problems = list(Draft202012Validator(schema).iter_errors(data))
    if not problems:
        return dict(data or {})
    order = list(schema.get("properties", {}))

    def position(problem: Any) -> tuple[int, int]:
        where = list(problem.absolute_path) or ([problem.message.split("'")[1]] if problem.validator == "required" else [])
        top = str(where[0]) if where else ""
        return (order.index(top) if top in order else len(order), len(where))

    problem = min(problems, key=position)
    where = list(problem.absolute_path)
    if problem.validator == "additionalProperties" and not where:
        allowed = ", ".join(order)
        unknown = sorted(set(data) - set(order)) if isinstance(data, dict) else []
        raise error(file, f"unknown keys {unknown}; allowed: {allowed}")
    if problem.validator == "required":
        name = problem.message.split("'")[1]
        expected = schema["properties"][name].get("x-expected", "a value")
        raise error(file, f"missing; expected {expected}", field=_field([*where, name]))
    expected = problem.schema.get("x-expected") if isinstance(problem.schema, dict) else None
    if expected is None:  # a keyword inside a property (``not``, an item): the property's words
        expected = _expected_at(schema, where)
    if not where:
        raise error(file, f"expected {expected}")
    raise error(file, f"got {problem.instance!r}; expected {expected}", field=_field(where))


def _expected_at(schema: dict[str, Any], where: list[Any]) -> str:
    """The ``x-expected`` words of the innermost schema along ``where`` that has them."""
    found = str(schema.get("x-expected", "a valid value"))
    node: Any = schema
    for part in where:
        if isinstance(part, int):
            node = node.get("items", {}) if isinstance(node, dict) else {}
        else:
            properties = node.get("properties", {}) if isinstance(node, dict) else {}
            node = properties.get(part) or (node.get("additionalProperties") if isinstance(node, dict) else None) or {}
        if isinstance(node, dict) and "x-expected" in node:
            found = str(node["x-expected"])
    return found


def main(argv: list[str] | None = None) -> None:
    """Print a schema as JSON (``task`` or ``candidate``), e.g. for an editor's YAML support."""
    args = sys.argv[1:] if argv is None else argv
    name = args[0] if args else "task"
    if name not in SCHEMAS:
        raise SystemExit(f"usage: python -m pytest_backendbench.file_schemas {{{'|'.join(SCHEMAS)}}}")
    print(json.dumps(SCHEMAS[name], indent=2))


if __name__ == "__main__":
    main()
