"""InfiniteWeb's task evaluators: weighted checkpoints read from the page after a goal's scenario.

A goal's evaluator (bdd/scenarios/goals.py) is the body of an async JavaScript function run in the
scenario's own page once its last step is done, before the page is left. It sees

- ``flag(key)``: ``localStorage[key]`` parsed as JSON (the raw string when it is not JSON,
  ``null`` when absent) — the app's instrumentation variables and its own stored state;
- ``api(path, init)``: ``fetch`` on the app's origin, answering ``{status, body}`` (body parsed as
  JSON when it is JSON); it never throws: a request that fails or takes over 5 s answers
  ``{status: 0, body: null, error}``, so the evaluator decides what a dead API means;
- ``page.text(selector)``, ``page.visible(selector)``, ``page.all(selector)`` and ``document``;

and returns the checkpoints: ``[{name, passed, weight}, ...]`` with unique names, ``passed``
true or false, positive weights that sum to 1. The dense reward is the sum of the weights of
the checkpoints passed, the binary success that all passed (InfiniteWeb, section 3.5 and
appendix A.2). An evaluator that throws, does not parse, answers something else or takes
longer than 10 s is broken: the goal is the oracle's fault (``broken``), never the candidate's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, TypeVar

from ...errors import OracleError
from ..browser.page_reset import origin_of
from .goals import Goal

T = TypeVar("T")
EVALUATOR_TIMEOUT_S = 10.0
"""An evaluator that has not answered by then is broken (it awaits something that never comes)."""
API_TIMEOUT_S = 5.0
"""``api()`` gives up on a request after this long and answers ``{status: 0}``."""
WEIGHT_TOLERANCE = 1e-6
Status = Literal["evaluated", "broken", "not_evaluated"]

EVALUATOR_SCRIPT = """
const done = arguments[arguments.length - 1];
const limitMs = arguments[0], apiMs = arguments[1];
const flag = (key) => {
  const raw = window.localStorage.getItem(key);
  if (raw === null) return null;
  try { return JSON.parse(raw); } catch (err) { return raw; }
};
const api = async (path, init) => {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), apiMs);
  try {
    const response = await fetch(path, Object.assign({}, init || {}, {signal: controller.signal}));
    const text = await response.text();
    let body = text;
    try { body = JSON.parse(text); } catch (err) { body = text; }
    return {status: response.status, body: body};
  } catch (err) {
    return {status: 0, body: null, error: String(err)};
  } finally { clearTimeout(timer); }
};
const page = {
  all: (selector) => Array.from(document.querySelectorAll(selector)),
  text: (selector) => { const e = document.querySelector(selector); return e ? e.textContent.trim() : null; },
  visible: (selector) => {
    const e = document.querySelector(selector);
    return !!e && !e.hidden && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
  },
};
const evaluate = async () => {
%s
};
const late = new Promise((resolve) => setTimeout(() => resolve({late: true}), limitMs));
Promise.race([evaluate().then((value) => ({value: value === undefined ? null : value})), late]).then(
  (outcome) => done(outcome),
  (err) => done({error: String(err && err.stack ? err.stack : err)}),
);
"""


@dataclass(frozen=True)
class Checkpoint:
    """One weighted checkpoint of an evaluator's answer."""

    name: str
    passed: bool
    weight: float


@dataclass
class GoalOutcome:
    """What a goal's evaluator found: its checkpoints, or why there are none.

    ``status``: ``evaluated`` (checkpoints hold), ``broken`` (the evaluator is at fault: the
    oracle's error, ``reason`` says how) or ``not_evaluated`` (the scenario's page was gone:
    abandoned at the deadline or hung; the goal counts as not reached).
    """

    goal: str
    file: str
    status: Status
    checkpoints: list[Checkpoint] = field(default_factory=list)
    reason: str = ""

    @property
    def reward(self) -> float:
        """Σ weight over the checkpoints passed (0 when not evaluated)."""
        return dense_reward(self.checkpoints) if self.status == "evaluated" else 0.0

    @property
    def success(self) -> bool:
        """Every checkpoint passed (InfiniteWeb's binary success)."""
        return self.status == "evaluated" and bool(self.checkpoints) and all(c.passed for c in self.checkpoints)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form (the item result's ``goal``), with the reward and success."""
        return {**asdict(self), "reward": self.reward, "success": self.success}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GoalOutcome:
        """Inverse of ``to_dict``."""
        checkpoints = [Checkpoint(str(c["name"]), bool(c["passed"]), float(c["weight"])) for c in data.get("checkpoints") or []]
        return cls(str(data["goal"]), str(data["file"]), data["status"], checkpoints, str(data.get("reason", "")))

    def describe(self) -> str:
        """One line per checkpoint, then the reward (the item's report section)."""
        if self.status != "evaluated":
            return f"goal {self.goal} ({self.file}): {self.status.replace('_', ' ')}: {self.reason}"
        lines = [f"goal {self.goal} ({self.file}): dense reward {self.reward:.4g}, success {'yes' if self.success else 'no'}"]
        lines += [f"  [{'x' if c.passed else ' '}] {c.name} (weight {c.weight:g})" for c in self.checkpoints]
        return "\n".join(lines)


class MalformedCheckpoints(ValueError):
    """An evaluator's answer that is not a valid list of weighted checkpoints; the message says why."""


class EvaluatorError(OracleError):
    """A goal's evaluator is broken (throws, does not parse, answers malformed checkpoints): the oracle's fault."""


def dense_reward(checkpoints: list[Checkpoint]) -> float:
    """Σ weight · passed, exact to 1e-9 (weights like 0.1 + 0.2 do not leave float noise)."""
    return round(math.fsum(c.weight for c in checkpoints if c.passed), 9)


def checkpoints_from(value: Any) -> list[Checkpoint]:
    """The evaluator's answer as checkpoints; ``MalformedCheckpoints`` saying what is wrong with it."""
    if not isinstance(value, list) or not value:
        raise MalformedCheckpoints(f"it returned {_shown(value)}; expected a non-empty list [{{name, passed, weight}}, ...]")
    checkpoints: list[Checkpoint] = []
    for index, entry in enumerate(value):
        where = f"checkpoint {index + 1}"
        if not isinstance(entry, dict):
            raise MalformedCheckpoints(f"{where} is {_shown(entry)}; expected an object {{name, passed, weight}}")
        name, passed, weight = entry.get("name"), entry.get("passed"), entry.get("weight")
        if not isinstance(name, str) or not name.strip():
            raise MalformedCheckpoints(f"{where} has name {_shown(name)}; expected a non-empty string")
        where = f"checkpoint {name!r}"
        if not isinstance(passed, bool):
            raise MalformedCheckpoints(f"{where} has passed = {_shown(passed)}; expected true or false (wrap the test in Boolean(...))")
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight) or weight <= 0:
            raise MalformedCheckpoints(f"{where} has weight {_shown(weight)}; expected a positive number")
        if any(c.name == name for c in checkpoints):
            raise MalformedCheckpoints(f"{where} appears twice; checkpoint names must be unique")
        checkpoints.append(Checkpoint(name, passed, float(weight)))
    total = math.fsum(c.weight for c in checkpoints)
    if abs(total - 1.0) > WEIGHT_TOLERANCE:
        raise MalformedCheckpoints(f"the weights sum to {total:.6g} ({' + '.join(f'{c.weight:g}' for c in checkpoints)}); they must sum to 1")
    return checkpoints


