"""app.build's grades, thresholds and tables worked out by hand (no browser, no Lighthouse)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from pytest_backendbench.appbuild.grades import Grade, SweepCounts, parse_grade, performance_grade, sweep_grade
from pytest_backendbench.appbuild.lighthouse import LighthouseError, parse_report, run_lighthouse
from pytest_backendbench.appbuild.settings import parse_measures
from pytest_backendbench.results import ItemResult, TaskResult
from pytest_backendbench.scores.app_build import app_build, check_table, quality, viable


def item(name: str, outcome: str, **fields: object) -> ItemResult:
    return ItemResult(nodeid=name, task="t", candidate="t", kind=str(fields.pop("kind", "http")), outcome=outcome, **fields)  # type: ignore[arg-type]


def measured(check: str, grade: str | None, score: float | None = None, outcome: str = "passed") -> ItemResult:
    record = {"check": check, "grade": grade, "score": score, "details": {}} if grade else {"check": check}  # errored before measuring
    return item(check, outcome, kind="app_check", app_check=record)


def app(name: str, *items: ItemResult, status: int = 200) -> TaskResult:
    phases = [item("build", "passed", kind="build"), item("boot", "passed", kind="boot"), item("smoke", "passed", kind="smoke", primary_status=status)]
    return TaskResult(task=name, candidate=name, items=[*phases, *items], finished=True)


def test_sweep_thresholds() -> None:
    assert sweep_grade(SweepCounts(clicked=0, broken=0, console_errors=0, dead=0)) is Grade.NA  # nothing to click
    assert sweep_grade(SweepCounts(clicked=0, broken=1, console_errors=0, dead=0)) is Grade.FAIL  # the primary route itself hung
    assert sweep_grade(SweepCounts(clicked=8, broken=0, console_errors=0, dead=0)) is Grade.PASS
    assert sweep_grade(SweepCounts(clicked=8, broken=0, console_errors=1, dead=0)) is Grade.WARN
    assert sweep_grade(SweepCounts(clicked=8, broken=0, console_errors=0, dead=3)) is Grade.WARN
    assert sweep_grade(SweepCounts(clicked=8, broken=0, console_errors=0, dead=4)) is Grade.FAIL  # half the controls do nothing
    assert sweep_grade(SweepCounts(clicked=8, broken=1, console_errors=0, dead=0)) is Grade.FAIL  # one broken handler


def test_performance_bands_and_judge_answers() -> None:
    assert [performance_grade(s) for s in (1.0, 0.9, 0.89, 0.5, 0.49, 0.0)] == [Grade.PASS, Grade.PASS, Grade.WARN, Grade.WARN, Grade.FAIL, Grade.FAIL]
    assert parse_grade("Warn\nthe list lacks the seats") is Grade.WARN
    assert parse_grade("I cannot tell") is None
    assert parse_measures("all") == ("sweep", "lighthouse") and parse_measures("off") == () and parse_measures("lighthouse") == ("lighthouse",)
    with pytest.raises(ValueError):
        parse_measures("sweep,speed")


def test_q_viability_and_table_4_from_measured_and_tagged_checks() -> None:
    perfect = app("perfect", item("create", "passed", ab_checks=["AB-03"]), measured("AB-06", "PASS", 1.0), measured("AB-07", "PASS", 1.0))
    mixed = app(
        "mixed",
        item("create", "passed", ab_checks=["AB-03"]), item("edit1", "passed", ab_checks=["AB-04"]), item("edit2", "failed", ab_checks=["AB-04"]),
        measured("AB-02", "PASS", 1.0), measured("AB-06", "FAIL", 0.0), measured("AB-07", "WARN", 0.62),
    )
    off_prompt = app("off-prompt", measured("AB-02", "FAIL", 0.0), measured("AB-06", "NA"), measured("AB-07", None, outcome="error"))
    down = app("down", status=404)

    table = check_table(mixed)
    assert {c: g.value for c, (g, _) in table.items()} == {"AB-01": "PASS", "AB-02": "PASS", "AB-03": "PASS", "AB-04": "WARN", "AB-06": "FAIL", "AB-07": "WARN"}
    assert table["AB-07"][1] == 0.62  # AB-07's s is Lighthouse's score itself
    assert quality({c: s for c, (g, s) in table.items() if s is not None}) == pytest.approx(10 * (1 + 1 + 1 + 0.5 + 0 + 0.62) / 6)
    assert viable(mixed) and viable(perfect)
    assert not viable(off_prompt)  # AB-02 FAIL gates viability (app.build's equation 1)
    assert not viable(down)

    figures = app_build([perfect, mixed, off_prompt, down])
    assert figures["viability"] == 0.5
    q = {a["task"]: a["q"] for a in figures["per_app"]}
    assert q["perfect"] == 10.0
    assert q["off-prompt"] == pytest.approx(10 * (1 + 0 + 0) / 3)  # AB-01 1, AB-02 0, AB-07 ERROR 0; AB-06 NA dropped
    assert q["down"] == 0.0
    assert figures["mean_q_viable"] == pytest.approx((10.0 + q["mixed"]) / 2)
    assert figures["mean_q_all"] == pytest.approx(sum(q.values()) / 4)
    assert figures["perfect_quality_rate"] == 0.25
    rows = figures["checks"]
    assert {k: rows["AB-01"][k] for k in ("pass", "warn", "fail", "na")} == {"pass": 3, "warn": 0, "fail": 1, "na": 0}
    assert rows["AB-01"]["pass_rate"] == 0.75
    assert (rows["AB-06"]["pass"], rows["AB-06"]["fail"], rows["AB-06"]["na"], rows["AB-06"]["pass_rate"]) == (1, 1, 2, 0.5)
    assert (rows["AB-07"]["pass"], rows["AB-07"]["warn"], rows["AB-07"]["error"], rows["AB-07"]["na"]) == (1, 1, 1, 1)
    assert rows["AB-07"]["pass_rate"] == pytest.approx(1 / 3)  # an error stays in the denominator
    assert figures["notes"] == []


def test_unmeasured_checks_are_na_and_the_summary_says_why() -> None:
    figures = app_build([app("plain", item("x", "passed"))])
    assert figures["per_app"][0]["checks"] == {"AB-01": "PASS", "AB-02": "NA", "AB-03": "NA", "AB-04": "NA", "AB-06": "NA", "AB-07": "NA"}
    assert "AB-02 NA: no judge model (--bench-judge)" in figures["notes"]
    assert "AB-06 NA: not measured (--bench-app-checks)" in figures["notes"]
    assert figures["perfect_quality_rate"] == 1.0  # Q = 10 from AB-01 alone, as before: the notes say so


def test_lighthouse_report_parsing_and_a_run_that_never_ends(tmp_path: Path) -> None:
    data = {
        "lighthouseVersion": "12.2.3", "categories": {"performance": {"score": 0.42}},
        "audits": {"largest-contentful-paint": {"numericValue": 5123.4}, "total-blocking-time": {"numericValue": 310}, "cumulative-layout-shift": {"numericValue": 0.01}},
    }
    result = parse_report(data, "http://x/", tmp_path / "lh.json")
    assert (result.score, result.metrics["lcp_ms"], result.metrics["fcp_ms"]) == (0.42, 5123.4, None)
    painted_nothing = parse_report({"runtimeError": {"code": "NO_FCP", "message": "The page did not paint any content."}}, "http://x/", tmp_path / "lh.json")
    assert painted_nothing.score is None and painted_nothing.runtime_error is not None and painted_nothing.runtime_error.startswith("NO_FCP")
    with pytest.raises(LighthouseError, match="PROTOCOL_TIMEOUT"):
        parse_report({"runtimeError": {"code": "PROTOCOL_TIMEOUT", "message": "Waiting for DevTools protocol response has exceeded the allotted time."}}, "http://x/", tmp_path / "lh.json")

    sleeper = tmp_path / "lighthouse"
    sleeper.write_text("#!/bin/sh\necho measuring >&2\nsleep 60\n")
    sleeper.chmod(sleeper.stat().st_mode | stat.S_IEXEC)
    with pytest.raises(LighthouseError, match=r"(?s)did not finish measuring http://x/ within 0.5 s .*last lines:\n  measuring"):
        run_lighthouse(str(sleeper), "http://x/", debugger_address="127.0.0.1:9", output=tmp_path / "lh.json", timeout_s=0.5)
    silent = tmp_path / "silent"
    silent.write_text("#!/bin/sh\necho 'Runtime error encountered: no chrome' >&2\nexit 1\n")
    silent.chmod(silent.stat().st_mode | stat.S_IEXEC)
    with pytest.raises(LighthouseError, match="wrote no report .*exit status 1"):
        run_lighthouse(str(silent), "http://x/", debugger_address="127.0.0.1:9", output=tmp_path / "lh.json", timeout_s=10)
    assert json.dumps(result.to_dict()) and os.path.exists(tmp_path / "lh.log")


def test_e2edev_scenarios_that_create_or_edit_are_tagged_for_ab_03_and_ab_04() -> None:
    from pytest_backendbench.importers.e2edev import app_build_tags

    assert app_build_tags("Feature: t\n  Scenario: Adding a task\n    Given the page\n    When the user adds 'milk'\n    Then it is listed\n") == ["ab:AB-03"]
    assert app_build_tags("Feature: t\n  Scenario: Tidy up\n    When the user deletes 'milk'\n") == ["ab:AB-04"]
    assert app_build_tags("Feature: c\n  Scenario: A sum\n    When the user clicks 5\n    Then the display shows 5\n") == []  # nothing created or edited


def test_with_a_judge_named_ab02_is_na_for_want_of_the_app_checks_not_of_a_judge() -> None:
    figures = app_build([app("judged", item("x", "passed"), item("FE-1", "passed", kind="judge"))])
    assert "AB-02 NA: not measured (--bench-app-checks)" in figures["notes"]
    assert not any("no judge model" in note for note in figures["notes"])
