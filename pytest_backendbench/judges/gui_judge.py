"""The GUI judge: WebGen-Bench's WebVoyager agent, run in the harness's own Chromium.

Each step the page gets WebVoyager's numbered boxes (:mod:`.set_of_mark`), a screenshot is
taken, and the model sees it with the list of numbered elements and answers one action in
WebVoyager's grammar (``Click [N]``, ``Type [N]; text``, ``Scroll [WINDOW or N]; up|down``,
``Wait``, ``GoBack``, ``ANSWER; YES|PARTIAL|NO``), which Selenium carries out exactly as
WebGen-Bench's ``webvoyager/run.py`` does (same prompts, same conversation, the same three
screenshots kept, the same pauses, the limit prompt at the last of 15 iterations), so that the
same answers drive the same actions there and here (bench/webgen_parity.py checks it).

Where run.py quietly asks the model again, this judge stops: an answer without ``Thought:`` and
``Action:``, an unknown action or an element number the page does not have is a
``JudgeAnswerError`` (a harness error showing the raw answer; the candidate is not to blame for
a rambling judge), and so is a case that ends without a verdict. An action the page refuses
(an element that cannot be clicked) is told to the model in run.py's words, as there.
Verdicts follow WebGen-Bench's ``compute_acc.py`` (YES before PARTIAL before NO in the
answer's text).
"""

from __future__ import annotations

import platform
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import HarnessError
from .gui_prompts import (
    ACTION_FAILED,
    ELEMENTS_NOTE,
    EXAMPLE_URL,
    INIT_MESSAGE,
    NEXT_OBSERVATION,
    NOT_A_TEXTBOX,
    OBSERVATION_PROMPT,
    OMITTED_OBSERVATION,
    SYSTEM_PROMPT,
    UI_LIMIT_PROMPT_TEMPLATE,
    UI_PROMPT_TEMPLATE,
)
from .model import JudgeModel, JudgeServerError, image_part
from .set_of_mark import TEXTBOX_INPUT_TYPES, mark_page
from .trajectory import JudgeOutcome, JudgeStep
from .verdicts import JudgeAnswerError, Verdict

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.remote.webelement import WebElement

    from .cases import JudgeCase

PURPOSE = "gui-step"
WINDOW_SIZE = (1024, 768)
"""run.py's default window (``--window_width``/``--window_height``), which WebGen-Bench keeps."""
ACTION_SPLIT = r"Thought:|Action:|Observation:"
ACTION_PATTERNS = {
    "click": r"Click \[?(\d+)\]?",
    "type": r"Type \[?(\d+)\]?[; ]+\[?(.[^\]]*)\]?",
    "scroll": r"Scroll \[?(\d+|WINDOW)\]?[; ]+\[?(up|down)\]?",
    "wait": r"^Wait",
    "goback": r"^GoBack",
    "google": r"^Google",
    "answer": r"ANSWER[; ]+\[?(.[^\]]*)\]?",
}
"""run.py's ``extract_information``, verbatim: the first pattern that matches names the action."""
SPACE_GUARD = (
    "window.onkeydown = function(e) {if(e.keyCode == 32 && e.target.type != 'text' && e.target.type != 'textarea' "
    "&& e.target.type != 'search') {e.preventDefault();}};"
)
LOAD_SPACE_GUARD = "window.onkeydown = function(e) {if(e.keyCode == 32 && e.target.type != 'text' && e.target.type != 'textarea') {e.preventDefault();}};"


@dataclass(frozen=True)
class GuiLimits:
    """The judge's budget: WebGen-Bench's 15 iterations and 3 attached screenshots."""

    max_steps: int = 15
    screenshots_kept: int = 3
    deadline_seconds: float = 300.0
    pause_scale: float = 1.0
    """run.py's fixed pauses (5 s after loading, 3 s after a click, 13 s around typing, ...) times this."""
    max_screenshot_bytes: int | None = None
    """A screenshot larger than the judge's server accepts is an error before it is sent (None: no limit known)."""


class JudgeDeadlineError(HarnessError):
    """The case ran past its wall deadline (the model or the page was slow): not the candidate's verdict."""


class ScreenshotTooLargeError(HarnessError):
    """A screenshot is larger than the judge's server accepts."""


