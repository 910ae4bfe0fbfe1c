"""The pairwise visual judge through ``backendbench report compare --visual``, against the scripted vision server."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_backendbench.cli import main
from pytest_backendbench.errors import HarnessError
from pytest_backendbench.judges.visual_pairwise import compare_visually, parse_answer, swapped_keys
from pytest_backendbench.metrics import MetricOptions
from pytest_backendbench.recorder import base_manifest
from pytest_backendbench.report.json_report import build_report, write_report
from pytest_backendbench.results import ItemResult, TaskResult

from .scripted_model import ChatRequest, ScriptedModelServer

TASKS = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta")


def page(run: str, task: str) -> bytes:
    return f"\x89PNG page of {task} in run {run}".encode()


def write_run(folder: Path, run: str, without: tuple[str, ...] = ()) -> Path:
    """A report whose smoke items keep a page screenshot per task (as --bench-page-screenshot does)."""
    results = []
    for task in TASKS:
        artifacts = {}
        if task not in without:
            shot = folder / "artifacts" / task / "page.png"
            shot.parent.mkdir(parents=True, exist_ok=True)
            shot.write_bytes(page(run, task))
            artifacts["screenshot"] = f"artifacts/{task}/page.png"
        smoke = ItemResult(nodeid=f"{task}::smoke", task=task, candidate=task, kind="smoke", outcome="passed", artifacts=artifacts)
        results.append(TaskResult(task=task, candidate=task, finished=True, items=[smoke]))
    write_report(folder, build_report(results, base_manifest("process", run, {}, 0, None), MetricOptions()))
    return folder


def which_run_first(request: ChatRequest) -> str:
    """'A' or 'B': whose page the judge was shown as Screenshot 1 (the last two images are the pages)."""
    return "B" if b"in run B" in request.images()[-2] else "A"


def test_answers_are_read_line_by_line_whatever_the_markup() -> None:
    text = "**Layout**: 2\nColor scheme: tie\n- typography and spacing: 1\ncomponent arrangement: 2\nOverall consistency: 2\nVerdict: **2**\nreason: cleaner"
    assert parse_answer(text) == ("2", {"layout": "2", "colour": "tie", "typography": "1", "arrangement": "2", "consistency": "2"})
    assert parse_answer("I like both.") == (None, {})


def test_report_compare_visual_gives_b_win_tie_lose_rates_with_the_order_swapped_half_the_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = write_run(tmp_path / "run-a", "A"), write_run(tmp_path / "run-b", "B", without=("zeta",))
    bench = tmp_path / "bench"
    (bench / "benchmarks" / "alpha").mkdir(parents=True)
    (bench / "benchmarks" / "alpha" / "design.png").write_bytes(b"\x89PNG the design")

    def judge(request: ChatRequest) -> str:
        """A judge with a position bias: it always prefers the first screenshot, except that it ties on beta."""
        if "Task beta." in "\n".join(request.texts()):
            return "layout: tie\ncolour: tie\ntypography: tie\narrangement: tie\nconsistency: tie\nverdict: tie\nreason: the same page"
        return "layout: 1\ncolour: 2\ntypography: 1\narrangement: 1\nconsistency: 1\nverdict: 1\nreason: the first is tidier"

    with ScriptedModelServer(judge) as server:
        code = main([
            "report", "compare", str(a), str(b), "--visual", "--judge", "openai:scripted-vl", "--judge-base-url", server.base_url,
            "--bench-root", str(bench), "--out", str(tmp_path / "out"),
        ])
    assert code == 0
    judged = [t for t in TASKS if t != "zeta"]
    swapped = swapped_keys(judged)
    assert len(swapped) == 2  # half of five, deterministically (by the keys' hashes)
    first = {r.first_user_text().split("Task ")[1].split(".")[0]: which_run_first(r) for r in server.requests}
    assert first == {t: "B" if t in swapped else "A" for t in judged}
    assert {r.purpose for r in server.requests} == {"visual-pairwise"}
    design = next(r for r in server.requests if "Task alpha." in r.first_user_text())
    assert design.images()[0] == b"\x89PNG the design" and len(design.images()) == 3

    # the biased judge hands B a win exactly where B was shown first; beta is a tie
    wins = sum(1 for t in judged if t != "beta" and t in swapped)
    loses = len(judged) - 1 - wins
    visual = json.loads((tmp_path / "out" / "leaderboard.json").read_text())["visual"][0]
    assert (visual["pairs"], visual["overall"]) == (5, {"judged": 5, "win": wins / 5, "tie": 1 / 5, "lose": loses / 5})
    assert visual["by_dimension"]["colour"] == {"judged": 5, "win": loses / 5, "tie": 1 / 5, "lose": wins / 5}  # "2" is the other side
    assert visual["missing"] == ["zeta: no page screenshot in run B (run it with --bench-page-screenshot)"]

    printed = capsys.readouterr().out
    assert "## Visual: run-b against run-a (judge openai:scripted-vl, 5 page pairs, 1 with a design image" in printed
    assert f"| overall | {wins / 5 * 100:.1f}% | 20.0% | {loses / 5 * 100:.1f}% | 5 |" in printed
    assert "run-b loses" in (tmp_path / "out" / "visual.html").read_text()
    assert len(list((tmp_path / "out" / "judge-cache").glob("*.json"))) == 5  # a re-run replays them


@pytest.mark.parametrize(
    ("judge", "message"),
    [("", "--visual needs a vision judge model: --judge openai:<model>"), ("gpt", "--judge 'gpt': expected openai:<model>")],
)
def test_visual_without_a_usable_judge_says_what_to_add(judge: str, message: str) -> None:
    with pytest.raises(HarnessError, match=re.escape(message)):
        compare_visually([], judge, base_url="http://127.0.0.1:9/v1", bench_root=None, cache_dir=None)
