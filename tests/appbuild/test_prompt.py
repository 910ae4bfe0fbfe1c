"""AB-02: the judge sees the task's prompt and a full-page screenshot, and its answer is the grade and the reason."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_backendbench.appbuild.grades import Grade
from pytest_backendbench.appbuild.prompt import PURPOSE, PromptAnswerError, grade_prompt
from pytest_backendbench.bdd.browser.shared import SharedBrowser
from pytest_backendbench.judges.context import JUDGE_CONTEXT_KEY, JudgeContext
from pytest_backendbench.judges.model import JudgeAnswer

pytestmark = pytest.mark.browser


class ScriptedJudge:
    """Answers from a list, keeping what it was asked."""

    name = "scripted:judge"

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[list[dict[str, Any]], str]] = []

    def ask(self, messages: list[dict[str, Any]], *, purpose: str, tools: list[dict[str, Any]] | None = None) -> JudgeAnswer:
        self.asked.append((messages, purpose))
        return JudgeAnswer(text=self.answers.pop(0), tokens_in=900, tokens_out=12, replayed=False)


def check_item(tmp_path: Path, judge: ScriptedJudge) -> Any:
    """What grade_prompt reads of its item: the run's judge, the task's prompt, where to keep the screenshot."""
    spec = tmp_path / "spec.md"
    spec.write_text("# Sweep fixture\nA page with buttons that add lines and show more.\n")
    context = JudgeContext(name=judge.name, model_for_repeat=lambda repeat: judge)
    return SimpleNamespace(
        config=SimpleNamespace(stash={JUDGE_CONTEXT_KEY: context}), run_key=None,
        task=SimpleNamespace(spec_path=spec, primary_route="/index.html"),
        artifacts_folder=lambda: tmp_path, report_path=lambda path: path.name,
    )


def test_the_judges_grade_and_reason_from_the_prompt_and_a_screenshot(browser: SharedBrowser, pages: str, tmp_path: Path) -> None:
    judge = ScriptedJudge("WARN\nThe page adds lines, but shows no title for the list.", "I would rather not say.")
    grade, score, details, summary = grade_prompt(check_item(tmp_path, judge), browser, f"{pages}/index.html")
    assert (grade, score) == (Grade.WARN, 0.5)
    assert details["reason"].endswith("shows no title for the list.") and details["model"] == "scripted:judge"
    assert summary.startswith("WARN by scripted:judge: WARN")
    (messages, purpose), = judge.asked
    assert purpose == PURPOSE
    user = messages[1]["content"]
    assert "A page with buttons that add lines" in user[0]["text"]
    assert user[1]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")
    assert (tmp_path / details["screenshot"]).read_bytes().startswith(b"\x89PNG")
    with pytest.raises(PromptAnswerError, match="names none of PASS, WARN, FAIL: 'I would rather not say.'"):
        grade_prompt(check_item(tmp_path, judge), browser, f"{pages}/index.html")
