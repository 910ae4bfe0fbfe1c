"""One scenario at a time through behave's runner: verdicts, fresh registries, E2EDev compatibility."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from pytest_backendbench.bdd.browser.shared import SharedBrowser
from pytest_backendbench.bdd.gherkin import find_steps, parse_feature_file
from pytest_backendbench.bdd.scenarios.behave_runner import (
    ScenarioDriver,
    ScenarioResult,
    ScenarioRunner,
    SleepPolicy,
    load_step_definitions,
)

from .conftest import TODO_FEATURES, StaticServer


def run_todo(runner: ScenarioRunner, browser: SharedBrowser, app: StaticServer, feature: str, index: int = 0) -> ScenarioResult:
    path = TODO_FEATURES / feature
    scenario = parse_feature_file(path).scenarios[index]
    browser.reset(app.base_url)
    return runner.run(path, scenario.line, find_steps(path).modules, driver=browser.driver, base_url=app.base_url)


@pytest.fixture(scope="module")
def runner() -> ScenarioRunner:
    return ScenarioRunner(SleepPolicy.capped())


# --- verdicts against the real browser ---------------------------------------------------------


@pytest.mark.browser
@pytest.mark.parametrize(
    ("feature", "index", "status", "step", "message"),
    [
        ("add_todo.feature", 0, "passed", None, ""),
        ("wrong_count.feature", 0, "failed", "Then the count reads \"3 items\"", "expected the count '3 items', got '1 item'"),
        ("archive.feature", 0, "failed", "When the user archives the first todo", "NoSuchElementException: no such element"),
        ("late_item.feature", 0, "passed", None, ""),
        ("late_item.feature", 1, "failed", "Then the never-shown element appears within 1 seconds", "TimeoutException"),
        ("undefined_step.feature", 0, "undefined", "When the user sorts the todos alphabetically", "oracle error (not the candidate's fault): no step definition"),
        ("ambiguous_step.feature", 0, "error", None, "oracle error (not the candidate's fault): ambiguous step definitions in"),
        ("broken_import.feature", 0, "error", None, "could not be loaded: ModuleNotFoundError"),
        ("outline.feature", 0, "passed", None, ""),
        ("outline.feature", 1, "passed", None, ""),
        ("placeholder.feature", 0, "passed", None, ""),
    ],
)
def test_scenarios_end_with_the_right_verdict(
    runner: ScenarioRunner,
    session_browser: SharedBrowser,
    todo_app: StaticServer,
    feature: str,
    index: int,
    status: str,
    step: str | None,
    message: str,
) -> None:
    result = run_todo(runner, session_browser, todo_app, feature, index)
    assert result.status == status, result.message
    assert message in result.message
    if step is None:
        assert result.failing_step is None
    else:
        assert result.failing_step is not None
        assert f"{result.failing_step.keyword} {result.failing_step.text}" == step
    assert result.oracle_fault == (status in ("error", "undefined"))
    assert result.duration > 0


@pytest.mark.browser
def test_a_failure_points_at_the_step_code(runner: ScenarioRunner, session_browser: SharedBrowser, todo_app: StaticServer) -> None:
    result = run_todo(runner, session_browser, todo_app, "wrong_count.feature")
    assert result.failing_step is not None and result.failing_step.line == 6
    assert "steps/wrong_count.py:21: assert shown == expected" in result.message
    assert result.traceback.startswith("Traceback (most recent call last):")
    assert "behave/model.py" not in result.traceback
    assert "AssertionError" not in result.message  # the message is the oracle's own text


@pytest.mark.browser
def test_storage_written_by_one_scenario_is_not_seen_by_the_next(
    runner: ScenarioRunner, session_browser: SharedBrowser, todo_app: StaticServer
) -> None:
    first = run_todo(runner, session_browser, todo_app, "storage.feature", 0)
    second = run_todo(runner, session_browser, todo_app, "storage.feature", 1)
    assert (first.status, second.status) == ("passed", "passed"), second.message


@pytest.mark.browser
def test_repeated_step_texts_with_different_bodies_never_collide(
    runner: ScenarioRunner, session_browser: SharedBrowser, todo_app: StaticServer
) -> None:
    results = [run_todo(runner, session_browser, todo_app, name) for name in ("repeated_one.feature", "repeated_two.feature", "repeated_one.feature")]
    assert [r.status for r in results] == ["passed", "passed", "passed"], [r.message for r in results]


@pytest.mark.browser
def test_after_scenario_in_a_steps_module_runs_and_cannot_end_the_shared_browser(
    runner: ScenarioRunner, session_browser: SharedBrowser, todo_app: StaticServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "hooks.log"
    monkeypatch.setenv("BACKENDBENCH_TEST_HOOK_LOG", str(log))
    session_browser.start()  # this may be the worker's first browser test (xdist)
    launches = session_browser.launches
    result = run_todo(runner, session_browser, todo_app, "after_hook.feature")
    assert result.status == "passed", result.message
    assert log.read_text() == "after_scenario [Normal] after_scenario in the steps module runs\n"
    assert session_browser.alive() and session_browser.launches == launches  # quit() and close() were no-ops
    assert run_todo(runner, session_browser, todo_app, "add_todo.feature").passed


@pytest.mark.browser
def test_sleeps_follow_the_sleep_policy(session_browser: SharedBrowser, todo_app: StaticServer) -> None:
    capped = run_todo(ScenarioRunner(SleepPolicy.capped(0.5)), session_browser, todo_app, "sleepy.feature")
    assert capped.passed and capped.duration < 2.5  # 3 s + 2 s of sleeps, each capped at 0.5 s
    real = run_todo(ScenarioRunner(SleepPolicy.real()), session_browser, todo_app, "sleepy.feature")
    assert real.passed and real.duration >= 5


@pytest.mark.browser
def test_the_scenario_sees_base_url_and_the_shared_driver(
    session_browser: SharedBrowser, todo_app: StaticServer, tmp_path: Path
) -> None:
    (tmp_path / "steps").mkdir()
    (tmp_path / "probe.feature").write_text("Feature: p\n  Scenario: p\n    Given the context is probed\n")
    (tmp_path / "steps" / "probe.py").write_text(
        "from behave import given\n"
        "@given('the context is probed')\n"
        "def probe(context):\n"
        "    context.driver.get('/index.html')\n"
        "    assert context.driver.current_url == context.base_url + '/index.html', context.driver.current_url\n"
        "    context.shared_session = context.driver.session_id\n"
    )
    session_browser.reset(todo_app.base_url)
    result = ScenarioRunner().run(
        tmp_path / "probe.feature", 2, [tmp_path / "steps" / "probe.py"], driver=session_browser.driver, base_url=todo_app.base_url
    )
    assert result.passed, result.message
    assert session_browser.driver.current_url == todo_app.base_url + "/index.html"


# --- without a browser -------------------------------------------------------------------------


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_two_modules_defining_the_same_step_differently_run_one_after_the_other(tmp_path: Path) -> None:
    feature = write(tmp_path, "f.feature", "Feature: f\n  Scenario: s\n    Given the value is checked\n")
    first = write(tmp_path, "steps/one.py", "from behave import given\n@given('the value is checked')\ndef s(context):\n    assert context.base_url == 'http://one'\n")
    second = write(tmp_path, "steps/two.py", "from behave import given\n@given('the value is checked')\ndef s(context):\n    assert context.base_url == 'http://two'\n")
    runner = ScenarioRunner()
    for _ in range(2):
        assert runner.run(feature, 2, [first], driver=None, base_url="http://one").passed
        assert runner.run(feature, 2, [second], driver=None, base_url="http://two").passed
    both = runner.run(feature, 2, [first, second], driver=None, base_url="http://one")
    assert both.status == "error" and "ambiguous step definitions in" in both.message and "two.py" in both.message


def test_behave_global_registry_is_left_empty(tmp_path: Path) -> None:
    from behave import step_registry

    module = write(tmp_path, "steps/m.py", "from behave import given\n@given('x')\ndef s(context):\n    pass\n")
    registry, _ = load_step_definitions([module], {})
    assert [len(v) for v in registry.steps.values()] == [1, 0, 0, 0]
    assert all(not definitions for definitions in step_registry.registry.steps.values())


def test_decorators_are_available_without_import_like_under_behave(tmp_path: Path) -> None:
    feature = write(tmp_path, "f.feature", "Feature: f\n  Scenario: s\n    Given an implicit decorator\n    Then a table colon step:\n      | a |\n      | 1 |\n")
    module = write(
        tmp_path,
        "steps/m.py",
        "@given('an implicit decorator')\ndef s(context):\n    pass\n@then('a table colon step')\ndef t(context):\n    assert context.table[0]['a'] == '1'\n",
    )
    result = ScenarioRunner().run(feature, 2, [module], driver=None, base_url="http://x")
    assert result.passed, result.message


def test_step_code_with_a_bad_signature_is_an_oracle_error(tmp_path: Path) -> None:
    feature = write(tmp_path, "f.feature", 'Feature: f\n  Scenario: s\n    Given the number "3"\n')
    module = write(tmp_path, "steps/m.py", "from behave import given\n@given('the number \"{n}\"')\ndef s(context):\n    pass\n")
    result = ScenarioRunner().run(feature, 2, [module], driver=None, base_url="http://x")
    assert result.status == "error" and "TypeError" in result.message, result.message


def test_step_code_errors_caused_by_the_page_fail_the_candidate(tmp_path: Path) -> None:
    feature = write(tmp_path, "f.feature", "Feature: f\n  Scenario: s\n    Given the shown price is a number\n")
    module = write(tmp_path, "steps/m.py", "from behave import given\n@given('the shown price is a number')\ndef s(context):\n    float('twelve')\n")
    result = ScenarioRunner().run(feature, 2, [module], driver=None, base_url="http://x")
    assert result.status == "failed" and result.message.startswith("ValueError: could not convert"), result.message


def test_a_line_that_starts_no_scenario_is_an_oracle_error(tmp_path: Path) -> None:
    feature = write(tmp_path, "f.feature", "Feature: f\n  Scenario: s\n    Given x\n")
    module = write(tmp_path, "steps/m.py", "from behave import given\n@given('x')\ndef s(context):\n    pass\n")
    result = ScenarioRunner().run(feature, 3, [module], driver=None, base_url="http://x")
    assert result.status == "error" and "no scenario starts at" in result.message and "lines 2" in result.message


def test_a_failing_after_scenario_hook_is_an_oracle_error(tmp_path: Path) -> None:
    feature = write(tmp_path, "f.feature", "Feature: f\n  Scenario: s\n    Given x\n")
    module = write(
        tmp_path,
        "steps/m.py",
        "from behave import given\n@given('x')\ndef s(context):\n    pass\ndef after_scenario(context, scenario):\n    raise RuntimeError('cleanup broke')\n",
    )
    result = ScenarioRunner().run(feature, 2, [module], driver=None, base_url="http://x")
    assert result.status == "error" and "cleanup broke" in result.message


class RecordingDriver:
    """Stands in for a selenium driver where only the call log matters."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.window_handles = ["only"]

    def get(self, url: str) -> None:
        self.calls.append(("get", url))

    def close(self) -> None:
        self.calls.append(("close", None))

    def quit(self) -> None:
        self.calls.append(("quit", None))

    def set_window_size(self, width: int, height: int) -> None:
        self.calls.append(("size", (width, height)))


