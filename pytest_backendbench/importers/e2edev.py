"""Converting the E2EDev dataset into our task format.

E2EDev publishes ``E2EDev_data/E2ESD_Bench_NN/`` folders, each with ``prompt.txt``,
``requirment_with_tests.json`` (sic) and ``source_projcet/`` (sic, the reference web app).
Every requirement carries test cases made of one Gherkin feature (one scenario) and one
complete behave steps module. The import writes, per project:

- ``benchmarks/e2esd-bench-NN/task.yaml`` (kind frontend, the requirements as R<id>, and
  ``e2edev:`` hints: the sleep policy E2EDev's own runner applies and the browser locale its
  step code was written for, zh-CN) and ``spec.md`` (the prompt, verbatim);
- ``oracles/e2esd-bench-NN/features/R<id>_<n>.feature`` (the Gherkin, its scenario tagged
  ``@R<id>``) and ``features/steps/R<id>_<n>.py`` (the step code, verbatim: the E2EDev
  compatibility rewrites happen when the harness loads the module, see docs/bdd.md);
- ``oracles/e2esd-bench-NN/reference/`` (the source project without E2EDev's analysis files).

One broken project does not stop the others: its problems are listed in the summary, and
dataset defects that make a test case fail whatever the app does (a steps module that does not
parse, a step pattern that matches no step of its feature, a step no pattern matches) are
listed in a table (:class:`DatasetDefect`); the test cases are imported all the same.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..bdd.scenarios.behave_runner import SleepPolicy
from ..errors import BackendBenchFormatError, TaskFormatError

PROJECT_PATTERN = re.compile(r"^E2ESD_Bench_(\d+)$")
TESTS_FILE = "requirment_with_tests.json"  # sic, as published
SOURCE_DIR = "source_projcet"  # sic, as published
# E2EDev's analysis and annotation files, not part of the app
IGNORED_SOURCE_NAMES = frozenset({"info", "requirements.json", "web_application_analysis.json", "features", ".DS_Store", "__MACOSX"})
IGNORED_SOURCE_PREFIXES = ("annotation",)
SCENARIO_LINE = re.compile(r"^(?P<indent>[ \t]*)(Scenario Outline|Scenario Template|Scenario|Example)\s*:", re.MULTILINE)
HEALTH_TIMEOUT_S = 30
BROWSER_LOCALE = "zh-CN"
"""E2EDev's step code types dates and times in the field order of a zh-CN Chromium (yyyy, mm, dd; 24-hour)."""
STEP_DECORATORS = {"given": "given", "when": "when", "then": "then", "step": "step", "Given": "given", "When": "when", "Then": "then", "Step": "step"}


class E2EDevFormatError(BackendBenchFormatError):
    """The E2EDev source is not laid out as published (names the file and the field)."""


@dataclass
class ImportedTask:
    """One E2EDev project, written as one task."""

    id: str
    project: str
    requirements: int
    scenarios: int
    sleep_policy: str
    benchmark_dir: Path
    oracle_dir: Path


@dataclass(frozen=True)
class DatasetDefect:
    """A test case that cannot pass whatever the app does, found while importing."""

    task: str
    file: str
    kind: str
    detail: str


