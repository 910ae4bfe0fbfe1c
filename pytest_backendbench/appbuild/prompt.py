"""AB-02, prompt correspondence: the judge model compares the primary route's screenshot with the task's prompt.

app.build's assessors ask whether the app is the one the prompt asked for (its failure mode:
"generic templates from generation failures"). Here the judge named by ``--bench-judge``
(judges/model.py, answers cached per run) sees the task's spec.md and a full-page screenshot of
the primary route and answers PASS, WARN or FAIL with its reason, which the report keeps. An
answer without one of the three words is a harness error, never a grade.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from ..errors import HarnessError
from ..judges.model import image_part
from ..runkey import RunKey
from ..tasks import Task
from .grades import Grade, parse_grade

if TYPE_CHECKING:
    from ..bdd.browser.shared import SharedBrowser

PURPOSE = "ab-prompt"
"""The judge request's purpose (its cache entry and the scripted test servers' key)."""
MAX_PROMPT_CHARS = 12000
MAX_SCREENSHOT_HEIGHT = 4000
INSTRUCTIONS = (
    "You are app.build's assessor for check AB-02, prompt correspondence: does the generated web app, as its home page "
    "shows it, correspond to what the user asked for?\n"
    "PASS: it is clearly the requested app (its main entities and actions are there).\n"
    "WARN: it is the requested kind of app, but visibly misses or misnames part of what was asked.\n"
    "FAIL: a generic template, an unrelated or empty page, or an error page.\n"
    "Answer with PASS, WARN or FAIL on the first line, then one or two sentences saying why."
)


class PromptCheck(Protocol):
    """What AB-02 reads of the item that runs it (appbuild/items.py's ``AppCheckItem``)."""

    config: pytest.Config
    run_key: RunKey | None
    task: Task

    def artifacts_folder(self) -> Path:
        """Where the check keeps its screenshot."""
        ...

    def report_path(self, path: Path) -> str:
        """``path`` as the report links it."""
        ...


class PromptAnswerError(HarnessError):
    """The judge's answer named no grade: the check could not be made (not the candidate's fault)."""


def grade_prompt(item: PromptCheck, browser: SharedBrowser, url: str) -> tuple[Grade, float | None, dict[str, Any], str]:
    """Ask the run's judge for AB-02 over the page at ``url``; returns (grade, s, details, summary)."""
    from ..judges.context import judge_context

    context = judge_context(item.config)
    if context is None:
        raise HarnessError("AB-02 needs a judge model (--bench-judge); the check should not have been collected")
    model = context.model_for_repeat(item.run_key.repeat if item.run_key is not None else 0)
    png = full_page_screenshot(browser, url)
    folder = item.artifacts_folder()
    path = folder / "ab02-primary-route.png"
    path.write_bytes(png)
    prompt = item.task.spec_path.read_text(encoding="utf-8")[:MAX_PROMPT_CHARS]
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": INSTRUCTIONS},
        {"role": "user", "content": [
            {"type": "text", "text": f"The user's prompt:\n\n{prompt}\n\nThe app's primary route ({item.task.primary_route}):"},
            image_part(png),
        ]},
    ]
    answer = model.ask(messages, purpose=PURPOSE)
    grade = parse_grade(answer.text)
    if grade is None:
        raise PromptAnswerError(f"AB-02: the judge's answer names none of PASS, WARN, FAIL: {answer.text[:300]!r}")
    reason = answer.text.strip()
    details = {
        "model": context.name, "reason": reason, "screenshot": item.report_path(path),
        "tokens_in": answer.tokens_in, "tokens_out": answer.tokens_out, "replayed": answer.replayed,
    }
    return grade, grade.score, details, f"{grade.value} by {context.name}: {reason}"


def full_page_screenshot(browser: SharedBrowser, url: str) -> bytes:
    """The whole page at ``url`` (up to MAX_SCREENSHOT_HEIGHT pixels tall) as PNG bytes, from a fresh page."""
    from ..bdd.page_screenshot import full_page_png

    browser.reset(url)
    driver = browser.driver
    return browser.bounded(lambda: full_page_png(driver, url, max_height=MAX_SCREENSHOT_HEIGHT, settle_s=0.0), 60.0, f"taking a screenshot of {url}")
