"""The judges' core with fakes: case files, verdict parsing, the model's cache, the API agent's
loop, the DB-log question and the judged figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import requests

from pytest_backendbench.errors import HarnessError, TaskFormatError
from pytest_backendbench.judges.api_judge import ApiAgent, judge_backend_case
from pytest_backendbench.judges.cases import JudgeCase, load_cases
from pytest_backendbench.judges.db_judge import judge_database, parse_database_answer
from pytest_backendbench.judges.db_log import interaction_confirmed
from pytest_backendbench.judges.items import JudgeItem
from pytest_backendbench.judges.model import JudgeAnswer, JudgeCache, JudgeServer, JudgeServerError, OpenAIJudgeModel, check_judge_server
from pytest_backendbench.judges.trajectory import JudgeOutcome
from pytest_backendbench.judges.verdicts import JudgeAnswerError, Verdict, parse_verdict
from pytest_backendbench.results import ItemResult, TaskResult
from pytest_backendbench.scores.judged import judged_figures

from .conftest import tool_call
from .scripted_model import ScriptedModelServer

CASE = JudgeCase("BE-1", "backend", "Create a note titled a.", "A note is created.", "R1", db_interaction="a row is inserted into notes")


class FakeModel:
    """Answers from a list, recording what it was asked."""

    name = "fake"

    def __init__(self, *answers: str | dict[str, Any]) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, list[dict[str, Any]]]] = []

    def ask(self, messages: list[dict[str, Any]], *, purpose: str, tools: list[dict[str, Any]] | None = None) -> JudgeAnswer:
        self.asked.append((purpose, [dict(m) for m in messages]))
        answer = self.answers.pop(0)
        if isinstance(answer, str):
            return JudgeAnswer(answer, 10, 2, False, message={"role": "assistant", "content": answer})
        from pytest_backendbench.llm.chat import ToolCall

        calls = tuple(ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in answer["tool_calls"])
        return JudgeAnswer(answer["content"], 10, 2, False, calls, {"role": "assistant", "content": answer["content"], "tool_calls": answer["tool_calls"]})


# --- case files ---------------------------------------------------------------------------------


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cases.yaml"
    path.write_text(text)
    return path


def test_a_case_file_loads_with_its_defaults(tmp_path: Path) -> None:
    path = write(tmp_path, "cases:\n  - {id: FE-1, kind: frontend, requirement: R1, instruction: Log in., expected: The dashboard shows.}\n")
    (case,) = load_cases(path, {"R1": "..."})
    assert case == JudgeCase("FE-1", "frontend", "Log in.", "The dashboard shows.", "R1", "workflow", "base", None)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("cases:\n  - {id: A, kind: gui, requirement: R1, instruction: x, expected: y}\n", "cases[0] (A).kind: got 'gui'; expected one of frontend, backend, database"),
        ("cases:\n  - {id: A, kind: backend, requirement: R1, expected: y}\n", "cases[0] (A).instruction: got None; expected what the judge should do"),
        ("cases:\n  - {id: A, kind: backend, requirement: R9, instruction: x, expected: y}\n", "cases[0] (A).requirement: R9 is not a requirement of the task (known: R1)"),
        ("cases:\n  - {id: A, kind: backend, requirement: R1, instruction: x, expected: y}\n  - {id: A, kind: backend, requirement: R1, instruction: x, expected: y}\n", "cases[1] (A).id: 'A' is given twice"),
        ("cases:\n  - {kind: backend}\n", "cases[0].id: missing"),
        ("cases:\n  - {id: A, kind: backend, requirement: R1, instruction: x, expected: y, verdict: YES}\n", "cases[0] (A): unknown field(s) verdict"),
        ("- id: A\n", "cases: expected a mapping with a list of cases"),
    ],
)
def test_a_malformed_case_file_names_the_file_the_case_and_the_field(tmp_path: Path, body: str, message: str) -> None:
    path = write(tmp_path, body)
    with pytest.raises(TaskFormatError) as caught:
        load_cases(path, {"R1": "..."})
    assert str(caught.value).startswith(f"{path}: {message}")


# --- answers --------------------------------------------------------------------------------------


def test_the_last_verdict_of_an_answer_counts() -> None:
    assert parse_verdict("YES, PARTIAL or NO? Thought: half of it worked. Action: ANSWER; PARTIAL") is Verdict.PARTIAL
    assert parse_verdict("Final Judgement: NO", allowed=(Verdict.YES, Verdict.NO)) is Verdict.NO
    assert Verdict.PARTIAL.credit == 0.5


def test_an_answer_without_a_verdict_is_a_harness_error_showing_the_raw_answer() -> None:
    with pytest.raises(JudgeAnswerError) as caught:
        parse_verdict("I think the page looks nice.")
    assert isinstance(caught.value, HarnessError)
    assert "the raw answer ---\nI think the page looks nice." in str(caught.value)
    with pytest.raises(JudgeAnswerError, match='no {"answer": "Yes"}'):
        parse_database_answer("Probably yes.")
    assert parse_database_answer('reasoning...\n```json\n{"answer": "Yes"}\n```') is Verdict.YES


def test_a_yes_the_database_log_does_not_bear_out_counts_as_no() -> None:
    outcome = JudgeOutcome(Verdict.YES, "", [], 0, 0, db_confirmed=False)
    assert JudgeItem.counted_verdict(outcome) is Verdict.NO
    assert JudgeItem.counted_verdict(JudgeOutcome(Verdict.PARTIAL, "", [], 0, 0, db_confirmed=True)) is Verdict.PARTIAL


# --- the model and its cache --------------------------------------------------------------------


def test_answers_are_cached_by_digest_and_replayed_without_a_server(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "judge-cache")
    messages = [{"role": "user", "content": [{"type": "text", "text": "Is it there?"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}]
    with ScriptedModelServer({"db-verdict": ["YES"]}, keyed_by="order") as server:
        model = OpenAIJudgeModel(JudgeServer("m", server.base_url, seed=3), cache)
        first = model.ask(messages, purpose="db-verdict")
        again = model.ask(messages, purpose="db-verdict")
    assert (first.text, first.replayed, again.text, again.replayed) == ("YES", False, "YES", True)
    assert len(server.requests) == 1 and server.requests[0].body["seed"] == 3 and server.requests[0].purpose == "db-verdict"
    other_image = [{"role": "user", "content": [messages[0]["content"][0], {"type": "image_url", "image_url": {"url": "data:image/png;base64,BBBB"}}]}]
    offline = OpenAIJudgeModel(JudgeServer("m", "http://127.0.0.1:9/v1", seed=3), cache, offline=True)
    assert offline.ask(messages, purpose="db-verdict").replayed
    with pytest.raises(JudgeServerError, match="no cached judge answer"):
        offline.ask(other_image, purpose="db-verdict")  # another screenshot is another question


def test_a_failing_server_is_a_judge_server_error_and_the_preflight_says_why() -> None:
    with ScriptedModelServer([], status=503) as server:
        model = OpenAIJudgeModel(JudgeServer("m", server.base_url, timeout_s=5, attempts=1))
        with pytest.raises(JudgeServerError, match="HTTP 503"):
            model.ask([{"role": "user", "content": "x"}], purpose="p")
        assert "fails (HTTP 503" in str(check_judge_server(JudgeServer("m", server.base_url)))
    with ScriptedModelServer(["x"]) as server:
        assert check_judge_server(JudgeServer("m", server.base_url)) is None


# --- the API agent, the DB-log question, the database judge -----------------------------------


class FakeSession(requests.Session):
    """Answers every request with 201 and the request it got."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[tuple[str, str, Any]] = []

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        self.sent.append((str(method), str(url), kwargs.get("json")))
        response = requests.Response()
        response.status_code = 201
        response._content = json.dumps({"id": 1, "title": "a"}).encode()
        response.headers["Content-Type"] = "application/json"
        return response


