"""InfiniteWeb's task goals: ``oracles/<task>/goals/<goal>.yaml``, one goal of a GUI user per file.

A goal names what a user (or a GUI agent) sets out to do, the Gherkin scenario that does it, and
a JavaScript evaluator that reads the app's state afterwards and returns weighted checkpoints
(InfiniteWeb, section 3.5 and appendix A.2). The file::

    instruction: Answer the form "Team lunch" and submit it.     # what a GUI agent is told
    scenario:                                                      # the scenario that does it
      feature: respond.feature                                     # under oracles/<task>/features/
      name: A respondent answers every question and is thanked
    evaluator: |                                                   # the body of an async function
      const shown = flag("forms.formShown");
      return [{name: "form_shown", passed: shown !== null, weight: 0.4}, ...];

The evaluator runs in the scenario's page after its last step (bdd/scenarios/evaluators.py says what it
sees and how its answer is checked). Malformed files are collection errors naming the file and
the field (``TaskFormatError``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from ...errors import TaskFormatError

GOALS_FOLDER = "goals"
FIELDS = ("id", "instruction", "scenario", "evaluator")


@dataclass(frozen=True)
class Goal:
    """One goal of a task: its instruction, the scenario that reaches it and its evaluator's code."""

    id: str
    path: Path
    instruction: str
    feature: str
    scenario: str
    evaluator: str

    def where(self, root: Path | None = None) -> str:
        """The goal file's path, relative to ``root`` when it lies inside it (for messages)."""
        if root is not None:
            try:
                return str(self.path.relative_to(root))
            except ValueError:
                pass
        return str(self.path)


def _text(path: Path, data: dict[str, Any], name: str, hint: str) -> str:
    value = data.get(name)
    if not isinstance(value, str) or not value.strip():
        raise TaskFormatError(path, f"got {value!r}; expected {hint}", field=name)
    return value.strip()


def load_goal(path: Path) -> Goal:
    """Parse one goal file; every defect names the file and the field."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise TaskFormatError(path, f"not valid YAML: {err}") from err
    except OSError as err:
        raise TaskFormatError(path, f"cannot be read: {err}") from err
    if not isinstance(data, dict):
        raise TaskFormatError(path, "expected a mapping with instruction, scenario {feature, name} and evaluator")
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise TaskFormatError(path, f"unknown field(s) {', '.join(unknown)}; known: {', '.join(FIELDS)}")
    scenario = data.get("scenario")
    if not isinstance(scenario, dict):
        raise TaskFormatError(path, f"got {scenario!r}; expected a mapping {{feature: <file under features/>, name: <scenario name>}}", field="scenario")
    goal_id = data.get("id", path.stem)
    if not isinstance(goal_id, str) or not goal_id.strip():
        raise TaskFormatError(path, f"got {goal_id!r}; expected a non-empty goal id (default: the file name)", field="id")
    return Goal(
        id=goal_id.strip(),
        path=path,
        instruction=_text(path, data, "instruction", "what a user or a GUI agent is asked to do, in words"),
        feature=_text(path, scenario, "feature", "a .feature file under the oracle's features/ folder").removeprefix("features/"),
        scenario=_text(path, scenario, "name", "the name of the scenario that reaches the goal"),
        evaluator=_text(path, data, "evaluator", "JavaScript returning [{name, passed, weight}, ...]"),
    )


def goal_files(oracle_dir: Path) -> list[Path]:
    """The goal files of a task's oracle folder, in name order."""
    folder = oracle_dir / GOALS_FOLDER
    return sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")]) if folder.is_dir() else []


@lru_cache(maxsize=64)
def _goals_of(oracle_dir: Path, stamp: tuple[tuple[str, float], ...]) -> tuple[Goal, ...]:
    return tuple(load_goal(path) for path in goal_files(oracle_dir))


def load_goals(oracle_dir: Path) -> tuple[Goal, ...]:
    """Every goal of a task (parsed once per collection while the files are unchanged)."""
    stamp = tuple((str(p), p.stat().st_mtime) for p in goal_files(oracle_dir))
    return _goals_of(oracle_dir, stamp)


def goals_for_feature(feature_path: Path, scenario_names: list[str]) -> dict[str, Goal]:
    """The goals that name a scenario of this feature file, by scenario name.

    A goal naming this file and a scenario it does not hold, or two goals naming the same
    scenario, is a ``TaskFormatError`` (the feature file's collection error, naming the goal file).
    """
    features = feature_path.parent
    oracle_dir = features.parent if features.name == "features" else features
    found: dict[str, Goal] = {}
    for goal in load_goals(oracle_dir):
        if (oracle_dir / "features" / goal.feature).resolve() != feature_path.resolve():
            continue
        if goal.scenario not in scenario_names:
            listed = "; ".join(repr(n) for n in scenario_names)
            raise TaskFormatError(goal.path, f"no scenario {goal.scenario!r} in {feature_path.name} (its scenarios: {listed})", field="scenario.name")
        if goal.scenario in found:
            raise TaskFormatError(goal.path, f"scenario {goal.scenario!r} already has the goal {found[goal.scenario].path.name}; one goal per scenario", field="scenario.name")
        found[goal.scenario] = goal
    return found


def goal_problems(oracle_dir: Path) -> list[str]:
    """What is wrong with a task's goal files (``backendbench validate``): each must parse and name
    a feature file that exists and a scenario it holds (collection only sees goals of existing files)."""
    from .features import parse_feature_file

    problems: list[str] = []
    for path in goal_files(oracle_dir):
        try:
            goal = load_goal(path)
            feature = oracle_dir / "features" / goal.feature
            if not feature.is_file():
                raise TaskFormatError(path, f"no feature file {goal.feature} under {oracle_dir / 'features'}", field="scenario.feature")
            goals_for_feature(feature, [s.name for s in parse_feature_file(feature).scenarios])
        except TaskFormatError as err:
            problems.append(str(err))
    return problems


def goal_named(oracle_dir: Path, goal_id: str) -> Goal:
    """The task's goal ``goal_id`` (a judge case names one); ``TaskFormatError`` listing the known ones."""
    goals = load_goals(oracle_dir)
    found = next((g for g in goals if g.id == goal_id), None)
    if found is None:
        known = ", ".join(g.id for g in goals) or "none"
        raise TaskFormatError(oracle_dir / GOALS_FOLDER, f"no goal {goal_id!r} (goals: {known})", field="goal")
    return found
