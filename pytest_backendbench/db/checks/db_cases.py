"""Database cases as pytest items: ``oracles/<task>/db/*.yaml``, one snapshot item per case.

After a task's http and bdd items (kind ``snapshot`` sorts last), the first case of a task
dumps the candidate's database (``snapshot.take_snapshot``: every table's columns, keys,
row count and first rows) to ``db-snapshot.json`` in the task's artifact folder; each case
validates that document with its JSON Schema. A case file::

    description: Every registration is stored with its event     # required
    requirement: R4            # or [R4, R5]; task.yaml ids       (required)
    category: state            # default state
    tier: base                 # default base
    weight: 1                  # optional
    schema:                    # JSON Schema (2020-12 unless $schema says otherwise)
      type: object
      required: [tables]
      ...

A malformed case file is a collection error of that file naming the field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ...errors import CandidateFailure, HarnessError, TaskFormatError, load_yaml_file
from ...items import BenchItem, CaseFile, ItemKind
from ...outcomes import describe_failure
from ...runkey import RunKey
from ...taskrun import TaskRun, artifact_dir_for, registry_of, session_registry
from ...tasks import CATEGORIES, Task
from ..providers.database import database_of

DEFAULT_CATEGORY = "state"
DEFAULT_TIER = "base"
SNAPSHOT_FILE = "db-snapshot.json"
MAX_ERRORS = 10
SNAPSHOTS_KEY = pytest.StashKey[dict[RunKey, dict[str, Any]]]()
"""Snapshots taken this session, by run: one per run, shared by its cases."""


class DbCaseFailed(CandidateFailure):
    """The candidate's database does not satisfy a case's schema."""


def collect_db_case(file_path: Path, parent: pytest.Collector) -> pytest.File | None:
    """``DbCaseFile`` for ``oracles/<task>/db/*.yaml`` of a selected task, else None.

    Called from ``pytest_collect_file``; files elsewhere are left to other collectors.
    """
    registry = session_registry(parent.config)
    if registry is None or file_path.suffix not in (".yaml", ".yml") or file_path.parent.name != "db":
        return None
    oracles = registry.catalog.oracles_dir
    if not file_path.is_relative_to(oracles) or len(file_path.relative_to(oracles).parts) != 3:
        return None
    return DbCaseFile.from_parent(parent, path=file_path)  # type: ignore[no-any-return]


class DbCase:
    """One parsed case file."""

    def __init__(self, path: Path, task: Task) -> None:
        self.path = path
        data = load_yaml_file(path, TaskFormatError)
        if not isinstance(data, dict):
            raise TaskFormatError(path, "expected a mapping with description, requirement, schema")
        description = data.get("description")
        if not isinstance(description, str) or not description.strip():
            raise TaskFormatError(path, "missing; expected one line saying what the database must show", field="description")
        self.description = description.strip()
        requirement = data.get("requirement")
        requirements = [requirement] if isinstance(requirement, str) else requirement
        if not isinstance(requirements, list) or not requirements or not all(isinstance(r, str) for r in requirements):
            raise TaskFormatError(path, f"got {requirement!r}; expected a requirement id of task.yaml or a list of them", field="requirement")
        unknown = [r for r in requirements if task.requirements and r not in task.requirements]
        if unknown:
            raise TaskFormatError(path, f"{', '.join(unknown)} not in {task.task_yaml} (known: {', '.join(sorted(task.requirements))})", field="requirement")
        self.requirements: list[str] = requirements
        self.category = data.get("category", DEFAULT_CATEGORY)
        if self.category not in CATEGORIES:
            raise TaskFormatError(path, f"got {self.category!r}; expected one of {', '.join(CATEGORIES)}", field="category")
        self.tier = str(data.get("tier", DEFAULT_TIER))
        weight = data.get("weight")
        if weight is not None and (isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight < 0):
            raise TaskFormatError(path, f"got {weight!r}; expected a non-negative number", field="weight")
        self.weight: float | None = float(weight) if weight is not None else None
        schema = data.get("schema")
        if not isinstance(schema, dict):
            raise TaskFormatError(path, "missing; expected a JSON Schema (a mapping) over the database snapshot", field="schema")
        from jsonschema.exceptions import SchemaError
        from jsonschema.validators import Draft202012Validator, validator_for

        self.validator_class = validator_for(schema, default=Draft202012Validator)
        try:
            self.validator_class.check_schema(schema)
        except SchemaError as err:
            where = "/".join(str(p) for p in err.absolute_path) or "(root)"
            raise TaskFormatError(path, f"not a valid JSON Schema at {where}: {err.message}", field="schema") from err
        self.schema = schema
        self._check_refs(path)

    def _check_refs(self, path: Path) -> None:
        """Every ``$ref`` must point inside the case's own schema (no network, no other files)."""
        from referencing import Registry
        from referencing.exceptions import Unresolvable
        from referencing.jsonschema import DRAFT202012, specification_with

        specification = specification_with(self.validator_class.META_SCHEMA.get("$schema", ""), default=DRAFT202012)
        resolver = Registry().resolver_with_root(specification.create_resource(self.schema))
        for ref in _refs(self.schema):
            if not ref.startswith("#"):
                raise TaskFormatError(path, f"$ref {ref!r}: only references inside the case's schema (#/...) are supported", field="schema")
            try:
                resolver.lookup(ref)
            except Unresolvable as err:
                raise TaskFormatError(path, f"$ref {ref!r} points nowhere in the schema", field="schema") from err

    def markers(self) -> list[pytest.MarkDecorator]:
        """The markers the metrics read."""
        markers = [pytest.mark.requirement(*self.requirements), pytest.mark.category(self.category), pytest.mark.tier(self.tier)]
        if self.weight is not None:
            markers.append(pytest.mark.weight(self.weight))
        return markers

    def problems(self, snapshot: dict[str, Any]) -> list[str]:
        """Where the snapshot breaks the schema: ``$.tables.x.row_count: 0 is less than ...``."""
        validator = self.validator_class(self.schema)
        errors = sorted(validator.iter_errors(snapshot), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
        lines = []
        for error in errors[:MAX_ERRORS]:
            path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
            why = error.schema.get("description") if isinstance(error.schema, dict) else None
            lines.append(f"at {path}: {error.message}" + (f" ({why})" if why else ""))
        if len(errors) > MAX_ERRORS:
            lines.append(f"... and {len(errors) - MAX_ERRORS} more")
        return lines


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


class DbCaseFile(CaseFile):
    """``oracles/<task>/db/<case>.yaml``: one DbCaseItem per candidate sample."""

    def collect(self) -> Iterator[DbCaseItem]:
        registry = registry_of(self.config)
        task = self.case_task(registry.task)
        if task.database != "postgres":
            raise self.CollectError(f"{self.path}: database cases need `database: postgres` in {task.task_yaml} (it says {task.database!r})")
        try:
            case = DbCase(self.path, task)
        except TaskFormatError as err:
            raise self.CollectError(str(err)) from err
        for run_key in registry.run_keys(task.id):
            yield DbCaseItem.from_parent(self, name=self.run_item_name(self.path.stem, run_key), case=case, run_key=run_key)


class DbCaseItem(BenchItem):
    """One database case of one candidate, judged on the task's end-of-run snapshot."""

    def __init__(self, *, case: DbCase, run_key: RunKey, **kwargs: Any) -> None:
        super().__init__(kind=ItemKind.SNAPSHOT, run_key=run_key, **kwargs)
        self.case = case
        for marker in case.markers():
            self.add_marker(marker)

    def runtest(self) -> None:
        __tracebackhide__ = True
        run = registry_of(self.config).for_item(self)
        if run is None:
            raise HarnessError(f"{self.nodeid} does not belong to a benchmark task")
        snapshot, path = snapshot_for(self, run)
        if not snapshot["tables"]:
            raise DbCaseFailed(
                f"database case '{self.path.stem}' failed: the database has no tables",
                f"the candidate created no table in its database {snapshot['database']!r}, so this case cannot hold: "
                f"{self.case.description}.\nThe service must keep its data in the PostgreSQL database given in DATABASE_URL.\n"
                f"snapshot: {path}",
            )
        problems = self.case.problems(snapshot)
        if problems:
            detail = "\n".join(f"  {line}" for line in problems)
            raise DbCaseFailed(f"database case '{self.path.stem}' failed: {self.case.description}", f"{detail}\nsnapshot: {path}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        exc = excinfo.value
        if isinstance(exc, (CandidateFailure, HarnessError)):
            return describe_failure(exc)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"db case: {self.case.description}"


def snapshot_for(item: pytest.Item, run: TaskRun) -> tuple[dict[str, Any], Path]:
    """The task's snapshot (taken by its first case, then reused) and where it was written."""
    key = run.run_key  # the item's RUN_KEY: the run is the item's own
    snapshots = item.config.stash.setdefault(SNAPSHOTS_KEY, {})
    path = artifact_dir_for(item) / SNAPSHOT_FILE
    if key not in snapshots:
        database = database_of(run.ensure_started())
        if database is None:
            raise HarnessError(f"the {run.task.id!r} service was started without its database (runtime bug)")
        try:
            snapshot = database.snapshot()
        except HarnessError:
            raise
        except Exception as err:  # psycopg errors: our server, not the candidate
            raise HarnessError(f"could not take the database snapshot: {err}") from err
        path.write_text(json.dumps(snapshot, indent=2, sort_keys=False) + "\n", encoding="utf-8")
        snapshots[key] = snapshot
    return snapshots[key], path