def test_the_api_agent_calls_its_tool_and_ends_with_a_verdict() -> None:
    model = FakeModel(tool_call("POST", "/notes", json_body={"title": "a"}), "It was created. Final Judgement: YES")
    session = FakeSession()
    outcome = judge_backend_case(model, CASE, "openapi: ...", session, max_steps=5, deadline=float("inf"))
    assert outcome.verdict is Verdict.YES and session.sent == [("POST", "/notes", {"title": "a"})]
    assert [s.action for s in outcome.steps] == ['POST /notes {"title": "a"} -> 201', "ANSWER; YES"]
    tool_message = model.asked[1][1][-1]
    assert tool_message["role"] == "tool" and tool_message["content"].startswith("HTTP 201\nContent-Type: application/json")


def test_the_api_agent_explains_a_bad_tool_call_and_stops_at_its_step_budget() -> None:
    bad = tool_call("FETCH", "notes")
    agent = ApiAgent(FakeModel(bad, bad), FakeSession(), max_steps=2, deadline=float("inf"))
    with pytest.raises(HarnessError, match="no conclusion in 2 steps"):
        agent.run([{"role": "user", "content": "test"}], "api-step")
    assert agent.steps[0].action == "malformed request FETCH notes"
    with pytest.raises(JudgeAnswerError, match="no verdict"):
        judge_backend_case(FakeModel("I am not sure."), CASE, "", FakeSession(), max_steps=2, deadline=float("inf"))