@dataclass(frozen=True)
class ParsedAction:
    """An answer's action: run.py's key and its arguments."""

    key: str
    number: str | None = None
    content: str | None = None

    def text(self) -> str:
        """The action as the grammar writes it (for the trajectory and the parity bench)."""
        if self.key == "click":
            return f"Click [{self.number}]"
        if self.key == "type":
            return f"Type [{self.number}]; {self.content}"
        if self.key == "scroll":
            return f"Scroll [{self.number}]; {self.content}"
        if self.key == "answer":
            return f"ANSWER; {self.content}"
        return {"wait": "Wait", "goback": "GoBack", "google": "Google"}.get(self.key, self.key)


def parse_action(answer: str) -> ParsedAction:
    """The action of a ``Thought: ... Action: ...`` answer, as run.py reads it; else ``JudgeAnswerError``."""
    if "Thought:" not in answer or "Action:" not in answer:
        raise JudgeAnswerError("it has no 'Thought:' and 'Action:' (WebVoyager's format)", answer)
    parts = re.split(ACTION_SPLIT, answer)
    chosen = parts[2].strip() if len(parts) > 2 else ""
    for key, pattern in ACTION_PATTERNS.items():
        match = re.search(pattern, chosen)
        if not match:
            continue
        if key == "click":
            return ParsedAction(key, number=match.group(1))
        if key in ("type", "scroll"):
            return ParsedAction(key, number=match.group(1), content=match.group(2).strip("\"'"))
        if key == "answer":
            return ParsedAction(key, content=match.group(1))
        if key == "google":
            break  # run.py opens google.com: no place in a judge of one site
        return ParsedAction(key)
    raise JudgeAnswerError(f"unknown action {chosen[:200]!r}; the grammar: Click [N], Type [N]; text, Scroll [WINDOW or N]; up|down, Wait, GoBack, ANSWER; YES|PARTIAL|NO", answer)


def verdict_in(text: str) -> Verdict | None:
    """WebGen-Bench's compute_acc.py: YES if the text says YES, else PARTIAL if it says PARTIAL, else NO if it says NO."""
    for verdict in (Verdict.YES, Verdict.PARTIAL, Verdict.NO):
        if verdict.value in text:
            return verdict
    return None


def clip_messages(messages: list[dict[str, Any]], max_images: int) -> list[dict[str, Any]]:
    """run.py's ``clip_message_and_obs``: only the last ``max_images`` observations keep their screenshot."""
    clipped: list[dict[str, Any]] = []
    kept = 0
    for message in reversed(messages):
        if message["role"] != "user" or isinstance(message["content"], str):
            clipped.insert(0, message)
        elif kept < max_images:
            kept += 1
            clipped.insert(0, message)
        else:
            text = message["content"][0]["text"].split("Observation:")[0].strip() + OMITTED_OBSERVATION
            clipped.insert(0, {"role": message["role"], "content": text})
    return clipped


def case_question(case: JudgeCase) -> str:
    """The case as WebGen-Bench states it to the agent."""
    return UI_PROMPT_TEMPLATE.format(task=case.instruction, expected_result=case.expected)


def first_message(case: JudgeCase, start_url: str) -> str:
    """run.py's ``init_msg`` (its example URL replaced by the site's, everywhere, as run.py does)."""
    return (INIT_MESSAGE.format(ques=case_question(case)) + OBSERVATION_PROMPT).replace(EXAMPLE_URL, start_url)


def observation(step: int, init_msg: str, warn_obs: str, web_text: str, png: bytes) -> dict[str, Any]:
    """run.py's ``format_msg`` (without the PDF branch: a judged site's downloads are not read)."""
    text = (init_msg if step == 1 else NEXT_OBSERVATION.format(warn_obs=warn_obs)) + ELEMENTS_NOTE + web_text
    image = image_part(png)
    return {"role": "user", "content": [{"type": "text", "text": text}, image]}


