"""Feature files as pytest items: parsing, tags as markers, steps layout, reports on failure."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_backendbench.bdd.gherkin import ScenarioItem, find_steps, interpret_tags, parse_feature_file
from pytest_backendbench.errors import TaskFormatError
from pytest_backendbench.items import ItemKind, item_kind
from pytest_backendbench.runkey import RUN_KEY

from .conftest import TODO_FEATURES, StaticServer, processes_mentioning

# Routes .feature files to FeatureFile and stands in for the lead's taskrun (base URL, artifacts).
PYTESTER_CONFTEST = '''
import os
from pathlib import Path

import pytest

from pytest_backendbench import taskrun
from pytest_backendbench.bdd.gherkin import FeatureFile
from pytest_backendbench.errors import BootFailure

_saved = {}


def pytest_configure(config):
    def base_url_for(item):
        if os.environ.get("BB_TEST_BOOT_FAILS"):
            raise BootFailure("the candidate did not become healthy", "service log: (empty)")
        return os.environ["BB_TEST_BASE_URL"]

    def artifact_dir_for(item):
        return Path(os.environ["BB_TEST_ARTIFACTS"])

    for name, value in (("base_url_for", base_url_for), ("artifact_dir_for", artifact_dir_for)):
        _saved[name] = getattr(taskrun, name)
        setattr(taskrun, name, value)


def pytest_unconfigure(config):
    for name, value in _saved.items():
        setattr(taskrun, name, value)


def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".feature":
        return FeatureFile.from_parent(parent, path=file_path)
'''


# --- parsing and tags --------------------------------------------------------------------------


def test_outline_rows_become_scenarios_with_their_own_lines_and_filled_steps() -> None:
    feature = parse_feature_file(TODO_FEATURES / "outline.feature")
    assert [s.line for s in feature.scenarios] == [13, 14]
    first = feature.scenarios[0]
    assert first.name.startswith("[Normal] Adding 0 todos counts 1 item")
    assert first.outline_line == 3
    assert set(first.tags) == {"R1", "category:state"}
    assert [(s.keyword, s.text) for s in first.steps][-1] == ("Then", 'the count reads "1 item"')


def test_a_syntax_error_names_file_line_and_text(tmp_path: Path) -> None:
    bad = tmp_path / "bad.feature"
    bad.write_text("Feature: x\n  Scenario: a\n    Given ok\n  Scenari: b\n    Given x\n")
    with pytest.raises(TaskFormatError) as info:
        parse_feature_file(bad)
    assert str(info.value).startswith(f"{bad}:4: Gherkin syntax error: cannot parse 'Scenari: b'")


@pytest.mark.parametrize(
    ("tags", "requirements", "category", "tier", "weight", "problems"),
    [
        (["R3"], ("R3",), "workflow", "base", None, ()),
        (["R1", "requirement:LOGIN-2", "category:security", "tier:R2", "weight:2", "wip"], ("R1", "LOGIN-2"), "security", "r2", 2.0, ()),
        (["category:nonsense"], (), "workflow", "base", None, ("@category:nonsense: unknown category",)),
        (["weight:heavy"], (), "workflow", "base", None, ("@weight:heavy: the weight must be a non-negative number",)),
        (["tier:r1", "tier:r2"], (), "workflow", "r1", None, ("more than one tier tag",)),
    ],
)
def test_tags_become_metric_markers(
    tags: list[str], requirements: tuple[str, ...], category: str, tier: str, weight: float | None, problems: tuple[str, ...]
) -> None:
    interpreted = interpret_tags(tags)
    assert (interpreted.requirements, interpreted.category, interpreted.tier, interpreted.weight) == (requirements, category, tier, weight)
    assert len(interpreted.problems) == len(problems)
    for found, expected in zip(interpreted.problems, problems):
        assert found.startswith(expected)


def test_steps_come_from_the_features_own_module_when_it_has_one(tmp_path: Path) -> None:
    assert find_steps(TODO_FEATURES / "storage.feature").modules == (TODO_FEATURES / "steps" / "storage.py",)
    features = tmp_path / "oracles" / "t" / "features"
    (features / "steps").mkdir(parents=True)
    (features / "sub").mkdir()
    for name in ("b.py", "a.py"):
        (features / "steps" / name).write_text("")
    (features / "environment.py").write_text("")
    layout = find_steps(features / "sub" / "x.feature")
    assert layout.modules == (features / "steps" / "a.py", features / "steps" / "b.py")
    assert layout.environment == features / "environment.py"
    lonely = tmp_path / "oracles" / "u" / "features" / "y.feature"
    lonely.parent.mkdir(parents=True)
    assert "no steps/ folder" in (find_steps(lonely).problem or "")


# --- as pytest items ---------------------------------------------------------------------------


@pytest.fixture
def feature_project(pytester: pytest.Pytester, todo_app: StaticServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A pytester folder whose .feature files run against the served todo app."""
    pytester.makeconftest(PYTESTER_CONFTEST)
    monkeypatch.setenv("BB_TEST_BASE_URL", todo_app.base_url)
    monkeypatch.setenv("BB_TEST_ARTIFACTS", str(pytester.path / "artifacts"))
    return pytester.path


