"""The E2EDev gap classes (issue 11), each reproduced by tests/importers/data/gaps/E2ESD_Bench_31.

Project 31 is a planner app in ``source_projcet/planner/`` (class 1: entry page in a subfolder)
that loads jQuery and Bootstrap from CDNs (class 2), with a scenario that types a date and a
time in zh-CN field order (class 3), one that maximizes the window and needs Bootstrap's lg
breakpoint (class 4a), one that starts its own SimpleHTTPRequestHandler on port 8000 (class
4b) and one whose steps import bs4 and PIL (class 5). Project 32 holds the dataset defects the
importer reports (class 6).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_backendbench.importers import import_e2edev
from pytest_backendbench.importers.e2edev import DatasetDefect
from pytest_backendbench.runtime.static import find_entry_page
from pytest_backendbench.tasks import TaskCatalog

GAPS = Path(__file__).parent / "data" / "gaps"

EXPECTED_PASSED = {
    "[Normal] The title is rendered by jQuery",
    "[Normal] A meeting is added with date and time",
    "[Normal] The sidebar shows on a maximized window",
    "[Normal] The page is opened from a local server",
    "[Normal] Markup and screenshot",
}


def test_the_importer_writes_the_locale_hint_and_lists_dataset_defects(tmp_path: Path) -> None:
    summary = import_e2edev(GAPS, tmp_path)
    assert summary.problems == []
    task = TaskCatalog(tmp_path).load("e2esd-bench-31")
    assert task.extra["e2edev"]["browser_locale"] == "zh-CN"
    assert summary.defects == [
        DatasetDefect("e2esd-bench-32", "features/steps/R1_2.py", "steps module does not parse", "line 1: invalid syntax (the file has no line breaks)"),
        DatasetDefect(
            "e2esd-bench-32", "features/steps/R1_3.py", "step pattern matches no step",
            "@then('the counter shows {count:d} clicks') matches no then step of R1_3.feature",
        ),
        DatasetDefect("e2esd-bench-32", "features/steps/R1_3.py", "step has no definition", "Then 'the counter shows 0'"),
    ]
    text = summary.format()
    assert "3 dataset defect(s)" in text
    assert "e2esd-bench-32  features/steps/R1_2.py  steps module does not parse" in text


def test_the_cli_prints_the_defects_table(pytester: pytest.Pytester) -> None:
    result = pytester.run("backendbench", "import", "e2edev", str(GAPS), "--out", str(pytester.path / "out"))
    result.stdout.fnmatch_lines(["*3 dataset defect(s)*", "*task*file*defect*detail*", "*e2esd-bench-32*R1_3.py*step pattern matches no step*"])


def test_the_entry_page_is_the_shallowest_html_with_index_first(tmp_path: Path) -> None:
    def page(relative: str) -> None:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("<html></html>")

    assert find_entry_page(tmp_path) is None
    page("web/zeta/index.html")
    page("web/about.html")
    assert find_entry_page(tmp_path) == tmp_path / "web" / "about.html"  # shallower wins
    page("web/index.html")
    page("app/index.html")
    assert find_entry_page(tmp_path) == tmp_path / "app" / "index.html"  # index.html first, then by path
    page("node_modules/pkg/index.html")
    page(".hidden/index.html")
    page("features/report.html")
    page("home.htm")
    assert find_entry_page(tmp_path) == tmp_path / "home.htm"
    page("index.html")
    assert find_entry_page(tmp_path) == tmp_path / "index.html"


@pytest.mark.browser
@pytest.mark.slow
def test_every_gap_class_passes_through_the_plugin(pytester: pytest.Pytester, shared_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BACKENDBENCH_CACHE", str(shared_cache))
    import_e2edev(GAPS, pytester.path)
    candidate = pytester.path / "candidate"
    shutil.copytree(pytester.path / "oracles" / "e2esd-bench-31" / "reference", candidate)
    (candidate / "candidate.yaml").write_text("task: e2esd-bench-31\n")  # files only: served as a static site
    assert not (candidate / "index.html").exists() and (candidate / "planner" / "index.html").is_file()

    result = pytester.runpytest(
        f"--candidate={candidate}", "--bench-task=e2esd-bench-31", "--bench-runtime=process", "--bench-report-dir=out", "-p", "no:cacheprovider"
    )
    report = json.loads((pytester.path / "out" / "report.json").read_text())
    items = [i for t in report["tasks"] for i in t["items"] if i["kind"] == "bdd"]
    outcomes = {i["nodeid"].split("::")[-1]: (i["outcome"], i.get("message", "")[:300]) for i in items}
    assert {name for name, (outcome, _) in outcomes.items() if outcome == "passed"} == EXPECTED_PASSED, outcomes
    result.assert_outcomes(passed=3 + len(EXPECTED_PASSED))


@pytest.mark.browser
@pytest.mark.slow
def test_en_us_breaks_the_zh_cn_date_scenario_and_missing_modules_are_oracle_errors(
    pytester: pytest.Pytester, shared_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BACKENDBENCH_CACHE", str(shared_cache))
    import_e2edev(GAPS, pytester.path)
    candidate = pytester.path / "candidate"
    shutil.copytree(pytester.path / "oracles" / "e2esd-bench-31" / "reference", candidate)
    (candidate / "candidate.yaml").write_text("task: e2esd-bench-31\n")  # files only: served as a static site
    steps = pytester.path / "oracles" / "e2esd-bench-31" / "features" / "steps" / "R5_1.py"
    steps.write_text(steps.read_text().replace("from bs4 import BeautifulSoup", "from bs5_never_installed import BeautifulSoup"))

    result = pytester.runpytest(
        f"--candidate={candidate}", "--bench-task=e2esd-bench-31", "--bench-runtime=process", "--browser-locale=en-US",
        "-k", "date or Markup", "-p", "no:cacheprovider",
    )
    result.assert_outcomes(failed=1, errors=1, deselected=3 + 3)
    result.stdout.fnmatch_lines(["*R5_1.py could not be loaded: ModuleNotFoundError: No module named 'bs5_never_installed'", "listed: ?'incomplete'?"])