@dataclass
class ImportSummary:
    """What an import wrote, and what it could not convert."""

    source: Path
    out: Path
    tasks: list[ImportedTask] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    defects: list[DatasetDefect] = field(default_factory=list)
    missing_modules: list[str] = field(default_factory=list)  # modules step code imports that are not installed

    @property
    def scenarios(self) -> int:
        """Feature files written, over all tasks."""
        return sum(t.scenarios for t in self.tasks)

    def __str__(self) -> str:
        return self.format()

    def format(self) -> str:
        """A few human-readable lines for the console."""
        lines = [
            (
                f"imported {len(self.tasks)} E2EDev project(s) from {self.source} into {self.out}: "
                f"{sum(t.requirements for t in self.tasks)} requirements, {self.scenarios} scenarios"
            )
        ]
        lines += [f"  {t.id}: {t.requirements} requirements, {t.scenarios} scenarios, sleeps {t.sleep_policy}" for t in self.tasks]
        if self.problems:
            lines.append(f"{len(self.problems)} problem(s):")
            lines += [f"  {p}" for p in self.problems]
        if self.missing_modules:
            lines.append(
                f"the step modules import {', '.join(self.missing_modules)}, which this Python cannot import; their scenarios end in "
                f"an oracle error until you install the e2edev extra: pip install 'pytest-backendbench[e2edev]'"
            )
        if self.defects:
            lines.append(f"{len(self.defects)} dataset defect(s) (imported as they are; these scenarios fail or end in an oracle error whatever the app does):")
            lines += _table(("task", "file", "defect", "detail"), [(d.task, d.file, d.kind, d.detail) for d in self.defects])
        return "\n".join(lines)


def task_id_for(project: str) -> str:
    """``E2ESD_Bench_05`` -> ``e2esd-bench-05``."""
    return project.lower().replace("_", "-")


def requirement_id(raw: str) -> str:
    """E2EDev's requirement key (``"2"``) as a task.yaml id and Gherkin tag (``R2``)."""
    text = str(raw).strip()
    if re.fullmatch(r"\d+", text):
        return f"R{text}"
    return "R" + re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")


def tag_scenario(gherkin: str, tag: str) -> str | None:
    """The Gherkin with ``@tag`` on its own line above the first scenario; None without a scenario."""
    match = SCENARIO_LINE.search(gherkin)
    if match is None:
        return None
    return f"{gherkin[: match.start()]}{match.group('indent')}@{tag}\n{gherkin[match.start():]}"


CREATE_WORDS = re.compile(r"\b(add|adds|adding|create|creates|creating|submit|submits|submitting|save|saves|saving|register|registers|post|posts)\b", re.IGNORECASE)
EDIT_WORDS = re.compile(
    r"\b(edit|edits|editing|update|updates|updating|modify|modifies|change|changes|delete|deletes|deleting|remove|removes|removing|rename|renames)\b",
    re.IGNORECASE,
)
ACTION_LINE = re.compile(r"^[ \t]*(Scenario[^:]*|Example|When)\s*:?\s*(?P<text>.*)$", re.MULTILINE)


def app_build_tags(gherkin: str) -> list[str]:
    """app.build's checks a scenario stands for, from the words of its title and When steps:
    ``ab:AB-03`` when it adds, creates, submits or saves something, ``ab:AB-04`` when it edits,
    changes or deletes something (a heuristic: E2EDev names no such checks; docs/appbuild.md)."""
    actions = " ".join(m.group("text") for m in ACTION_LINE.finditer(gherkin))
    return [tag for tag, words in (("ab:AB-03", CREATE_WORDS), ("ab:AB-04", EDIT_WORDS)) if words.search(actions)]


def find_projects(source: Path) -> list[Path]:
    """The E2ESD_Bench_NN folders under source (the repository, E2EDev_data/, or one project)."""
    if (source / TESTS_FILE).is_file():
        return [source]
    if (source / "E2EDev_data").is_dir():
        source = source / "E2EDev_data"
    if not source.is_dir():
        raise E2EDevFormatError(source, "not a folder; give E2EDev's repository, its E2EDev_data/ folder or one E2ESD_Bench_NN/ folder")
    projects = sorted((p for p in source.iterdir() if p.is_dir() and PROJECT_PATTERN.match(p.name)), key=lambda p: int(PROJECT_PATTERN.match(p.name).group(1)))  # type: ignore[union-attr]
    if not projects:
        raise E2EDevFormatError(source, "holds no E2ESD_Bench_NN/ folders; give E2EDev's repository or its E2EDev_data/ folder")
    return projects


