"""Converting WebGen-Bench (github:mnluzimu/WebGen-Bench) into our task format.

WebGen-Bench publishes ``data/test.jsonl``: 101 website instructions, each with its UI test
cases (``ui_instruct``: ``{task, expected_result, task_category}``, 647 in all), which its GUI
agent (WebVoyager, ``webvoyager/run.py``) carries out on the generated site and answers
YES / PARTIAL / NO. The import writes, per instruction:

- ``benchmarks/webgen-NNNNNN/task.yaml`` (kind frontend; a requirement per test-case category
  present — ``FT`` Functional Testing, ``DDT`` Data Display Testing, ``DVT`` Design Validation
  Testing — which is how compute_acc.py breaks accuracy down; ``webgen_bench:`` the source id,
  category and application type) and ``spec.md`` (the instruction verbatim: WebGen-Bench's
  generation prompt is the instruction itself);
- ``oracles/webgen-NNNNNN/judge/cases.yaml``: every UI test case as a frontend judge case
  (id ``UI-<index>``, WebGen-Bench's 0-based index in ``ui_instruct``), run by the GUI judge
  (judges/gui_judge.py) with WebGen-Bench's own prompt text when ``--bench-judge`` names a
  model. There is no reference candidate: WebGen-Bench has none.

The accuracy (YES + 0.5 PARTIAL over all cases) and the YES / PARTIAL / NO rates are reported
as compute_acc.py computes them (scores/webgen_bench.py).
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import BackendBenchFormatError

DATA_FILE = Path("data") / "test.jsonl"
TASK_PREFIX = "webgen-"
CASE_CATEGORIES = {"Functional Testing": "FT", "Data Display Testing": "DDT", "Design Validation Testing": "DVT"}
"""WebGen-Bench's test-case primary categories (compute_acc.py's INST_PRIMARY_CATEGORIES) and their requirement ids."""
INSTRUCTION_CATEGORIES = ("Content Presentation", "User Interaction", "Data Management")
"""compute_acc.py's PRIMARY_CATEGORIES (of the instruction)."""
HEALTH_TIMEOUT_S = 60
TITLE_WORDS = 12


class WebGenBenchFormatError(BackendBenchFormatError):
    """The WebGen-Bench source is not laid out as published (names the file, the line and the field)."""


@dataclass
class ImportedWebGenTask:
    """One WebGen-Bench instruction, written as one task."""

    id: str
    source_id: str
    cases: int
    benchmark_dir: Path
    oracle_dir: Path


@dataclass
class WebGenImportSummary:
    """What an import wrote, and what it could not convert."""

    source: Path
    out: Path
    tasks: list[ImportedWebGenTask] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def cases(self) -> int:
        """UI test cases written, over all tasks."""
        return sum(t.cases for t in self.tasks)

    def __str__(self) -> str:
        lines = [f"imported {len(self.tasks)} WebGen-Bench instruction(s) from {self.source} into {self.out}: {self.cases} UI test cases (frontend judge cases)"]
        if self.problems:
            lines.append(f"{len(self.problems)} problem(s):")
            lines += [f"  {p}" for p in self.problems]
        lines.append("run them with a vision judge: pytest --candidate=DIR --bench-judge=openai:<model> (docs/judges.md)")
        return "\n".join(lines)


def find_data_file(source: Path) -> Path:
    """``data/test.jsonl`` of a WebGen-Bench checkout (or the file itself)."""
    source = Path(source)
    if source.is_file():
        return source
    path = source / DATA_FILE
    if not path.is_file():
        raise WebGenBenchFormatError(path, "file not found; give a checkout of github:mnluzimu/WebGen-Bench (e.g. from `git archive`) or its data/test.jsonl")
    return path


def task_id_for(source_id: str) -> str:
    """``000001`` -> ``webgen-000001``."""
    return TASK_PREFIX + re.sub(r"[^A-Za-z0-9_.-]+", "-", source_id).strip("-").lower()