def test_e2edev_file_urls_open_the_entry_page() -> None:
    driver = ScenarioDriver(RecordingDriver(), "http://127.0.0.1:9000", "http://127.0.0.1:9000/")
    assert driver.resolve("file://index.html") == "http://127.0.0.1:9000/"
    assert driver.resolve("file:///home/someone/project/index.html") == "http://127.0.0.1:9000/"
    assert driver.resolve("file:///x/index.html?tab=2#top") == "http://127.0.0.1:9000/?tab=2#top"
    assert driver.resolve("/api/items") == "http://127.0.0.1:9000/api/items"
    assert driver.resolve("about.html") == "http://127.0.0.1:9000/about.html"
    assert driver.resolve("https://example.org/x") == "https://example.org/x"
    driver.quit()
    driver.close()
    assert driver.wrapped_driver.calls == []  # the last window of a shared browser stays open
    driver.wrapped_driver.window_handles = ["a", "b"]
    driver.close()
    assert driver.wrapped_driver.calls == [("close", None)]


@pytest.mark.parametrize(
    "imports",
    [
        "from selenium import webdriver\nmake = webdriver.Chrome",
        "import selenium.webdriver\nmake = selenium.webdriver.Chrome",
        "import selenium.webdriver as wd\nmake = wd.Chrome",
        "from selenium.webdriver import Chrome as make",
        "from selenium.webdriver.chrome.webdriver import WebDriver as make",
    ],
)
def test_every_way_of_creating_chrome_yields_the_shared_driver(tmp_path: Path, imports: str) -> None:
    feature = write(tmp_path, "f.feature", "Feature: f\n  Scenario: s\n    Given a browser\n")
    module = write(
        tmp_path,
        "steps/m.py",
        imports
        + "\nfrom selenium.webdriver.chrome.options import Options\n"
        "from behave import given\n"
        "@given('a browser')\n"
        "def s(context):\n"
        "    options = Options()\n"
        "    options.add_argument('--window-size=800,600')\n"
        "    context.driver = make(options=options)\n"
        "    context.driver.get('file://index.html')\n"
        "    context.driver.quit()\n",
    )
    recorder = RecordingDriver()
    result = ScenarioRunner().run(feature, 2, [module], driver=recorder, base_url="http://127.0.0.1:9000")
    assert result.passed, result.message
    assert recorder.calls == [("size", (800, 600)), ("get", "http://127.0.0.1:9000/")]