def import_e2edev(source: Path, out: Path) -> ImportSummary:
    """Convert every E2EDev project under source into ``out/benchmarks`` and ``out/oracles``.

    Re-importing replaces the tasks it writes and leaves every other task in ``out`` alone.
    Raises E2EDevFormatError when source holds no E2EDev project at all.
    """
    source = Path(source)
    out = Path(out)
    summary = ImportSummary(source=source, out=out)
    for project in find_projects(source):
        try:
            summary.tasks.append(import_project(project, out, summary.problems, summary.defects))
        except BackendBenchFormatError as err:
            summary.problems.append(f"{project.name}: not imported: {err}")
    summary.missing_modules = missing_extra_modules([t.oracle_dir for t in summary.tasks])
    return summary


def missing_extra_modules(oracle_dirs: list[Path]) -> list[str]:
    """Modules of the e2edev extra that the step modules import and this Python lacks."""
    import importlib.util

    from ..bdd.scenarios.step_loading import E2EDEV_EXTRA_MODULES

    wanted: set[str] = set()
    for folder in oracle_dirs:
        for module in folder.glob("features/steps/*.py"):
            text = module.read_text(errors="replace")
            wanted |= {name for name in E2EDEV_EXTRA_MODULES if re.search(rf"^\s*(?:import|from)\s+{name}\b", text, re.MULTILINE)}
    return sorted(name for name in wanted if importlib.util.find_spec(name) is None)


