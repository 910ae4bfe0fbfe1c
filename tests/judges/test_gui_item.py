"""Frontend judge cases in a real run: event-registration's reference (process runtime, PostgreSQL) in the worker's browser pool.

One case creates an event through the page and answers YES, and the DB-log question sees the
INSERT; the other answers YES without doing anything, and the DB log, which shows no write,
demotes it to NO (FullStack-Bench's rule). The scripted judge answers the DB question from the
statements it is shown, as a model would.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pytest_backendbench.db.providers.local_cluster import server_unavailable_reason

from ..conftest import read_report
from .scripted_model import ChatRequest, ScriptedModelServer

REPO = Path(__file__).resolve().parents[2]
TASK = "event-registration"
CASES = """\
cases:
  - id: FE-1
    kind: frontend
    requirement: R2
    instruction: Create an event titled "Team dinner" starting at 2030-05-01T18:00:00Z with 12 seats.
    expected: Team dinner appears among the upcoming events.
    db_interaction: A row is inserted into the events table.
  - id: FE-2
    kind: frontend
    requirement: R2
    instruction: Create an event titled "Board meeting" with 5 seats.
    expected: Board meeting appears among the upcoming events.
    db_interaction: A row is inserted into the events table.
"""
# the page numbers its fields: [0] title, [1] starts, [2] seats, [3] Create, [4] name, [5] e-mail, [6] Register
GUI_SCRIPT = {
    "Team dinner": [
        "Thought: The title field is [0].\nAction: Type [0]; Team dinner",
        "Thought: It needs a start time in [1].\nAction: Type [1]; 2030-05-01T18:00:00Z",
        "Thought: And the seats in [2].\nAction: Type [2]; 12",
        "Thought: The form was sent; let the list refresh.\nAction: Wait",
        "Thought: Team dinner is listed under Upcoming.\nAction: ANSWER; YES",
    ],
    "Board meeting": ["Thought: Board meeting is surely there.\nAction: ANSWER; YES"],  # a judge that did nothing
}
CONFTEST = """
import pytest
from pytest_backendbench.judges.context import judge_context

@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    context = judge_context(config)
    if context is not None:
        context.extra["gui_pause_scale"] = 0.1  # WebVoyager's fixed pauses (5 s after loading, 13 s around typing) cut short
"""


def answer(request: ChatRequest) -> str:
    """The GUI steps from the script, an appearance grade, the DB question answered from the statements it shows."""
    if request.purpose == "appearance":
        return "Analysis: a plain form.\n\nGrade: 3"
    if request.purpose == "db-interaction":
        shown = "\n".join(request.texts())
        return "Database Interaction Correctness: " + ("YES" if "INSERT INTO events" in shown else "NO")
    task = request.first_user_text().split("Expected Result:")[0]  # the page's own text (the events listed) comes later
    key = next(k for k in GUI_SCRIPT if k in task)
    return GUI_SCRIPT[key][request.step]


@pytest.mark.browser
@pytest.mark.postgres
def test_a_gui_judge_creates_a_record_and_a_yes_without_a_write_is_demoted(pytester: pytest.Pytester, shared_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reason = server_unavailable_reason()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set and this test cannot run: {reason}", pytrace=False)
        pytest.skip(reason)
    monkeypatch.setenv("BACKENDBENCH_CACHE", str(shared_cache))
    shutil.copytree(REPO / "benchmarks" / TASK, pytester.path / "benchmarks" / TASK)
    (pytester.path / "oracles" / TASK / "judge").mkdir(parents=True)
    (pytester.path / "oracles" / TASK / "judge" / "cases.yaml").write_text(CASES)
    candidate = pytester.path / "candidates" / TASK
    shutil.copytree(REPO / "oracles" / TASK / "reference", candidate)
    pytester.makeconftest(CONFTEST)
    with ScriptedModelServer(answer) as server:
        result = pytester.runpytest(
            f"--candidate={candidate}", f"--bench-judge=openai:{server.model}", f"--bench-judge-base-url={server.base_url}",
            "--bench-runtime=process", "-p", "no:cacheprovider", "--bench-report-dir=out", "-k", "FE",
        )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*judge case FE-2: the judge said YES, but the database log does not show the interaction it needs*"])
    items = {i["judge"]["case"]: i for t in read_report(pytester.path / "out")["tasks"] for i in t["items"] if i["kind"] == "judge"}
    assert (items["FE-1"]["outcome"], items["FE-1"]["judge"]["verdict"], items["FE-1"]["judge"]["db_confirmed"]) == ("passed", "YES", True)
    assert (items["FE-2"]["outcome"], items["FE-2"]["judge"]["verdict"], items["FE-2"]["judge"]["counted"]) == ("failed", "YES", "NO")
    questions = ["\n".join(r.texts()) for r in server.requests if r.purpose == "db-interaction"]
    assert len(questions) == 2 and "INSERT INTO events" in questions[0] and "INSERT INTO events" not in questions[1]
    assert items["FE-1"]["judge"]["appearance"]["grade"] == 3 and "appearance" not in items["FE-2"]["judge"]  # once per run
    page = (pytester.path / "out" / "report.html").read_text()
    assert "appearance grade (WebGen-Bench's, 1-5): 3" in page
    assert "100.0% (100.0% / 0.0% / 0.0% / 0.0% of 2 cases)" in page  # WebGen-Bench's accuracy: the judge's own verdicts
    trajectory = (pytester.path / "out" / items["FE-1"]["judge"]["trajectory"]).read_text()
    assert "Type [2]; 12" in trajectory and "Wait" in trajectory and "step-01.png" in trajectory