def _shown(value: Any) -> str:
    text = "null" if value is None else repr(value)
    return text if len(text) <= 80 else text[:79] + "…"


def _direct(call: Callable[[], T], timeout_s: float, what: str) -> T:
    return call()


def evaluate_goal(
    driver: Any,
    goal: Goal,
    *,
    base_url: str,
    entry_url: str,
    file: str | None = None,
    bounded: Callable[[Callable[[], Any], float, str], Any] = _direct,
    hung: tuple[type[BaseException], ...] = (),
) -> GoalOutcome:
    """Run ``goal``'s evaluator in the page the scenario left, and judge its answer.

    A page that has left the app's origin (or never reached it) is first sent to ``entry_url``:
    localStorage belongs to the origin and outlives the page. ``bounded`` runs a WebDriver call
    under a time limit (the pool's ``SharedBrowser.bounded``); an error of type ``hung`` (the
    page stopped answering) or a dialog the page left open makes the goal ``not_evaluated``.
    Other WebDriver errors (the browser died) propagate: the machine's fault.
    """
    from selenium.common.exceptions import JavascriptException, TimeoutException, UnexpectedAlertPresentException

    name = file or str(goal.path)
    note = ""
    try:
        if origin_of(str(bounded(lambda: driver.current_url, EVALUATOR_TIMEOUT_S, "reading the page's URL"))) != origin_of(base_url):
            bounded(lambda: driver.get(entry_url), EVALUATOR_TIMEOUT_S * 3, "opening the app for the evaluator")
            note = f"the scenario had left the app; evaluated on {entry_url}"
        script = EVALUATOR_SCRIPT % goal.evaluator
        limit = EVALUATOR_TIMEOUT_S + API_TIMEOUT_S + 5
        bounded(lambda: driver.set_script_timeout(limit), EVALUATOR_TIMEOUT_S, "setting the script timeout")  # a step may have lowered it
        answer = bounded(
            lambda: driver.execute_async_script(script, int(EVALUATOR_TIMEOUT_S * 1000), int(API_TIMEOUT_S * 1000)),
            limit, "running the goal's evaluator",
        )
    except hung as err:
        return GoalOutcome(goal.id, name, "not_evaluated", reason=f"the page stopped answering: {err}")
    except UnexpectedAlertPresentException as err:  # the page's own dialog: not the evaluator's fault, nor the machine's
        return GoalOutcome(goal.id, name, "not_evaluated", reason=f"the page left a dialog open: {_first_line(err)}")
    except (JavascriptException, TimeoutException) as err:
        return GoalOutcome(goal.id, name, "broken", reason=f"the evaluator does not run: {_first_line(err)}")
    if not isinstance(answer, dict):
        return GoalOutcome(goal.id, name, "broken", reason=f"the evaluator's wrapper answered {_shown(answer)}")
    if "error" in answer:
        return GoalOutcome(goal.id, name, "broken", reason=f"the evaluator threw: {_first_line(answer['error'])}")
    if answer.get("late"):
        return GoalOutcome(goal.id, name, "broken", reason=f"the evaluator did not answer within {EVALUATOR_TIMEOUT_S:g} s")
    try:
        checkpoints = checkpoints_from(answer.get("value"))
    except MalformedCheckpoints as err:
        return GoalOutcome(goal.id, name, "broken", reason=f"malformed checkpoints: {err}")
    return GoalOutcome(goal.id, name, "evaluated", checkpoints, note)


def _first_line(err: object) -> str:
    text = str(getattr(err, "msg", None) or err).strip()
    return text.splitlines()[0] if text else type(err).__name__


__all__ = ["Checkpoint", "EvaluatorError", "GoalOutcome", "MalformedCheckpoints", "checkpoints_from", "dense_reward", "evaluate_goal"]
