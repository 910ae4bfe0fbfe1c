"""WebGen-Bench's appearance grade: its prompt and grade rule, on a real page in Chromium."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_backendbench.bdd.browser.shared import SharedBrowser
from pytest_backendbench.judges.appearance import APPEARANCE_PROMPT, SYSTEM_MESSAGE, first_grade_int, grade_appearance
from pytest_backendbench.judges.model import JudgeServer, OpenAIJudgeModel
from pytest_backendbench.judges.verdicts import JudgeAnswerError

from ..bdd.conftest import StaticServer
from .scripted_model import ScriptedModelServer

SITE = Path(__file__).parent / "data" / "notes_site"
INSTRUCTION = "Please implement a notes website where users log in and add notes."


def test_the_grade_is_the_first_digit_after_grade() -> None:
    assert first_grade_int("Analysis: fine.\n\nGrade: 4") == 4
    assert first_grade_int("grade - the page earns a 3 of 5") == 3  # compute_grade.py: any case, anything between
    assert first_grade_int("Analysis: 5 stars") is None


@pytest.fixture(scope="module")
def site() -> Iterator[StaticServer]:
    server = StaticServer(SITE)
    yield server
    server.close()


@pytest.mark.browser
def test_the_page_is_graded_from_its_screenshots(session_browser: SharedBrowser, site: StaticServer, tmp_path: Path) -> None:
    session_browser.reset(site.base_url)
    with ScriptedModelServer({"appearance": ["Analysis: plain but clean.\n\nGrade: 3", "Analysis: no verdict"]}, keyed_by="order") as server:
        model = OpenAIJudgeModel(JudgeServer(model="scripted-vl", base_url=server.base_url))
        grade = grade_appearance(session_browser.driver, url=site.base_url + "/", instruction=INSTRUCTION, model=model, record_dir=tmp_path / "a", report_dir=tmp_path)
        assert (grade.grade, grade.screenshots) == (3, ["a/appearance-1.png"])  # a short page: one viewport
        request = server.requests[0]
        assert request.messages[0] == {"role": "system", "content": SYSTEM_MESSAGE}
        assert request.messages[1]["content"][0]["text"] == APPEARANCE_PROMPT.format(instruction=INSTRUCTION)
        assert len(request.images()) == 1
        with pytest.raises(JudgeAnswerError, match="no 'Grade: N'"):
            grade_appearance(session_browser.driver, url=site.base_url + "/", instruction=INSTRUCTION, model=model, record_dir=tmp_path / "b")