def _load_tests(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise E2EDevFormatError(path, "file not found; every E2EDev project has one")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise E2EDevFormatError(path, f"not valid JSON: {err}") from err
    requirements = data.get("finegrained_rewith_test") if isinstance(data, dict) else None
    if not isinstance(requirements, dict):
        raise E2EDevFormatError(path, "missing; expected a mapping of requirement id to requirement and test_cases", field="finegrained_rewith_test")
    return data


def import_project(project: Path, out: Path, problems: list[str], defects: list[DatasetDefect] | None = None) -> ImportedTask:
    """Write one E2EDev project as one task; append what could not be converted to problems
    and the dataset defects found in its test cases to defects."""
    task_id = task_id_for(project.name)
    tests_path = project / TESTS_FILE
    data = _load_tests(tests_path)
    prompt_path = project / "prompt.txt"
    if not prompt_path.is_file():
        raise E2EDevFormatError(prompt_path, "file not found; it becomes the task's spec.md")

    benchmark_dir = out / "benchmarks" / task_id
    oracle_dir = out / "oracles" / task_id
    for folder in (benchmark_dir, oracle_dir):
        shutil.rmtree(folder, ignore_errors=True)
    features_dir = oracle_dir / "features"
    (features_dir / "steps").mkdir(parents=True)
    benchmark_dir.mkdir(parents=True)

    requirements: dict[str, str] = {}
    source_ids: dict[str, str] = {}
    scenarios = 0
    for raw_id, entry in data["finegrained_rewith_test"].items():
        req = requirement_id(raw_id)
        where = f"{tests_path}: finegrained_rewith_test.{raw_id}"
        if not isinstance(entry, dict):
            problems.append(f"{where}: not a mapping; requirement skipped")
            continue
        description = (entry.get("requirement") or {}).get("description") if isinstance(entry.get("requirement"), dict) else None
        if not isinstance(description, str) or not description.strip():
            problems.append(f"{where}.requirement.description: missing; requirement {req} has no text")
            description = ""
        requirements[req] = description.strip()
        source_ids[req] = str(raw_id)
        for number, case in enumerate(entry.get("test_cases") or [], start=1):
            scenarios += _write_test_case(case, req, number, features_dir, f"{where}.test_cases[{number - 1}]", problems)
    if defects is not None:
        for feature in sorted(features_dir.glob("*.feature")):
            defects += [DatasetDefect(task_id, f"features/steps/{feature.stem}.py", kind, detail) for kind, detail in find_defects(feature)]

    (benchmark_dir / "spec.md").write_text(_with_newline(prompt_path.read_text(encoding="utf-8")), encoding="utf-8")
    policy = str(SleepPolicy.for_e2edev_project(project.name))
    task = {
        "id": task_id,
        "title": _title(project.name, data),
        "kind": "frontend",
        "domains": ["e2edev"],
        "port": 8000,
        "health": {"path": "/", "timeout_s": HEALTH_TIMEOUT_S},
        "requirements": requirements,
        "e2edev": {"project": project.name, "sleep_policy": policy, "browser_locale": BROWSER_LOCALE, "requirement_ids": source_ids},
    }
    (benchmark_dir / "task.yaml").write_text(
        f"# imported from E2EDev {project.name} by `backendbench import e2edev`\n"
        + yaml.safe_dump(task, sort_keys=False, allow_unicode=True, width=100),
        encoding="utf-8",
    )
    _copy_reference(project / SOURCE_DIR, oracle_dir / "reference", problems)
    return ImportedTask(task_id, project.name, len(requirements), scenarios, policy, benchmark_dir, oracle_dir)


def _write_test_case(case: Any, req: str, number: int, features_dir: Path, where: str, problems: list[str]) -> int:
    """Write one test case's feature file(s) and steps module; return how many features were written."""
    if not isinstance(case, dict):
        problems.append(f"{where}: not a mapping; test case skipped")
        return 0
    gherkins = case.get("test_case")
    if isinstance(gherkins, str):
        gherkins = [gherkins]
    step_code = case.get("step_code")
    if not isinstance(gherkins, list) or not gherkins or not all(isinstance(g, str) for g in gherkins):
        problems.append(f"{where}.test_case: expected a list with the Gherkin text; test case skipped")
        return 0
    if not isinstance(step_code, str) or not step_code.strip():
        problems.append(f"{where}.step_code: missing; test case skipped")
        return 0
    written = 0
    for index, gherkin in enumerate(gherkins, start=1):
        stem = f"{req}_{number}" if index == 1 else f"{req}_{number}_{index}"
        tagged = tag_scenario(gherkin, req)
        if tagged is not None:
            for ab_tag in app_build_tags(gherkin):
                tagged = tag_scenario(tagged, ab_tag) or tagged
        if tagged is None:
            problems.append(f"{where}.test_case[{index - 1}]: no Scenario line; written untagged as {stem}.feature")
            tagged = gherkin
        feature = features_dir / f"{stem}.feature"
        feature.write_text(_with_newline(tagged), encoding="utf-8")
        (features_dir / "steps" / f"{stem}.py").write_text(_with_newline(step_code), encoding="utf-8")
        problem = _check_feature(feature)
        if problem:
            problems.append(f"{where}.test_case[{index - 1}] ({feature.name}): {problem}")
        written += 1
    return written


def _check_feature(path: Path) -> str | None:
    from ..bdd.gherkin import parse_feature_file

    try:
        feature = parse_feature_file(path)
    except TaskFormatError as err:
        return str(err)
    if len(feature.scenarios) != 1:
        return f"expected one scenario, found {len(feature.scenarios)}"
    return None


def find_defects(feature_path: Path) -> list[tuple[str, str]]:
    """(kind, detail) for each dataset defect of a feature and its own steps module.

    Read without running the step code: the module is compiled (a file flattened onto one
    line does not), its ``@given/@when/@then/@step`` patterns are taken from the source with
    the step matcher in force at each (``use_step_matcher``), and each is matched against the
    feature's steps of its kind, as behave would.
    """
    from behave.matchers import StepMatcherFactory

    from ..bdd.gherkin import parse_feature_file

    steps_path = feature_path.parent / "steps" / f"{feature_path.stem}.py"
    try:
        source = steps_path.read_text(encoding="utf-8")
        tree = ast.parse(source, str(steps_path))
    except (OSError, UnicodeDecodeError) as err:
        return [("steps module unreadable", str(err))]
    except SyntaxError as err:
        return [("steps module does not parse", f"line {err.lineno}: {err.msg}" + (" (the file has no line breaks)" if "\n" not in source.strip() else ""))]
    try:
        scenarios = parse_feature_file(feature_path).scenarios
    except TaskFormatError:
        return []  # already reported as a problem
    steps = [(_step_kind(step.keyword, previous), step.text) for scenario in scenarios for previous, step in _with_previous_keyword(scenario.steps)]
    factory = StepMatcherFactory()
    matchers: list[tuple[str, str, Any]] = []
    defects: list[tuple[str, str]] = []
    for node in sorted(ast.walk(tree), key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("use_step_matcher", "step_matcher") and node.args:
            name = node.args[0].value if isinstance(node.args[0], ast.Constant) else None
            if isinstance(name, str):
                try:
                    factory.use_step_matcher(name)
                except (LookupError, ValueError):
                    pass
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                if not (isinstance(decorator, ast.Call) and decorator.args and isinstance(decorator.args[0], ast.Constant)):
                    continue
                func = decorator.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                pattern = decorator.args[0].value
                if name in STEP_DECORATORS and isinstance(pattern, str):
                    try:
                        matchers.append((STEP_DECORATORS[name], pattern, factory.make_step_matcher(lambda context: None, pattern)))
                    except Exception as err:  # noqa: BLE001 - any bad pattern is the dataset's defect
                        defects.append(("step pattern invalid", f"{pattern!r}: {err}"))
    for kind, pattern, matcher in matchers:
        if not any(_matches(matcher, text) for step_kind, text in steps if kind == "step" or kind == step_kind):
            defects.append(("step pattern matches no step", f"@{kind}({pattern!r}) matches no {kind} step of {feature_path.name}"))
    for step_kind, text in steps:
        if not any(_matches(matcher, text) for kind, _, matcher in matchers if kind in ("step", step_kind)):
            defects.append(("step has no definition", f"{step_kind.capitalize()} {text!r}"))
    return defects


def _matches(matcher: Any, text: str) -> bool:
    # behave 1.2.6 also matched a step ending in ':' without it (docs/bdd.md, rule 7)
    return matcher.match(text) is not None or (text.rstrip().endswith(":") and matcher.match(text.rstrip()[:-1].rstrip()) is not None)


def _with_previous_keyword(steps: Any) -> list[tuple[str, Any]]:
    result, previous = [], "given"
    for step in steps:
        previous = _step_kind(step.keyword, previous)
        result.append((previous, step))
    return result


def _step_kind(keyword: str, previous: str) -> str:
    word = keyword.strip().lower()
    return word if word in ("given", "when", "then") else previous


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  " + "  ".join(str(cell).ljust(width) for cell, width in zip(header, widths)).rstrip()]
    lines.append("  " + "  ".join("-" * width for width in widths))
    lines += ["  " + "  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    return lines


def _copy_reference(source: Path, target: Path, problems: list[str]) -> None:
    if not source.is_dir():
        problems.append(f"{source}: not found; the task has no reference candidate")
        return

    def ignore(folder: str, names: list[str]) -> set[str]:
        return {n for n in names if n in IGNORED_SOURCE_NAMES or n.startswith(IGNORED_SOURCE_PREFIXES)}

    shutil.copytree(source, target, ignore=ignore)


def _title(project: str, data: dict[str, Any]) -> str:
    overview = (data.get("summary") or {}).get("overview") if isinstance(data.get("summary"), dict) else None
    if not isinstance(overview, str) or not overview.strip():
        return f"E2EDev {project}"
    sentence = overview.strip().split(". ")[0].rstrip(".")
    if len(sentence) > 90:
        sentence = sentence[:87].rstrip() + "..."
    return f"E2EDev {project}: {sentence}"


def _with_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"
