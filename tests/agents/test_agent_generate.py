"""``--bench-generate --bench-model=agent:<model>`` through pytest (pytester), on the process runtime and sandbox.

The notes task of tests/data/bench keeps these fast; the docker sandbox and the real
url-shortener oracle are in test_agent_docker.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from pytest_backendbench.formats.atif import validate as validate_atif
from pytest_backendbench.report.merge import compare_reports, leaderboard_markdown

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode: helpers next to tests are imported by path
from chat_server import ScriptedChatServer, Turn, heredoc

DATA = Path(__file__).resolve().parents[1] / "data"
RUN = ("--bench-runtime=process", "-p", "no:cacheprovider", "-W", "ignore::UserWarning")


def notes_script(verify: bool) -> list[Turn]:
    """Writes the notes service with heredocs (the test reads the reference; the agent never does)."""
    reference = DATA / "bench" / "oracles" / "notes" / "reference"
    turns = [
        Turn(bash="cat REQUIREMENTS.md | head -3"),
        Turn(bash=heredoc("app.py", (reference / "app.py").read_text())),
        Turn(bash=heredoc("Dockerfile", (reference / "Dockerfile").read_text())),
        Turn(bash="echo 'run: python app.py' > candidate.yaml"),
    ]
    if verify:
        turns.append(Turn(tool="self_verify"))
    return [*turns, Turn(tool="submit")]


@pytest.fixture
def agent_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BACKENDBENCH_OPENAI_PRICE", "1/2")
    monkeypatch.setenv("BACKENDBENCH_OPENAI_ATTEMPTS", "2")
    monkeypatch.delenv("BACKENDBENCH_OPENAI_API_KEY", raising=False)


def test_agent_generation_is_judged_and_reported(pytester: pytest.Pytester, bench: Path, agent_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedChatServer(notes_script(verify=True)) as server:
        monkeypatch.setenv("BACKENDBENCH_OPENAI_BASE_URL", server.base_url)
        result = pytester.runpytest("--bench-generate", "--bench-model=agent:scripted", "--verify-budget=2", "--candidate=runs", "--bench-report-dir=report", *RUN)
    result.assert_outcomes(passed=7)
    result.stdout.fnmatch_lines(["backendbench generate: generate notes with agent:scripted: done in *s (exit submitted, 6 steps, 1 verify calls, 6000+600 tokens, $0.0072)"])
    verify_reply = server.requests[5]["messages"][-1]["content"]
    assert verify_reply == "SELF_VERIFY_PASS\nPhase: tests\n(1 self_verify call left)"  # the real oracle ran on the snapshot
    report = json.loads((bench / "report" / "report.json").read_text())
    generation = report["tasks"][0]["generation"]
    assert {k: generation[k] for k in ("exit_reason", "steps", "verify_calls", "submitted_with_pass", "tokens_in", "cost_usd")} == {
        "exit_reason": "submitted", "steps": 6, "verify_calls": 1, "submitted_with_pass": True, "tokens_in": 6000, "cost_usd": 0.0072,
    }
    summary = report["summary"]["generation"]
    assert summary["steps_per_task"] == 6 and summary["exit_reasons"] == {"submitted": 1} and summary["submitted_with_pass_rate"] == 1.0
    page = bench / "report" / generation["transcript_html"]
    assert page.is_file() and "SELF_VERIFY_PASS" in page.read_text()
    html = (bench / "report" / "report.html").read_text()
    assert "<h3>Generation</h3>" in html and f'href="{generation["transcript_html"]}"' in html
    # the ATIF trajectory, linked from the report: the six answers with the cost each added
    assert f'<a href="{generation["atif_trajectory"]}">ATIF</a>' in html
    trajectory = json.loads((bench / "report" / generation["atif_trajectory"]).read_text())
    assert validate_atif(trajectory) and trajectory["final_metrics"]["total_cost_usd"] == 0.0072
    assert len([s for s in trajectory["steps"] if s["source"] == "agent"]) == 6
    markdown = (bench / "report" / "summary.md").read_text()
    assert "## Generation" in markdown and "| notes | agent:scripted | submitted | 6 | 1 | yes | 6000 | 600 |" in markdown
    result.stdout.fnmatch_lines(["steps per task*6.000*", "submitted with pass rate*100.0%*"])
    board = leaderboard_markdown(compare_reports([bench / "report"]))
    assert "| steps/task | verify/task | submitted | submitted w/ PASS | seconds/task |" in board
    assert "| 6.000 | 1.000 | 100.0% | 100.0% |" in board


def test_provider_outage_is_a_harness_error_and_resume_generates_it_again(
    pytester: pytest.Pytester, bench: Path, agent_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ("--bench-generate", "--bench-model=agent:scripted", "--candidate=runs", "--bench-report-dir=report", *RUN)
    with ScriptedChatServer([Turn(bash="true"), Turn(status=500)]) as server:
        monkeypatch.setenv("BACKENDBENCH_OPENAI_BASE_URL", server.base_url)
        outage = pytester.runpytest(*args)
    outage.assert_outcomes(errors=7)  # never failures: the model was not judged
    outage.stdout.fnmatch_lines(["*generate notes with agent:scripted: HARNESS ERROR (re-run with --bench-resume) after *answered HTTP 500*"])
    generation = yaml.safe_load((bench / "runs" / "notes" / "candidate.yaml").read_text())["generation"]
    assert generation["error_kind"] == "harness" and generation["steps"] == 1 and generation["exit_reason"] == "error"
    report = json.loads((bench / "report" / "report.json").read_text())
    assert report["summary"]["generation"]["harness_errors"] == 1 and report["summary"]["failed"] == 0

    with ScriptedChatServer(notes_script(verify=False)) as server:
        monkeypatch.setenv("BACKENDBENCH_OPENAI_BASE_URL", server.base_url)
        again = pytester.runpytest(*args, "--bench-resume=report")
        assert len(server.requests) == 5
        again.assert_outcomes(passed=7)
        done = pytester.runpytest(*args, "--bench-resume=report")
        assert len(server.requests) == 5  # nothing generated the third time
    done.stdout.fnmatch_lines(["*generate notes with agent:scripted: skipped, finished in an earlier run (--bench-resume)"])


def test_bad_agent_options_are_usage_errors(pytester: pytest.Pytester, bench: Path) -> None:
    result = pytester.runpytest("--bench-generate", "--bench-model=agent:x", "--agent-actions=json", "--candidate=runs", *RUN)
    result.stderr.fnmatch_lines(["*--agent-actions: invalid choice: 'json'*"])
    result = pytester.runpytest("--bench-generate", "--bench-model=agent:x", "--agent-steps=0", "--candidate=runs", *RUN)
    result.stderr.fnmatch_lines(["*--agent-steps 0: expected at least 1"])


def test_cmd_agents_run_through_the_generator_and_unknown_ones_are_usage_errors(pytester: pytest.Pytester, bench: Path) -> None:
    pytester.makeini("[pytest]\nbackendbench_agents =\n    lazy: command=echo 'run: python app.py' > candidate.yaml && echo wrote\n")
    result = pytester.runpytest("--bench-generate", "--bench-model=cmd:lazy", "--candidate=runs", "--bench-report-dir=report", "--bench-boot-timeout=3", *RUN)
    result.stdout.fnmatch_lines(["backendbench generate: generate notes with cmd:lazy: done in *s (exit submitted*"])
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] >= 1 and "errors" not in outcomes  # no app.py: the candidate's failure, judged as usual
    generation = json.loads((bench / "report" / "report.json").read_text())["tasks"][0]["generation"]
    assert "wrote" in (bench / "report" / generation["transcript_html"]).read_text()
    unknown = pytester.runpytest("--bench-generate", "--bench-model=cmd:nope", "--candidate=runs2", *RUN)
    unknown.stderr.fnmatch_lines(["*--bench-model cmd:nope: no agent 'nope' is defined (defined: lazy; built in: mini, *(ini file read: *tox.ini;*"])
