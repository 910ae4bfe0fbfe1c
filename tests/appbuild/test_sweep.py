"""AB-06's clickable sweep against small real pages in Chromium: what each click did and what went wrong."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from pytest_backendbench.appbuild.grades import Grade, SweepCounts, sweep_grade
from pytest_backendbench.appbuild.sweep import ClickableSweep
from pytest_backendbench.bdd.browser.shared import SharedBrowser

pytestmark = pytest.mark.browser


def test_every_control_is_clicked_from_a_fresh_page_and_a_broken_handler_fails(browser: SharedBrowser, pages: str, tmp_path: Path) -> None:
    report = ClickableSweep(browser, f"{pages}/index.html", depth=1, budget=20, screenshots=tmp_path, settle_cap_s=1.0).run()
    by_selector = {o.selector: o for o in report.outcomes}
    # hidden, disabled and other-origin controls are left alone; #inner and #home appear only after a click
    row = "#rows > li:nth-of-type(1)"  # three rows with a click listener each are one control, swept once
    assert set(by_selector) == {"#works", "#broken", "#dead", "#reveal", "#next", "#missing", "#popup", "#file", "#ticker", "#inner", "#home", row}
    kinds = {selector: [f.kind for f in o.findings] for selector, o in by_selector.items()}
    assert kinds == {
        "#works": [], "#broken": ["uncaught-error"], "#dead": ["dead"], "#reveal": [], "#next": [], "#missing": ["error-page"],
        "#popup": [], "#file": [], "#ticker": [], "#inner": ["console-error"], "#home": [], row: [],
    }
    assert by_selector[row].text == "first \ufffd half"  # a lone surrogate in the page's text reaches us replaced
    assert "ReferenceError: undefinedHandler is not defined" in by_selector["#broken"].findings[0].detail
    assert by_selector["#missing"].findings[0].detail.endswith("missing.html answered 404")
    assert by_selector["#works"].effects == ["DOM change"]
    assert by_selector["#next"].effects == [f"navigation to {pages}/second.html"]
    assert by_selector["#popup"].effects == [f"new window: {pages}/second.html"]
    assert by_selector["#file"].effects == ["download: data.txt"]
    assert (by_selector["#inner"].depth, by_selector["#inner"].text) == (1, "Inner")
    assert not by_selector["#ticker"].settled and "did not settle within 1 s" in by_selector["#ticker"].note  # noted, never a hang
    for selector in ("#broken", "#dead", "#missing", "#inner"):
        assert Path(str(by_selector[selector].screenshot)).read_bytes().startswith(b"\x89PNG")
    assert by_selector["#works"].screenshot is None
    assert report.counts() == SweepCounts(clicked=12, broken=2, console_errors=1, dead=1)
    assert sweep_grade(report.counts()) is Grade.FAIL
    assert report.left_over == 0 and report.load_findings == []


def test_a_page_that_stops_answering_is_a_finding_of_its_click_not_a_hang(browser: SharedBrowser, pages: str) -> None:
    started = time.monotonic()
    report = ClickableSweep(browser, f"{pages}/hangs.html", depth=0, budget=5, call_timeout_s=2.0, settle_cap_s=1.0).run()
    assert time.monotonic() - started < 15
    (outcome,) = report.outcomes
    assert [f.kind for f in outcome.findings] == ["hung"]
    assert "the page stopped answering: clicking #spin took more than 2 s; its browser was killed" in outcome.findings[0].detail
    assert sweep_grade(report.counts()) is Grade.FAIL
    assert browser.hung  # the next reset relaunches it (tests/bdd/test_browser.py)