class _Browser:
    """Selenium as run.py drives it (its ``exec_action_*`` functions), with its pauses scaled."""

    def __init__(self, driver: WebDriver, pause_scale: float) -> None:
        self.driver = driver
        self.scale = pause_scale

    def pause(self, seconds: float) -> None:
        if seconds * self.scale > 0:
            time.sleep(seconds * self.scale)

    def open(self, url: str) -> None:
        from selenium.webdriver.common.by import By

        self.driver.set_window_size(*WINDOW_SIZE)
        self.driver.get(url)
        try:
            self.driver.find_element(By.TAG_NAME, "body").click()
        except Exception:  # noqa: BLE001, S110 - run.py ignores a body that cannot be clicked
            pass
        self.driver.execute_script(LOAD_SPACE_GUARD)
        self.pause(5)

    def click(self, element: WebElement) -> None:
        self.driver.execute_script("arguments[0].setAttribute('target', '_self')", element)
        element.click()
        self.pause(3)

    def type(self, element: WebElement, content: str) -> str:
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.keys import Keys

        tag = element.tag_name.lower()
        kind = element.get_attribute("type")
        warning = ""
        if (tag != "input" and tag != "textarea") or (tag == "input" and kind not in TEXTBOX_INPUT_TYPES):
            warning = NOT_A_TEXTBOX.format(tag=element.tag_name, type=kind)
        try:
            element.clear()
            element.send_keys((Keys.COMMAND if platform.system() == "Darwin" else Keys.CONTROL) + "a")
            element.send_keys(" ")
            element.send_keys(Keys.BACKSPACE)
        except Exception:  # noqa: BLE001, S110 - as run.py: a field that cannot be cleared is typed into anyway
            pass
        actions = ActionChains(self.driver)
        actions.click(element).pause(1 * self.scale)
        try:
            self.driver.execute_script(SPACE_GUARD)
        except Exception:  # noqa: BLE001, S110 - as run.py
            pass
        actions.send_keys(content).pause(2 * self.scale).send_keys(Keys.ENTER).perform()
        self.pause(10)
        return warning

    def scroll(self, target: str, direction: str, elements: list[WebElement]) -> None:
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.keys import Keys

        if target == "WINDOW":
            delta = WINDOW_SIZE[1] * 2 // 3
            self.driver.execute_script(f"window.scrollBy(0, {delta if direction == 'down' else -delta});")
        else:
            element = elements[int(target)]
            actions = ActionChains(self.driver)
            self.driver.execute_script("arguments[0].focus();", element)
            arrow = Keys.ARROW_DOWN if direction == "down" else Keys.ARROW_UP
            actions.key_down(Keys.ALT).send_keys(arrow).key_up(Keys.ALT).perform()
        self.pause(3)


