"""Judge items in a real run: the notes reference (process runtime) judged by the scripted server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_backendbench.cli.main import main

from ..conftest import read_report
from .conftest import tool_call
from .scripted_model import ScriptedModelServer

RUN = ("--bench-runtime=process", "-p", "no:cacheprovider", "--bench-report-dir=out")
ADA = {"X-User": "ada"}
SCRIPT = {
    'titled "groceries"': [tool_call("POST", "/notes", json_body={"title": "groceries"}, headers=ADA), "The note was created with 201. Final Judgement: YES"],
    "then list": [tool_call("GET", "/notes", headers=ADA), "The list does not show it. Final Judgement: NO"],
}


def judge_items(report: dict) -> list[dict]:
    return [i for t in report["tasks"] for i in t["items"] if i["kind"] == "judge"]


def test_without_a_judge_the_cases_are_deselected_with_one_line(pytester: pytest.Pytester, judged_bench: Path, make_candidate: Callable[..., Path]) -> None:
    result = pytester.runpytest(f"--candidate={make_candidate('good')}", "--collect-only", *RUN)
    result.stdout.fnmatch_lines(["2 judge cases deselected: no --bench-judge"])
    result.stdout.fnmatch_lines(["*7/9 tests collected (2 deselected)*"])
    assert result.stdout.str().count("judge cases deselected") == 1


def test_backend_judge_over_a_real_candidate_then_replayed_without_a_server(
    pytester: pytest.Pytester, judged_bench: Path, make_candidate: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    candidate = make_candidate("good")
    with ScriptedModelServer(SCRIPT) as server:
        result = pytester.runpytest(f"--candidate={candidate}", f"--bench-judge=openai:{server.model}", f"--bench-judge-base-url={server.base_url}", *RUN)
    result.assert_outcomes(passed=8, failed=1)
    result.stdout.fnmatch_lines(["judged (openai:scripted-vl): Test.Acc 50.0%, Req.Acc 50.0% over 2 cases (1 YES / 0 PARTIAL / 1 NO / 0 errors); judge tokens * in / * out, 0 of 4 answers replayed"])
    report = read_report(judged_bench / "out")
    items = {i["judge"]["case"]: i for i in judge_items(report)}
    assert items["BE-1"]["outcome"] == "passed" and items["BE-1"]["judge"]["verdict"] == "YES"
    assert items["BE-2"]["outcome"] == "failed" and items["BE-2"]["judge"]["verdict"] == "NO"
    assert items["BE-1"]["requests"] == 1 and items["BE-1"]["contract_checked"] == 1  # through the harness's http session
    assert {r.purpose for r in server.requests} == {"api-step"}
    assert all(r.body["seed"] == 0 and r.body["temperature"] == 0.0 for r in server.requests)
    judged = report["summary"]["judged"]
    assert judged["judged_test_acc"] == 0.5 and judged["judged_req_acc"] == 0.5
    assert judged["fullstack_bench"]["be_acc"] == 0.5 and judged["usage"]["calls"] == 4 and judged["usage"]["replayed"] == 0
    assert report["summary"]["test_acc"] == 1.0  # the deterministic figures never see a judge case
    trajectory = (judged_bench / "out" / items["BE-1"]["judge"]["trajectory"]).read_text()
    assert "POST /notes" in trajectory and "ANSWER; YES" in trajectory
    page = (judged_bench / "out" / "report.html").read_text()
    assert "<h3>Judge cases</h3>" in page and "<code>POST /notes {&#34;title&#34;: &#34;groceries&#34;} -&gt; 201</code>" in page
    capsys.readouterr()
    assert main(["judge-agreement", "--reports", str(judged_bench / "out" / "report.json")]) == 0  # the scripted judge against the oracle
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[2:]]
    assert rows[:2] == [["notes", "R1", "1", "0", "0", "0", "100.0%", "-", "0"], ["notes", "R4", "0", "1", "0", "0", "0.0%", "0.00", "0"]]

    # the same run again, answered from the report dir's judge cache: no server at all
    replay = pytester.runpytest(f"--candidate={candidate}", "--bench-judge=openai:scripted-vl", "--bench-judge-replay", "--bench-judge-base-url=http://127.0.0.1:9/v1", *RUN)
    replay.assert_outcomes(passed=8, failed=1)
    usage = read_report(judged_bench / "out")["summary"]["judged"]["usage"]
    assert usage["replayed"] == 4 and usage["calls"] == 4


def test_an_unreachable_judge_server_fails_before_collection(pytester: pytest.Pytester, judged_bench: Path, make_candidate: Callable[..., Path]) -> None:
    result = pytester.runpytest(f"--candidate={make_candidate('good')}", "--bench-judge=openai:m", "--bench-judge-base-url=http://127.0.0.1:9/v1", *RUN)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --bench-judge: cannot reach the judge's server at http://127.0.0.1:9/v1*"])


def test_a_refused_key_fails_before_collection(pytester: pytest.Pytester, judged_bench: Path, make_candidate: Callable[..., Path]) -> None:
    with ScriptedModelServer([], status=401) as server:
        result = pytester.runpytest(f"--candidate={make_candidate('good')}", "--bench-judge=openai:m", f"--bench-judge-base-url={server.base_url}", *RUN)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --bench-judge: the judge's server at * refused the key (HTTP 401); set BACKENDBENCH_JUDGE_API_KEY"])