@pytest.mark.parametrize("sleep_call", ["import time\nnap = time.sleep", "from time import sleep as nap"])
def test_sleeps_are_capped_in_step_modules_only(tmp_path: Path, sleep_call: str) -> None:
    feature = write(tmp_path, "f.feature", "Feature: f\n  Scenario: s\n    Given a long nap\n")
    module = write(tmp_path, "steps/m.py", sleep_call + "\nfrom behave import given\n@given('a long nap')\ndef s(context):\n    nap(30)\n")
    started = time.monotonic()
    result = ScenarioRunner(SleepPolicy.capped(0.1)).run(feature, 2, [module], driver=None, base_url="http://x")
    assert result.passed and time.monotonic() - started < 5
    assert time.sleep.__module__ == "time"  # the real time module is untouched


@pytest.mark.parametrize(
    ("text", "cap"),
    [("real", None), ("cap:0.5", 0.5), ("0.25", 0.25), (" CAP:2 ", 2.0), ("0", 0.0)],
)
def test_sleep_policy_parses(text: str, cap: float | None) -> None:
    assert SleepPolicy.parse(text).cap_s == cap


def test_sleep_policy_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="expected 'real', 'cap:SECONDS' or a number"):
        SleepPolicy.parse("sometimes")


@pytest.mark.parametrize(("project", "policy"), [("E2ESD_Bench_05", "real"), ("e2esd-bench-21", "real"), ("E2ESD_Bench_06", "cap:0.5")])
def test_e2edev_sleep_rule(project: str, policy: str) -> None:
    assert str(SleepPolicy.for_e2edev_project(project)) == policy
