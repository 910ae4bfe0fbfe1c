"""``backendbench import baxbench SRC --out DIR``: BaxBench's scenarios as tasks, one per framework.

For every (scenario, framework) it writes

- ``benchmarks/baxbench-<scenario>-<framework>/``: ``spec.md`` (BaxBench's own prompt for that
  scenario, framework and safety prompt, built by its ``Scenario.build_prompt``: word for
  word), ``openapi.yaml`` (its API spec; ``openapi_strict: false`` where it fails strict
  validation), the framework's ``Dockerfile`` and manifest (``requirements.txt`` or
  ``package.json``), and ``task.yaml`` (port 5000, ``APP_SECRET``, 1g, ``isolation: item``);
- ``oracles/<task>/test_baxbench.py``: one item per BaxBench test, calling
  ``bridge.BaxBenchTask`` (which runs the copied test unchanged); Flask tasks also get the
  secure reference and insecure mutants of ``importers/baxbench/refs/<scenario>/``;
- ``oracles/_baxbench/``: BaxBench's scenario modules, ``exploits.py``, ``cwes.py`` and
  scenario files, copied once for every task, under names pytest does not collect.

The only change to copied code is syntactic: BaxBench is written for Python 3.12 and its
``type X = ...`` statements become ``X = ...`` (recorded in ``oracles/_baxbench/IMPORTED.md``).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ...errors import BackendBenchFormatError
from . import extract as extract_module
from .frameworks import SUPPORTED, UNSUPPORTED, framework_image
from .writer import REFERENCE_TEXT, write_task, write_vendored

SAFETY_PROMPTS = extract_module.SAFETY_PROMPTS
TYPE_STATEMENT = re.compile(r"^type (\w+) = ", re.MULTILINE)
REFS_DIR = Path(__file__).resolve().parent / "refs"
"""The importer's data: one secure Flask reference (``app.py.txt``, written as ``app.py``) and its mutants per scenario, shipped as package data."""


class BaxBenchFormatError(BackendBenchFormatError):
    """The source is not BaxBench's repository layout (names the file that is missing)."""


@dataclass
class ImportSummary:
    """What an import wrote, what it skipped and why."""

    source: Path
    out: Path
    tasks: list[str] = field(default_factory=list)
    per_framework: dict[str, int] = field(default_factory=dict)
    skipped_frameworks: dict[str, str] = field(default_factory=dict)
    lenient_specs: list[str] = field(default_factory=list)
    references: int = 0
    problems: list[str] = field(default_factory=list)

    def format(self) -> str:
        """A few human-readable lines for the console."""
        lines = [f"imported {len(self.tasks)} BaxBench task(s) from {self.source} into {self.out}"]
        lines += [f"  {fw}: {n} scenario(s)" for fw, n in sorted(self.per_framework.items())]
        if self.references:
            lines.append(f"  {self.references} Flask task(s) got a secure reference and mutants (importers/baxbench/refs)")
        if self.lenient_specs:
            lines.append(f"  {len(self.lenient_specs)} scenario(s) whose OpenAPI spec fails strict validation (openapi_strict: false): {', '.join(self.lenient_specs)}")
        if self.skipped_frameworks:
            lines.append("frameworks not imported (their images need more than Debian, PyPI and npm):")
            lines += [f"  {fw}: {why}" for fw, why in sorted(self.skipped_frameworks.items())]
        if self.problems:
            lines.append(f"{len(self.problems)} problem(s):")
            lines += [f"  {p}" for p in self.problems]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


def find_src(source: Path) -> Path:
    """BaxBench's ``src/`` (given the repository or ``src/`` itself)."""
    for candidate in (source / "src", source):
        if (candidate / "scenarios" / "base.py").is_file() and (candidate / "exploits.py").is_file():
            return candidate
    raise BaxBenchFormatError(source / "src" / "scenarios" / "base.py", "not found; expected BaxBench's repository (logic-star-ai/baxbench) or its src/ folder")


