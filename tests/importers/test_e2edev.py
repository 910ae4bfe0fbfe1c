"""Importing E2EDev: hand-written fixtures in E2EDev's published layout become our tasks."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_backendbench.bdd.browser.shared import SharedBrowser
from pytest_backendbench.bdd.gherkin import find_steps, parse_feature_file
from pytest_backendbench.bdd.scenarios.behave_runner import ScenarioRunner, SleepPolicy
from pytest_backendbench.importers import import_e2edev
from pytest_backendbench.importers.e2edev import E2EDevFormatError, requirement_id, tag_scenario
from pytest_backendbench.tasks import TaskCatalog

DATA = Path(__file__).parent / "data"
SOURCE = DATA / "E2EDev_data"

EXPECTED_FILES = {
    "benchmarks/e2esd-bench-05/spec.md",
    "benchmarks/e2esd-bench-05/task.yaml",
    "benchmarks/e2esd-bench-12/spec.md",
    "benchmarks/e2esd-bench-12/task.yaml",
    "oracles/e2esd-bench-05/features/R1_1.feature",
    "oracles/e2esd-bench-05/features/R1_2.feature",
    "oracles/e2esd-bench-05/features/R2_1.feature",
    "oracles/e2esd-bench-05/features/steps/R1_1.py",
    "oracles/e2esd-bench-05/features/steps/R1_2.py",
    "oracles/e2esd-bench-05/features/steps/R2_1.py",
    "oracles/e2esd-bench-05/reference/assets/logo.svg",
    "oracles/e2esd-bench-05/reference/index.html",
    "oracles/e2esd-bench-05/reference/script.js",
    "oracles/e2esd-bench-05/reference/style.css",
    "oracles/e2esd-bench-12/features/R1_1.feature",
    "oracles/e2esd-bench-12/features/R1_2.feature",
    "oracles/e2esd-bench-12/features/R3_1.feature",
    "oracles/e2esd-bench-12/features/R3_2.feature",
    "oracles/e2esd-bench-12/features/steps/R1_1.py",
    "oracles/e2esd-bench-12/features/steps/R1_2.py",
    "oracles/e2esd-bench-12/features/steps/R3_1.py",
    "oracles/e2esd-bench-12/features/steps/R3_2.py",
    "oracles/e2esd-bench-12/reference/index.html",
    "oracles/e2esd-bench-12/reference/script.js",
    "oracles/e2esd-bench-12/reference/style.css",
}


def files_below(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_fixtures_import_to_the_expected_files(tmp_path: Path) -> None:
    summary = import_e2edev(SOURCE, tmp_path)
    assert summary.problems == [] and summary.defects == []
    assert files_below(tmp_path) == EXPECTED_FILES
    assert [(t.id, t.requirements, t.scenarios, t.sleep_policy) for t in summary.tasks] == [
        ("e2esd-bench-05", 2, 3, "real"),
        ("e2esd-bench-12", 2, 4, "cap:0.5"),
    ]
    assert "imported 2 E2EDev project(s)" in summary.format() and "7 scenarios" in summary.format()


def test_tasks_load_with_requirements_spec_and_sleep_hints(tmp_path: Path) -> None:
    import_e2edev(SOURCE, tmp_path)
    catalog = TaskCatalog(tmp_path)
    task = catalog.load("e2esd-bench-12")
    assert task.kind == "frontend" and task.openapi_path is None and task.health.path == "/"
    assert set(task.requirements) == {"R1", "R3"}
    assert task.requirements["R3"].startswith("The 'Dark mode' button")
    assert task.extra["e2edev"] == {
        "project": "E2ESD_Bench_12", "sleep_policy": "cap:0.5", "browser_locale": "zh-CN", "requirement_ids": {"R1": "1", "R3": "3"}
    }
    assert catalog.load("e2esd-bench-05").extra["e2edev"]["sleep_policy"] == "real"  # as E2EDev's runner does for 05
    assert task.visible.spec == (SOURCE / "E2ESD_Bench_12" / "prompt.txt").read_text()


def test_scenarios_are_tagged_and_step_code_is_copied_verbatim(tmp_path: Path) -> None:
    import_e2edev(SOURCE, tmp_path)
    source = json.loads((SOURCE / "E2ESD_Bench_12" / "requirment_with_tests.json").read_text())
    features = tmp_path / "oracles" / "e2esd-bench-12" / "features"
    for raw_id, entry in source["finegrained_rewith_test"].items():
        for number, case in enumerate(entry["test_cases"], start=1):
            stem = f"R{raw_id}_{number}"
            assert (features / "steps" / f"{stem}.py").read_text() == case["step_code"] + "\n"
            (scenario,) = parse_feature_file(features / f"{stem}.feature").scenarios
            assert f"R{raw_id}" in scenario.tags
            assert find_steps(features / f"{stem}.feature").modules == (features / "steps" / f"{stem}.py",)
            untagged = (features / f"{stem}.feature").read_text().replace(f"@R{raw_id}\n", "", 1)
            assert untagged.replace("  ", "") == case["test_case"][0].replace("  ", "").rstrip("\n") + "\n"


def test_reimporting_replaces_its_tasks_and_keeps_others(tmp_path: Path) -> None:
    import_e2edev(SOURCE, tmp_path)
    stale = tmp_path / "oracles" / "e2esd-bench-05" / "features" / "R9_1.feature"
    stale.write_text("Feature: stale\n")
    other = tmp_path / "benchmarks" / "notes" / "task.yaml"
    other.parent.mkdir(parents=True)
    other.write_text("id: notes\n")
    import_e2edev(SOURCE / "E2ESD_Bench_05", tmp_path)
    assert not stale.exists() and other.exists()


@pytest.mark.parametrize("where", [lambda d: d, lambda d: d / "E2EDev_data", lambda d: d / "E2EDev_data" / "E2ESD_Bench_12"])
def test_source_may_be_the_repository_the_data_folder_or_one_project(tmp_path: Path, where: Callable[[Path], Path]) -> None:
    summary = import_e2edev(where(DATA), tmp_path)
    assert "e2esd-bench-12" in [t.id for t in summary.tasks]


def test_a_broken_project_is_reported_and_the_others_are_imported(tmp_path: Path) -> None:
    source = tmp_path / "src" / "E2EDev_data"
    shutil.copytree(SOURCE, source)
    (source / "E2ESD_Bench_05" / "requirment_with_tests.json").write_text("{not json")
    data = json.loads((source / "E2ESD_Bench_12" / "requirment_with_tests.json").read_text())
    data["finegrained_rewith_test"]["3"]["test_cases"][1]["test_case"] = ["Feature: no scenario here\n"]
    (source / "E2ESD_Bench_12" / "requirment_with_tests.json").write_text(json.dumps(data))
    summary = import_e2edev(source, tmp_path / "out")
    assert [t.id for t in summary.tasks] == ["e2esd-bench-12"]
    assert len(summary.problems) == 3
    assert summary.problems[0].startswith("E2ESD_Bench_05: not imported: ") and "requirment_with_tests.json: not valid JSON" in summary.problems[0]
    assert "finegrained_rewith_test.3.test_cases[1].test_case[0]: no Scenario line; written untagged as R3_2.feature" in summary.problems[1]
    assert "(R3_2.feature): expected one scenario, found 0" in summary.problems[2]


def test_a_folder_without_projects_is_refused(tmp_path: Path) -> None:
    with pytest.raises(E2EDevFormatError, match="holds no E2ESD_Bench_NN/ folders"):
        import_e2edev(tmp_path, tmp_path / "out")


def test_ids_and_tags() -> None:
    assert requirement_id("7") == "R7" and requirement_id("login flow") == "Rlogin_flow"
    assert tag_scenario("Feature: f\n\n  Scenario: s\n    Given x\n", "R7") == "Feature: f\n\n  @R7\n  Scenario: s\n    Given x\n"
    assert tag_scenario("Feature: f\n@slow\nScenario Outline: s\n", "R1") == "Feature: f\n@slow\n@R1\nScenario Outline: s\n"
    assert tag_scenario("Feature: only\n", "R1") is None


@pytest.mark.browser
def test_imported_references_pass_their_oracles_and_a_broken_candidate_fails(
    tmp_path: Path, serve: Callable[[Path], object], session_browser: SharedBrowser
) -> None:
    import_e2edev(SOURCE, tmp_path)
    catalog = TaskCatalog(tmp_path)
    broken = tmp_path / "broken-05"
    shutil.copytree(tmp_path / "oracles" / "e2esd-bench-05" / "reference", broken)
    script = broken / "script.js"
    script.write_text(script.read_text().replace("if (count > 0) {", "if (true) {"))
    runs = [("e2esd-bench-05", None), ("e2esd-bench-12", None), ("e2esd-bench-05", broken)]
    outcomes: dict[str, str] = {}
    for task_id, folder in runs:
        task = catalog.load(task_id)
        server = serve(folder or task.reference_dir)
        runner = ScenarioRunner(SleepPolicy.parse(task.extra["e2edev"]["sleep_policy"]))
        for feature in sorted((task.oracle_dir / "features").glob("*.feature")):
            (scenario,) = parse_feature_file(feature).scenarios
            session_browser.reset(server.base_url)  # type: ignore[attr-defined]
            result = runner.run(feature, scenario.line, find_steps(feature).modules, driver=session_browser.driver, base_url=server.base_url)  # type: ignore[attr-defined]
            outcomes[f"{'broken' if folder else 'reference'}:{task_id}:{feature.stem}"] = result.status
    assert outcomes == {
        "reference:e2esd-bench-05:R1_1": "passed",
        "reference:e2esd-bench-05:R1_2": "passed",
        "reference:e2esd-bench-05:R2_1": "passed",
        "reference:e2esd-bench-12:R1_1": "passed",
        "reference:e2esd-bench-12:R1_2": "passed",
        "reference:e2esd-bench-12:R3_1": "passed",
        "reference:e2esd-bench-12:R3_2": "passed",
        "broken:e2esd-bench-05:R1_1": "passed",
        "broken:e2esd-bench-05:R1_2": "failed",
        "broken:e2esd-bench-05:R2_1": "passed",
    }