def copy_features(project: Path, *names: str) -> None:
    (project / "features" / "steps").mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(TODO_FEATURES / name, project / "features" / name)
        shutil.copy(TODO_FEATURES / "steps" / name.replace(".feature", ".py"), project / "features" / "steps" / name.replace(".feature", ".py"))


def test_items_carry_kind_markers_and_location(pytester: pytest.Pytester, feature_project: Path) -> None:
    copy_features(feature_project, "archive.feature", "add_todo.feature", "outline.feature")
    items = pytester.getitems(feature_project / "features" / "archive.feature")
    (archive,) = items
    assert isinstance(archive, ScenarioItem) and archive.kind is ItemKind.BDD and item_kind(archive) is ItemKind.BDD
    assert archive.run_key is None and RUN_KEY not in archive.stash  # collected outside a benchmark session: no run
    assert archive.get_closest_marker("requirement").args == ("R5",)
    assert archive.get_closest_marker("category").args == ("workflow",)
    assert archive.get_closest_marker("tier").args == ("r1",)
    assert archive.get_closest_marker("weight").args == (2.0,)
    assert archive.reportinfo() == (feature_project / "features" / "archive.feature", 2, "Scenario: [Normal] A todo can be archived")
    outline = pytester.getitems(feature_project / "features" / "outline.feature")
    assert [i.name for i in outline] == ["[Normal] Adding 0 todos counts 1 item -- @1.1", "[Normal] Adding 2 todos counts 3 items -- @1.2"]
    assert outline[0].get_closest_marker("tier").args == ("base",)


@pytest.mark.browser
def test_outcomes_messages_and_browser_state_on_failure(pytester: pytest.Pytester, feature_project: Path) -> None:
    copy_features(feature_project, "add_todo.feature", "wrong_count.feature", "archive.feature", "undefined_step.feature", "ambiguous_step.feature")
    result = pytester.runpytest("-p", "no:cacheprovider", "-rA", f"--junitxml={feature_project / 'junit.xml'}")
    result.assert_outcomes(passed=1, failed=4)
    result.stdout.fnmatch_lines(
        [
            "*[[]oracle error, not the candidate's fault[]] scenario '[[]Normal[]] Two definitions of one step'*ambiguous step definitions in*ambiguous_step.py*",
            "*ambiguous_step.py*line 11, in <module>",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            ("*[[]tests[]] scenario '[[]Normal[]] A todo can be archived' failed at step 'When the user archives the first todo' (line 5):"
            " NoSuchElementException: no such element*"),
            "  at *steps/archive.py:14: *",
            "features/archive.feature:3",
            "*Captured browser call*",
            "page URL: http://127.0.0.1:*/",
            "failing step: When the user archives the first todo (line 5)",
            "screenshot: *archive-3-*.png",
            "console log:",
            "*todo app ready*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            (
                "*[[]oracle error, not the candidate's fault[]] scenario '[[]Normal[]] A step nobody implemented' (features/undefined_step.feature:3):"
                " no step definition matches 'When the user sorts the todos alphabetically' (line 5)"
            ),
        ]
    )
    result.stdout.fnmatch_lines(
        [
            ("*[[]tests[]] scenario '[[]Error[]] The count is checked against a wrong expectation' failed at step 'Then the count reads \"3 items\"' (line 6):"
            " expected the count '3 items', got '1 item'"),
            "  at *steps/wrong_count.py:21: assert shown == expected*",
        ]
    )
    assert "behave_runner.py" not in result.stdout.str()

    screenshots = sorted((feature_project / "artifacts").glob("*.png"))
    assert [p.name for p in screenshots] == [
        "archive-3-Normal-A-todo-can-be-archived.png",
        "undefined_step-3-Normal-A-step-nobody-implemented.png",
        "wrong_count-3-Error-The-count-is-checked-against-a-wrong-expectation.png",
    ]
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in screenshots)
    junit = ET.parse(feature_project / "junit.xml")
    properties = {p.get("value") for p in junit.iter("property") if p.get("name") == "screenshot"}
    assert properties == {str(p) for p in screenshots}