def test_the_db_log_question_is_asked_only_when_the_case_names_an_interaction() -> None:
    model = FakeModel("Database Interaction Correctness: NO")
    assert interaction_confirmed(model, CASE, ["SELECT 1"]) is False
    purpose, messages = model.asked[0]
    assert purpose == "db-interaction" and "SELECT 1" in messages[0]["content"] and "a row is inserted into notes" in messages[0]["content"]
    assert interaction_confirmed(FakeModel(), JudgeCase("FE-1", "frontend", "x", "y", "R1"), []) is True


def test_the_database_judge_sees_columns_and_rows_as_json() -> None:
    snapshot = {"tables": {"notes": {"columns": {"id": {}, "title": {}}, "rows": [{"id": 1, "title": "a"}], "row_count": 1}}}
    model = FakeModel('{"answer": "No"}')
    outcome = judge_database(model, JudgeCase("DB-1", "database", "notes with their titles", "a notes table", "R1"), snapshot)
    assert outcome.verdict is Verdict.NO
    prompt = model.asked[0][1][0]["content"]
    assert '"columns": [\n   "id",\n   "title"\n  ]' in prompt and "Does the database contain notes with their titles (expected: a notes table)?" in prompt


# --- figures ----------------------------------------------------------------------------------------


def judged_item(case: str, kind: str, verdict: str, counted: str, requirement: str, outcome: str | None = None, partial: bool = False) -> ItemResult:
    ended = outcome or ("passed" if counted == "YES" else "failed")
    facts = {"case": case, "case_kind": kind, "verdict": verdict, "counted": counted, "calls": 2, "replayed": 1, "tokens_in": 100, "tokens_out": 10, "cost_usd": 0.001, "model": "openai:m"}
    return ItemResult(f"judge/{case}", "t", "t", "judge", ended, requirements=[requirement], partial=partial, judge=facts)


def test_judged_figures_stand_apart_from_the_deterministic_ones() -> None:
    items = [
        ItemResult("test_a", "t", "t", "http", "passed", requirements=["R1"]),
        judged_item("FE-1", "frontend", "YES", "YES", "R1"),
        judged_item("FE-2", "frontend", "PARTIAL", "PARTIAL", "R2", partial=True),
        judged_item("FE-3", "frontend", "YES", "NO", "R2"),  # demoted by the DB log
        judged_item("BE-1", "backend", "NO", "NO", "R3"),
        judged_item("DB-1", "database", "YES", "YES", "R3", outcome="error"),
    ]
    figures = judged_figures([TaskResult("t", "t", items=items, finished=True)])
    assert figures is not None
    assert figures["judged_test_acc"] == pytest.approx(1.5 / 5) and figures["judged_test_acc_determined"] == pytest.approx(1.5 / 4)
    assert figures["judged_req_acc"] == pytest.approx(1 / 3)
    fsb = figures["fullstack_bench"]
    assert fsb["fe_acc"] == pytest.approx(2.5 / 3) and fsb["fe_acc_valid_db"] == pytest.approx(1.5 / 3)
    assert (fsb["be_acc"], fsb["db_acc"], fsb["db_cases"]) == (0.0, 0.0, 1)
    assert figures["usage"] == {"model": "openai:m", "calls": 10, "replayed": 5, "tokens_in": 500, "tokens_out": 50, "cost_usd": 0.005}
    assert judged_figures([TaskResult("t", "t", items=items[:1])]) is None


def test_repeats_give_the_judges_spread() -> None:
    runs = [
        TaskResult("t", "t@r1", repeat=1, items=[judged_item("FE-1", "frontend", "YES", "YES", "R1")]),
        TaskResult("t", "t@r2", repeat=2, items=[judged_item("FE-1", "frontend", "NO", "NO", "R1")]),
    ]
    spread = judged_figures(runs)["spread"]  # type: ignore[index]
    assert spread["judged_test_acc"]["mean"] == 0.5 and spread["verdict_flip_rate"] == 1.0 and spread["changed_cases"] == ["t: FE-1"]


def test_a_malformed_judge_price_is_a_usage_error() -> None:
    from pytest_backendbench.judge_hooks import judge_price

    assert judge_price("0.15/0.60") == (0.15, 0.60) and judge_price(None) is None
    with pytest.raises(pytest.UsageError, match="--bench-judge-price: openai price '3': expected IN/OUT"):
        judge_price("3")
