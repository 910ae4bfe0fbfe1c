"""app.build's checks as items of a candidate's run, through the whole plugin: collection, report.json, tables.

One run of a static frontend candidate (tests/bdd's todo task) with ``--bench-app-checks=all``:
the sweep and Lighthouse (once: it takes seconds) run after the smoke item, their grades reach
report.json's items and app.build's Table 4, and the Lighthouse JSON is kept with the candidate.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_backendbench.report.json_report import validate_report

TODO_BENCH = Path(__file__).parents[1] / "bdd" / "data" / "bench"

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_the_sweep_and_lighthouse_are_items_of_the_run_and_fill_app_builds_tables(
    pytester: pytest.Pytester, shared_cache: Path, monkeypatch: pytest.MonkeyPatch, lighthouse: str
) -> None:
    monkeypatch.setenv("BACKENDBENCH_CACHE", str(shared_cache))
    shutil.copytree(TODO_BENCH, pytester.path, dirs_exist_ok=True)
    candidate = pytester.path / "candidate"
    shutil.copytree(TODO_BENCH / "oracles" / "todo" / "reference", candidate)

    result = pytester.runpytest(
        f"--candidate={candidate}", "--bench-runtime=process", "--bench-report-dir=out", "--bench-app-checks=all", f"--bench-lighthouse={lighthouse}",
        "--bench-sweep-budget=4", "-k", "build or boot or smoke or sweep or performance", "-p", "no:cacheprovider",
    )
    result.assert_outcomes(passed=5)  # a WARN passes; only a FAIL is the candidate's failure
    result.stdout.fnmatch_lines(["*AB-02 NA: no judge model*"])
    report = json.loads((pytester.path / "out" / "report.json").read_text())
    validate_report(report)
    items = report["tasks"][0]["items"]
    assert [i["kind"] for i in items] == ["build", "boot", "smoke", "app_check", "app_check"]  # after the smoke item, never oracle items
    sweep, performance = (i["app_check"] for i in items[3:])
    assert (sweep["check"], sweep["grade"], sweep["score"]) == ("AB-06", "WARN", 0.5)
    clicked = {o["selector"]: o for o in sweep["details"]["outcomes"]}
    assert set(clicked) == {'[data-testid="add-button"]', '[data-testid="load-more"]'}
    add = clicked['[data-testid="add-button"]']
    assert add["effects"] == ["DOM change"]  # the error toast for an empty todo ...
    assert [(f["kind"], f["detail"].endswith('"refusing to add an empty todo"')) for f in add["findings"]] == [("console-error", True)]  # ... and its console.error
    assert add["screenshot"] == "artifacts/todo/app-checks/sweep-01.png" and (pytester.path / "out" / add["screenshot"]).is_file()
    assert clicked['[data-testid="load-more"]']["effects"] == ["DOM change"]  # 300 ms later: a click's timer is waited for
    assert performance["check"] == "AB-07" and 0 <= performance["score"] <= 1
    assert performance["grade"] in ("PASS", "WARN")  # a 1 kB page; a loaded machine may push TBT up
    assert set(performance["details"]["metrics"]) == {"lcp_ms", "tbt_ms", "cls", "fcp_ms", "speed_index_ms"}
    kept = json.loads((pytester.path / "out" / performance["details"]["report"]).read_text())
    assert kept["categories"]["performance"]["score"] == performance["score"]
    figures = report["summary"]["papers"]["app_build"]
    assert figures["per_app"][0]["checks"] == {"AB-01": "PASS", "AB-02": "NA", "AB-03": "NA", "AB-04": "NA", "AB-06": "WARN", "AB-07": performance["grade"]}
    assert figures["per_app"][0]["q"] == pytest.approx(10 * (1 + 0.5 + performance["score"]) / 3)
    assert (figures["checks"]["AB-06"]["warn"], figures["checks"]["AB-06"]["pass_rate"]) == (1, 0.0)
    assert report["summary"]["test_acc"] is None  # the checks are not oracle items
    page = (pytester.path / "out" / "report.html").read_text()
    assert "<h3>app.build checks</h3>" in page and "refusing to add an empty todo" in page  # every finding, with its element ...
    assert '<a href="artifacts/todo/app-checks/sweep-01.png">screenshot</a>' in page  # ... and the screenshot after its click