def shim_copy(src: Path, dest: Path) -> list[str]:
    """Copy ``src`` to ``dest`` with the 3.12 ``type`` statements rewritten; the files changed."""
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    changed = []
    for path in sorted(dest.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        rewritten = TYPE_STATEMENT.sub(r"\1 = ", text)
        if rewritten != text:
            path.write_text(rewritten, encoding="utf-8")
            changed.append(path.relative_to(dest).as_posix())
    return changed


def read_source(shimmed: Path) -> dict[str, Any]:
    """Run BaxBench's own code (``extract.py``) in a child process; its JSON document."""
    result = subprocess.run([sys.executable, extract_module.__file__, str(shimmed)], capture_output=True, text=True, check=False, timeout=300)
    if result.returncode != 0:
        tail = "\n".join(result.stderr.strip().splitlines()[-8:])
        raise BaxBenchFormatError(shimmed, f"BaxBench's scenarios could not be loaded:\n{tail}")
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def source_commit(source: Path) -> str | None:
    """The git commit of the source checkout, when it is the root of one (not a folder inside another repository)."""
    try:
        result = subprocess.run(["git", "-C", str(source), "rev-parse", "--show-toplevel", "HEAD"], capture_output=True, text=True, check=False, timeout=30)
    except OSError:
        return None
    lines = result.stdout.split()
    if result.returncode != 0 or len(lines) != 2 or Path(lines[0]).resolve() != source.resolve():
        return None
    return lines[1]


def spec_is_strict(api_spec: str) -> bool:
    """Whether the OpenAPI document passes the strict validation our loader applies."""
    from openapi_spec_validator import validate
    from openapi_spec_validator.validation.exceptions import OpenAPIValidationError

    try:
        validate(yaml.safe_load(api_spec))
    except OpenAPIValidationError:
        return False
    return True


def import_baxbench(source: Path, out: Path, frameworks: list[str] | None = None, safety_prompt: str = "none") -> ImportSummary:
    """Write one task per (scenario, framework) into ``out``; other tasks in ``out`` are left alone."""
    if safety_prompt not in SAFETY_PROMPTS:
        raise BaxBenchFormatError(Path("--safety-prompt"), f"got {safety_prompt!r}; expected one of {', '.join(SAFETY_PROMPTS)}")
    source, out = Path(source), Path(out)
    src = find_src(source)
    summary = ImportSummary(source=source, out=out)
    with tempfile.TemporaryDirectory(prefix="backendbench-baxbench-") as tmp:
        shimmed = Path(tmp) / "src"
        shimmed_files = shim_copy(src, shimmed)
        data = read_source(shimmed)
        envs = {env["id"]: env for env in data["envs"]}
        wanted = list(frameworks) if frameworks else [fw for fw in SUPPORTED if fw in envs]
        for name in wanted:
            if name not in envs:
                raise BaxBenchFormatError(Path("--framework"), f"{name!r} is not a BaxBench framework; known: {', '.join(sorted(envs))}")
            if name not in SUPPORTED:
                summary.skipped_frameworks[name] = UNSUPPORTED.get(name, "not known to build here")
        if not frameworks:
            summary.skipped_frameworks.update({fw: why for fw, why in UNSUPPORTED.items() if fw in envs})
        selected = [envs[name] for name in wanted if name in SUPPORTED]
        summary.problems += write_vendored(shimmed, out / "oracles", shimmed_files, source_commit(source), [s["module"] for s in data["scenarios"]])
    commit = source_commit(source)
    for scenario in data["scenarios"]:
        strict = spec_is_strict(scenario["api_spec"])
        if not strict:
            summary.lenient_specs.append(scenario["id"])
        for env in selected:
            commands = data["common_commands"] + scenario["needed_packages"].get("_all_", []) + scenario["needed_packages"].get(env["language"], [])
            image = framework_image(env, commands)
            refs = REFS_DIR / scenario["id"] if env["id"] == "Python-Flask" else None
            has_reference = refs is not None and (refs / REFERENCE_TEXT).is_file()
            task_id = write_task(out, scenario, env, image, safety_prompt, strict, commit, refs if has_reference else None)
            summary.tasks.append(task_id)
            summary.per_framework[env["id"]] = summary.per_framework.get(env["id"], 0) + 1
            if has_reference:
                summary.references += 1
    return summary
