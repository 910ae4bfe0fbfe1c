"""The GUI judge: WebVoyager's grammar and conversation (units), and judging a real page in Chromium."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_backendbench.bdd.browser.shared import SharedBrowser
from pytest_backendbench.errors import HarnessError
from pytest_backendbench.judges.cases import JudgeCase
from pytest_backendbench.judges.gui_item import JudgedPageHung
from pytest_backendbench.judges.gui_judge import (
    GuiLimits,
    JudgeDeadlineError,
    JudgeStep,
    ScreenshotTooLargeError,
    clip_messages,
    first_message,
    judge_in_browser,
    parse_action,
    verdict_in,
)
from pytest_backendbench.judges.gui_prompts import SYSTEM_PROMPT
from pytest_backendbench.judges.model import JudgeServer, JudgeServerError, OpenAIJudgeModel
from pytest_backendbench.judges.verdicts import JudgeAnswerError, Verdict

from ..bdd.conftest import StaticServer
from .scripted_model import ScriptedModelServer

SITE = Path(__file__).parent / "data" / "notes_site"
FAST = GuiLimits(pause_scale=0.02)
CASE = JudgeCase(
    id="FE-1", kind="frontend", requirement="R1",
    instruction="Log in as ada with the password secret and add a note titled Milk.",
    expected="The note Milk appears in the list of notes.",
)


# --- the grammar (run.py's extract_information) ----------------------------------------------


@pytest.mark.parametrize(
    ("answer", "action"),
    [
        ("Thought: the box.\nAction: Click [5]", "Click [5]"),
        ("Thought: t\nAction: Type [3]; hello world", "Type [3]; hello world"),
        ("Thought: t\nAction: Scroll [WINDOW]; down", "Scroll [WINDOW]; down"),
        ("Thought: t\nAction: Scroll [2]; up", "Scroll [2]; up"),
        ("Thought: t\nAction: Wait", "Wait"),
        ("Thought: t\nAction: GoBack", "GoBack"),
        ("Thought: done.\nAction: ANSWER; PARTIAL", "ANSWER; PARTIAL"),
    ],
)
def test_actions_parse_as_webvoyager_reads_them(answer: str, action: str) -> None:
    assert parse_action(answer).text() == action


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("I would click the login button.", "no 'Thought:' and 'Action:'"),
        ("Thought: t\nAction: Hover [3]", "unknown action 'Hover [3]'"),
        ("Thought: t\nAction: Google", "unknown action 'Google'"),
    ],
)
def test_an_answer_without_a_known_action_is_an_error_showing_it(answer: str, problem: str) -> None:
    with pytest.raises(JudgeAnswerError) as caught:
        parse_action(answer)
    assert problem in str(caught.value)
    assert answer in str(caught.value)  # the raw answer is shown


def test_verdicts_are_read_as_compute_acc_reads_them() -> None:
    assert verdict_in("YES") is Verdict.YES
    assert verdict_in("PARTIAL, not YES") is Verdict.YES  # compute_acc.py tests YES first
    assert verdict_in("PARTIAL") is Verdict.PARTIAL
    assert verdict_in("NO") is Verdict.NO
    assert verdict_in("it worked") is None


def test_only_the_last_three_observations_keep_their_screenshot() -> None:
    def shot(n: int) -> dict[str, object]:
        return {"role": "user", "content": [{"type": "text", "text": f"step {n} Observation: look"}, {"type": "image_url", "image_url": {"url": "data:,"}}]}

    messages: list[dict[str, object]] = [{"role": "system", "content": "s"}]
    for n in range(1, 6):
        messages += [shot(n), {"role": "assistant", "content": f"a{n}"}]
    clipped = clip_messages(messages, 3)  # type: ignore[arg-type]
    users = [m for m in clipped if m["role"] == "user"]
    assert [isinstance(m["content"], list) for m in users] == [False, False, True, True, True]
    assert users[0]["content"] == "step 1Observation: A screenshot and some texts. (Omitted in context.)"


def test_the_first_message_is_run_pys() -> None:
    text = first_message(CASE, "http://127.0.0.1:9/")
    assert text.startswith("Now given a task: \n\nTask: Log in as ada")
    assert "Please interact with http://127.0.0.1:9/ and get the answer. \n" in text
    assert "IMPORTANT: You can at most interact with the website 15 times." in text


# --- a real page in Chromium -------------------------------------------------------------------


@pytest.fixture(scope="module")
def site() -> Iterator[StaticServer]:
    server = StaticServer(SITE)
    yield server
    server.close()


@pytest.fixture
def judge(session_browser: SharedBrowser, site: StaticServer, tmp_path: Path) -> Callable[..., object]:
    def run(script: list[str], limits: GuiLimits = FAST, trajectory: list[JudgeStep] | None = None, **server_options: object) -> tuple[object, ScriptedModelServer]:
        session_browser.reset(site.base_url)
        with ScriptedModelServer({CASE.instruction: script}, **server_options) as server:  # type: ignore[arg-type]
            model = OpenAIJudgeModel(JudgeServer(model="scripted-vl", base_url=server.base_url))
            outcome = judge_in_browser(
                session_browser.driver, start_url=site.base_url + "/", case=CASE, model=model, limits=limits,
                record_dir=tmp_path / "judge" / CASE.id, report_dir=tmp_path, trajectory=trajectory,
            )
        return outcome, server

    return run


LOG_IN_AND_ADD = [
    "Thought: A login form.\nAction: Type [0]; ada",
    "Thought: Now the password.\nAction: Type [1]; secret",
    "Thought: Logged in; the note form shows.\nAction: Type [0]; Milk",
]


@pytest.mark.browser
def test_the_judge_logs_in_creates_a_record_and_answers_yes(judge: Callable[..., tuple[object, ScriptedModelServer]], session_browser: SharedBrowser, tmp_path: Path) -> None:
    outcome, server = judge([*LOG_IN_AND_ADD, "Thought: Milk is listed.\nAction: ANSWER; YES"])
    assert outcome.verdict is Verdict.YES  # type: ignore[attr-defined]
    assert [s.action for s in outcome.steps] == ["Type [0]; ada", "Type [1]; secret", "Type [0]; Milk", "ANSWER; YES"]  # type: ignore[attr-defined]
    assert session_browser.driver.find_element("id", "notes").text == "Milk"  # the record was really created
    assert all((tmp_path / s.screenshot).read_bytes()[:4] == b"\x89PNG" for s in outcome.steps)  # type: ignore[attr-defined]
    first = server.requests[0].messages
    assert first[0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert '[0]: <input> "User name";\t[1]: <input> "Password";\t[2]: <button> "Log in";' in first[1]["content"][0]["text"]
    assert [len(r.images()) for r in server.requests] == [1, 2, 3, 3]  # three screenshots kept
    assert outcome.tokens_in > 0 and outcome.tokens_out > 0  # type: ignore[attr-defined]


@pytest.mark.browser
def test_a_partial_answer_is_partial(judge: Callable[..., tuple[object, ScriptedModelServer]]) -> None:
    outcome, _ = judge(["Thought: Only the login works.\nAction: Type [0]; ada", "Thought: The note form never showed.\nAction: ANSWER; PARTIAL"])
    assert outcome.verdict is Verdict.PARTIAL  # type: ignore[attr-defined]


@pytest.mark.browser
def test_an_element_number_the_page_lacks_is_an_error_and_keeps_the_steps(judge: Callable[..., tuple[object, ScriptedModelServer]]) -> None:
    steps: list[JudgeStep] = []
    with pytest.raises(JudgeAnswerError, match=r"element \[7\] does not exist \(the page had 3 numbered elements, 0-2\)"):
        judge(["Thought: t\nAction: Click [7]"], trajectory=steps)
    assert [s.action for s in steps] == ["Click [7]"]


@pytest.mark.browser
def test_a_screenshot_too_large_is_an_error_before_or_from_the_server(judge: Callable[..., tuple[object, ScriptedModelServer]]) -> None:
    with pytest.raises(ScreenshotTooLargeError, match="accepts at most 1000"):
        judge(["Thought: t\nAction: Wait"], limits=GuiLimits(pause_scale=0.02, max_screenshot_bytes=1000))
    with pytest.raises(JudgeServerError, match="image too large"):
        judge(["Thought: t\nAction: Wait"], max_image_bytes=1000)


@pytest.mark.browser
def test_the_limit_prompt_takes_a_bare_verdict_and_the_deadline_is_an_error(judge: Callable[..., tuple[object, ScriptedModelServer]]) -> None:
    outcome, server = judge(["Thought: Let the page settle.\nAction: Wait", "PARTIAL"], limits=GuiLimits(max_steps=2, pause_scale=0.02))
    assert outcome.verdict is Verdict.PARTIAL  # type: ignore[attr-defined]
    assert server.requests[1].messages[-1]["content"].startswith("You have reached the maximum number of allowed interactions")
    with pytest.raises(JudgeAnswerError, match="after the step limit"):
        judge(["Thought: t\nAction: Wait", "I am not sure."], limits=GuiLimits(max_steps=2, pause_scale=0.02))
    with pytest.raises(JudgeDeadlineError, match="ran past its deadline of 0 s"):
        judge(["Thought: t\nAction: Wait"], limits=GuiLimits(deadline_seconds=0, pause_scale=0.02))


# --- how a pool job ends becomes the case's outcome (judges/gui_item.py) -------------------------


@pytest.mark.parametrize(
    ("ending", "raised", "text"),
    [
        ({"hung": "the page stopped answering: a script that never yields"}, JudgedPageHung, "the candidate's page stopped answering"),
        ({"timed_out": True}, JudgeDeadlineError, "was still running 330 s after it started"),
        ({}, HarnessError, "ended without an outcome"),
    ],
)
def test_a_hung_page_is_the_candidates_failure_and_an_overrun_the_harnesss(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, ending: dict[str, object], raised: type[BaseException], text: str
) -> None:
    import pytest_backendbench.config as config_module
    from pytest_backendbench import taskrun
    from pytest_backendbench.bdd.scheduling import worker_pool
    from pytest_backendbench.judges import gui_item

    class Pool:
        def submit(self, key: str, work: object) -> None:
            self.work = work

        def take(self, key: str) -> object:
            return SimpleNamespace(**{"hung": None, "timed_out": False, "error": None, "goal": None, **ending})

    task = SimpleNamespace(id="t", primary_route="/", benchmark_dir=tmp_path, oracle_dir=tmp_path, extra={}, database="none")
    run = SimpleNamespace(task=task, service=None, key="t")
    sections: list[str] = []
    item = SimpleNamespace(
        task_run=run, context=SimpleNamespace(extra={}), max_steps=15, deadline_seconds=300.0, judge_model=None, case=CASE,
        record_dir=tmp_path / "r", report_dir=tmp_path, config=SimpleNamespace(stash={}), path=tmp_path / "cases.yaml", run_key=None,
        nodeid="t::FE-1", add_report_section=lambda *args: sections.append(args[1]),
    )
    item.item = item
    monkeypatch.setattr(worker_pool, "pool_of", lambda config: Pool())
    monkeypatch.setattr(taskrun, "base_url_for", lambda item: "http://127.0.0.1:9")
    monkeypatch.setattr(config_module, "bench_config", lambda config: SimpleNamespace(bdd_seed="0"))
    monkeypatch.setattr(gui_item, "browser_locale", lambda config, task: None)
    with pytest.raises(raised, match=text):
        gui_item.run_frontend_case(item)  # type: ignore[arg-type]
