"""InfiniteWeb goal evaluators: the goal file, the checkpoint arithmetic, bad evaluators, and one
goal run through the whole plugin in Chromium (the todo bench's scenario and a goal file)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_backendbench.bdd.scenarios.evaluators import (
    Checkpoint,
    GoalOutcome,
    MalformedCheckpoints,
    checkpoints_from,
    dense_reward,
    evaluate_goal,
)
from pytest_backendbench.bdd.scenarios.goals import Goal, goal_problems, goals_for_feature, load_goal
from pytest_backendbench.errors import TaskFormatError
from pytest_backendbench.results import ItemResult, TaskResult
from pytest_backendbench.scores.infiniteweb import infiniteweb, task_goal_figures

from ..judges.scripted_model import ChatRequest, ScriptedModelServer
from .conftest import TODO_APP, TODO_BENCH

GOAL = Goal("g", Path("oracles/t/goals/g.yaml"), "do it", "a.feature", "S", "return [];")


def cp(name: str, passed: bool, weight: float) -> dict[str, Any]:
    return {"name": name, "passed": passed, "weight": weight}


# --- the reward arithmetic -------------------------------------------------------------------


def test_the_dense_reward_is_the_weight_of_the_checkpoints_passed_and_success_needs_all() -> None:
    checkpoints = checkpoints_from([cp("a", True, 0.1), cp("b", True, 0.2), cp("c", False, 0.7)])
    assert dense_reward(checkpoints) == 0.3  # exactly: 0.1 + 0.2 leaves no float noise
    outcome = GoalOutcome("g", "g.yaml", "evaluated", checkpoints)
    assert (outcome.reward, outcome.success) == (0.3, False)
    everything = GoalOutcome("g", "g.yaml", "evaluated", checkpoints_from([cp("a", True, 0.35), cp("b", True, 0.3), cp("c", True, 0.35)]))
    assert (everything.reward, everything.success) == (1.0, True)
    assert GoalOutcome.from_dict(everything.to_dict()) == everything
    gone = GoalOutcome("g", "g.yaml", "not_evaluated", reason="the page was abandoned")
    assert (gone.reward, gone.success, gone.to_dict()["reward"]) == (0.0, False, 0.0)


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (None, "it returned null; expected a non-empty list"),
        ([], "it returned []; expected a non-empty list"),
        (0.8, "it returned 0.8; expected a non-empty list"),  # InfiniteWeb's own evaluators return the sum
        (["a"], "checkpoint 1 is 'a'; expected an object {name, passed, weight}"),
        ([{"passed": True, "weight": 1}], "checkpoint 1 has name null; expected a non-empty string"),
        ([cp("a", None, 1)], "checkpoint 'a' has passed = null; expected true or false (wrap the test in Boolean(...))"),  # type: ignore[arg-type]
        ([cp("a", True, 0)], "checkpoint 'a' has weight 0; expected a positive number"),
        ([{"name": "a", "passed": True, "weight": True}], "checkpoint 'a' has weight True; expected a positive number"),
        ([cp("a", True, 0.5), cp("a", False, 0.5)], "checkpoint 'a' appears twice"),
        ([cp("a", True, 0.5), cp("b", False, 0.4)], "the weights sum to 0.9 (0.5 + 0.4); they must sum to 1"),
    ],
)
def test_malformed_checkpoints_say_what_is_wrong(answer: Any, message: str) -> None:
    with pytest.raises(MalformedCheckpoints) as caught:
        checkpoints_from(answer)
    assert message in str(caught.value)


# --- bad evaluators: a per-item outcome, never a hang ----------------------------------------


class FakeDriver:
    """Answers execute_async_script with a recorded wrapper answer (or raises it)."""

    def __init__(self, answer: Any, url: str = "http://app.test/f/x") -> None:
        self.answer = answer
        self.current_url = url
        self.visited: list[str] = []

    def set_script_timeout(self, seconds: float) -> None:
        self.script_timeout = seconds

    def get(self, url: str) -> None:
        self.visited.append(url)
        self.current_url = url

    def execute_async_script(self, script: str, *args: Any) -> Any:
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


def run(answer: Any) -> GoalOutcome:
    return evaluate_goal(FakeDriver(answer), GOAL, base_url="http://app.test", entry_url="http://app.test/")


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ({"error": "TypeError: Cannot read properties of null (reading 'slug')\n    at evaluate"}, "the evaluator threw: TypeError: Cannot read properties of null (reading 'slug')"),
        ({"late": True}, "the evaluator did not answer within 10 s"),
        ({"value": [cp("a", True, 0.6)]}, "malformed checkpoints: the weights sum to 0.6"),
        ("not a dict", "the evaluator's wrapper answered 'not a dict'"),
    ],
)
def test_a_broken_evaluator_is_the_oracles_error_naming_why(answer: Any, reason: str) -> None:
    outcome = run(answer)
    assert (outcome.status, outcome.reward, outcome.success) == ("broken", 0.0, False)
    assert outcome.reason.startswith(reason)
    assert outcome.file == "oracles/t/goals/g.yaml"


def test_an_evaluator_that_does_not_parse_is_broken() -> None:
    from selenium.common.exceptions import JavascriptException

    outcome = run(JavascriptException("javascript error: Unexpected token ')'"))
    assert (outcome.status, outcome.reason) == ("broken", "the evaluator does not run: javascript error: Unexpected token ')'")


def test_a_page_that_stops_answering_leaves_the_goal_not_evaluated() -> None:
    class Hung(Exception):
        pass

    def bounded(call: Any, timeout_s: float, what: str) -> Any:
        raise Hung(f"{what} took more than {timeout_s:g} s")

    outcome = evaluate_goal(FakeDriver({"value": []}), GOAL, base_url="http://app.test", entry_url="http://app.test/", bounded=bounded, hung=(Hung,))
    assert (outcome.status, outcome.reward) == ("not_evaluated", 0.0)
    assert outcome.reason == "the page stopped answering: reading the page's URL took more than 10 s"


def test_a_dialog_the_page_left_open_leaves_the_goal_not_evaluated() -> None:
    from selenium.common.exceptions import UnexpectedAlertPresentException

    outcome = run(UnexpectedAlertPresentException("unexpected alert open: {Alert text : Saved!}"))
    assert (outcome.status, outcome.reward) == ("not_evaluated", 0.0)
    assert outcome.reason.startswith("the page left a dialog open: unexpected alert open")


def test_a_page_that_left_the_app_is_evaluated_on_the_entry_page() -> None:
    driver = FakeDriver({"value": [cp("a", True, 1)]}, url="about:blank")
    outcome = evaluate_goal(driver, GOAL, base_url="http://app.test", entry_url="http://app.test/start")
    assert driver.visited == ["http://app.test/start"]
    assert (outcome.status, outcome.reward, outcome.reason) == ("evaluated", 1.0, "the scenario had left the app; evaluated on http://app.test/start")


# --- the goal file -------------------------------------------------------------------------------


def write_goal(folder: Path, name: str, text: str) -> Path:
    path = folder / "goals" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_goal_file_names_its_scenario_and_defects_name_the_field(tmp_path: Path) -> None:
    good = write_goal(tmp_path, "add.yaml", "instruction: Add a todo\nscenario: {feature: add.feature, name: Adding}\nevaluator: return [];\n")
    goal = load_goal(good)
    assert (goal.id, goal.feature, goal.scenario, goal.evaluator) == ("add", "add.feature", "Adding", "return [];")
    bad = write_goal(tmp_path, "bad.yaml", "instruction: Add\nscenario: add.feature\nevaluator: return [];\n")
    with pytest.raises(TaskFormatError, match=r"bad.yaml: scenario: got 'add.feature'; expected a mapping \{feature"):
        load_goal(bad)
    bad.write_text("instruction: Add\nscenario: {feature: add.feature, name: Adding}\nevaluator: ''\nweights: 1\n")
    with pytest.raises(TaskFormatError, match="unknown field"):
        load_goal(bad)
    bad.unlink()
    features = tmp_path / "features"
    features.mkdir()
    (features / "add.feature").write_text("")
    assert goals_for_feature(features / "add.feature", ["Adding", "Other"]) == {"Adding": goal}
    with pytest.raises(TaskFormatError, match=r"add.yaml: scenario.name: no scenario 'Adding' in add.feature \(its scenarios: 'Other'\)"):
        goals_for_feature(features / "add.feature", ["Other"])
    write_goal(tmp_path, "gone.yaml", "instruction: Add\nscenario: {feature: gone.feature, name: Adding}\nevaluator: return [];\n")
    (features / "add.feature").write_text("Feature: Todos\n  Scenario: Adding\n    Given nothing\n")
    problems = goal_problems(tmp_path)  # backendbench validate: a goal whose feature file is missing is never collected
    assert problems == [f"{tmp_path / 'goals' / 'gone.yaml'}: scenario.feature: no feature file gone.feature under {features}"]


# --- the figures -------------------------------------------------------------------------------


def test_task_and_run_figures_average_the_goal_runs() -> None:
    def item(name: str, goal: GoalOutcome | None, outcome: str = "passed") -> ItemResult:
        return ItemResult(nodeid=name, task="t", candidate="t", kind="bdd", outcome=outcome, goal=goal.to_dict() if goal else None)

    reached = GoalOutcome("a", "a.yaml", "evaluated", [Checkpoint("x", True, 1.0)])
    partial = GoalOutcome("b", "b.yaml", "evaluated", [Checkpoint("x", True, 0.75), Checkpoint("y", False, 0.25)])
    broken = GoalOutcome("c", "c.yaml", "broken", reason="threw")
    result = TaskResult(task="t", candidate="t", items=[item("1", reached), item("2", partial, "failed"), item("3", broken, "error"), item("4", None)])
    assert task_goal_figures(result) == {"goals": 3, "goal_reward": pytest.approx((1 + 0.75 + 0) / 3), "goal_success": pytest.approx(1 / 3)}
    figures = infiniteweb([result])
    assert (figures["goal_runs"], figures["not_evaluated"], figures["by_goal"]["t/b"]) == (3, 1, {"runs": 1, "mean_reward": 0.75, "success_rate": 0.0})
    assert task_goal_figures(TaskResult(task="u", candidate="u"))["goal_reward"] is None


# --- through the plugin, in Chromium -----------------------------------------------------------

ADD_GOAL = """\
instruction: Add the todo "buy milk".
scenario: {feature: add_todo.feature, name: "[Normal] A typed todo is appended and counted"}
evaluator: |
  const todos = flag("todos") || [];
  const home = await api("/index.html");
  return [
    {name: "stored", passed: todos.some((t) => JSON.stringify(t).includes("buy milk")), weight: 0.5},
    {name: "counted", passed: page.text("[data-testid='todo-count']") === "1 item", weight: 0.2},
    {name: "served", passed: home.status === 200, weight: 0.1},
    {name: "archived", passed: false, weight: 0.2},
  ];
