"""A ``.feature`` file parsed once, at collection, into small dataclasses, and what its tags say.

behave's parser reads the file; a syntax error becomes a ``TaskFormatError`` naming the file,
the line and the text. ``interpret_tags`` turns Gherkin tags into the markers the metrics read
(``@R3`` or ``@requirement:R3``, ``@category:workflow``, ``@tier:r1``, ``@weight:2``);
``find_steps`` finds the step modules a feature's scenarios run with. The pytest items built
from these live in gherkin.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from ...errors import TaskFormatError
from ...tasks import CATEGORIES

DEFAULT_CATEGORY = "workflow"
DEFAULT_TIER = "base"
REQUIREMENT_TAG = re.compile(r"^R\d+[A-Za-z0-9_.-]*$")


# --- the parsed feature ---------------------------------------------------------------------


@dataclass(frozen=True)
class GherkinStep:
    """One step as written (background steps included, outline placeholders filled in)."""

    keyword: str
    text: str
    line: int


@dataclass(frozen=True)
class GherkinScenario:
    """One runnable scenario: a plain scenario or one example row of an outline."""

    name: str
    line: int
    tags: tuple[str, ...]
    steps: tuple[GherkinStep, ...]
    outline_line: int | None = None


@dataclass(frozen=True)
class GherkinFeature:
    """A parsed .feature file."""

    path: Path
    name: str
    line: int
    tags: tuple[str, ...]
    scenarios: tuple[GherkinScenario, ...]


def parse_feature_file(path: Path) -> GherkinFeature:
    """Parse with behave's parser; raise TaskFormatError naming file, line and text."""
    from behave.model import ScenarioOutline
    from behave.parser import ParserError, parse_file

    try:
        feature = parse_file(str(path))
    except ParserError as err:
        text = (err.line_text or "").strip()
        raise TaskFormatError(
            f"{path}:{err.line}" if err.line else path,
            f"Gherkin syntax error: cannot parse {text!r} (expected a Feature, Scenario, step keyword, table row or tag here)",
        ) from err
    except UnicodeDecodeError as err:
        raise TaskFormatError(path, f"not UTF-8 text: {err}") from err
    if feature is None:
        raise TaskFormatError(path, "no Feature: a .feature file needs one 'Feature:' with scenarios")
    outline_of = {id(s): o.line for o in feature.walk_scenarios(with_outlines=True) if isinstance(o, ScenarioOutline) for s in o.scenarios}
    scenarios = tuple(
        GherkinScenario(
            name=str(s.name).strip(),
            line=s.line,
            tags=tuple(str(t) for t in sorted(s.effective_tags)),
            steps=tuple(GherkinStep(st.keyword, st.name, st.line) for st in s.all_steps),
            outline_line=outline_of.get(id(s)),
        )
        for s in feature.walk_scenarios()
    )
    return GherkinFeature(path=path, name=str(feature.name), line=feature.line, tags=tuple(str(t) for t in feature.tags), scenarios=scenarios)


@dataclass(frozen=True)
class ScenarioTags:
    """What a scenario's tags say for the metrics, and what is wrong with them."""

    requirements: tuple[str, ...] = ()
    category: str = DEFAULT_CATEGORY
    tier: str = DEFAULT_TIER
    weight: float | None = None
    problems: tuple[str, ...] = ()

    def markers(self) -> list[pytest.MarkDecorator]:
        """The pytest markers these tags stand for."""
        markers = [pytest.mark.category(self.category), pytest.mark.tier(self.tier)]
        if self.requirements:
            markers.insert(0, pytest.mark.requirement(*self.requirements))
        if self.weight is not None:
            markers.append(pytest.mark.weight(self.weight))
        return markers


def interpret_tags(tags: tuple[str, ...] | list[str]) -> ScenarioTags:
    """Read requirement, category, tier and weight tags; other tags (@wip, @slow) are ignored."""
    requirements: list[str] = []
    categories: list[str] = []
    tiers: list[str] = []
    weight: float | None = None
    problems: list[str] = []
    for tag in tags:
        name, sep, value = tag.partition(":")
        if sep and name == "requirement" and value:
            requirements.append(value)
        elif not sep and REQUIREMENT_TAG.match(tag):
            requirements.append(tag)
        elif sep and name == "category":
            if value in CATEGORIES:
                categories.append(value)
            else:
                problems.append(f"@{tag}: unknown category; use one of {', '.join(CATEGORIES)}")
        elif sep and name == "tier":
            if value:
                tiers.append(value.lower())
            else:
                problems.append(f"@{tag}: name the tier, e.g. @tier:r1")
        elif sep and name == "weight":
            try:
                weight = float(value)
            except ValueError:
                weight = None
            if weight is None or weight < 0:
                problems.append(f"@{tag}: the weight must be a non-negative number, e.g. @weight:2")
                weight = None
    for what, found in (("category", categories), ("tier", tiers)):
        if len(set(found)) > 1:
            problems.append(f"more than one {what} tag: {', '.join('@' + what + ':' + v for v in sorted(set(found)))}")
    return ScenarioTags(
        requirements=tuple(dict.fromkeys(requirements)),
        category=categories[0] if categories else DEFAULT_CATEGORY,
        tier=tiers[0] if tiers else DEFAULT_TIER,
        weight=weight,
        problems=tuple(problems),
    )


# --- where the steps are -------------------------------------------------------------------


@dataclass(frozen=True)
class StepsLayout:
    """The step modules (and environment.py) a feature file's scenarios run with."""

    modules: tuple[Path, ...] = ()
    environment: Path | None = None
    problem: str | None = None


def find_steps(feature_path: Path) -> StepsLayout:
    """``<feature dir>/steps/<feature stem>.py`` alone if it exists (one module per scenario, as
    the E2EDev import writes them); otherwise every ``steps/*.py`` of the nearest folder at or
    above the feature's that has a ``steps/`` folder (behave's own rule), up to the task's
    oracle folder."""
    own = feature_path.parent / "steps" / f"{feature_path.stem}.py"
    if own.is_file():
        environment = feature_path.parent / "environment.py"
        return StepsLayout((own,), environment if environment.is_file() else None)
    folder = feature_path.parent
    while True:
        steps_dir = folder / "steps"
        if steps_dir.is_dir():
            modules = tuple(sorted(p for p in steps_dir.glob("*.py") if p.is_file()))
            environment = folder / "environment.py"
            if not modules:
                return StepsLayout(problem=f"{steps_dir} holds no step modules (*.py)")
            return StepsLayout(modules, environment if environment.is_file() else None)
        if folder.parent == folder or folder.parent.name == "oracles":
            break
        folder = folder.parent
    return StepsLayout(problem=f"no steps/ folder next to {feature_path.name} or above it (behave looks for <features>/steps/*.py)")