def judge_in_browser(
    driver: WebDriver, *, start_url: str, case: JudgeCase, model: JudgeModel, limits: GuiLimits, record_dir: Path,
    report_dir: Path | None = None, trajectory: list[JudgeStep] | None = None,
) -> JudgeOutcome:
    """Carry out one frontend case on the page at ``start_url`` and return the model's verdict.

    Screenshots go to ``record_dir`` (named in the steps relative to ``report_dir`` when given);
    the steps are appended to ``trajectory`` as they happen, so a case that ends in an error
    keeps the steps it took.
    Raises ``JudgeAnswerError`` for an unusable answer, ``JudgeServerError`` when the model's
    server fails, ``JudgeDeadlineError`` past ``limits.deadline_seconds``; Selenium's errors
    from a browser that died propagate.
    """
    deadline = time.monotonic() + limits.deadline_seconds
    browser = _Browser(driver, limits.pause_scale)
    record_dir.mkdir(parents=True, exist_ok=True)
    browser.open(start_url)
    init_msg = first_message(case, start_url)
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]
    steps: list[JudgeStep] = trajectory if trajectory is not None else []
    tokens_in = tokens_out = 0
    fail_obs = warn_obs = ""
    elements: list[WebElement] = []
    for step in range(1, limits.max_steps + 1):
        if time.monotonic() > deadline:
            raise JudgeDeadlineError(f"case {case.id}: the GUI judge ran past its deadline of {limits.deadline_seconds:g} s at step {step} (a slow model or page); raise the judge's deadline")
        final = step == limits.max_steps
        rects: list[WebElement] = []
        shot: str | None = None
        if final:
            messages.append({"role": "user", "content": UI_LIMIT_PROMPT_TEMPLATE.format(expected_result=case.expected)})
        elif not fail_obs:
            rects, elements, web_text = mark_page(driver)
            png = driver.get_screenshot_as_png()
            if limits.max_screenshot_bytes is not None and len(png) > limits.max_screenshot_bytes:
                raise ScreenshotTooLargeError(
                    f"case {case.id}: the screenshot of step {step} has {len(png)} bytes; the judge's server accepts at most "
                    f"{limits.max_screenshot_bytes} (a larger limit on the server, or a smaller page)"
                )
            path = record_dir / f"step-{step:02d}.png"
            path.write_bytes(png)
            shot = str(path.relative_to(report_dir)) if report_dir is not None and path.is_relative_to(report_dir) else str(path)
            messages.append(observation(step, init_msg, warn_obs, web_text, png))
        else:
            messages.append({"role": "user", "content": fail_obs})
        messages = clip_messages(messages, limits.screenshots_kept)
        try:
            answer = model.ask(messages, purpose=PURPOSE)
        except JudgeServerError as err:
            if shot is not None and "image" in str(err).lower():
                raise JudgeServerError(f"{err} (case {case.id}, step {step}: the screenshot {shot} has {path.stat().st_size} bytes)") from err
            raise
        tokens_in += answer.tokens_in
        tokens_out += answer.tokens_out
        text = answer.text
        messages.append({"role": "assistant", "content": text})
        for rect in rects:
            driver.execute_script("arguments[0].remove()", rect)
        if final and ("Thought:" not in text or "Action:" not in text):
            # the limit prompt asks for a bare YES / PARTIAL / NO; compute_acc reads it from the text
            verdict = verdict_in(text)
            steps.append(JudgeStep(step, shot, text, f"ANSWER; {verdict.value}" if verdict else "(no action)"))
            if verdict is None:
                raise JudgeAnswerError(f"case {case.id}: the last answer (after the step limit) has no YES, PARTIAL or NO", text)
            return JudgeOutcome(verdict, f"answered {verdict.value} at the step limit ({step} steps)", steps, tokens_in, tokens_out)
        try:
            action = parse_action(text)
        except JudgeAnswerError as err:
            steps.append(JudgeStep(step, shot, text, "(no action)"))
            raise JudgeAnswerError(f"case {case.id}, step {step}: {err.problem}", text) from err
        steps.append(JudgeStep(step, shot, text, action.text()))
        fail_obs = warn_obs = ""
        if final and action.key != "answer":
            # run.py carries it out and stops; compute_acc then reads the verdict from the text
            verdict = verdict_in(text)
            if verdict is None:
                raise JudgeAnswerError(f"case {case.id}: the last answer (after the step limit) is an action, not a verdict", text)
            return JudgeOutcome(verdict, f"answered {verdict.value} at the step limit ({step} steps)", steps, tokens_in, tokens_out)
        if action.key == "answer":
            verdict = verdict_in(action.content or "")
            if verdict is None:
                raise JudgeAnswerError(f"case {case.id}, step {step}: ANSWER without YES, PARTIAL or NO", text)
            return JudgeOutcome(verdict, f"answered {verdict.value} after {step} step(s)", steps, tokens_in, tokens_out)
        if action.number is not None and action.number != "WINDOW" and int(action.number) >= len(elements):
            raise JudgeAnswerError(f"case {case.id}, step {step}: element [{action.number}] does not exist (the page had {len(elements)} numbered elements, 0-{len(elements) - 1})", text)
        fail_obs, warn_obs = _perform(browser, action, elements)
    raise JudgeAnswerError(f"case {case.id}: no verdict after {limits.max_steps} steps", str(messages[-1]["content"]))


def _perform(browser: _Browser, action: ParsedAction, elements: list[WebElement]) -> tuple[str, str]:
    """Carry out one action; (fail_obs, warn_obs) as run.py sets them (a refused action is told to the model)."""
    from selenium.common.exceptions import WebDriverException

    try:
        browser.driver.switch_to.window(browser.driver.current_window_handle)
        if action.key == "click":
            browser.click(elements[int(action.number or 0)])
        elif action.key == "wait":
            browser.pause(5)
        elif action.key == "type":
            return "", browser.type(elements[int(action.number or 0)], action.content or "")
        elif action.key == "scroll":
            browser.scroll(action.number or "WINDOW", action.content or "down", elements)
        elif action.key == "goback":
            browser.driver.back()
            browser.pause(2)
    except WebDriverException as err:
        browser.pause(2)
        if "element click intercepted" not in str(err):
            return ACTION_FAILED, ""
    return "", ""