"""
THROWING_GOAL = """\
instruction: Store a todo.
scenario: {feature: repeated_one.feature, name: "[Normal] The outcome is a counted todo"}
evaluator: |
  return flag("nothing").slug;
"""


JUDGE_CASES = """\
cases:
  - id: FE-1
    kind: frontend
    requirement: R1
    instruction: Add the todo "buy milk".
    expected: The list shows buy milk.
    goal: add-milk
"""
JUDGE_CONFTEST = """
import pytest
from pytest_backendbench.judges.context import judge_context

@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    context = judge_context(config)
    if context is not None:
        context.extra["gui_pause_scale"] = 0.02  # WebVoyager's fixed pauses cut short
"""


def lazy_judge(request: ChatRequest) -> str:
    """A GUI judge that says YES at once, without adding anything (and grades the appearance 3)."""
    return "Analysis: a list.\n\nGrade: 3" if request.purpose == "appearance" else "Thought: it is surely there.\nAction: ANSWER; YES"


@pytest.mark.browser
def test_a_goals_evaluator_runs_in_the_scenarios_page_and_its_reward_reaches_the_report(
    pytester: pytest.Pytester, shared_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BACKENDBENCH_CACHE", str(shared_cache))
    shutil.copytree(TODO_BENCH, pytester.path, dirs_exist_ok=True)
    features = pytester.path / "oracles" / "todo" / "features"
    for feature in features.glob("*.feature"):
        if feature.name not in ("add_todo.feature", "repeated_one.feature"):
            feature.unlink()
    write_goal(features.parent, "add-milk.yaml", ADD_GOAL)
    write_goal(features.parent, "store.yaml", THROWING_GOAL)
    (features.parent / "judge").mkdir()
    (features.parent / "judge" / "cases.yaml").write_text(JUDGE_CASES)  # a GUI judge's session reaches add-milk too
    pytester.makeconftest(JUDGE_CONFTEST)
    candidate = pytester.path / "candidate"
    shutil.copytree(TODO_APP, candidate)

    with ScriptedModelServer(lazy_judge) as server:  # one browser session: the jobs need no second Chromium
        result = pytester.runpytest(
            f"--candidate={candidate}", "--bench-runtime=process", "--bench-report-dir=out", "--bench-bdd-sessions=1", "-p", "no:cacheprovider",
            f"--bench-judge=openai:{server.model}", f"--bench-judge-base-url={server.base_url}", "--bench-page-screenshot",
        )
    result.assert_outcomes(passed=4, failed=1, errors=1)  # build, boot, smoke, the judge's YES; the goal missed a checkpoint; the evaluator threw
    result.stdout.fnmatch_lines(["*goal 'add-milk' not reached: 'archived' (weight 0.2); dense reward 0.8*"])
    result.stdout.fnmatch_lines(["*harness error, not the candidate's fault] goal store (oracles/todo/goals/store.yaml): the evaluator threw: TypeError: Cannot read properties of null*"])
    report = json.loads((pytester.path / "out" / "report.json").read_text())
    goals = {i["goal"]["goal"]: i["goal"] for t in report["tasks"] for i in t["items"] if i.get("goal") and i["kind"] == "bdd"}
    judged = next(i for t in report["tasks"] for i in t["items"] if i["kind"] == "judge")
    # the lazy judge's YES stands as its verdict; the evaluator, run in the page it left, finds only the page served
    assert (judged["outcome"], judged["goal"]["reward"], judged["goal"]["success"]) == ("passed", 0.1, False)
    assert [(c["name"], c["passed"]) for c in goals["add-milk"]["checkpoints"]] == [("stored", True), ("counted", True), ("served", True), ("archived", False)]
    assert (goals["add-milk"]["reward"], goals["add-milk"]["success"], goals["store"]["status"]) == (0.8, False, "broken")
    metrics = report["tasks"][0]["metrics"]
    assert (metrics["goals"], metrics["goal_reward"], metrics["goal_success"]) == (2, 0.4, 0.0)
    figures = report["summary"]["papers"]["infiniteweb"]
    assert (figures["mean_reward"], figures["agent_goal_runs"], figures["agent_mean_reward"]) == (0.4, 1, 0.1)  # the agent's reward apart
    assert "add-milk" in (pytester.path / "out" / "report.html").read_text()
    smoke = next(i for t in report["tasks"] for i in t["items"] if i["kind"] == "smoke")  # --bench-page-screenshot
    assert smoke["artifacts"]["screenshot"] == "artifacts/todo/page.png"
    assert (pytester.path / "out" / "artifacts" / "todo" / "page.png").read_bytes().startswith(b"\x89PNG")