@pytest.mark.browser
def test_exception_types_say_who_is_at_fault(pytester: pytest.Pytester, feature_project: Path) -> None:
    copy_features(feature_project, "wrong_count.feature", "undefined_step.feature")
    reprec = pytester.inline_run("-p", "no:cacheprovider")
    calls = {r.nodeid.split("::")[0].split("/")[-1]: r for r in reprec.getreports("pytest_runtest_logreport") if r.when == "call"}
    assert calls["wrong_count.feature"].failed and calls["undefined_step.feature"].failed
    from pytest_backendbench.bdd.gherkin import ScenarioFailed, ScenarioOracleError

    assert ScenarioFailed.__mro__[1].__name__ == "CandidateFailure" and issubclass(ScenarioFailed, AssertionError)
    assert issubclass(ScenarioOracleError, Exception) and not issubclass(ScenarioOracleError, AssertionError)
    assert "[tests]" in calls["wrong_count.feature"].longreprtext
    assert "[oracle error, not the candidate's fault]" in calls["undefined_step.feature"].longreprtext


@pytest.mark.browser
def test_scenarios_of_one_file_share_one_browser_and_no_storage(pytester: pytest.Pytester, feature_project: Path) -> None:
    copy_features(feature_project, "storage.feature", "repeated_one.feature", "repeated_two.feature")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=4)


def test_a_candidate_that_did_not_boot_fails_the_scenario(pytester: pytest.Pytester, feature_project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy_features(feature_project, "add_todo.feature")
    monkeypatch.setenv("BB_TEST_BOOT_FAILS", "1")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*[[]startup[]] the candidate did not become healthy*"])


def test_malformed_tags_are_an_oracle_error_of_that_scenario_only(pytester: pytest.Pytester, feature_project: Path) -> None:
    copy_features(feature_project, "add_todo.feature")
    pytester.makefile(".feature", **{"features/tagged": "@category:nonsense @weight:heavy\nFeature: t\n  Scenario: s\n    Given x\n"})
    result = pytester.runpytest("-p", "no:cacheprovider", "features/tagged.feature")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*[[]oracle error, not the candidate's fault[]] scenario 's' (features/tagged.feature:3): the oracle is malformed*",
            "@category:nonsense: unknown category*",
            "@weight:heavy: the weight must be a non-negative number*",
        ]
    )


def test_a_feature_that_does_not_parse_is_a_collection_error(pytester: pytest.Pytester, feature_project: Path) -> None:
    pytester.makefile(".feature", bad="Feature: x\n  Scenario: a\n    Given ok\n  Scenari: b\n    Given x\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*bad.feature:4: Gherkin syntax error: cannot parse 'Scenari: b'*"])
    assert "Traceback" not in result.stdout.str()


@pytest.mark.browser
def test_no_browser_process_outlives_a_pytest_run(pytester: pytest.Pytester, feature_project: Path) -> None:
    copy_features(feature_project, "add_todo.feature", "wrong_count.feature")
    tmpdir = Path(tempfile.mkdtemp(prefix="bbt-", dir="/tmp"))  # short: the browser's home goes below it
    env = dict(os.environ, TMPDIR=str(tmpdir))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(feature_project)],
        cwd=feature_project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert "1 failed, 1 passed" in proc.stdout, proc.stdout + proc.stderr
    assert not processes_mentioning(str(tmpdir))
    assert not list(tmpdir.glob("backendbench-chromium-*"))
    tmpdir.rmdir()
