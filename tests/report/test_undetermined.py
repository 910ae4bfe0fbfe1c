"""Honest summaries: a task whose verdict is unknown (harness errors) is named, not silently dropped."""

from __future__ import annotations

import fnmatch
import html as html_module
import json
import re
import shutil
from pathlib import Path

import pytest

from pytest_backendbench.cli.main import main as cli_main
from pytest_backendbench.db.providers.embedded import no_postgres_reason
from pytest_backendbench.metrics import run_metrics, undetermined_reason
from pytest_backendbench.report.tables import sr_line
from pytest_backendbench.results import ItemResult, TaskResult

DATA = Path(__file__).parents[1] / "data"
NOTES_BENCH = DATA / "bench"
NOTES_APP = NOTES_BENCH / "oracles" / "notes" / "reference"
TODO_BENCH = Path(__file__).parents[1] / "bdd" / "data" / "bench"
TODO_APP = TODO_BENCH / "oracles" / "todo" / "reference"


def _result(task: str, outcome: str, message: str = "") -> TaskResult:
    items = [ItemResult(nodeid=f"{task}::{n}", task=task, candidate=task, kind="http", outcome=outcome, message=message) for n in ("a", "b")]
    return TaskResult(task=task, candidate=task, finished=True, items=items)


def test_the_summary_names_the_undetermined_task_and_why() -> None:
    results = [_result(f"task-{n}", "passed") for n in range(8)]
    results.append(_result("event-registration", "error", f"the task's database did not start\n{no_postgres_reason()}"))
    summary = run_metrics(results)
    assert summary["undetermined"] == [{"task": "event-registration", "reason": "no PostgreSQL"}]
    assert (summary["tasks"], summary["determined_tasks"]) == (9, 8)
    assert sr_line(summary) == (
        "SR 88.9% of 9 tasks (harness errors count as not passed; determined only: SR 100.0% of 8 determined tasks, "
        "1 undetermined: event-registration, no PostgreSQL)"
    )
    assert sr_line(run_metrics(results[:8])) == "SR 100.0% of 8 tasks"


def test_a_task_failed_outright_is_determined_and_unknown_errors_keep_their_first_line() -> None:
    assert run_metrics([_result("failing", "failed")])["undetermined"] == []
    mixed = _result("mixed", "passed")
    mixed.items[1].outcome, mixed.items[1].message = "error", "boom"
    assert run_metrics([mixed])["undetermined"] == [{"task": "mixed", "reason": "boom"}]
    assert undetermined_reason(_result("x", "error", "\nSomething odd happened\ntrace").items) == "Something odd happened"


@pytest.mark.slow
def test_a_run_with_harness_errors_is_not_publishable_in_every_format(
    pytester: pytest.Pytester, shared_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BACKENDBENCH_CACHE", str(shared_cache))
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # no browser to be found: the todo task's scenarios are harness errors
    monkeypatch.setenv("SE_OFFLINE", "true")
    for bench in (NOTES_BENCH, TODO_BENCH):
        shutil.copytree(bench, pytester.path, dirs_exist_ok=True)
    candidates = pytester.path / "candidates"
    shutil.copytree(TODO_APP, candidates / "todo")
    (candidates / "notes").mkdir()
    shutil.copy(NOTES_APP / "app.py", candidates / "notes" / "app.py")
    (candidates / "notes" / "candidate.yaml").write_text("run: python app.py\n")

    result = pytester.runpytest(f"--candidate={candidates}", "--bench-runtime=process", "--bench-report-dir=out", "-p", "no:cacheprovider")

    expected = "SR 50.0% of 2 tasks (harness errors count as not passed; determined only: SR 100.0% of 1 determined task, 1 undetermined: todo, no browser)"
    warning = "NOT PUBLISHABLE: * item(s) ended in a harness error (1 task(s): todo) (counted as not passed); re-run them: pytest <the same arguments> --bench-resume <this report's folder> --bench-rerun-errors"
    result.stdout.fnmatch_lines(["*= backendbench summary =*", warning, "*", expected])
    summary_md = (pytester.path / "out" / "summary.md").read_text()
    assert fnmatch.fnmatch(summary_md.splitlines()[0], f"**{warning}**") and f"**{expected}**" in summary_md
    html = next((pytester.path / "out").glob("*.html")).read_text()
    assert f"<strong>{expected}</strong>" in html
    banner = re.search(r'<p class="warning not-publishable">(.*?)</p>', html)
    assert banner is not None and fnmatch.fnmatch(html_module.unescape(banner.group(1)), warning)  # autoescaped: <, >, '
    assert "&lt;this report&#39;s folder&gt;" in banner.group(1)
    assert html.index("not-publishable") < html.index("<main>")  # in the header, before any figure
    assert cli_main(["report", "compare", str(pytester.path / "out"), str(pytester.path / "out")]) == 0
    assert cli_main(["report", "compare", "--fail-on-errors", str(pytester.path / "out"), str(pytester.path / "out")]) == 1
    engines = json.loads((pytester.path / "out" / "report.json").read_text())["manifest"]["engines"]
    assert engines["browser"].startswith("none: no browser for Gherkin scenarios")
    assert engines["postgres"].startswith("auto -> ")  # the provider and the binaries it resolves to