def read_instructions(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """The JSON lines of test.jsonl with their line numbers (blank lines skipped); a line that is not a
    JSON object is an error naming it."""
    entries: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as err:
            raise WebGenBenchFormatError(path, f"line {number} is not valid JSON: {err}") from err
        if not isinstance(entry, dict):
            raise WebGenBenchFormatError(path, f"line {number} is a JSON {type(entry).__name__}; expected an object with id, instruction and ui_instruct")
        entries.append((number, entry))
    if not entries:
        raise WebGenBenchFormatError(path, "holds no instruction")
    return entries


def import_webgen_bench(source: Path, out: Path) -> WebGenImportSummary:
    """Convert every instruction of WebGen-Bench's test.jsonl into ``out/benchmarks`` and ``out/oracles``.

    Re-importing replaces the tasks it writes and leaves every other task in ``out`` alone.
    """
    path = find_data_file(source)
    summary = WebGenImportSummary(source=Path(source), out=Path(out))
    for number, entry in read_instructions(path):
        where = f"line {number} ({entry.get('id', '?')})"
        try:
            summary.tasks.append(import_instruction(entry, Path(out), path, where, summary.problems))
        except WebGenBenchFormatError as err:
            summary.problems.append(f"not imported: {err}")
    return summary


def _text(entry: dict[str, Any], key: str, path: Path, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise WebGenBenchFormatError(path, f"got {value!r}; expected a text", field=f"{where}.{key}")
    return value.strip()


def import_instruction(entry: dict[str, Any], out: Path, path: Path, where: str, problems: list[str]) -> ImportedWebGenTask:
    """Write one instruction as one task; append what could not be converted to problems."""
    source_id = str(entry.get("id") or "").strip()
    if not source_id:
        raise WebGenBenchFormatError(path, "missing", field=f"{where}.id")
    instruction = _text(entry, "instruction", path, where)
    raw_cases = entry.get("ui_instruct")
    if not isinstance(raw_cases, list) or not raw_cases:
        raise WebGenBenchFormatError(path, "expected a list of {task, expected_result}", field=f"{where}.ui_instruct")
    task_id = task_id_for(source_id)
    cases: list[dict[str, Any]] = []
    requirements: dict[str, str] = {}
    for index, raw in enumerate(raw_cases):
        at = f"{where}.ui_instruct[{index}]"
        if not isinstance(raw, dict):
            problems.append(f"{path}: {at}: not an object; case skipped")
            continue
        try:
            task_text, expected = _text(raw, "task", path, at), _text(raw, "expected_result", path, at)
        except WebGenBenchFormatError as err:
            problems.append(f"{err}; case skipped")
            continue
        category = str(((raw.get("task_category") or {}).get("primary_category")) or "Functional Testing")
        requirement = CASE_CATEGORIES.get(category)
        if requirement is None:
            problems.append(f"{path}: {at}.task_category.primary_category {category!r} is not one of {', '.join(CASE_CATEGORIES)}; counted as Functional Testing")
            category, requirement = "Functional Testing", "FT"
        requirements[requirement] = f"{category}: the site passes WebGen-Bench's {category.lower()} cases of this instruction"
        cases.append({"id": f"UI-{index}", "kind": "frontend", "requirement": requirement, "instruction": task_text, "expected": expected})
    if not cases:
        raise WebGenBenchFormatError(path, "no usable UI test case", field=f"{where}.ui_instruct")
    benchmark_dir = out / "benchmarks" / task_id
    oracle_dir = out / "oracles" / task_id
    for folder in (benchmark_dir, oracle_dir):
        shutil.rmtree(folder, ignore_errors=True)
    (oracle_dir / "judge").mkdir(parents=True)
    benchmark_dir.mkdir(parents=True)
    (benchmark_dir / "spec.md").write_text(instruction + "\n", encoding="utf-8")
    source_category: dict[str, Any] = entry["Category"] if isinstance(entry.get("Category"), dict) else {}
    task = {
        "id": task_id,
        "title": _title(instruction),
        "kind": "frontend",
        "domains": ["webgen-bench"],
        "port": 8000,
        "health": {"path": "/", "timeout_s": HEALTH_TIMEOUT_S},
        "requirements": {r: requirements[r] for r in CASE_CATEGORIES.values() if r in requirements},
        "webgen_bench": {
            "id": source_id,
            "primary_category": source_category.get("primary_category"),
            "subcategories": list(source_category.get("subcategories") or []),
            "application_type": entry.get("application_type"),
        },
    }
    (benchmark_dir / "task.yaml").write_text(
        f"# imported from WebGen-Bench data/test.jsonl ({source_id}) by `backendbench import webgen-bench`\n"
        + yaml.safe_dump(task, sort_keys=False, allow_unicode=True, width=100),
        encoding="utf-8",
    )
    (oracle_dir / "judge" / "cases.yaml").write_text(
        f"# WebGen-Bench's UI test cases of instruction {source_id}, judged by the GUI judge (docs/judges.md)\n"
        + yaml.safe_dump({"cases": cases}, sort_keys=False, allow_unicode=True, width=100),
        encoding="utf-8",
    )
    return ImportedWebGenTask(task_id, source_id, len(cases), benchmark_dir, oracle_dir)


def _title(instruction: str) -> str:
    """The instruction's first words (its first sentence when that is shorter)."""
    first = re.split(r"(?<=[.!?])\s", instruction, maxsplit=1)[0]
    words = first.split()
    return " ".join(words[:TITLE_WORDS]) + (" ..." if len(words) > TITLE_WORDS else "")
