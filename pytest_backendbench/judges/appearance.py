"""WebGen-Bench's appearance grade: a vision model grades the site's look from 1 to 5.

As ``src/grade_appearance_*/``: the entry page in a 1024x768 window, up to three screenshots
one viewport apart (``get_screenshots.py``: 0.4 s pause after loading and after each scroll),
sent with WebGen-Bench's prompt (``prompt.py``, verbatim) under the system message "You are a
helpful assistant." (``vlm_eval.py``); the grade is the first digit after "Grade"
(``compute_grade.py``'s ``first_grade_int``). WebGen-Bench scores an answer without one 0; here
it is a ``JudgeAnswerError`` (the model's fault, not the site's). The run's figure is the mean
over the candidates of the run (scores/webgen_bench.py), WebGen-Bench's sum over its 101 sites / 101.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .model import JudgeModel, image_part
from .verdicts import JudgeAnswerError

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

PURPOSE = "appearance"
SYSTEM_MESSAGE = "You are a helpful assistant."
MAX_SHOTS = 3
PAUSE_S = 0.4
WINDOW_SIZE = (1024, 768)

APPEARANCE_PROMPT = """
Instruction:
You are tasked with evaluating the functional design of a webpage that had been constructed based on the following instruction:

{instruction}

Grade the webpage’s appearance on a scale of 1 to 5 (5 being highest), considering the following criteria:

  - Successful Rendering: Does the webpage render correctly without visual errors? Are colors, fonts, and components displayed as specified?
  - Content Relevance: Does the design align with the website’s purpose and user requirements? Are elements (e.g., search bars, report formats) logically placed and functional?
  - Layout Harmony: Is the arrangement of components (text, images, buttons) balanced, intuitive, and clutter-free?
  - Modernness & Beauty: Does the design follow contemporary trends (e.g., minimalism, responsive layouts)? Are colors, typography, and visual hierarchy aesthetically pleasing?

Grading Scale:

  - 1 (Poor): Major rendering issues (e.g., broken layouts, incorrect colors). Content is irrelevant or missing. Layout is chaotic. Design is outdated or visually unappealing.
  - 2 (Below Average): Partial rendering with noticeable errors. Content is partially relevant but poorly organized. Layout lacks consistency. Design is basic or uninspired.
  - 3 (Average): Mostly rendered correctly with minor flaws. Content is relevant but lacks polish. Layout is functional but unremarkable. Design is clean but lacks modern flair.
  - 4 (Good): Rendered well with no major errors. Content is relevant and logically organized. Layout is harmonious and user-friendly. Design is modern and visually appealing.
  - 5 (Excellent): Flawless rendering. Content is highly relevant, intuitive, and tailored to user needs. Layout is polished, responsive, and innovative. Design is cutting-edge, beautiful, and memorable.

Task:
Review the provided screenshot(s) of the webpage. Provide a detailed analysis and then assign a grade (1–5) based on your analysis. Highlight strengths, weaknesses, and how well the design adheres to the specifications.

Your Response Format:

Analysis: [2–4 paragraphs addressing all criteria, referencing the instruction]

Grade: [1–5]

Your Response:
"""
"""WebGen-Bench's ``src/grade_appearance_*/prompt.py``, verbatim."""


@dataclass
class AppearanceGrade:
    """One site's grade, the model's text and the screenshots it saw (paths relative to the report dir)."""

    grade: int
    text: str
    screenshots: list[str] = field(default_factory=list)
    tokens_in: int = 0
    tokens_out: int = 0

    def to_dict(self) -> dict[str, object]:
        """The report's ``appearance`` fact."""
        return {"grade": self.grade, "screenshots": self.screenshots, "text": self.text, "tokens_in": self.tokens_in, "tokens_out": self.tokens_out}


def first_grade_int(text: str) -> int | None:
    """compute_grade.py's rule: the first digit after 'Grade' (any case); None when there is none."""
    match = re.search(r"Grade.*?(\d)", text, flags=re.IGNORECASE | re.DOTALL)
    return int(match.group(1)) if match else None


def capture_scroll_screenshots(driver: WebDriver, url: str, *, max_shots: int = MAX_SHOTS, pause_s: float = PAUSE_S) -> list[bytes]:
    """get_screenshots.py's ``capture_scroll_screenshots``: up to ``max_shots`` viewports, top down."""
    driver.set_window_size(*WINDOW_SIZE)
    driver.get(url)
    time.sleep(pause_s)
    viewport_height = WINDOW_SIZE[1]
    total_height = int(driver.execute_script("return document.body.scrollHeight") or 0)
    shots: list[bytes] = []
    for index in range(min(max_shots, max(1, math.ceil(total_height / viewport_height)))):
        if index:
            driver.execute_script("window.scrollBy(0, arguments[0]);", viewport_height)
            time.sleep(pause_s)
        shots.append(driver.get_screenshot_as_png())
    return shots


def appearance_messages(instruction: str, screenshots: list[bytes]) -> list[dict[str, Any]]:
    """vlm_eval.py's conversation: the system line, then the prompt and the screenshots."""
    content: list[dict[str, Any]] = [{"type": "text", "text": APPEARANCE_PROMPT.format(instruction=instruction)}]
    content += [image_part(png) for png in screenshots]
    return [{"role": "system", "content": SYSTEM_MESSAGE}, {"role": "user", "content": content}]


def grade_appearance(
    driver: WebDriver, *, url: str, instruction: str, model: JudgeModel, record_dir: Path, report_dir: Path | None = None,
) -> AppearanceGrade:
    """Screenshot the page at ``url`` and ask the model for WebGen-Bench's appearance grade."""
    shots = capture_scroll_screenshots(driver, url)
    record_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for index, png in enumerate(shots, start=1):
        path = record_dir / f"appearance-{index}.png"
        path.write_bytes(png)
        paths.append(str(path.relative_to(report_dir)) if report_dir is not None and path.is_relative_to(report_dir) else str(path))
    answer = model.ask(appearance_messages(instruction, shots), purpose=PURPOSE)
    grade = first_grade_int(answer.text)
    if grade is None:
        raise JudgeAnswerError("no 'Grade: N' in the appearance answer (WebGen-Bench would count it 0)", answer.text)
    return AppearanceGrade(grade, answer.text, paths, answer.tokens_in, answer.tokens_out)
